"""The owner joins a live voice call with their own voice (WebRTC from the console).

While the owner is in the call (``join`` until ``leave``, or the owner's connection drops):

- the owner's microphone goes to the caller: each 20 ms frame is resampled to the call's
  output rate (a resampler of this leg's own: pipecat's stream resamplers are bound to
  the first rate they see) and queued into the call's pipeline as :class:`OwnerAudio`,
  which the call's processor plays to the caller;
- the caller's audio goes to the owner (copied from the call's input, 16 kHz);
- the assistant goes quiet: its pending reply is cut, no caller turn gets a reply, no
  silence check-in; the caller's turns are still transcribed and recorded (role
  ``caller``), and so are the owner's (Silero VAD on the owner's side, the same Whisper
  model; role ``owner``, ``via: join``).

``leave`` hands the call back: the next caller turn is answered by the assistant again.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipecat.audio.utils import create_stream_resampler
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import (
    DataFrame,
    Frame,
    InputAudioRawFrame,
    OutputAudioRawFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner

from . import metrics
from .asr import pcm16_to_float

if TYPE_CHECKING:
    from .voice import VoiceCall

log = logging.getLogger(__name__)

OWNER_RATE = 16000
CONNECT_TIMEOUT_S = 30.0
PRE_ROLL_FRAMES = 15  # ~300 ms of the owner's audio kept before VAD says speech started


@dataclass
class OwnerAudio(DataFrame):
    """The owner's voice for the caller, already at the call's output rate."""

    audio: bytes
    sample_rate: int


@dataclass
class OwnerJoined(DataFrame):
    """The owner is in the call: the assistant stops its reply and stays quiet."""


class OwnerMic(FrameProcessor):
    """The owner's side: microphone to the caller, speech to the transcript."""

    def __init__(self, leg: OwnerLeg, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._leg = leg
        self._speaking = False
        self._speech = bytearray()
        self._pre: collections.deque[bytes] = collections.deque(maxlen=PRE_ROLL_FRAMES)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            await self._leg.to_caller(frame.audio, frame.sample_rate)
            if self._speaking:
                self._speech += frame.audio
            else:
                self._pre.append(frame.audio)
            return  # consumed: never echoed back to the owner
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._speaking = True
            self._speech = bytearray(b"".join(self._pre))
        elif isinstance(frame, VADUserStoppedSpeakingFrame) and self._speaking:
            self._speaking = False
            self._leg.transcribe(bytes(self._speech))
            self._speech = bytearray()
        await self.push_frame(frame, direction)


class OwnerLeg:
    """One owner's WebRTC connection into one live voice call."""

    def __init__(self, call: VoiceCall, conn: Any) -> None:
        self.call = call
        self.conn = conn
        self.worker: PipelineWorker | None = None
        self._resampler = create_stream_resampler()
        self._task: asyncio.Task[None] | None = None
        self._transcribing: set[asyncio.Task[None]] = set()

    @property
    def pc_id(self) -> str:
        return str(self.conn.pc_id)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"owner-leg:{self.call.session.call_id}")

    async def leave(self) -> None:
        """End the owner's leg (idempotent); the assistant takes the call back."""
        if self.worker is not None:
            with contextlib.suppress(Exception):
                await self.worker.cancel()
        if self._task is not None and self._task is not asyncio.current_task():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, 10)
        await asyncio.gather(*self._transcribing, return_exceptions=True)

    async def _run(self) -> None:
        from pipecat.transports.base_transport import TransportParams
        from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

        from .webrtc import _connected

        try:
            if not await _connected(self.conn, CONNECT_TIMEOUT_S):
                return
            transport = SmallWebRTCTransport(
                webrtc_connection=self.conn, params=TransportParams(audio_in_enabled=True, audio_out_enabled=True)
            )
            pipeline = Pipeline(
                [transport.input(), VADProcessor(vad_analyzer=SileroVADAnalyzer()), OwnerMic(self), transport.output()]
            )
            worker = PipelineWorker(
                pipeline,
                params=PipelineParams(audio_in_sample_rate=OWNER_RATE, audio_out_sample_rate=OWNER_RATE),
                enable_rtvi=False,
                idle_timeout_secs=None,
            )

            @transport.event_handler("on_client_disconnected")
            async def _gone(_t: Any, _client: Any) -> None:
                await worker.cancel()

            self.worker = worker
            runner = WorkerRunner(handle_sigint=False)
            await runner.add_workers(worker)
            await runner.run()
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.ERRORS.labels(component="owner_join").inc()
            log.exception("owner leg failed", extra={"call_id": self.call.session.call_id})
        finally:
            self.worker = None
            self.call.owner_left(self)
            with contextlib.suppress(Exception):
                await self.conn.disconnect()

    async def to_caller(self, pcm: bytes, rate: int) -> None:
        """The owner's microphone audio, into the call's pipeline."""
        call_worker = self.call.worker
        out_rate = self.call.voice.options.out_sample_rate
        audio = await self._resampler.resample(pcm, rate, out_rate)
        if audio and call_worker is not None:
            await call_worker.queue_frame(OwnerAudio(audio=audio, sample_rate=out_rate))

    async def to_owner(self, pcm: bytes, rate: int) -> None:
        """The caller's audio, to the owner's ear."""
        if self.worker is not None:
            await self.worker.queue_frame(OutputAudioRawFrame(audio=pcm, sample_rate=rate, num_channels=1))

    def transcribe(self, pcm: bytes) -> None:
        if len(pcm) < OWNER_RATE * 2 // 5:  # under 200 ms: a click, not words
            return
        task = asyncio.get_running_loop().create_task(self._transcribe(pcm))
        self._transcribing.add(task)
        task.add_done_callback(self._transcribing.discard)

    async def _transcribe(self, pcm: bytes) -> None:
        session = self.call.session
        try:
            result = await self.call.voice.recognizer.transcribe(pcm16_to_float(pcm), session.state.lang)
        except Exception:
            metrics.ERRORS.labels(component="asr").inc()
            log.exception("owner speech not transcribed")
            return
        if result.text.strip() and not session.ended:
            await session.owner_said(result.text.strip(), via="join")
