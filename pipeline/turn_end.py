"""End of the caller's turn: Smart Turn's verdict, weighed with the transcript and the pause.

The strategy reads the turn so far through :class:`TurnEvidence` (the call's
:class:`~pipeline.turns.TurnTranscriber` is one), is given the text end-of-turn
classifier (or None) by whoever builds the call, and reports what it did as a typed
frame (:class:`TurnEndedByWords`, one of the voice call's frames, pipeline/voice/frames.py):
it holds no reference to the call, its session or its record.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from pipecat.frames.frames import SystemFrame, VADUserStoppedSpeakingFrame
from pipecat.turns.user_stop import TurnAnalyzerUserTurnStopStrategy

from .asr import Transcript
from .turn_model import TurnTextModel
from .turns import words_end_after


@dataclass
class TurnEndedByWords(SystemFrame):
    """The words ended the caller's turn before the audio model did (the ``count``-th time
    this call): TranscriptAwareTurnStop -> CallProcessor, kept as
    ``stats.turns_ended_by_words``. Defined beside its sender (pipeline.voice imports this
    module, not the other way round); re-exported by pipeline.voice.frames."""

    count: int


class TurnEvidence(Protocol):
    """What the turn-end strategy may know of the caller's turn so far."""

    async def speculative(self) -> Transcript | None:
        """The transcript (text and confidence) as of the last VAD stop; None if the
        caller spoke again since."""
        ...

    def paused_s(self) -> float:
        """Silence since the end of speech, in line-audio time."""
        ...

    async def hold_pause(self, pause_s: float) -> bool:
        """Wait until the caller's pause reaches ``pause_s`` (line-audio time, allowing for
        the VAD's late report of resumed speech); True if the caller spoke meanwhile."""
        ...


class TranscriptAwareTurnStop(TurnAnalyzerUserTurnStopStrategy):
    """Smart Turn, plus the words: when Smart Turn judges the caller's turn incomplete,
    it waits up to its ``stop_secs`` of silence. But the speculative transcript of the
    turn is ready about 0.3 s after the VAD stop; if it reads as a finished turn ("Where
    should I leave it?", "好的，再见。", a statement the classifier ``model`` is sure of)
    and the caller is still silent, the turn ends then, not a second later. A statement
    the classifier doubts (or with no classifier) ends by its words only after a sentence
    pause; a turn that trails off ("and", "然后", "...") keeps Smart Turn's wait."""

    def __init__(self, evidence: TurnEvidence, *, model: TurnTextModel | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._evidence = evidence
        self._model = model
        self._early: asyncio.Task[None] | None = None
        self.early_ends = 0

    async def _handle_vad_user_stopped_speaking(self, frame: VADUserStoppedSpeakingFrame) -> None:
        await super()._handle_vad_user_stopped_speaking(frame)
        if self._early is not None:
            # The caller spoke again and stopped: judge the longer transcript, not the old one.
            await self.task_manager.cancel_task(self._early)
            self._early = None
        if not self._turn_complete:
            self._early = self.task_manager.create_task(self._end_by_words(), f"{self}::_end_by_words")

    async def _end_by_words(self) -> None:
        after: float | None = None
        try:
            heard = await self._evidence.speculative()
            text = heard.text if heard is not None else ""
            after = words_end_after(text, audio_complete=False, model=self._model) if text else None
            # A statement waits for a longer pause than a question (words_end_after), in
            # line-audio time (TurnTranscriber.hold_pause: the VAD reports resumed speech
            # late, unless the line's energy says it stayed quiet). If the caller went on,
            # the VAD start has reached the recorder but maybe not yet this strategy (it
            # sits downstream): do not read its flags.
            if after is not None and after > 0 and await self._evidence.hold_pause(after):
                after = None
        except asyncio.CancelledError:
            return
        finally:
            self._early = None
        speaking = self._vad_user_speaking or not self._vad_stopped
        if after is not None and not speaking and not self._turn_complete:
            self.early_ends += 1
            await self.push_frame(TurnEndedByWords(self.early_ends))
            self._turn_complete = True
            await self._maybe_trigger_user_turn_stopped()

    async def _discard_pending_end_of_turn(self) -> None:
        if self._early is not None:
            await self.task_manager.cancel_task(self._early)
            self._early = None
        await super()._discard_pending_end_of_turn()
