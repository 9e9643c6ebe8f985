"""Numbers in a caller's words: callback numbers, codes, amounts and times as digits.

Pure text processing for :mod:`coordinator.readback` (which keeps the read-back state
and decides what to say). :func:`extract` finds the values in one caller turn; the
helpers below it are shared with the read-back's correction rules.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from safety._numerals import numerals_to_digits

_CALLBACK_WORDS = re.compile(
    r"电话|号码|回电|打给我|联系我|手机|回个电话|打我|"
    r"\b(?:number|call (?:me|us|him|her)|reach (?:me|us)|call (?:me |us )?back|callback|text (?:me|us)"
    r"|phone|cell|mobile)\b"
)
_STRONG_CALLBACK = re.compile(
    r"回电|打给我|联系我|手机|回个电话|打我|"
    r"\b(?:call (?:me|us|him|her)|reach (?:me|us)|call (?:me |us )?back|callback|text (?:me|us)|phone|cell|mobile)\b"
)
_CODE_WORDS = re.compile(
    r"取件码|验证码|取餐码|提货码|门禁|密码|口令|编码|码是|尾号|"
    r"\b(?:code|pin|passcode|password|verification|pickup number|pick-up number)\b"
)
_ORDER_WORDS = re.compile(r"订单|单号|快递单|运单|\b(?:order|tracking|reference|invoice|account)\b")
_DIGITS = re.compile(r"\+?\d(?:[\s\-.()]{0,3}\d)*")
_AMOUNT_EN = re.compile(
    r"\$\s?(?P<a>\d+(?:\.\d{1,2})?)|(?P<b>\d+(?:\.\d{1,2})?)\s*(?:dollars?|bucks)(?:\s*(?:and\s*)?(?P<c>\d{1,2})"
    r"(?:\s*cents?)?)?"
)
_AMOUNT_ZH = re.compile(r"(?P<a>\d+(?:\.\d{1,2})?)\s*(?:块钱|块|元)(?:\s*(?P<c>\d|[一二两三四五六七八九])(?:毛|角)?)?")
_TIME_EN = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>a\.?m\.?|p\.?m\.?|o'clock)|\b(?P<h2>\d{1,2}):(?P<m2>\d{2})\b|"
    r"\bhalf past (?P<h3>\d{1,2})\b|\bquarter past (?P<h4>\d{1,2})\b"
)
_TIME_ZH = re.compile(
    r"(?P<part>上午|早上|早晨|中午|下午|傍晚|晚上)?\s*(?P<h>\d{1,2})\s*点\s*(?:(?P<half>半)|(?P<q>一刻)|(?P<m>\d{1,2})\s*分?)?"
)
_ZH_DIGIT_RUN = re.compile(r"[零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾十]{3,}")
_ZH_CHAR = {
    "零": "0", "〇": "0", "○": "0", "洞": "0", "一": "1", "幺": "1", "壹": "1", "二": "2", "两": "2", "贰": "2",
    "三": "3", "叁": "3", "四": "4", "肆": "4", "五": "5", "伍": "5", "六": "6", "陆": "6", "七": "7", "柒": "7",
    "拐": "7", "八": "8", "捌": "8", "九": "9", "玖": "9", "勾": "9",
}  # fmt: skip
_CHANGE = re.compile(r"改到|改成|换到|推迟到|提前到|推到|\b(?:moved to|changed to|pushed to|push it to)\b")
_STOP = re.compile(r"[。.!?！？;；]")
_ZH_ONE = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_SELF_CORRECT = re.compile(
    r"不对不对|哦不对|不对|说错了|说错|搞错了"
    r"|\b(?:no wait|wait no|sorry,? i mean|i mean|actually|scratch that|no,? sorry)\b",
    re.IGNORECASE,
)
_MERGED_MAX = 13  # digits: a phone number with its country code (pieces are never joined past it)


@dataclass(frozen=True, slots=True)
class Value:
    kind: str  # "callback" | "code" | "amount" | "time"
    value: str  # digits; amounts "12.50", times "15:30"


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    return numerals_to_digits(text)


def find_time(norm: str, lang: str, *, loose: bool = False) -> str | None:
    """``loose``: a bare hour counts too (三点, "at 4"), as in a correction of a time read back.
    A change ("九点的会改到十点", "moved to 4") gives the new time."""
    change = _CHANGE.search(norm)
    if change:
        new, old = (
            find_time(norm[change.end() :], lang, loose=True),
            find_time(norm[: change.start()], lang, loose=loose),
        )
        if new:
            if old and int(old[:2]) >= 12 > int(new[:2]):
                new = f"{int(new[:2]) + 12:02d}{new[2:]}"
            return new
    if lang == "zh" or re.search(r"[\u4e00-\u9fff]", norm):
        m = _TIME_ZH.search(norm)
        if m and (loose or m.group("part") or m.group("half") or m.group("q") or m.group("m")):
            h = int(m.group("h"))
            minute = 30 if m.group("half") else 15 if m.group("q") else int(m.group("m") or 0)
            if m.group("part") in ("下午", "傍晚", "晚上") and h < 12:
                h += 12
            if h <= 24 and minute < 60:
                return f"{h:02d}:{minute:02d}"
    m = _TIME_EN.search(norm)
    if not m and loose:
        bare = re.search(r"\b(?:at |it's |its )?(\d{1,2})\b", norm)
        return f"{int(bare.group(1)):02d}:00" if bare and int(bare.group(1)) <= 24 else None
    if not m:
        return None
    if m.group("h3") or m.group("h4"):
        h, minute = int(m.group("h3") or m.group("h4")), 30 if m.group("h3") else 15
    elif m.group("h2"):
        h, minute = int(m.group("h2")), int(m.group("m2"))
    else:
        h, minute = int(m.group("h")), int(m.group("m") or 0)
        ap = (m.group("ap") or "").replace(".", "")
        if ap == "pm" and h < 12:
            h += 12
        elif ap == "am" and h == 12:
            h = 0
    return f"{h:02d}:{minute:02d}" if h <= 24 and minute < 60 else None


def find_amount(norm: str) -> str | None:
    m = _AMOUNT_EN.search(norm)
    if m:
        whole = m.group("a") or m.group("b")
        if m.group("c") and "." not in whole:
            return f"{whole}.{int(m.group('c')):02d}"
        return f"{float(whole):.2f}"
    m = _AMOUNT_ZH.search(norm)
    if m:
        jiao = m.group("c")
        if jiao and "." not in m.group("a"):
            d = _ZH_ONE.get(jiao) if jiao in _ZH_ONE else int(jiao)
            return f"{m.group('a')}.{d}0"
        return f"{float(m.group('a')):.2f}"
    return None


def digit_text(text: str) -> str:
    """Text for digit strings: a run of three or more Chinese numerals read digit by
    digit (一九五五四五八二八四; 十 inside such a run is a misrecognition, dropped),
    then spoken English digits ("oh", "double five", "forty-three")."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    text = _ZH_DIGIT_RUN.sub(lambda m: "".join(_ZH_CHAR.get(ch, "") for ch in m.group(0)), text)
    return numerals_to_digits(text)


def digit_runs(norm: str, *, merge: bool = False) -> list[str]:
    """Digit runs; ``merge``: runs a few characters apart are one number heard in pieces
    ("534 950 to 4190", "1-5-1, 骑士7-6-6-1-4-3"): read back whole, the caller corrects it.
    Pieces are joined from the end backwards and never past a phone number's length, so a
    stray group before the number ("尾号是4678 139 0123 4678") stays apart."""
    if not merge:
        return [
            ("+" if m.group(0).startswith("+") else "") + re.sub(r"\D", "", m.group(0)) for m in _DIGITS.finditer(norm)
        ]
    runs = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\+?\d+", norm)]
    spans: list[tuple[int, int, str]] = []
    for start, end, d in reversed(runs):
        if spans:
            s0, e0, d0 = spans[-1]
            near = s0 - end <= 4 and not _STOP.search(norm[end:s0])
            if near and not d0.startswith("+") and len(d.lstrip("+")) + len(d0) <= _MERGED_MAX:
                spans[-1] = (start, e0, d + d0)
                continue
        spans.append((start, end, d))
    return [d for _, _, d in reversed(spans)]


def _after_self_correction(utt: str) -> str:
    """A caller who corrects themselves inside the turn ("139 0123 4567, no wait, 4678 at
    the end" / "哦不对不对 是…"): the words after the last correction, when they hold a
    whole number; else the whole turn."""
    last = None
    for m in _SELF_CORRECT.finditer(utt):
        last = m
    if last is None:
        return utt
    tail = utt[last.end() :]
    return tail if any(len(r.lstrip("+")) >= 7 for r in digit_runs(digit_text(tail), merge=True)) else utt


def extract(utt: str, lang: str, *, callback_context: bool = False) -> list[Value]:
    """The callback numbers, codes, amounts and times in one caller turn, as digits."""
    norm = normalize(utt)
    found: list[Value] = []
    time = find_time(norm, lang)
    amount = find_amount(norm)
    if time:
        found.append(Value("time", time))
    if amount:
        found.append(Value("amount", amount))
    order = bool(_ORDER_WORDS.search(norm))  # "my order number is ...": a code, unless "call me at"
    callback = callback_context or bool((_STRONG_CALLBACK if order else _CALLBACK_WORDS).search(norm))
    code = bool(_CODE_WORDS.search(norm)) or order
    taken = {v.value.replace(":", "").replace(".", "").lstrip("0") for v in found}
    for run in digit_runs(digit_text(_after_self_correction(utt) if callback else utt), merge=callback):
        digits = run.lstrip("+")
        if digits.lstrip("0") in taken:
            continue
        if (6 if callback else 10) <= len(digits) <= 15 and (callback or not code):
            found.append(Value("callback", run))
        elif code and 3 <= len(digits) <= 12:
            found.append(Value("code", digits))
    callbacks = [v.value.lstrip("+") for v in found if v.kind == "callback"]
    # "尾号是4678 …13901234678": the tail said on its own is part of the number, not a code
    found = [v for v in found if not (v.kind == "code" and any(c.endswith(v.value) for c in callbacks))]
    return found[:3]
