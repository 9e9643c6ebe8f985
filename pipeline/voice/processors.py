"""The call's turn-taking processor: runs the session on each caller turn and speaks the
reply, commits each turn once its reply has been spoken (or cut off), keeps the silence
check-in, and hands the owner's words and audio to the caller."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    CancelFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InputDTMFFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
    VADUserStartedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from .. import metrics
from ..asr_bias import expects_number
from ..call_turn import CutPoint
from ..owner_join import OwnerAudio, OwnerJoined
from ..session import CallEnded, CallSession
from ..voice_takeover import OwnerSpeech
from .frames import (
    DropUnspoken,
    HangUp,
    ListeningContext,
    PlaybackCut,
    ReplySentence,
    SentencePlayed,
    TTSFirstAudio,
    TurnEndedByWords,
    TurnLatency,
    UserTurnText,
)

log = logging.getLogger(__name__)


class _Reply:
    """Playback of the reply in flight: sentences pushed, played whole, all written."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.pushed = 0
        self.played = 0
        self.written = False


class CallProcessor(FrameProcessor):
    """Runs CallSession.respond() per caller turn and speaks each guarded sentence; the
    turn is committed when its last sentence has been played, or where a barge-in cut it."""

    def __init__(
        self,
        session: CallSession,
        *,
        silence_timeout_s: float,
        transport_name: str,
        owner_present: Callable[[], bool] = lambda: False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._session = session
        self._silence_timeout_s = silence_timeout_s
        self._transport = transport_name
        self._owner_present = owner_present
        self._reply_task: asyncio.Task[None] | None = None
        self._silence_task: asyncio.Task[None] | None = None
        self._bot_speaking = False
        self._user_active = False  # the caller is speaking, or their turn is being handled
        self._pending_end = False
        self._replies = 0  # reply numbers; 0 is the greeting
        self._reply: _Reply | None = None
        self._listening = (session.lang, session.state.scene, False)
        self.barge_ins = 0

    def can_generate_metrics(self) -> bool:
        return True

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if await self._playback(frame):
            return
        if isinstance(frame, UserTurnText):
            await self._user_turn(frame)
            return
        if isinstance(frame, TurnEndedByWords):
            self._session.note_stat("turns_ended_by_words", frame.count)
            return
        if isinstance(frame, OwnerSpeech):
            await self._owner_speech(frame)
            return
        if isinstance(frame, OwnerAudio):
            await self.push_frame(OutputAudioRawFrame(audio=frame.audio, sample_rate=frame.sample_rate, num_channels=1))
            return
        if isinstance(frame, OwnerJoined):
            await self._go_quiet()
            return
        if isinstance(frame, (TranscriptionFrame, InputAudioRawFrame)):
            return  # consumed: mic audio and partial transcripts stop here
        if isinstance(frame, InputDTMFFrame):
            dtmf = list(self._session.record.stats.get("dtmf", []))
            self._session.note_stat("dtmf", [*dtmf, str(frame.button.value)])
            return
        await self._turn_taking(frame)
        await self.push_frame(frame, direction)

    async def _turn_taking(self, frame: Frame) -> None:
        if isinstance(frame, (UserStartedSpeakingFrame, VADUserStartedSpeakingFrame)):
            self._user_active = True
            await self._cancel_silence()
        if isinstance(frame, InterruptionFrame):
            await self._on_barge_in()
        if isinstance(frame, BotStartedSpeakingFrame):
            self._bot_speaking = True
        if isinstance(frame, BotStoppedSpeakingFrame):
            self._bot_speaking = False
            self._arm_silence()
        if isinstance(frame, CancelFrame):
            await self._commit(self._cut_so_far())  # the call stops now: what was played is the turn
        if isinstance(frame, (EndFrame, CancelFrame)):
            await self._cancel_silence()

    # ----------------------------------------------------------- playback ----

    async def _playback(self, frame: Frame) -> bool:
        """Reports from TTS and the playback tracker about the reply in flight."""
        reply = self._reply
        if isinstance(frame, SentencePlayed):
            if reply is not None and frame.reply == reply.number:
                reply.played = max(reply.played, frame.index + 1)
                if reply.written and reply.played >= reply.pushed:
                    await self._commit(None)
            return True
        if isinstance(frame, PlaybackCut):
            if reply is not None and not self._pending_end and self._session.draft is not None:
                if frame.reply == reply.number:
                    await self._commit(CutPoint(frame.index, frame.chars))
                elif reply.played < reply.pushed or not reply.written:
                    await self._commit(self._cut_so_far())
            return True
        if isinstance(frame, TTSFirstAudio):
            if reply is not None and frame.reply == reply.number:
                self._session.note_timings({"tts_first_audio_ms": frame.ms, "tts_cached": 1.0 if frame.cached else 0.0})
            return True
        if isinstance(frame, TurnLatency):
            if self._session.note_timings({"voice_to_voice_ms": round(frame.seconds * 1000, 1)}):
                metrics.VOICE_TO_VOICE.labels(transport=self._transport, lang=self._session.lang).observe(frame.seconds)
            return True
        return False

    def _cut_so_far(self) -> CutPoint | None:
        reply = self._reply
        if reply is None or (reply.written and reply.played >= reply.pushed):
            return None
        return CutPoint(reply.played)

    async def _commit(self, cut: CutPoint | None) -> None:
        """The turn in flight becomes the call's (once); the recognizer hears of a new
        language or scene."""
        if not await self._session.commit_turn(cut=cut):
            return
        self._reply = None
        if cut is None:
            self._arm_silence()  # the reply was heard to its end
        listening = (self._session.lang, self._session.state.scene, expects_number(self._session.state))
        if listening != self._listening:
            self._listening = listening
            await self.push_frame(ListeningContext(*listening), FrameDirection.UPSTREAM)

    # -------------------------------------------------------------- turns ----

    async def say_greeting(self) -> None:
        frame = ReplySentence(self._session.greeting, reply=0)
        if self._session.ended:  # screening blocked the caller: the short close, then hang up
            frame.interruptible = False
            self._pending_end = True
            await self.push_frame(frame)
            await self.push_frame(HangUp("blocked", outcome="blocked", graceful=True), FrameDirection.UPSTREAM)
            return
        await self.push_frame(frame)

    async def _user_turn(self, frame: UserTurnText) -> None:
        self._user_active = False
        await self._cancel_silence()
        if frame.text and self._owner_present():
            await self._session.caller_heard(frame.text)  # the owner is talking: no reply
        elif frame.text:
            await self._start_reply(frame.text, {"asr_ms": frame.asr_ms, **frame.asr}, frame.lang)

    async def _start_reply(
        self, text: str | None, timings: dict[str, float | None] | None = None, lang: str | None = None
    ) -> None:
        if text is not None:
            await self._cancel_silence()
        if self._reply_task is not None and not self._reply_task.done():
            await self.cancel_task(self._reply_task)
        await self._commit(self._cut_so_far())  # a reply still in flight was cut by this turn
        self._reply_task = self.create_task(self._run_reply(text, timings or {}, lang))

    async def _run_reply(self, text: str | None, timings: dict[str, float | None], lang: str | None) -> None:
        session = self._session
        if session.ended:
            return
        await self.start_ttfb_metrics()
        self._replies += 1
        reply = self._reply = _Reply(self._replies)
        try:
            async with contextlib.aclosing(session.respond(text, timings=timings, lang=lang, commit=False)) as stream:
                async for sentence in stream:
                    if reply.pushed == 0:
                        await self.stop_ttfb_metrics()
                    frame = ReplySentence(sentence, reply=reply.number, index=reply.pushed)
                    if session.current_decision is not None and session.current_decision.end_call:
                        frame.interruptible = False  # the goodbye is always heard
                    reply.pushed += 1
                    await self.push_frame(frame)
        except CallEnded:
            return
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.ERRORS.labels(component="coordinator").inc()
            log.exception("reply failed", extra={"call_id": session.call_id})
            return
        reply.written = True
        if reply.played >= reply.pushed:
            await self._commit(None)
        if session.ended:
            self._pending_end = True
            await self.push_frame(
                HangUp("assistant_closed", outcome="completed", graceful=True), FrameDirection.UPSTREAM
            )

    async def _owner_speech(self, frame: OwnerSpeech) -> None:
        """The owner's words: cut the assistant's pending reply, speak them, record them."""
        session = self._session
        if session.ended or self._pending_end:
            return
        await self._go_quiet()
        speak = TTSSpeakFrame(frame.text)
        speak.interruptible = False  # the owner's words are always heard
        await self.push_frame(speak)
        await session.owner_said(frame.text, via="end" if frame.end else "say")
        if frame.end:
            self._pending_end = True
            await self.push_frame(HangUp("owner_ended", outcome="owner_ended", graceful=True), FrameDirection.UPSTREAM)

    async def _go_quiet(self) -> None:
        """The owner speaks or joined: stop the reply in progress (at a sentence boundary:
        the sentence being spoken plays to its end, the rest are dropped)."""
        await self._cancel_silence()
        if self._reply_task is not None and not self._reply_task.done():
            await self.cancel_task(self._reply_task)
            self._reply_task = None
        reply = self._reply
        if reply is not None:
            await self.push_frame(DropUnspoken(reply.number))
            playing = 1 if self._bot_speaking and reply.played < reply.pushed else 0
            await self._commit(CutPoint(reply.played + playing) if self._cut_so_far() else None)

    def _arm_silence(self) -> None:
        """After the assistant finished speaking: check in if the caller stays silent. Not
        while a reply is still being written or played (a pause between its sentences)."""
        if self._owner_present():
            return  # the owner is in the call: no check-in
        busy = self._reply_task is not None and not self._reply_task.done()
        if busy or self._reply is not None or self._pending_end or self._user_active or self._bot_speaking:
            return
        if self._silence_task is None or self._silence_task.done():
            self._silence_task = self.create_task(self._silence_after(self._silence_timeout_s))

    async def _silence_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        await self._start_reply(None, None)

    async def _cancel_silence(self) -> None:
        if self._silence_task is not None and not self._silence_task.done():
            await self.cancel_task(self._silence_task)
        self._silence_task = None

    async def _on_barge_in(self) -> None:
        if self._bot_speaking:
            self.barge_ins += 1
            self._session.note_barge_in(self.barge_ins)
        if self._reply_task is not None and not self._reply_task.done() and not self._pending_end:
            await self.cancel_task(self._reply_task)
            self._reply_task = None
