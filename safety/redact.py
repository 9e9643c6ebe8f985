"""Redaction for audit records: private values and digits masked.

The guard records what it blocked; the record must not become the leak. Private
values (and the fragments the guard derives from them) become ``[private]``;
every digit, whatever its script, becomes ``#``; spoken digit runs (一三九…, "one
three nine") become ``[num]``.
"""

from __future__ import annotations

import re
import unicodedata

from ._facts import fact_patterns
from .types import GuardContext

_DIGIT = re.compile(r"\d")
_ZH_NUM_RUN = re.compile(r"[零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾]{2,}")
_EN_NUM_RUN = re.compile(
    r"\b(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double|triple)"
    r"[\s,-]+){2,}(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b",
    re.IGNORECASE,
)


def redact(text: str, ctx: GuardContext) -> str:
    """``text`` with the context's private values and all digit runs masked."""
    out = unicodedata.normalize("NFKC", text)
    patterns = fact_patterns(ctx.private_facts, ctx.owner_name)
    for fragment in patterns.fragments:
        if len(fragment) >= 2:
            out = re.sub(re.escape(fragment), "[private]", out, flags=re.IGNORECASE)
    if patterns.en is not None:
        out = patterns.en.sub("[private]", out) if out.islower() else _sub_ci(patterns.en, out)
    out = _EN_NUM_RUN.sub("[num]", out)
    out = _ZH_NUM_RUN.sub("[num]", out)
    return _DIGIT.sub("#", out)


def _sub_ci(pattern: re.Pattern[str], text: str) -> str:
    """Apply a lower-case pattern to mixed-case text by matching on a lowered copy."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return text
    pieces: list[str] = []
    last = 0
    for m in pattern.finditer(lowered):
        pieces.append(text[last : m.start()])
        pieces.append("[private]")
        last = m.end()
    pieces.append(text[last:])
    return "".join(pieces)
