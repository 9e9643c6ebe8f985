"""A pipecat transport over one call's RTP session.

Input: caller G.711 (8 kHz) resampled to the pipeline's 16 kHz, as InputAudioRawFrame;
when the caller sends no RTP (silence suppression, hold, the end of a recording) the
input keeps going with silence, so VAD still sees the end of speech. RFC 4733 key
presses become InputDTMFFrame. Output: TTS audio at the pipeline's rate, resampled to
8 kHz if needed, queued on the RTP clock; barge-in drops what is queued.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    StartFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import BaseTransport, TransportParams

from .media import RtpSession

LINE_RATE = 8000
SILENCE_GAP_S = 0.1  # no RTP for this long: feed this much silence


def rtp_params() -> TransportParams:
    return TransportParams(
        audio_in_enabled=True,
        audio_out_enabled=True,
        audio_out_end_silence_secs=0,  # the goodbye is drained before BYE instead
    )


class RtpInputTransport(BaseInputTransport):
    def __init__(self, transport: RtpTransport, params: TransportParams, **kwargs: Any) -> None:
        super().__init__(params, **kwargs)
        self._owner = transport
        self._rx: asyncio.Task[None] | None = None
        self._dtmf: asyncio.Task[None] | None = None
        self._resampler = create_stream_resampler()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        await self._owner.connected()
        if self._rx is None:
            self._rx = self.create_task(self._receive_audio())
            self._dtmf = self.create_task(self._receive_dtmf())

    async def _stop_tasks(self) -> None:
        for task in (self._rx, self._dtmf):
            if task is not None:
                await self.cancel_task(task)
        self._rx = self._dtmf = None

    async def stop(self, frame: EndFrame) -> None:
        await super().stop(frame)
        await self._stop_tasks()

    async def cancel(self, frame: CancelFrame) -> None:
        await super().cancel(frame)
        await self._stop_tasks()

    async def cleanup(self) -> None:
        await super().cleanup()
        await self._stop_tasks()

    async def _receive_audio(self) -> None:
        session = self._owner.session
        gap = b"\x00" * int(LINE_RATE * SILENCE_GAP_S) * 2
        while True:
            try:
                pcm = await asyncio.wait_for(session.audio.get(), SILENCE_GAP_S)
            except TimeoutError:
                pcm = gap
            audio = await self._resampler.resample(pcm, LINE_RATE, self.sample_rate)
            if audio:
                frame = InputAudioRawFrame(audio=audio, sample_rate=self.sample_rate, num_channels=1)
                await self.push_audio_frame(frame)

    async def _receive_dtmf(self) -> None:
        session = self._owner.session
        while True:
            key = await session.events.get()
            with contextlib.suppress(ValueError):  # A-D have no KeypadEntry; the RTP stats keep them
                await self.push_frame(InputDTMFFrame(button=KeypadEntry(key)))


class RtpOutputTransport(BaseOutputTransport):
    def __init__(self, transport: RtpTransport, params: TransportParams, **kwargs: Any) -> None:
        super().__init__(params, **kwargs)
        self._owner = transport
        self._resampler = create_stream_resampler()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InterruptionFrame):
            self._owner.session.clear()

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        session = self._owner.session
        if self._owner.closed:
            return False
        pcm = frame.audio
        if frame.sample_rate != LINE_RATE:
            pcm = await self._resampler.resample(pcm, frame.sample_rate, LINE_RATE)
        await session.write(pcm)
        return True


class RtpTransport(BaseTransport):
    """Events, as the voice call expects of any transport: ``on_client_connected``
    when the pipeline starts, ``on_client_disconnected`` when the caller hangs up."""

    def __init__(self, session: RtpSession, params: TransportParams | None = None) -> None:
        super().__init__()
        self.session = session
        self.closed = False
        self._params = params or rtp_params()
        self._input = RtpInputTransport(self, self._params, name="RtpInput")
        self._output = RtpOutputTransport(self, self._params, name="RtpOutput")
        self._register_event_handler("on_client_connected")
        self._register_event_handler("on_client_disconnected")

    def input(self) -> RtpInputTransport:
        return self._input

    def output(self) -> RtpOutputTransport:
        return self._output

    async def connected(self) -> None:
        await self._call_event_handler("on_client_connected", self.session)

    async def caller_hung_up(self) -> None:
        if not self.closed:
            self.closed = True
            self.session.clear()
            await self._call_event_handler("on_client_disconnected", self.session)
