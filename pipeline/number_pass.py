"""The second decode of a number turn on the live call path.

A caller who volunteers a number ("my number is 415 555 0134") on a turn the assistant
did not expect one is decoded with the call's own hotwords; Whisper base on a phone line
then often writes part of it as words or homophones ("415 five five five oh one three
four", 「我的电话是幺三九…」). When that first transcript names a number but holds no
whole one (:func:`pipeline.asr_bias.wants_number_pass`), the same audio is decoded once
more with the digits example leading the prompt (:func:`~pipeline.asr_bias.number_hotwords`)
and the more plausible number is kept (:func:`~pipeline.asr_bias.number_text`).

Bounded: the pass runs only when the first decode took at most ``max_first_s`` (the
second costs about as much again, added to this turn's reply time), and is abandoned
after ``timeout_s`` (the first transcript is kept). Cost measured by
``callassist bench readback`` (``number pass ran on N% of turns, X ms p50``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import numpy as np

from .asr import SpeechRecognizer, Transcript
from .asr_bias import number_text, wants_number_pass
from .digit_pass import digit_text, number_span

log = logging.getLogger(__name__)

#: The first decode's time (s) up to which a second one fits the turn's reply budget:
#: ~0.6 s is Whisper base's usual cost on 2 cores (pipeline/turns.py), so a pass adds at
#: most about this much again; on a loaded machine (slower first decodes) it is skipped.
NUMBER_PASS_MAX_FIRST_S = 0.9
NUMBER_PASS_TIMEOUT_S = 1.5


@dataclass(frozen=True, slots=True)
class NumberPass:
    """When and how long the second decode of a number turn may run."""

    max_first_s: float = NUMBER_PASS_MAX_FIRST_S
    timeout_s: float = NUMBER_PASS_TIMEOUT_S

    digits: bool = True  # the digits-only re-decode of the number (pipeline.digit_pass)

    def wanted(self, first: Transcript) -> bool:
        return first.seconds <= self.max_first_s and wants_number_pass(first.text, first.lang)

    def wants_digits(self, heard: Transcript) -> bool:
        """A turn whose first decode fits the budget and holds something like a number."""
        return self.digits and heard.seconds <= self.max_first_s and number_span(heard.text, heard.lang) is not None

    async def run_digits(
        self, recognizer: SpeechRecognizer, audio: np.ndarray, heard: Transcript, hotwords: str
    ) -> Transcript:
        """``heard`` with its number re-decoded digits-only when that gives a whole, plausible
        number (pipeline.digit_pass); ``heard`` otherwise, or when it fails or overruns."""
        if not self.digits or getattr(recognizer, "model", None) is None:
            return heard
        try:
            text = await asyncio.wait_for(
                recognizer.run_on_model(digit_text, audio, heard.text, heard.lang, hotwords),
                self.timeout_s,
            )
        except Exception:
            log.warning("digit pass abandoned", exc_info=True)
            return heard
        if text is None:
            return heard
        return Transcript(text, heard.lang, heard.seconds, heard.audio_s, heard.confidence)

    async def run(
        self, recognizer: SpeechRecognizer, audio: np.ndarray, first: Transcript, hotwords: str
    ) -> Transcript:
        """``first`` or, when the pass is wanted and finds a more plausible number, the
        second decode (its ``seconds`` include both decodes: the turn's recognition cost)."""
        if not self.wanted(first):
            return first
        try:
            second = await asyncio.wait_for(recognizer.transcribe(audio, first.lang, hotwords=hotwords), self.timeout_s)
        except Exception:  # a pass that fails or overruns never costs the caller's turn
            log.warning("number pass abandoned", exc_info=True)
            return first
        if number_text(first.text, second.text, first.lang) != second.text or second.text == first.text:
            return await self.run_digits(recognizer, audio, first, hotwords)
        second.seconds += first.seconds
        return await self.run_digits(recognizer, audio, second, hotwords)
