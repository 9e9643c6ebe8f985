"""The assistant's side of a voice call: local TTS, and the playback tracker that
reports which sentences reached the caller."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from pipecat.audio.utils import create_stream_resampler
from pipecat.frames.frames import ErrorFrame, Frame, InterruptionFrame, OutputAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService

from .. import metrics
from ..tts import Synthesizer, units
from .frames import (
    DropUnspoken,
    HangUp,
    PlaybackCut,
    ReplySentence,
    SentenceEnded,
    SentencePlayed,
    SentenceStarted,
    TTSFirstAudio,
)


class LocalTTS(TTSService):
    """Speaks each unit from the audio cache when known, else synthesizes it (in a thread).
    Around each sentence's audio it emits :class:`SentenceStarted` / :class:`SentenceEnded`
    markers; upstream it reports the reply's first audio (:class:`TTSFirstAudio`) and a
    speaker that fails (:class:`HangUp`)."""

    def __init__(self, synthesizer: Synthesizer, **kwargs: Any) -> None:
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            settings=TTSSettings(model=None, voice=None, language=None),
            **kwargs,
        )
        self.synthesizer = synthesizer
        # pipecat's stream resampler is bound to the first input rate it sees; engines
        # differ (piper 22,050 Hz, Kokoro 24,000 Hz), so a call that switches language
        # needs one resampler per rate or it goes mute.
        self._resamplers: dict[int, Any] = {}
        self._dropped_upto = -1  # replies whose unstarted sentences the owner cut
        self._timed: set[int] = set()  # replies whose first audio was reported
        # (reply, index) of the sentences queued to speak, by text (run_tts gets only the text)
        self._queued: dict[str, list[tuple[int, int]]] = {}

    def can_generate_metrics(self) -> bool:
        return True

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, DropUnspoken):
            self._dropped_upto = max(self._dropped_upto, frame.reply)
            await self.push_frame(frame, direction)
            return
        if isinstance(frame, InterruptionFrame):
            self._queued.clear()  # what was queued is dropped
        elif isinstance(frame, ReplySentence):
            if frame.reply <= self._dropped_upto:
                return  # the owner spoke over this sentence before it started
            self._queued.setdefault(frame.text.strip(), []).append((frame.reply, frame.index))
        await super().process_frame(frame, direction)

    def _use_resampler(self, rate: int) -> None:
        if rate not in self._resamplers:
            self._resamplers[rate] = create_stream_resampler()
        self._resampler = self._resamplers[rate]

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        try:
            async for frame in self._speak(text, context_id):
                yield frame
        except Exception as exc:
            # A speaker that cannot speak must not leave the caller in silence.
            metrics.ERRORS.labels(component="tts").inc()
            yield ErrorFrame(error=f"tts failed: {exc!r}")
            error = f"{type(exc).__name__}: {exc}"[:300]
            await self.push_frame(HangUp("speaker_failed", outcome="error", error=error), FrameDirection.UPSTREAM)

    async def _speak(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        queued = self._queued.get(text.strip())
        reply, index = queued.pop(0) if queued else (-1, 0)  # -1: not a reply (the owner's words)
        if queued == []:
            del self._queued[text.strip()]
        t0 = time.perf_counter()
        offset = 0  # characters of the sentence in the units before this one
        for n, unit in enumerate(units(text)):
            audio, cached, engine = await asyncio.to_thread(self.synthesizer.synthesize_unit, unit)
            if n == 0:
                first_ms = (time.perf_counter() - t0) * 1000
                metrics.TTS_FIRST_AUDIO.labels(engine=engine.split(":")[0], cached=str(cached).lower()).observe(
                    first_ms / 1000
                )
                if reply > 0 and reply not in self._timed:
                    self._timed.add(reply)
                    await self.push_frame(TTSFirstAudio(reply, round(first_ms, 1), cached), FrameDirection.UPSTREAM)
            yield SentenceStarted(reply, index, unit, len(audio.pcm) / 2 / audio.rate, offset)
            offset += len(unit)
            self._use_resampler(audio.rate)
            async for frame in self._stream_audio_frames_from_iterator(
                _pieces(audio.pcm, audio.rate * 2 // 5), in_sample_rate=audio.rate, context_id=context_id
            ):
                await self.stop_ttfb_metrics()
                yield frame
        yield SentenceEnded(reply, index)


async def _pieces(pcm: bytes, step: int) -> AsyncIterator[bytes]:
    """Audio in 200 ms pieces, so playback can start and be interrupted promptly."""
    for i in range(0, len(pcm), step):
        yield pcm[i : i + step]


class PlaybackTracker(FrameProcessor):
    """After the output transport: turns the sentence markers that made it out (their
    audio was sent to the caller) into :class:`SentencePlayed`, and an interruption into
    :class:`PlaybackCut` (with how much of the sentence in progress was sent), upstream."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._playing: SentenceStarted | None = None
        self._sent_s = 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, SentenceStarted):
            self._playing, self._sent_s = frame, 0.0
            return
        if isinstance(frame, SentenceEnded):
            self._playing = None
            await self.push_frame(SentencePlayed(frame.reply, frame.index), FrameDirection.UPSTREAM)
            return
        if isinstance(frame, OutputAudioRawFrame) and self._playing is not None and frame.sample_rate:
            self._sent_s += len(frame.audio) / 2 / frame.sample_rate / max(1, frame.num_channels)
        elif isinstance(frame, InterruptionFrame):
            await self.push_frame(self._cut(), FrameDirection.UPSTREAM)
        await self.push_frame(frame, direction)

    def _cut(self) -> PlaybackCut:
        playing, self._playing = self._playing, None
        if playing is None:
            return PlaybackCut(None)
        share = min(1.0, self._sent_s / playing.seconds) if playing.seconds > 0 else 0.0
        return PlaybackCut(playing.reply, playing.index, playing.offset + int(len(playing.text) * share))
