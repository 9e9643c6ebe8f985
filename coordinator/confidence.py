"""Recognition confidence on a voice turn: below the threshold the assistant asks once
for a repeat instead of acting on a guess (never twice in a row, never on a goodbye), and
an emergent preset does not fire on a misheard match. Pure (no I/O)."""

from __future__ import annotations

import math
import re

from .spoken_numbers import normalize
from .types import CallState

# Whisper's geometric-mean token probability, exp(avg_logprob), below which a turn is
# asked again: avg log-prob < -0.55, chosen on the dev split (docs/voice.md).
LOW_CONFIDENCE = math.exp(-0.55)
_GOODBYE = re.compile(r"\b(?:bye|goodbye|bye-bye|that's all)\b|再见|拜拜|就这样")


def low_confidence(asr_confidence: float | None) -> bool:
    return asr_confidence is not None and asr_confidence < LOW_CONFIDENCE


def ask_repeat(state: CallState, asr_confidence: float | None, utt: str = "") -> bool:
    """True: ask the caller to repeat this turn (once in a row; the next one is acted on).
    A short goodbye ("okay thanks bye", 「好 拜拜」) is never asked again, however unsure
    the recognizer: asking a caller who is hanging up to repeat keeps the call open."""
    if low_confidence(asr_confidence) and not state.repeat_asked and not _goodbye(utt):
        state.repeat_asked = True
        return True
    state.repeat_asked = False
    return False


def _goodbye(utt: str) -> bool:
    norm = normalize(utt)
    short = len(re.findall(r"[a-z']+", norm)) <= 6 and len(re.findall(r"[\u4e00-\u9fff]", norm)) <= 8
    return short and bool(_GOODBYE.search(norm))
