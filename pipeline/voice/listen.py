"""The caller's side of a voice call: the turn recorder (audio and VAD events into the
call's :class:`~pipeline.turns.TurnTranscriber`) and the bridge that emits each ended
turn as one :class:`UserTurnText`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.turns.user_turn_processor import UserTurnProcessor

from ..asr import SpeechRecognizer
from ..asr_bias import call_hotwords, number_hotwords
from ..tts import text_lang
from ..turn_model import TurnTextModel
from ..turns import TurnTranscriber
from .frames import ListeningContext, UserTurnText

SHORT_TURN_GRACE_S = 0.7  # "Okay." followed by more: wait this long before answering "Okay." alone


class Listener:
    """What the recognizer expects on one call: its language (set by
    :class:`ListeningContext` frames and, for a bilingual owner, detected on the first
    turn), hotwords from the owner's set-up, and the call's turn transcriber."""

    def __init__(
        self,
        recognizer: SpeechRecognizer,
        *,
        lang: str,
        languages: tuple[str, ...],
        owner_name: str,
        preset_texts: list[str],
        preset_scenes: list[str],
        turn_model: TurnTextModel | None = None,
    ) -> None:
        self.lang = lang
        self.scene: str | None = None
        self.expect_number = False
        self.languages = languages
        # A bilingual owner's caller may speak either language: detect it on the first turn.
        self.detecting = len(languages) > 1
        self._owner_name = owner_name
        self._preset_texts = preset_texts
        self._preset_scenes = preset_scenes
        self.transcriber = TurnTranscriber(
            recognizer,
            lang=lambda: self.lang,
            hotwords=self.hotwords,
            candidates=lambda: self.languages if self.detecting else (),
            turn_model=turn_model,
            number_hotwords=self.number_pass_hotwords,
        )

    def _call_words(self) -> str:
        return call_hotwords(
            lang=self.lang,
            scene=self.scene,
            owner_name=self._owner_name,
            preset_texts=[t for t in self._preset_texts if text_lang(t) == self.lang],
            scenes=self._preset_scenes,
        )

    def hotwords(self) -> str:
        words = self._call_words()
        # A turn expected to hold a number: a digits example leads the prompt, so Whisper
        # writes digits (139 1234 5678) instead of numerals and homophones (docs/voice.md).
        return number_hotwords(words, self.lang) if self.expect_number else words

    def number_pass_hotwords(self) -> str | None:
        """The prompt of a second decode for a turn that names a number without holding a
        whole one (pipeline.number_pass); None when the turn was decoded with it already."""
        return None if self.expect_number else number_hotwords(self._call_words(), self.lang)

    def heard(self, text: str, lang: str | None) -> str | None:
        """A turn was recognized: the language to report with it (while detecting)."""
        reported = lang if self.detecting and lang and lang != self.lang else None
        if reported is not None:
            self.lang = reported
        if text:
            self.detecting = False
        return reported


class TurnRecorder(FrameProcessor):
    """Feeds the caller's audio and VAD events to the call's TurnTranscriber; forwards
    everything (Smart Turn needs the audio downstream). ``tap``: a copy of the caller's
    audio for the owner while they are in the call."""

    def __init__(self, listener: Listener, *, tap: Callable[[], Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._listener = listener
        self._tap = tap or (lambda: None)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        turns = self._listener.transcriber
        if isinstance(frame, ListeningContext):
            self._listener.lang, self._listener.scene = frame.lang, frame.scene
            self._listener.expect_number = frame.expect_number
            return  # consumed: it was meant for the recognizer
        if isinstance(frame, InputAudioRawFrame):
            turns.audio(frame.audio)
            leg = self._tap()
            if leg is not None:
                await leg.to_owner(frame.audio, frame.sample_rate)
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            turns.speech_started()
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            turns.speech_stopped()
        await self.push_frame(frame, direction)


class TurnBridge(UserTurnProcessor):
    """Emits the caller's whole turn as one UserTurnText when Smart Turn ends it (the
    transcript comes from the TurnTranscriber, started speculatively at the VAD stop)."""

    def __init__(self, listener: Listener, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._listener = listener
        self.add_event_handler("on_user_turn_stopped", self._on_stopped)

    async def _on_stopped(self, _proc: Any, _strategy: Any) -> None:
        text, result = await self._listener.transcriber.turn_text(grace_s=SHORT_TURN_GRACE_S)
        if text is None:
            return  # the caller kept talking: one reply to the whole utterance, later
        lang = self._listener.heard(text, result.lang if result is not None else None)
        asr_ms = None if result is None else round(result.seconds * 1000, 1)
        conf = result.confidence if result is not None else None
        asr = {f"asr_{k}": float(v) for k, v in conf.as_dict().items()} if conf is not None else {}
        await self.push_frame(UserTurnText(text=text, asr_ms=asr_ms, asr=asr, lang=lang))
