"""Asterisk's chan_websocket (Asterisk 20.16+, 21.11+, 22.6+, 23): the media of one
call over a WebSocket that Asterisk opens to us.

    Dial(WebSocket/callassist/c(ulaw)v(line=${URIENCODE(${EXTEN})}))

BINARY frames carry audio in the dialled codec (ulaw, alaw or slin at 8 kHz); TEXT
frames carry control: events from Asterisk (``MEDIA_START ...``, ``DTMF_END digit:5``,
plain text or JSON) and our commands (``FLUSH_MEDIA`` on barge-in, ``HANGUP`` when
the assistant ends the call). Asterisk re-times what we send, so no pacing is needed
beyond the transport's own.

Written from Asterisk's documentation; Asterisk does not install here, so it is tested
against a scripted stand-in (tests/test_sip_asterisk.py), not a real Asterisk.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pipecat.audio.dtmf.types import KeypadEntry
from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InputDTMFFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
)
from pipecat.serializers.base_serializer import FrameSerializer

from .. import metrics
from . import rtp

log = logging.getLogger(__name__)

LINE_RATE = 8000
CODECS = {"ulaw": "PCMU", "alaw": "PCMA", "slin": "L16"}
MAX_FRAME_BYTES = 64 * 1024


def parse_event(text: str) -> dict[str, Any]:
    """A control event, plain text (``NAME key:value key:value``) or JSON."""
    text = text.strip()
    if text.startswith("{"):
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return data
    name, _, rest = text.partition(" ")
    event: dict[str, Any] = {"event": name}
    for part in rest.split():
        key, sep, value = part.partition(":")
        if sep:
            event[key] = value
    return event


class AsteriskMediaSerializer(FrameSerializer):
    """pipecat frames <-> chan_websocket messages, for FastAPIWebsocketTransport."""

    def __init__(self, codec: str = "ulaw", *, json_control: bool = False) -> None:
        super().__init__()
        self.codec = codec if codec in CODECS else "ulaw"
        self.json_control = json_control
        self.events: list[dict[str, Any]] = []
        self.dropped = 0
        self._in_rate = 16000
        self._in_resampler = create_stream_resampler()
        self._out_resampler = create_stream_resampler()

    async def setup(self, setup: Any) -> None:  # FrameProcessorSetup (BaseObject types it otherwise)
        self._in_rate = int(setup.audio_in_sample_rate)

    def _command(self, name: str) -> str:
        return json.dumps({"command": name}) if self.json_control else name

    def _encode(self, pcm8k: bytes) -> bytes:
        codec = CODECS[self.codec]
        return pcm8k if codec == "L16" else rtp.encode(codec, pcm8k)

    def _decode(self, payload: bytes) -> bytes:
        codec = CODECS[self.codec]
        return payload[: len(payload) // 2 * 2] if codec == "L16" else rtp.decode(codec, payload)

    async def serialize(self, frame: Frame) -> str | bytes | None:
        if isinstance(frame, OutputAudioRawFrame):
            pcm = frame.audio
            if frame.sample_rate != LINE_RATE:
                pcm = await self._out_resampler.resample(pcm, frame.sample_rate, LINE_RATE)
            return self._encode(pcm) if pcm else None
        if isinstance(frame, InterruptionFrame):
            return self._command("FLUSH_MEDIA")  # drop what Asterisk has queued: the caller barged in
        if isinstance(frame, (EndFrame, CancelFrame)):
            return self._command("HANGUP")
        return None

    async def deserialize(self, data: str | bytes) -> Frame | None:
        if len(data) > MAX_FRAME_BYTES:
            self._drop("oversize")
            return None
        if isinstance(data, bytes):
            pcm = await self._in_resampler.resample(self._decode(data), LINE_RATE, self._in_rate)
            return InputAudioRawFrame(audio=pcm, sample_rate=self._in_rate, num_channels=1) if pcm else None
        try:
            event = parse_event(data)
        except ValueError:
            self._drop("malformed")
            return None
        self.events.append(event)
        name = str(event.get("event") or event.get("type") or "")
        if name == "MEDIA_START":
            fmt = str(event.get("format") or "")
            if fmt in CODECS:
                self.codec = fmt
        if name == "DTMF_END":
            digit = str(event.get("digit") or "")
            try:
                return InputDTMFFrame(button=KeypadEntry(digit))
            except ValueError:
                return None
        return None

    def _drop(self, reason: str) -> None:
        self.dropped += 1
        metrics.DROPPED_FRAMES.labels(transport="asterisk", reason=reason).inc()
