"""Spoken numbers to digits, Chinese and English.

Phone numbers, prices and times reach the guard in many spoken forms: 一三九,
幺三九, 八十八号, 两百块, "one three nine", "double five", "fifty-six seventy-eight".
:func:`numerals_to_digits` rewrites them to ASCII digits so one set of digit rules
sees them all. It works on lower-cased NFKC text.
"""

from __future__ import annotations

import re

_ZH_DIGIT = {
    "零": 0, "〇": 0, "○": 0, "洞": 0, "一": 1, "幺": 1, "壹": 1, "二": 2, "两": 2,
    "贰": 2, "三": 3, "叁": 3, "四": 4, "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6,
    "七": 7, "柒": 7, "拐": 7, "八": 8, "捌": 8, "九": 9, "玖": 9, "勾": 9,
}  # fmt: skip
_ZH_UNIT = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
# Radio-style digits (洞 拐 勾) are ordinary characters elsewhere (山洞, 拐弯, 勾选):
# they count only inside a run that also holds a standard digit.
_RADIO = frozenset("洞拐勾")
_ZH_RUN = re.compile(r"[零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾十拾百佰千仟万亿]+")
# A lone numeral is converted only before a unit: 三点, 五块, 二号, 两个. 一 is
# excluded from counts (一下, 一个问题) and kept only before strong units.
_ZH_SINGLE_UNITS = (
    "点号楼栋幢层室块元毛角分个位件天月日岁箱份斤公里米门单元小时周次寸码克升杯张条台辆本瓶盒袋包桌间晚人"
)
_ZH_ONE_UNITS = "号楼栋幢层室块元岁"


def _zh_positional(run: str) -> int | None:
    """Value of a numeral run with units (八十八, 两千八, 一万五); None if malformed."""
    total = section = number = 0
    last_unit = 0
    for ch in run:
        if ch in _ZH_DIGIT:
            number = _ZH_DIGIT[ch]
        elif ch in _ZH_UNIT:
            unit = _ZH_UNIT[ch]
            section += (number or (1 if unit == 10 else 0) or 1) * unit
            number, last_unit = 0, unit
        elif ch in _ZH_BIG:
            big = _ZH_BIG[ch]
            total += (section + number) * big
            section = number = 0
            last_unit = big
        else:
            return None
    # 三百五 = 350, 一万五 = 15000: a trailing digit counts in the next lower unit.
    if number and last_unit >= 100 and run[-2] not in "零〇○":
        number *= last_unit // 10
    return total + section + number


def _zh_run_to_digits(run: str, after: str) -> str | None:
    if any(ch in _RADIO for ch in run) and not any(ch in _ZH_DIGIT and ch not in _RADIO for ch in run):
        return None
    if run[0] in _ZH_BIG or (run[0] in _ZH_UNIT and run[0] not in "十拾"):
        return None  # 万一, 千万 (never), 百分百: not numbers
    if len(run) == 1:
        if run in "十拾":
            return "10" if after and after in _ZH_SINGLE_UNITS else None
        if run in _RADIO or not after:
            return None
        if run in "一幺壹":
            return "1" if after in _ZH_ONE_UNITS else None
        return str(_ZH_DIGIT[run]) if after in _ZH_SINGLE_UNITS else None
    if any(ch in _ZH_UNIT or ch in _ZH_BIG for ch in run):
        value = _zh_positional(run)
        return None if value is None else str(value)
    return "".join(str(_ZH_DIGIT[ch]) for ch in run)


def _zh_sub(match: re.Match[str]) -> str:
    text = match.string
    end = match.end()
    after = text[end] if end < len(text) else ""
    if after == "单" and text[end : end + 2] != "单元":
        after = ""
    converted = _zh_run_to_digits(match.group(0), after)
    return match.group(0) if converted is None else converted


_EN_DIGITS = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9,
}  # fmt: skip
_EN_TEENS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_EN_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_EN_WORD = "|".join([*_EN_DIGITS, *_EN_TEENS, *_EN_TENS, "hundred", "thousand", "double", "triple"])
_EN_RUN = re.compile(rf"\b(?:{_EN_WORD})(?:(?:[\s,-]+|[\s,-]*and[\s,-]+)(?:{_EN_WORD}))*\b")
_EN_SPLIT = re.compile(r"[a-z]+")
# Words that are numbers only next to other number words.
_WEAK = frozenset({"one", "oh", "double", "triple", "hundred", "thousand"})


def _en_positional(words: list[str]) -> str:
    total = current = 0
    for w in words:
        if w in _EN_DIGITS:
            current += _EN_DIGITS[w]
        elif w in _EN_TEENS:
            current += _EN_TEENS[w]
        elif w in _EN_TENS:
            current += _EN_TENS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w == "thousand":
            total += (current or 1) * 1000
            current = 0
    return str(total + current)


def _en_sequence(words: list[str]) -> str:
    """Digit-by-digit or pairwise reading: one three nine / fifty-six seventy-eight."""
    out: list[str] = []
    repeat = 1
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("double", "triple"):
            repeat = 2 if w == "double" else 3
        elif w in _EN_TENS:
            if i + 1 < len(words) and words[i + 1] in _EN_DIGITS and words[i + 1] != "oh":
                out.append(str(_EN_TENS[w] + _EN_DIGITS[words[i + 1]]) * repeat)
                i += 1
            else:
                out.append(str(_EN_TENS[w]) * repeat)
            repeat = 1
        elif w in _EN_TEENS:
            out.append(str(_EN_TEENS[w]) * repeat)
            repeat = 1
        elif w in _EN_DIGITS:
            out.append(str(_EN_DIGITS[w]) * repeat)
            repeat = 1
        i += 1
    return "".join(out)


def _en_sub(match: re.Match[str]) -> str:
    words = [w for w in _EN_SPLIT.findall(match.group(0)) if w != "and"]
    if len(words) == 1 and words[0] in _WEAK:
        return match.group(0)
    if "hundred" in words or "thousand" in words:
        return _en_positional(words)
    return _en_sequence(words) or match.group(0)


def numerals_to_digits(text: str) -> str:
    """Rewrite Chinese and English spoken numbers in lower-cased text as digits."""
    if _ZH_RUN.search(text):
        text = _ZH_RUN.sub(_zh_sub, text)
    if _EN_RUN.search(text):
        text = _EN_RUN.sub(_en_sub, text)
    return text


_DIGIT_RUN = re.compile(r"\d(?:[\s\-.,·/()、_*#]{0,3}\d)*")
_NON_DIGIT = re.compile(r"\D+")


def digit_runs(norm: str) -> list[str]:
    """Maximal digit runs of normalized text, separators (spaces, -, ., commas) dropped."""
    return [_NON_DIGIT.sub("", m.group(0)) for m in _DIGIT_RUN.finditer(norm)]
