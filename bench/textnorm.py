"""The verifier's own text normalisation (independent of ``safety/`` by design).

Everything the verifier compares goes through :func:`squash`: NFKC, lower case,
spoken numbers written as digits (Chinese numerals, English number words), and
only letters, digits and CJK characters kept. Two texts that a listener would hear
as the same words therefore compare equal, whatever the punctuation or spacing.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pypinyin import Style, lazy_pinyin

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{_CJK}]")
_KEEP = re.compile(f"[^0-9a-z{_CJK}]+")

# ------------------------------------------------------- Chinese numerals ----

_ZH_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "幺": 1, "二": 2, "两": 2, "三": 3, "四": 4,
    "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
_ZH_RUN = re.compile("[" + "".join(_ZH_DIGITS) + "".join(_ZH_UNITS) + "]+")


def _zh_value(run: str) -> int | None:
    """The value of a numeral with units (一千二百零三 -> 1203), or None if malformed."""
    total = section = number = 0
    for ch in run:
        if ch in _ZH_DIGITS:
            number = _ZH_DIGITS[ch]
        elif ch in ("万", "亿"):
            section = (section + number) * _ZH_UNITS[ch]
            total += section
            section = number = 0
        else:
            unit = _ZH_UNITS[ch]
            section += (number or 1) * unit
            number = 0
    return total + section + number


def _zh_run_to_digits(match: re.Match[str]) -> str:
    run = match.group(0)
    if any(ch in _ZH_UNITS for ch in run):
        if len(run) == 1 and run in ("万", "亿", "千", "百"):
            return run  # a lone unit is a word (一万 needs a digit), keep it
        value = _zh_value(run)
        return run if value is None else str(value)
    return "".join(str(_ZH_DIGITS[ch]) for ch in run)


def zh_numerals_to_digits(text: str) -> str:
    """Write Chinese numerals as digits: 幺三九 -> 139, 一千二百零三 -> 1203, 十 -> 10."""
    return _ZH_RUN.sub(_zh_run_to_digits, text)


# ------------------------------------------------------ English numerals ----

_EN_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9,
}  # fmt: skip
_EN_TEENS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_EN_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_EN_WORD = re.compile(r"[a-z]+(?:-[a-z]+)?|[^a-z]+")


def en_numbers_to_digits(text: str) -> str:
    """Write spoken English numbers as digits (lower-case input).

    ``four one five`` -> ``4 1 5``, ``forty-two`` -> ``42``, ``double five`` -> ``55``,
    ``oh`` between digits -> ``0``. Digit strings are later joined by :func:`digit_runs`.
    """
    parts = _EN_WORD.findall(text)
    out: list[str] = []
    i = 0
    while i < len(parts):
        word = parts[i]
        nxt = _next_word(parts, i)
        if word in ("double", "triple") and nxt is not None and parts[nxt] in _EN_UNITS:
            out.append(str(_EN_UNITS[parts[nxt]]) * (2 if word == "double" else 3))
            i = nxt + 1
            continue
        if "-" in word:
            tens, _, unit = word.partition("-")
            if tens in _EN_TENS and unit in _EN_UNITS:
                out.append(str(_EN_TENS[tens] + _EN_UNITS[unit]))
                i += 1
                continue
        if word in _EN_TENS:
            if nxt is not None and parts[nxt] in _EN_UNITS and parts[nxt] != "zero":
                out.append(str(_EN_TENS[word] + _EN_UNITS[parts[nxt]]))
                i = nxt + 1
                continue
            out.append(str(_EN_TENS[word]))
        elif word in _EN_TEENS:
            out.append(str(_EN_TEENS[word]))
        elif word in _EN_UNITS:
            out.append(str(_EN_UNITS[word]))
        elif word == "oh" and _between_digits(out, parts, nxt):
            out.append("0")
        else:
            out.append(word)
        i += 1
    return "".join(out)


def _next_word(parts: list[str], i: int) -> int | None:
    """Index of the next word if only spaces (or a comma or dash, as in a number read
    in groups) separate it from ``parts[i]``."""
    j = i + 1
    if j < len(parts) and parts[j].strip(" ,-") == "" and j + 1 < len(parts):
        return j + 1
    return None


def _between_digits(out: list[str], parts: list[str], nxt: int | None) -> bool:
    # A number read in groups puts ", " or " - " between them: "five five five, oh one".
    before = next((p for p in reversed(out) if p.strip(" ,-")), "")
    after = parts[nxt] if nxt is not None else ""
    return before[-1:].isdigit() and (after in _EN_UNITS or after == "oh" or after.isdigit())


# ----------------------------------------------------------- public API ----


def spoken_digits(text: str) -> str:
    """NFKC, lower case, and numbers in any spoken form written as digits."""
    text = unicodedata.normalize("NFKC", text).lower()
    return en_numbers_to_digits(zh_numerals_to_digits(text))


@lru_cache(maxsize=8192)
def squash(text: str) -> str:
    """Comparable form: spoken numbers as digits, only [0-9a-z] and CJK characters."""
    return _KEEP.sub("", spoken_digits(text))


_DIGIT_RUN = re.compile(r"\d(?:[\s\-./()+,]{0,2}\d)*")


def digit_runs(text: str) -> list[str]:
    """Maximal digit sequences as heard: ``139 1234-5678`` and 一三九 count as one run."""
    return [re.sub(r"\D", "", m.group(0)) for m in _DIGIT_RUN.finditer(spoken_digits(text))]


def has_cjk(text: str) -> bool:
    return CJK_CHAR.search(text) is not None


_EN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def en_tokens(text: str) -> list[str]:
    """Lower-case English words with numbers as digits (``don't`` stays one word)."""
    return _EN_TOKEN.findall(spoken_digits(text.replace("’", "'")))


@lru_cache(maxsize=4096)
def pinyin_key(text: str) -> str:
    """Toneless pinyin of the squashed text, one syllable per character, space separated.

    Used to match a keyword against a transcript whose characters were misheard as
    homophones (洒 heard as 撒 still matches).
    """
    return " " + " ".join(lazy_pinyin(squash(text), style=Style.NORMAL, errors="default")) + " "


def contains(haystack: str, needle: str) -> bool:
    """``needle`` occurs in ``haystack`` after :func:`squash` (empty needles never match)."""
    n = squash(needle)
    return bool(n) and n in squash(haystack)


def word_set(text: str) -> frozenset[str]:
    """A frozenset of the whitespace-separated words of ``text`` (for word lists)."""
    return frozenset(text.split())
