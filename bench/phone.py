"""A simulated caller on Twilio Media Streams: the real wire format over a real WebSocket.

It sends ``connected`` and ``start`` (with ``customParameters``), then the caller's
speech as 20 ms frames of 8 kHz mu-law, base64, in real time (silence between
lines, as a phone line does), and receives the assistant's ``media`` (and ``clear``
on barge-in). Latency is measured as the caller hears it: from the end of the
caller's speech to the first assistant audio that follows.
"""

from __future__ import annotations

import asyncio
import audioop
import base64
import contextlib
import json
import time
import uuid
import wave
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import websockets

FRAME_BYTES = 160  # 20 ms of 8 kHz mu-law
FRAME_S = 0.02
ULAW_SILENCE = b"\xff" * FRAME_BYTES


def pcm16_to_ulaw8k(pcm: bytes, rate: int) -> bytes:
    """int16 mono PCM at ``rate`` -> 8 kHz mu-law (what a phone line carries)."""
    import soxr

    audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
    if rate != 8000:
        audio = soxr.resample(audio, rate, 8000)
    pcm8 = (np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes()
    return audioop.lin2ulaw(pcm8, 2)


def ulaw8k_to_pcm16(ulaw: bytes) -> bytes:
    return audioop.ulaw2lin(ulaw, 2)


def _is_speech(ulaw: bytes, threshold: int = 300) -> bool:
    pcm = np.frombuffer(audioop.ulaw2lin(ulaw, 2), dtype=np.int16)
    return bool(pcm.size) and float(np.sqrt(np.mean(pcm.astype(np.float32) ** 2))) > threshold


@dataclass
class Reply:
    """The assistant audio heard after one caller line."""

    audio: bytes = b""  # 8 kHz mu-law
    latency_s: float | None = None  # end of caller speech -> first assistant audio
    cleared: bool = False


@dataclass
class PhoneCall:
    """One call to a ``/telephony/twilio`` WebSocket."""

    url: str
    line: str
    from_number: str = "+15550001111"
    stream_sid: str = field(default_factory=lambda: "MZ" + uuid.uuid4().hex)
    call_sid: str = field(default_factory=lambda: "CA" + uuid.uuid4().hex)
    _ws: Any = None
    _inbox: list[tuple[float, bytes]] = field(default_factory=list)
    _events: list[tuple[float, str]] = field(default_factory=list)
    _recv_task: asyncio.Task[None] | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    close_code: int | None = None
    sent: list[tuple[float, bytes]] = field(default_factory=list)  # (time, frame) the caller sent
    started: float = field(default_factory=time.monotonic)
    idle: bytes = b""  # mu-law background looped while the caller is silent (empty: silence)
    _idle_pos: int = 0

    async def connect(self, *, send_start: bool = True, extra: dict[str, str] | None = None) -> None:
        self._ws = await websockets.connect(self.url, max_size=2**20, open_timeout=30)
        await self._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        if send_start:
            await self.send_start(extra)
        self._recv_task = asyncio.get_running_loop().create_task(self._receive())

    async def send_start(self, extra: dict[str, str] | None = None) -> None:
        params = {"line": self.line, "from_number": self.from_number, **(extra or {})}
        await self._send(
            {
                "event": "start",
                "sequenceNumber": "1",
                "start": {
                    "accountSid": "AC" + "0" * 32,
                    "streamSid": self.stream_sid,
                    "callSid": self.call_sid,
                    "tracks": ["inbound"],
                    "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
                    "customParameters": params,
                },
                "streamSid": self.stream_sid,
            }
        )

    async def _send(self, msg: dict[str, Any]) -> None:
        await self.send_raw(json.dumps(msg))

    async def send_raw(self, data: str | bytes) -> None:
        """Send one message; if the assistant has hung up, that is the end of the call
        (``closed`` is set), not an error: a caller can always be hung up on mid-sentence."""
        if self.closed.is_set():
            return
        try:
            await self._ws.send(data)
        except websockets.ConnectionClosed as exc:
            self._ended(exc)

    def _ended(self, exc: websockets.ConnectionClosed | None = None) -> None:
        if exc is not None and exc.rcvd is not None:
            self.close_code = exc.rcvd.code
        if self._ws is not None and self._ws.close_code is not None:
            self.close_code = self._ws.close_code
        self.closed.set()

    async def _receive(self) -> None:
        try:
            async for raw in self._ws:
                now = time.monotonic()
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                event = msg.get("event")
                if event == "media":
                    self._inbox.append((now, base64.b64decode(msg["media"]["payload"])))
                elif event:
                    self._events.append((now, event))
        except websockets.ConnectionClosed as exc:
            self._ended(exc)
        finally:
            self._ended()

    async def stream(self, ulaw: bytes, *, seq_start: int = 0, speech_end_s: float | None = None) -> float:
        """Send audio in real time, 20 ms per frame; returns when the last frame with
        speech in it finished playing (the end of the caller's speech). With background
        noise on the line the energy test cannot tell, so the caller passes where its
        speech ends (``speech_end_s`` into ``ulaw``)."""
        t0 = time.monotonic()
        speech_end = t0 if speech_end_s is None else t0 + speech_end_s
        for i in range(0, len(ulaw), FRAME_BYTES):
            if self.closed.is_set():
                break
            chunk = ulaw[i : i + FRAME_BYTES].ljust(FRAME_BYTES, b"\xff")
            self.sent.append((time.monotonic(), chunk))
            if speech_end_s is None and _is_speech(chunk):
                speech_end = t0 + (i // FRAME_BYTES + 1) * FRAME_S
            await self._send(
                {
                    "event": "media",
                    "sequenceNumber": str(seq_start + i // FRAME_BYTES),
                    "media": {
                        "track": "inbound",
                        "chunk": str(i // FRAME_BYTES),
                        "timestamp": "0",
                        "payload": base64.b64encode(chunk).decode(),
                    },
                    "streamSid": self.stream_sid,
                }
            )
            target = t0 + (i // FRAME_BYTES + 1) * FRAME_S
            await asyncio.sleep(max(0.0, target - time.monotonic()))
        return speech_end

    async def say(
        self, ulaw: bytes, *, max_wait_s: float = 15.0, quiet_s: float = 1.2, speech_end_s: float | None = None
    ) -> Reply:
        """Speak one line, keep the line open with silence, and collect the reply."""
        mark = len(self._inbox)
        events_mark = len(self._events)
        speech_end = await self.stream(ulaw, speech_end_s=speech_end_s)
        return await self._collect(mark, events_mark, speech_end, max_wait_s, quiet_s)

    async def listen(self, *, max_wait_s: float = 15.0, quiet_s: float = 1.2, since: float | None = None) -> Reply:
        """Stay silent (sending silence frames) and collect whatever the assistant says."""
        return await self._collect(len(self._inbox), len(self._events), since or time.monotonic(), max_wait_s, quiet_s)

    async def _collect(
        self, mark: int, events_mark: int, speech_end: float, max_wait_s: float, quiet_s: float
    ) -> Reply:
        reply = Reply()
        deadline = speech_end + max_wait_s
        first: float | None = None
        while time.monotonic() < deadline and not self.closed.is_set():
            await self.stream(self._idle_chunk())  # 100 ms of the line between words
            new = self._inbox[mark:]
            speech = [(t, a) for t, a in new if t >= speech_end and _is_speech(a)]
            if first is None and speech:
                first = speech[0][0]
                reply.latency_s = first - speech_end
            if first is not None:
                last = new[-1][0] if new else first
                if time.monotonic() - last > quiet_s:
                    break
        reply.audio = b"".join(a for t, a in self._inbox[mark:])
        reply.cleared = any(e == "clear" for _, e in self._events[events_mark:])
        return reply

    async def hangup(self) -> None:
        with contextlib.suppress(Exception):
            await self._send(
                {
                    "event": "stop",
                    "sequenceNumber": "9999",
                    "stop": {"accountSid": "AC", "callSid": self.call_sid},
                    "streamSid": self.stream_sid,
                }
            )
        await self.close()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._ws.close()
        if self._recv_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._recv_task, 5)

    def _idle_chunk(self) -> bytes:
        """100 ms of what the line carries while nobody speaks: silence, or the caller's
        background noise (``idle``, looped) on a realistic line."""
        if not self.idle:
            return ULAW_SILENCE * 5
        n = FRAME_BYTES * 5
        start = self._idle_pos % len(self.idle)
        self._idle_pos += n
        return (self.idle[start:] + self.idle)[:n]

    def received(self) -> bytes:
        return b"".join(a for _, a in self._inbox)

    def events(self) -> list[str]:
        return [e for _, e in self._events]


def save_wav(path: Path, ulaw: bytes) -> None:
    """8 kHz mu-law -> a 16-bit PCM WAV file anyone can play."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(ulaw8k_to_pcm16(ulaw))


def save_call_wav(path: Path, call: PhoneCall) -> None:
    """The whole call as heard on the line: caller left, assistant right, aligned in time."""
    rate = 8000
    end = max([t for t, _ in call.sent] + [t for t, _ in call._inbox] + [call.started])
    n = int((end - call.started + 1.0) * rate)
    stereo = np.zeros((n, 2), dtype=np.int16)
    for channel, frames in ((0, call.sent), (1, call._inbox)):
        cursor = 0
        for t, chunk in frames:
            pcm = np.frombuffer(ulaw8k_to_pcm16(chunk), dtype=np.int16)
            # Received audio arrives paced in real time; never overlap what is already placed.
            start = max(cursor, int((t - call.started) * rate) - len(pcm))
            stop = min(n, start + len(pcm))
            if stop > start:
                stereo[start:stop, channel] = pcm[: stop - start]
            cursor = stop
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(stereo.tobytes())
