"""Shared resources of one process: Redis (embedded or external), stores, call services."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from pipeline import memory, metrics
from pipeline.events import EventLog
from pipeline.liveness import InstanceLiveness, default_instance_id
from pipeline.realizers import LLMRealizer, Realizer, TemplateRealizer
from pipeline.records import CallStore
from pipeline.screening import Screener
from pipeline.session import CallServices
from pipeline.spool import RecordSpool
from pipeline.takeover import LiveCalls
from pipeline.takeover_relay import TakeoverRelay
from pipeline.ttft import AdmissionResult, Endpoint, EndpointHealth, admit
from pipeline.webhooks import DeliveryOptions, DeliveryWorker, WebhookSink, WebhookStore
from presets.matching import Embedder, TriggerVectorHook
from presets.owners import OwnerStore
from presets.pool import PresetHook, PresetStore
from presets.screening import ScreeningStore

from .console.auth import ConsoleSessions
from .embedded_redis import EmbeddedRedis
from .redis_url import connect
from .settings import Settings

log = logging.getLogger(__name__)

EVENTS_BLOCK_S = 5.0  # an SSE reader waits this long in XREAD before checking its client


def make_redis(url: str, settings: Settings, *, socket_timeout_s: float | None = None) -> Redis:
    """A client tuned for the call path: short timeouts, one quick retry, no long stalls.
    ``url`` may name Redis Sentinel (``redis+sentinel://...``, see app/redis_url.py)."""
    return connect(
        url,
        decode_responses=True,
        socket_timeout=socket_timeout_s or settings.redis_socket_timeout_s,
        socket_connect_timeout=settings.redis_connect_timeout_s,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=15,
        max_connections=256,
    )


def _publish_health(health: EndpointHealth) -> None:
    from pipeline.realizers import _label

    label = _label(health.endpoint.name)
    metrics.ENDPOINT_UP.labels(endpoint=label).set(1 if health.in_service else 0)
    median = health.median_ms
    if median is not None:
        metrics.ENDPOINT_MEDIAN_TTFT.labels(endpoint=label).set(median / 1000)


def make_realizer(settings: Settings) -> Realizer:
    if settings.realizer != "llm" or not settings.llm_base_url:
        return TemplateRealizer()
    healths = [
        EndpointHealth(
            Endpoint(url.strip(), settings.llm_model, settings.llm_api_key.get_secret_value()),
            limit_ms=settings.llm_max_median_ttft_ms,
            probe_interval_s=settings.llm_probe_interval_s,
            on_change=_publish_health,
        )
        for url in settings.llm_base_url.split(",")
        if url.strip()
    ]
    return LLMRealizer(healths, deadline_ms=settings.llm_ttft_deadline_ms)


def make_caller_understander(settings: Settings, embedder: Embedder) -> object:
    """``CALLASSIST_UNDERSTANDER``: rules, learned (default) or llm (falls back to learned)."""
    from pipeline.understanders import make_understander

    return make_understander(
        settings.understander,
        embed=embedder.embed_one,
        llm_base_url=settings.llm_base_url,
        llm_model=settings.llm_model,
        llm_api_key=settings.llm_api_key.get_secret_value(),
        deadline_ms=settings.nlu_deadline_ms,
    )


def _warm_voice_text_models() -> None:
    """What a voice call's turns load on first use, in the event loop: the text end-of-turn
    model and jieba's dictionary (Chinese hotwords from preset texts)."""
    import jieba

    from pipeline.turn_model import default_model

    default_model()
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()


def ice_servers(settings: Settings) -> list[Any]:
    """The configured STUN/TURN servers as aiortc wants them."""
    from aiortc import RTCIceServer

    return [
        RTCIceServer(urls=x) if isinstance(x, str) else RTCIceServer(x.urls, x.username, x.credential)
        for x in settings.webrtc_ice_servers
    ]


@dataclass
class Resources:
    settings: Settings
    redis: Redis
    owners: OwnerStore
    presets: PresetStore
    calls: CallStore
    services: CallServices
    embedded: EmbeddedRedis | None = None
    voice: Any = None  # pipeline.voice.VoiceResources when voice calls are on
    voice_warm: bool = False  # ASR loaded and every TTS engine warmed up
    precomputer: Any = None
    admission: list[AdmissionResult] = field(default_factory=list)
    extras: dict[str, object] = field(default_factory=dict)
    draining: bool = False  # SIGTERM: no new calls; see app/drain.py
    models_loaded: bool = False  # preload_models() done: /readyz waits for it
    sip: Any = None  # pipeline.sip.SipServer when CALLASSIST_SIP_PORT is set
    webrtc: Any = None  # pipeline.webrtc.WebRTCCalls when voice calls are on
    # The owner in the loop (set up in open(); the delivery worker runs from start_owner_loop()).
    events: EventLog | None = None
    events_reader: Redis | None = None  # blocking stream reads (SSE): its own client, longer timeout
    webhooks: WebhookStore | None = None
    deliveries: DeliveryWorker | None = None
    screening: ScreeningStore | None = None
    live: LiveCalls | None = None
    console: ConsoleSessions | None = None

    @classmethod
    def open(cls, settings: Settings, hooks: list[PresetHook] | None = None, *, voice: bool | None = None) -> Resources:
        """Open Redis and the stores; voice models too when ``voice`` (default: settings.voice)."""
        embedded: EmbeddedRedis | None = None
        url = settings.redis_url
        if not url:
            embedded = EmbeddedRedis(settings.redis_dir)
            url = embedded.start()
        redis = make_redis(url, settings)
        embedder = Embedder(threads=settings.embed_threads or None)
        presets = PresetStore(
            redis,
            [TriggerVectorHook(redis, embedder), *(hooks or [])],
            wait_replicas=settings.redis_wait_replicas,
            wait_timeout_ms=settings.redis_wait_timeout_ms,
        )
        owners = OwnerStore(redis)
        spool = RecordSpool(settings.data_dir / "spool", max_bytes=int(settings.record_spool_max_mb * 1024 * 1024))
        calls = CallStore(
            redis, settings.call_retention_s, unproven_retention_s=settings.unproven_call_retention_s, spool=spool
        )
        services = CallServices(
            redis=redis, owners=owners, presets=presets, calls=calls,
            realizer=make_realizer(settings), embedder=embedder,
            understander=make_caller_understander(settings, embedder),
        )  # fmt: skip
        services.liveness = InstanceLiveness(
            redis,
            calls,
            settings.instance or default_instance_id(),
            ttl_s=settings.instance_ttl_s,
            interval_s=settings.instance_heartbeat_s,
        )
        from pipeline.understanders import warm_up  # the first caller turn must not pay for lazy loads

        warm_s = warm_up(services.coordinator, embedder.embed_one)
        log.info("understanding warmed up", extra={"seconds": round(warm_s, 2)})
        res = cls(settings, redis, owners, presets, calls, services, embedded)
        res._open_owner_loop(url)
        if settings.voice if voice is None else voice:
            res._open_voice()
        return res

    def _open_owner_loop(self, url: str) -> None:
        """Owner events, webhooks, screening and take-over, shared by every call."""
        s = self.settings
        self.events = EventLog(self.redis, max_count=s.events_max_count, max_age_s=s.events_max_age_s)
        self.events_reader = make_redis(url, self.settings, socket_timeout_s=EVENTS_BLOCK_S + 5)
        self.webhooks = WebhookStore(self.redis)
        self.screening = ScreeningStore(self.redis)
        self.services.events = self.events
        self.services.screening = Screener(self.screening)
        self.live = LiveCalls(self.services)
        self.console = ConsoleSessions(self.redis, ttl_s=s.console_session_ttl_s)

    async def start_owner_loop(self) -> None:
        """The webhook delivery worker: one task per process, cancelled in close_owner_loop()."""
        assert self.webhooks is not None and self.events is not None
        s = self.settings
        options = DeliveryOptions(
            allow_private=s.webhook_allow_private, timeout_s=s.webhook_timeout_s,
            base_delay_s=s.webhook_retry_base_s, max_age_s=s.webhook_max_age_s,
        )  # fmt: skip
        if self.live is not None and self.events_reader is not None:
            self.live.relay = TakeoverRelay(self.redis, self.events_reader, self.live.relayed)
            self.live.relay.start()
        self.deliveries = DeliveryWorker(self.webhooks, options)
        self.events.sinks.append(WebhookSink(self.webhooks, self.deliveries.wake))
        self.deliveries.start()

    async def close_owner_loop(self) -> None:
        await self.finish_voice_calls()  # their call.ended events and webhooks first
        if self.live is not None and self.live.relay is not None:
            await self.live.relay.aclose()
        if self.deliveries is not None:
            await self.deliveries.aclose()
            self.deliveries = None

    def _open_voice(self) -> None:
        """ASR and TTS, shared by all calls; models load in the background at start-up."""
        from pipeline.admission import CallSlots
        from pipeline.asr import RedecodePolicy, SpeechRecognizer
        from pipeline.precompute import Precomputer
        from pipeline.tts import AudioCache, Synthesizer
        from pipeline.voice import VoiceOptions, VoiceResources

        s = self.settings
        redecode = RedecodePolicy(max_audio_s=s.asr_redecode_max_audio_s) if s.asr_redecode else None
        recognizer = SpeechRecognizer(threads=s.asr_threads, redecode=redecode)
        cache = AudioCache(s.data_dir / "tts-cache", max_bytes=int(s.tts_cache_mb * 1024 * 1024))
        synthesizer = Synthesizer(cache, specs={"zh": s.tts_zh, "en": s.tts_en})
        record_dir = str(s.data_dir / "recordings") if s.record_calls else None
        options = VoiceOptions(
            silence_timeout_s=s.silence_timeout_s,
            max_call_s=s.max_call_s,
            record_dir=record_dir,
            turn_text_model=s.turn_text_model,
            vad_noise_margin_db=s.vad_noise_margin_db or None,
        )
        from pipeline import voice as voice_module

        self.precomputer = Precomputer(synthesizer, busy=lambda: voice_module.active_voice_calls() > 0)
        slots = CallSlots(limit=s.max_voice_calls)
        self.voice = VoiceResources(
            self.services, recognizer, synthesizer, options, self.precomputer, slots, live=self.live
        )
        self.presets.hooks.append(self.precomputer.on_pool_saved)
        self.owners.profile_hooks.append(self.precomputer.on_profile_saved)

        def warm() -> None:
            try:
                recognizer.load()
                synthesizer.warm_up()
                _warm_voice_text_models()
                self.voice_warm = True
            except Exception:
                log.exception("voice models failed to load")

        self._warm_thread = threading.Thread(target=warm, name="voice-warmup", daemon=True)
        self._warm_thread.start()

    def preload_models(self) -> dict[str, float]:
        """Load, once, what a first call would otherwise load inside the event loop (call
        it from a worker thread before the service is ready): the safety guards' one-time
        costs (pypinyin's dictionary among them) and the sentence encoder. The coordinator
        and the learned understander are warmed up in :meth:`open`
        (``pipeline.understanders.warm_up``). Returns the seconds each step took."""
        import safety

        took: dict[str, float] = {}
        embedder = self.services.embedder

        def timed(name: str, step: Callable[[], object]) -> None:
            started = time.perf_counter()
            step()
            took[name] = round(time.perf_counter() - started, 3)

        timed("safety", safety.warm_up)
        timed("embedder", lambda: embedder.embed_one("warm-up"))
        self.models_loaded = True
        metrics.MODELS_LOADED.set(1)
        log.info("models loaded", extra={"seconds": took})
        return took

    async def admit_llm_endpoints(self) -> None:
        """CALLM admission at start-up: endpoints over the median-TTFT limit start out of
        service (and are probed until they recover)."""
        realizer = self.services.realizer
        if not isinstance(realizer, LLMRealizer):
            return
        for health in realizer.endpoints:
            result = await admit(health.endpoint, limit_ms=health.limit_ms, n=self.settings.llm_admission_requests)
            for sample in result.samples_ms:
                health.samples.append(sample)
            if not result.admitted:
                health.in_service = False
                health._start_probing()
            _publish_health(health)
            self.admission.append(result)

    async def open_gateways(self) -> None:
        """WebRTC callers (with voice on) and the SIP server (when a port is set)."""
        s = self.settings
        if self.voice is not None:
            from pipeline.webrtc import WebRTCCalls, set_host_addresses

            if s.webrtc_ice_hosts:
                set_host_addresses(s.webrtc_ice_hosts)
            self.webrtc = WebRTCCalls(
                self.voice,
                self.owners,
                ice_servers=ice_servers(s),
                max_calls=s.webrtc_max_calls,
                max_calls_per_address=s.webrtc_max_calls_per_address,
            )
            if self.live is not None:
                self.live.ice_servers = ice_servers(s)
        if s.sip_port is not None:
            from pipeline.sip import SipConfig, SipServer
            from pipeline.sip.bridge import VoiceCallHandler

            ports = (s.sip_rtp_port_min, s.sip_rtp_port_max)
            config = SipConfig(
                host=s.sip_host,
                port=s.sip_port,
                advertise=s.sip_advertise_host,
                rtp_ports=(ports[0], ports[1]) if ports[0] and ports[1] else None,
                max_calls=s.sip_max_calls,
                max_calls_per_source=s.sip_max_calls_per_source,
            )
            handler = VoiceCallHandler(self.voice, self.owners, instance="")
            server = SipServer(config, handler)
            await server.start()
            handler.instance = f"{config.public_host}:{server.port}"  # recorded on each call
            self.sip = server

    async def close_gateways(self) -> None:
        if self.sip is not None:
            await self.sip.close()
            self.sip = None
        if self.webrtc is not None:
            await self.webrtc.close()
            self.webrtc = None

    async def finish_voice_calls(self, timeout_s: float = 30.0) -> None:
        """Wait for the post-call work of ended voice calls (the final saves among it)."""
        if self.voice is not None and not await self.voice.slots.wait_finished(timeout_s):
            log.error("post-call work still running at shutdown", extra={"calls": self.voice.slots.finishing})

    async def close(self) -> None:
        await self.finish_voice_calls()  # before Redis and the record store close
        await memory.TRIMMER.aclose()
        if self.services.liveness is not None:
            await self.services.liveness.stop()
        realizer = self.services.realizer
        if isinstance(realizer, LLMRealizer):
            await realizer.aclose()
        if self.precomputer is not None:
            await asyncio.to_thread(self.precomputer.close)
        warm = getattr(self, "_warm_thread", None)
        if warm is not None:
            # Exiting while a native model loads in another thread aborts the process.
            await asyncio.to_thread(warm.join, 120)
        await self.calls.close()
        if self.events_reader is not None:
            await self.events_reader.aclose()
        await self.redis.aclose()
        if self.embedded is not None:
            await asyncio.to_thread(self.embedded.stop)
