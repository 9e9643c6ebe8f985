"""One voice call: its session, its pipeline, and the one way it ends.

Every end of a voice call goes through :meth:`VoiceCall.end`: the caller hanging up
(Twilio/Telnyx/Plivo ``stop`` or the socket closing, WebRTC or SIP BYE: the transport's
``on_client_disconnected``), the assistant's goodbye, the owner's ``end``, screening's
block, ``MAX_CALL_S``, a failing speaker, a pipeline error. Processors ask for it with a
:class:`~pipeline.voice.frames.HangUp` frame pushed upstream. The record is saved and the
owner's ``call.ended`` event emitted once, by :meth:`CallSession.finish` when the
pipeline has stopped.

The call's slot (``pipeline.admission``) is freed the moment the caller's media ends (the
caller hung up, or the pipeline stopped after the goodbye), not after the post-call work:
that (the owner's leg, the summary, the final save, the owner's events) runs as a
counted, bounded task of :class:`~pipeline.admission.CallSlots` that :meth:`VoiceCall.run`
still waits for, so the record is final when ``run`` returns and a drain waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipecat.audio.turn.smart_turn.base_smart_turn import SmartTurnParams
from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
from pipecat.frames.frames import EndFrame
from pipecat.observers.user_bot_latency_observer import UserBotLatencyObserver
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.turns.user_start import VADUserTurnStartStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from .. import memory, metrics
from ..admission import CallSlots
from ..asr import SpeechRecognizer
from ..records import CallRecord, Channel
from ..session import CallServices, CallSession
from ..tts import Synthesizer
from ..turn_end import TranscriptAwareTurnStop
from ..turn_model import default_model
from ..turns import TurnTranscriber
from ..voice_takeover import VoiceControl
from .frames import HangUp, TurnLatency
from .listen import Listener, TurnBridge, TurnRecorder
from .processors import CallProcessor
from .recording import wav_recorder
from .speech import LocalTTS, PlaybackTracker
from .vad import MARGIN_DB, NoiseGatedVAD

log = logging.getLogger(__name__)

_ACTIVE = [0]  # live voice calls in this process (precomputing waits while > 0)


def active_voice_calls() -> int:
    return _ACTIVE[0]


@dataclass
class VoiceOptions:
    silence_timeout_s: float = 7.0  # no caller speech after the assistant spoke -> a silence turn
    max_call_s: float = 600.0
    out_sample_rate: int = 8000
    record_dir: str | None = None  # write <call_id>.wav here when set
    # The text end-of-turn classifier (Settings.turn_text_model): a statement it scores a
    # whole turn ends the turn at once; off, every statement waits out a sentence pause.
    turn_text_model: bool = False
    vad_noise_margin_db: float | None = MARGIN_DB  # speech must stand this far above the line's noise floor


@dataclass
class VoiceResources:
    """Process-wide voice objects: one ASR model and one synthesizer for all calls."""

    services: CallServices
    recognizer: SpeechRecognizer
    synthesizer: Synthesizer
    options: VoiceOptions = field(default_factory=VoiceOptions)
    precomputer: Any = None  # pipeline.precompute.Precomputer
    slots: CallSlots = field(default_factory=CallSlots)  # shared by every transport's copy
    live: Any = None  # pipeline.takeover.LiveCalls: live calls register there for take-over


class VoiceCall:
    """One voice call: its session, pipeline and the one way it ends (:meth:`end`)."""

    def __init__(self, voice: VoiceResources, session: CallSession, transport_name: str) -> None:
        self.voice = voice
        self.session = session
        self.transport_name = transport_name
        ctx = session.ctx
        preset_texts = [c.preset.trigger or "" for c in ctx.emergent] + [c.preset.response for c in ctx.emergent]
        self.listener = Listener(
            voice.recognizer,
            lang=session.lang,
            languages=tuple(ctx.languages),
            owner_name=ctx.owner_name,
            preset_texts=[*preset_texts, *ctx.regular.values()],
            preset_scenes=list(ctx.regular),
            turn_model=default_model() if voice.options.turn_text_model else None,
        )
        self.listener.transcriber.on_speculative_text = session.precompute  # embedding off the critical path
        self.worker: PipelineWorker | None = None
        self.owner_leg: Any = None  # pipeline.owner_join.OwnerLeg while the owner is in the call
        self._stopping = False
        self._stop_task: asyncio.Task[None] | None = None
        self._running = False  # inside run(): counted in _ACTIVE, holding a slot
        self._media_over = False
        self._on_media_end: Callable[[], None] | None = None

    @property
    def transcriber(self) -> TurnTranscriber:
        """The call's turn transcriber (the turn-end strategy is handed it at build time)."""
        return self.listener.transcriber

    def owner_left(self, leg: Any) -> None:
        if self.owner_leg is leg:
            self.owner_leg = None

    async def end(self, reason: str, *, outcome: str, graceful: bool = False, error: str | None = None) -> None:
        """End the call (idempotent; the first reason counts): mark the session ended and
        stop the pipeline, ``graceful`` after what is queued has been spoken. The record
        is saved, and the owner told, once the pipeline has stopped (:meth:`run`)."""
        if error is not None:
            metrics.ERRORS.labels(component="tts").inc()
            log.error("speech output failed; ending the call", extra={"call_id": self.session.call_id})
            self.session.note_stat("speaker_error", error)
        await self.session.end(reason, outcome=outcome)
        if reason == "caller_hangup":
            self.media_ended()  # nobody is on the line any more (even during a goodbye)
        if self._stopping:
            return
        self._stopping = True
        worker = self.worker
        if worker is None:  # never started: nothing to stop
            await self.session.finish()
        elif worker.has_finished():
            return
        elif graceful:
            await worker.queue_frame(EndFrame())
        else:  # not awaited here: this may run inside the pipeline being cancelled
            self.media_ended()  # the pipeline is cancelled: no more audio either way
            self._stop_task = asyncio.get_running_loop().create_task(worker.cancel())

    def media_ended(self) -> None:
        """The caller's media is over (idempotent): the call stops counting as in progress
        (its slot, the active-calls gauge) though its pipeline may still be stopping and
        its post-call work is still to run."""
        if self._media_over or not self._running:
            return
        self._media_over = True
        _ACTIVE[0] -= 1
        self.session.leave_active()
        if self._on_media_end is not None:
            try:
                self._on_media_end()
            except Exception:
                log.exception("freeing the call's slot failed", extra={"call_id": self.session.call_id})

    def build(self, transport: Any) -> PipelineWorker:
        options = self.voice.options
        processor = CallProcessor(
            self.session,
            silence_timeout_s=options.silence_timeout_s,
            transport_name=self.transport_name,
            owner_present=lambda: self.owner_leg is not None,
        )
        self._processor = processor
        recorder = wav_recorder(options.record_dir, self.session)
        pipeline = Pipeline(
            [
                transport.input(),
                VADProcessor(vad_analyzer=NoiseGatedVAD(margin_db=options.vad_noise_margin_db)),
                TurnRecorder(self.listener, tap=lambda: self.owner_leg),
                TurnBridge(
                    self.listener,
                    user_turn_strategies=UserTurnStrategies(
                        # Only speech starts a turn: a late transcript must not look like barge-in.
                        start=[VADUserTurnStartStrategy()],
                        stop=[
                            TranscriptAwareTurnStop(
                                self.listener.transcriber,
                                model=self.listener.transcriber.turn_model,
                                # An "incomplete" verdict waits at most 1.2 s of silence (not 3 s),
                                # less when the transcript reads as a finished sentence.
                                turn_analyzer=LocalSmartTurnAnalyzerV3(params=SmartTurnParams(stop_secs=1.2)),
                                wait_for_transcript=False,
                            )
                        ],
                    ),
                ),
                processor,
                LocalTTS(self.voice.synthesizer),
                transport.output(),
                PlaybackTracker(),
                *([recorder] if recorder is not None else []),
            ]
        )
        worker = self._worker(pipeline)
        self._wire(transport, worker, processor)
        self.worker = worker
        return worker

    def _worker(self, pipeline: Pipeline) -> PipelineWorker:
        latency = UserBotLatencyObserver()
        worker = PipelineWorker(
            pipeline,
            params=PipelineParams(
                audio_in_sample_rate=16000,
                audio_out_sample_rate=self.voice.options.out_sample_rate,
                enable_metrics=True,
                send_initial_empty_metrics=False,
            ),
            observers=[latency],
            enable_rtvi=False,
            idle_timeout_secs=max(60.0, self.voice.options.silence_timeout_s * 4),
        )

        @latency.event_handler("on_latency_measured")
        async def _measured(_obs: Any, seconds: float) -> None:
            await worker.queue_frame(TurnLatency(seconds))

        worker.set_reached_upstream_filter((HangUp,))

        @worker.event_handler("on_frame_reached_upstream")
        async def _hang_up(_worker: Any, frame: Any) -> None:
            if isinstance(frame, HangUp):
                await self.end(frame.reason, outcome=frame.outcome, graceful=frame.graceful, error=frame.error)

        return worker

    def _wire(self, transport: Any, worker: PipelineWorker, processor: CallProcessor) -> None:
        @transport.event_handler("on_client_connected")
        async def _connected(_t: Any, _client: Any) -> None:
            await processor.say_greeting()

        @transport.event_handler("on_client_disconnected")
        async def _disconnected(_t: Any, _client: Any) -> None:
            await self.end("caller_hangup", outcome="caller_hangup")

    async def run(
        self,
        transport: Any,
        *,
        on_finish: Callable[[CallRecord], None] | None = None,
        on_media_end: Callable[[], None] | None = None,
    ) -> CallRecord:
        """The call, from connection to hang-up; returns once its record is final.

        ``on_media_end`` is called once, as soon as the caller's media has ended (the
        transport frees the call's slot there: the next caller is admitted while this
        call's post-call work runs). ``on_finish``: last facts for the record (e.g. the
        SIP leg's RTP statistics), written before its one final save."""
        self._on_media_end = on_media_end
        self._running = True
        _ACTIVE[0] += 1
        live = self.voice.live
        if live is not None:
            await live.register(VoiceControl(self))
        try:
            await self._media(transport)
        finally:
            self.media_ended()
            # A task of the slots (counted, bounded, awaited by the drain and at shutdown),
            # not of this coroutine: a transport cancelled now does not lose the record.
            after = self.voice.slots.after(self._post_call(on_finish), call_id=self.session.call_id)
        await asyncio.wait({after})  # not cancelled with this coroutine (wait, not await)
        return self.session.record

    async def _media(self, transport: Any) -> None:
        """The pipeline, until it has stopped."""
        worker = self.build(transport)
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        limit = asyncio.get_running_loop().create_task(self._max_duration(self.voice.options.max_call_s))
        try:
            await runner.run()
        except Exception:
            metrics.ERRORS.labels(component="pipeline").inc()
            log.exception("voice call failed", extra={"call_id": self.session.call_id})
            await self.end("error", outcome="error")
        finally:
            limit.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await limit
            await self._stop_pipeline()

    async def _max_duration(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        await self.end("max_duration", outcome="timeout")

    async def _stop_pipeline(self) -> None:
        """After the pipeline: the call has ended (the caller hung up if nobody else ended
        it) and its pipeline is stopped."""
        await self.end("caller_hangup", outcome="caller_hangup")
        if self._stop_task is not None:
            with contextlib.suppress(Exception):
                await self._stop_task
        elif self.worker is not None and not self.worker.has_finished():
            with contextlib.suppress(Exception):
                await self.worker.cancel()

    async def _post_call(self, on_finish: Callable[[CallRecord], None] | None) -> None:
        """Outside the call's slot: the owner's leg, the transcriber, the last facts, then
        the session's finish (summary, final save, owner's events and webhooks)."""
        try:
            live = self.voice.live
            if live is not None:
                await live.unregister(self.session.call_id)
            if self.owner_leg is not None:
                await self.owner_leg.leave()
            self.listener.transcriber.close()
            if on_finish is not None:
                with contextlib.suppress(Exception):
                    on_finish(self.session.record)
            await self.session.finish()
        finally:
            metrics.call_finished(self)  # alive after this (past a gc) means a leak: soak bench
            memory.TRIMMER.call_ended()  # allocator retention, not a leak: hand the pages back


async def open_voice_call(
    voice: VoiceResources,
    *,
    owner_id: str,
    line: str | None,
    channel: Channel,
    transport_name: str,
    caller_number: str | None = None,
) -> VoiceCall:
    session = await CallSession.open(
        voice.services, owner_id=owner_id, channel=channel, line=line, caller_number=caller_number
    )
    if voice.precomputer is not None:
        # Owners set up without the API (CLI) have no cached wordings yet: prepare them now.
        from coordinator.render import all_wordings

        ctx = session.ctx
        texts = [w for lang in ctx.languages for w in all_wordings(ctx.owner_name, lang)]
        voice.precomputer.submit([*ctx.regular.values(), *(c.preset.response for c in ctx.emergent), *texts])
    return VoiceCall(voice, session, transport_name)
