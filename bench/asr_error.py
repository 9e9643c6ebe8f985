"""Recognition error: character error rate for Chinese, word error rate for English,
on the verifier's normalised text (``textnorm.squash``: no punctuation, numbers as
digits), so "四点" and "4点", "Okay," and "okay" are not counted as errors."""

from __future__ import annotations

import zhconv

from .textnorm import en_tokens, squash


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Levenshtein distance (substitutions, insertions, deletions all cost 1)."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def units_for(text: str, lang: str) -> list[str]:
    if lang == "zh":
        return list(squash(zhconv.convert(text, "zh-cn")))
    return [t for t in en_tokens(text) if t]


def error_rate(ref: str, hyp: str, lang: str) -> tuple[int, int]:
    """(errors, reference length): characters for zh (CER), words for en (WER)."""
    r, h = units_for(ref, lang), units_for(hyp, lang)
    return edit_distance(r, h), len(r)


def rate(errors: int, length: int) -> float:
    return errors / length if length else 0.0
