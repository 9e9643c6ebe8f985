"""End of the caller's turn: Smart Turn's verdict, weighed with the transcript and the pause."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pipecat.frames.frames import VADUserStoppedSpeakingFrame
from pipecat.turns.user_stop import TurnAnalyzerUserTurnStopStrategy

from .turns import VAD_START_S, words_end_after

if TYPE_CHECKING:
    from .voice import VoiceCall


class TranscriptAwareTurnStop(TurnAnalyzerUserTurnStopStrategy):
    """Smart Turn, plus the words: when Smart Turn judges the caller's turn incomplete,
    it waits up to its ``stop_secs`` of silence. But the speculative transcript of the
    turn is ready about 0.3 s after the VAD stop; if it reads as a finished sentence
    ("Where should I leave it?", "好的，再见。") and the caller is still silent, the turn
    ends then, not a second later. A turn that trails off ("and", "然后", "...") keeps
    Smart Turn's wait."""

    def __init__(self, call: VoiceCall, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call = call
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
            text = await self._call.transcriber.speculative_text()
            after = words_end_after(text) if text else None
            if after is not None and after > 0:
                # A statement waits for a longer pause than a question (words_end_after),
                # in line-audio time; speech resumed is reported VAD_START_S late.
                transcriber = self._call.transcriber
                wait = after + VAD_START_S - transcriber.paused_s()
                if wait > 0 and await transcriber.went_on(wait):
                    # The caller went on. The VAD start has reached the recorder but maybe
                    # not yet this strategy (it sits downstream): do not read its flags.
                    after = None
        except asyncio.CancelledError:
            return
        finally:
            self._early = None
        speaking = self._vad_user_speaking or not self._vad_stopped
        if after is not None and not speaking and not self._turn_complete:
            self.early_ends += 1
            self._call.session.record.stats["turns_ended_by_words"] = self.early_ends
            self._turn_complete = True
            await self._maybe_trigger_user_turn_stopped()

    async def _discard_pending_end_of_turn(self) -> None:
        if self._early is not None:
            await self.task_manager.cancel_task(self._early)
            self._early = None
        await super()._discard_pending_end_of_turn()
