"""Telephony WebSockets (Twilio Media Streams, Telnyx, Plivo): the handshake, a guard
around pipecat's serializers, and the call.

- The first messages (``connected``, then ``start``) must arrive within 5 s.
- The owner is resolved from the called line: the start message's custom parameter
  ``line`` (Twilio: a ``<Parameter name="line">`` in the TwiML), else ``To``.
- Messages over 64 KiB are refused, malformed ones dropped, audio arriving faster than
  real time (past a 1 s burst) dropped; all are counted and none ends the call.
  ``stop`` (the caller hung up) ends it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from pipecat.frames.frames import Frame
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.serializers.plivo import PlivoFrameSerializer
from pipecat.serializers.telnyx import TelnyxFrameSerializer
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
from starlette.websockets import WebSocket, WebSocketDisconnect

from . import metrics
from .admission import RealTimeGate
from .records import Channel
from .voice import VoiceCall, VoiceResources, open_voice_call

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024
START_TIMEOUT_S = 5.0


@dataclass
class StartInfo:
    provider: str
    stream_id: str
    call_id: str | None
    line: str | None
    from_number: str | None
    params: dict[str, Any] = field(default_factory=dict)
    encoding: str = "PCMU"


class HandshakeError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _name_values(params: Any) -> dict[str, Any]:
    """Custom parameters as a dict, also from Call Control's ``[{"name", "value"}]`` form."""
    if isinstance(params, list):
        return {str(p.get("name")): p.get("value") for p in params if isinstance(p, dict) and "name" in p}
    return params if isinstance(params, dict) else {}


def _start_info(provider: str, msg: dict[str, Any]) -> StartInfo | None:
    """Parse a provider's start message; None if ``msg`` is not one."""
    event = msg.get("event")
    if provider == "twilio" and event == "start":
        start = msg.get("start") or {}
        params = start.get("customParameters") or {}
        return StartInfo(
            "twilio", str(start.get("streamSid") or msg.get("streamSid") or ""), start.get("callSid"),
            params.get("line") or params.get("To") or params.get("to") or params.get("to_number"),
            params.get("from_number") or params.get("From") or params.get("from"), params,
        )  # fmt: skip
    if provider == "telnyx" and event == "start":
        start = msg.get("start") or {}
        params = _name_values(start.get("custom_parameters") or start.get("customParameters") or {})
        fmt = start.get("media_format") or {}
        return StartInfo(
            "telnyx", str(msg.get("stream_id") or start.get("stream_id") or ""), start.get("call_control_id"),
            params.get("line") or start.get("to") or params.get("To"), start.get("from"), params,
            str(fmt.get("encoding") or "PCMU"),
        )  # fmt: skip
    if provider == "plivo" and event == "start":
        start = msg.get("start") or {}
        params = msg.get("extra_headers") or start.get("extra_headers") or {}
        if isinstance(params, str):
            try:
                params = json.loads(params)
            except ValueError:
                params = dict(kv.split("=", 1) for kv in params.split(",") if "=" in kv)
        return StartInfo(
            "plivo", str(start.get("streamId") or msg.get("streamId") or ""), start.get("callId"),
            params.get("line") or params.get("To") or start.get("to"), params.get("From") or start.get("from"), params,
        )  # fmt: skip
    return None


async def read_start(ws: WebSocket, provider: str, *, limit_s: float = START_TIMEOUT_S) -> StartInfo:
    """Read messages until the provider's start message (within ``timeout`` seconds)."""

    async def loop() -> StartInfo:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                raise HandshakeError("closed before start")
            data = message.get("text") or message.get("bytes")
            if data is None:
                continue
            if len(data) > MAX_MESSAGE_BYTES:
                metrics.DROPPED_FRAMES.labels(transport=provider, reason="oversize").inc()
                continue
            try:
                msg = json.loads(data)
            except ValueError:
                metrics.DROPPED_FRAMES.labels(transport=provider, reason="malformed").inc()
                continue
            if not isinstance(msg, dict):
                metrics.DROPPED_FRAMES.labels(transport=provider, reason="malformed").inc()
                continue
            info = _start_info(provider, msg)
            if info is not None:
                return info

    try:
        return await asyncio.wait_for(loop(), limit_s)
    except TimeoutError as exc:
        raise HandshakeError("no start message within 5 s") from exc
    except WebSocketDisconnect as exc:
        raise HandshakeError("closed before start") from exc


class GuardedSerializer(FrameSerializer):
    """Wraps a provider serializer: oversized or malformed messages are dropped and
    counted (never fatal to the call); ``stop`` ends the call."""

    def __init__(
        self,
        inner: FrameSerializer,
        provider: str,
        call: VoiceCall | None = None,
        *,
        gate: RealTimeGate | None = None,
        bytes_per_s: int = 8000,
    ) -> None:
        super().__init__()
        self.inner = inner
        self.provider = provider
        self.call = call
        self.dropped: dict[str, int] = {}
        self.stopped = asyncio.Event()
        self.gate = gate or RealTimeGate()
        self.bytes_per_s = bytes_per_s  # of decoded caller audio (mu-law/A-law 8 kHz: 8000)

    def _drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1
        metrics.DROPPED_FRAMES.labels(transport=self.provider, reason=reason).inc()
        if self.call is not None:
            self.call.session.note_stat("dropped_frames", dict(self.dropped))

    async def setup(self, setup: Any) -> None:
        await self.inner.setup(setup)

    async def serialize(self, frame: Frame) -> str | bytes | None:
        return await self.inner.serialize(frame)

    async def deserialize(self, data: str | bytes) -> Frame | None:
        if len(data) > MAX_MESSAGE_BYTES:
            self._drop("oversize")
            return None
        try:
            msg = json.loads(data)
        except ValueError:
            self._drop("malformed")
            return None
        if not isinstance(msg, dict) or not isinstance(msg.get("event"), str):
            self._drop("malformed")
            return None
        event = msg["event"]
        if event == "stop":
            self.stopped.set()
            if self.call is not None:
                await self.call.end("caller_hangup", outcome="caller_hangup")
            return None
        if event == "media":
            media = msg.get("media")
            if not isinstance(media, dict) or not isinstance(media.get("payload"), str):
                self._drop("malformed")
                return None
            payload = media["payload"]
            decoded = len(payload) * 3 // 4 - payload[-2:].count("=")
            if not self.gate.admit(decoded / self.bytes_per_s):
                self._drop("too_fast")
                return None
        try:
            return await self.inner.deserialize(data)
        except Exception:
            self._drop("malformed")
            return None


def make_serializer(info: StartInfo) -> FrameSerializer:
    if info.provider == "twilio":
        return TwilioFrameSerializer(
            stream_sid=info.stream_id,
            call_sid=info.call_id,
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
        )
    if info.provider == "telnyx":
        return TelnyxFrameSerializer(
            stream_id=info.stream_id,
            outbound_encoding=info.encoding,
            inbound_encoding="PCMU",
            call_control_id=info.call_id,
            params=TelnyxFrameSerializer.InputParams(auto_hang_up=False),
        )
    if info.provider == "plivo":
        return PlivoFrameSerializer(
            stream_id=info.stream_id,
            call_id=info.call_id,
            params=PlivoFrameSerializer.InputParams(auto_hang_up=False),
        )
    raise ValueError(f"unknown provider {info.provider}")


async def run_telephony_call(
    voice: VoiceResources,
    ws: WebSocket,
    info: StartInfo,
    *,
    owner_id: str,
    line: str,
    on_media_end: Callable[[], None] | None = None,
) -> None:
    """The call, from a parsed start message to hang-up (``on_media_end``: see VoiceCall.run)."""
    channel = cast(Channel, info.provider)
    call = await open_voice_call(
        voice, owner_id=owner_id, line=line, channel=channel, transport_name=info.provider,
        caller_number=info.from_number or None,
    )  # fmt: skip
    call.session.record.stats.update({"provider_call_id": info.call_id, "stream_id": info.stream_id})
    rate = 8000 if info.encoding.upper() in ("PCMU", "PCMA") else 32000  # L16 16 kHz otherwise
    serializer = GuardedSerializer(make_serializer(info), info.provider, call, bytes_per_s=rate)
    transport = FastAPIWebsocketTransport(
        ws,
        FastAPIWebsocketParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            add_wav_header=False,
            serializer=serializer,
        ),
    )
    await call.run(transport, on_media_end=on_media_end)
