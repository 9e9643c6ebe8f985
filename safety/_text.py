"""Text views the checks run on: sentence splitting and normalization.

Every check sees one sentence in three forms, computed once (:class:`View`):
``raw`` as written, ``norm`` (NFKC, lower case, curly quotes straightened, spoken
numbers as digits, spaces collapsed) and ``compact`` (``norm`` without spaces or
punctuation, for Chinese substring matching that must ignore how a value was spaced).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ._numerals import numerals_to_digits

CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAS_CJK = re.compile(f"[{CJK}]")
_HAS_LATIN = re.compile(r"[a-z]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "`": "'"})
_SPACES = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[\W_]+")


# Sentence ends: Chinese and English terminators, ellipses, line breaks. A period is
# an end only when it is not inside a number (3.5) or after an abbreviation.
def wordset(words: str) -> frozenset[str]:
    """A frozenset of the space-separated words (keeps long word lists readable)."""
    return frozenset(words.split())


_END = re.compile(r"[。！？；!?;]+|…+|\.{2,}|\.|\n+")
_CLOSERS = "\"'”’)）】」』"
_ABBREV = wordset("mr mrs ms dr st no vs etc e.g i.e a.m p.m jr sr apt rd ave blvd ln sq fl bldg")
_WORD_BEFORE = re.compile(r"([a-z.]+)\s*$")


def _period_ends(text: str, i: int) -> bool:
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt.isdigit() or (nxt and nxt.isalpha() and nxt.islower()):
        return False  # 3.5, a.m., example.com
    m = _WORD_BEFORE.search(text[max(0, i - 12) : i].lower())
    return not (m and m.group(1).strip(".") in _ABBREV)


def split_sentences(text: str) -> list[str]:
    """Split Chinese/English text into sentences, keeping the terminators.

    Handles 。！？；… and . ! ? ; line breaks, closing quotes after a terminator,
    decimals (3.5) and common abbreviations (Mr., a.m.). Empty pieces are dropped.
    """
    out: list[str] = []
    start = 0
    for m in _END.finditer(text):
        if m.group(0) == "." and not _period_ends(text, m.start()):
            continue
        end = m.end()
        while end < len(text) and text[end] in _CLOSERS:
            end += 1
        piece = text[start:end].strip()
        if piece and not all(ch in ".。！？；!?;… \n\"'”’)）】」』" for ch in piece):
            out.append(piece)
        elif piece and out:
            out[-1] += piece
        start = end
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def normalize(text: str) -> str:
    """NFKC, lower case, straight quotes, spoken numbers as digits, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_QUOTES)
    return _SPACES.sub(" ", numerals_to_digits(text)).strip()


def compact(norm: str) -> str:
    """Normalized text without spaces and punctuation."""
    return _NOT_WORD.sub("", norm)


@lru_cache(maxsize=8192)
def normalize_cached(text: str) -> str:
    """:func:`normalize` for texts seen again and again (presets, caller turns)."""
    return normalize(text)


@dataclass(slots=True)
class View:
    """One sentence in the forms the checks need (see module docstring)."""

    raw: str
    norm: str
    compact: str
    has_cjk: bool
    has_latin: bool

    @classmethod
    def of(cls, raw: str, norm: str | None = None) -> View:
        """Build the view of ``raw`` (``norm`` may be given when already computed)."""
        n = normalize(raw) if norm is None else norm
        return cls(
            raw=raw,
            norm=n,
            compact=compact(n),
            has_cjk=bool(_HAS_CJK.search(n)),
            has_latin=bool(_HAS_LATIN.search(n)),
        )
