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

# "get back to me", "ring me on", "get hold of me at", "contact me", 回我电话: a number to call back.
# The strong cues name calling back; "电话", "号码", "number" alone may name an order number too.
_STRONG_ZH = (
    "回电|打给我|联系我|手机|回个电话|打我|回我电话"
    "|回拨|打到我们|我们的?(?:电话|号码)是|(?:办公室|前台|店里)的?电话"  # "回拨到我们前台", "打我们办公室电话"
)
_STRONG_EN = (
    r"call (?:me|us|him|her)|reach (?:me|us)|call (?:me |us )?back|callback|text (?:me|us)|phone|cell|mobile"
    r"|get back to (?:me|us)|ring (?:me|us)|get (?:a )?hold of (?:me|us)|contact (?:me|us)"
    r"|give (?:me|us) a (?:call|ring)|(?:our|my) (?:direct )?(?:number|line)(?:'s| is)"
    r"|(?:call|ring|reach) (?:the|our) (?:office|front desk|desk|reception|clinic|shop|store)(?: back)? (?:at|on)"
)
_CALLBACK_WORDS = re.compile(rf"电话|号码|{_STRONG_ZH}|\b(?:number|{_STRONG_EN})\b")
_STRONG_CALLBACK = re.compile(rf"{_STRONG_ZH}|\b(?:{_STRONG_EN})\b")
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
# Digits said one by one ("一，三，九，…", asked digit by digit): three or more numerals apart.
_ZH_SPELLED = re.compile(
    r"[零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾](?:[，,、\s]+[零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾]){2,}"
)
# A Chinese numeral (or a run of them) next to Arabic digits: one number in two scripts.
_MIXED_RUN = re.compile(
    r"(?:\d[零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾]+|[零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾]+\d)"
    r"[\d零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾]*"
)
# Characters Whisper base writes for a digit's sound (same or near syllable) on phone
# audio; 是 (shì) and 四 (sì) are kept apart: 是 stands before numbers all the time.
_SOUNDS = {
    **dict.fromkeys("衣依医伊腰要妖遥邀摇以亿义", "1"), **dict.fromkeys("儿而尔耳", "2"),
    **dict.fromkeys("山伞散", "3"), **dict.fromkeys("似寺死丝思斯", "4"),
    **dict.fromkeys("无舞武午吴乌屋呜", "5"), **dict.fromkeys("溜刘留流柳牛", "6"),
    **dict.fromkeys("期漆起其奇齐妻器气汽", "7"), **dict.fromkeys("吧把巴爸拔扒疤", "8"),
    **dict.fromkeys("酒久旧舅救", "9"), **dict.fromkeys("令铃灵玲凌龄", "0"),
}  # fmt: skip
_SOUND_RUN = re.compile("[0-9零〇○洞一幺壹二两贰三叁四肆五伍六陆七柒拐八捌九玖勾" + "".join(_SOUNDS) + r"]{4,}")
_CHANGE = re.compile(r"改到|改成|换到|推迟到|提前到|推到|\b(?:moved to|changed to|pushed to|push it to)\b")
_TIME_RANGE = re.compile(
    r"\d{1,2}\s*点[^，。,.!?！？]{0,4}?(?:到|至|-|~)\s*(?:上午|中午|下午|傍晚|晚上)?\s*\d{1,2}\s*点"
    r"|\b\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?\s*(?:to|until|till|through|-)\s*\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?|o'clock)"
)
_STOP = re.compile(r"[。.!?！？;；]")
_ZH_ONE = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_SELF_CORRECT = re.compile(
    r"不对不对|哦不对|不对|说错了|说错|搞错了"
    r"|\b(?:no wait|wait no|sorry,? i mean|i mean|actually|scratch that|no,? sorry)\b",
    re.IGNORECASE,
)
_END_HINT = re.compile(r"\b(?:at the end|end|last|ending|ends)\b|最后|后面|尾号|后四位|后三位|末尾|结尾")
_START_HINT = re.compile(r"\b(?:first|start|beginning|starts)\b|开头|前面|前三位|前四位")
# "最后四位是5687" / "the last four are 0143": the count of digits is not one of them.
_POSITION = re.compile(
    r"(?:最后|后面?|前面?|开头|末尾|尾号?)\s*的?\s*\d\s*位(?:数字?|数|号码?)?"
    r"|\b(?:the )?(?:last|first|final)\s+\d\b(?:\s*(?:digits?|numbers?))?"
)
# A count with its unit ("ten minutes", "二十分钟", "two blocks", "5楼") says how long, how far
# or how many, never a digit of a number being read back.
_QUANTITY = re.compile(
    r"\d+\s*(?:多|来)?\s*(?:个)?\s*(?:分钟|小时|钟头|秒|天|公里|站|块钱|楼|层)"
    r"|\b\d+\s*(?:or so\s+)?(?:more\s+)?(?:minutes?|mins?|hours?|hrs?|seconds?|secs?|days?|weeks?|blocks?|miles?"
    r"|floors?|stops?|percent)\b",
    re.IGNORECASE,
)
_MERGED_MAX = 13  # digits: a phone number with its country code (pieces are never joined past it)


@dataclass(frozen=True, slots=True)
class Value:
    kind: str  # "callback" | "code" | "amount" | "time"
    value: str  # digits; amounts "12.50", times "15:30"


def names_callback(norm: str) -> bool:
    """Does the (normalized) turn speak of a number to call back ("call me back", 回电)?"""
    return bool(_CALLBACK_WORDS.search(norm))


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


def digit_text(text: str, *, sounds: bool = False) -> str:
    """Text for digit strings: a run of three or more Chinese numerals read digit by
    digit (一九五五四五八二八四; 十 inside such a run is a misrecognition, dropped), or
    one by one (一，三，九), a
    numeral touching Arabic digits too (Whisper's mixed forms: 113两, 1三9), then spoken
    English digits ("oh", "double five", "forty-three").

    ``sounds`` (where a number is expected): characters Whisper writes for a digit's sound
    on a phone line (漆/期 for 七, 腰/遥 for 幺, 酒 for 九, 令 for 零) count as that digit
    inside a run that is mostly real digits (at least three, and more than the sounds)."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    if sounds:
        text = _SOUND_RUN.sub(_sound_sub, text)
    text = _ZH_SPELLED.sub(lambda m: "".join(_ZH_CHAR.get(ch, ch) for ch in m.group(0)), text)
    text = _ZH_DIGIT_RUN.sub(lambda m: "".join(_ZH_CHAR.get(ch, "") for ch in m.group(0)), text)
    text = _MIXED_RUN.sub(lambda m: "".join(_ZH_CHAR.get(ch, ch) for ch in m.group(0) if ch != "十"), text)
    return numerals_to_digits(text)


def _sound_sub(m: re.Match[str]) -> str:
    run = m.group(0)
    real = sum(ch.isdigit() or ch in _ZH_CHAR for ch in run)
    alike = sum(ch in _SOUNDS for ch in run)
    if real < 3 or alike >= real:
        return run
    return "".join(_SOUNDS.get(ch, ch) for ch in run)


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
            gap = norm[end:s0]
            near = s0 - end <= 4 and (not _STOP.search(gap) or gap == ".")  # 415.555.0134
            if near and not d0.startswith("+") and len(d.lstrip("+")) + len(d0) <= _MERGED_MAX:
                spans[-1] = (start, e0, d + d0)
                continue
        spans.append((start, end, d))
    return [d for _, _, d in reversed(spans)]


def self_correction(utt: str) -> tuple[str, str] | None:
    """(the words before the caller's last self-correction, the words after it), when the
    words after it hold digits ("五六七八 哦不对 最后是五六七九"); else None."""
    last = None
    for m in _SELF_CORRECT.finditer(utt):
        last = m
    if last is None or not re.search(r"\d", digit_text(utt[last.end() :], sounds=True)):
        return None
    return utt[: last.start()], utt[last.end() :]


def corrected(before: str, utt: str) -> str:
    """``before`` (digits already heard) with the caller's self-correction in ``utt``
    applied: a whole number said again replaces it, a part replaces the digits it
    corrects ("最后是五六七九": the last four); without a correction, the digits added."""
    split = self_correction(utt)
    said = "".join(digit_runs(digit_text(split[0] if split else utt, sounds=True)))
    heard = before + said
    if split is None:
        return heard
    part = "".join(digit_runs(digit_text(split[1], sounds=True)))
    if not heard or len(part) >= len(heard):
        return part
    return apply_correction(heard, part, normalize(split[1]))


def _after_self_correction(utt: str) -> str:
    """A caller who corrects themselves inside the turn ("139 0123 4567, no wait, 4678 at
    the end" / "哦不对不对 是…"): the words after the last correction when they hold a
    whole number; the number before it with the part corrected ("139 1234 5678 哦不对
    最后是5679"); else the whole turn."""
    split = self_correction(utt)
    if split is None:
        return utt
    head, tail = split
    if any(len(r.lstrip("+")) >= 7 for r in digit_runs(digit_text(tail), merge=True)):
        return tail
    runs = digit_runs(digit_text(head, sounds=True), merge=True)
    whole = max(runs, key=len, default="")
    if len(whole.lstrip("+")) < 7:
        return utt
    part = "".join(digit_runs(digit_text(tail, sounds=True)))
    return whole if len(part) >= len(whole.lstrip("+")) else apply_correction(whole, part, normalize(tail))


def extract(utt: str, lang: str, *, callback_context: bool = False) -> list[Value]:
    """The callback numbers, codes, amounts and times in one caller turn, as digits."""
    norm = normalize(utt)
    found: list[Value] = []
    time = find_time(norm, lang)
    amount = find_amount(norm)
    if time and not _CHANGE.search(norm) and _TIME_RANGE.search(norm):
        time = None  # "周四上午9点到下午1点停水": a span in a notice, relayed as said, not one time
    if time:
        found.append(Value("time", time))
    if amount:
        found.append(Value("amount", amount))
    order = bool(_ORDER_WORDS.search(norm))  # "my order number is ...": a code, unless "call me at"
    callback = callback_context or bool((_STRONG_CALLBACK if order else _CALLBACK_WORDS).search(norm))
    code = bool(_CODE_WORDS.search(norm)) or order
    taken = {v.value.replace(":", "").replace(".", "").lstrip("0") for v in found}
    said = _after_self_correction(utt) if callback else utt
    for run in digit_runs(digit_text(said, sounds=callback), merge=callback):
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


def apply_correction(old: str, new: str, utt_norm: str) -> str:
    """Apply a correction: a whole new value, or a part of it ("0143 at the end")."""
    plus = "+" if old.startswith("+") else ""
    o, n = old.lstrip("+"), new.lstrip("+")
    if len(n) >= min(7, len(o) - 1) or not o:
        return new  # a whole number said again (a part is a few digits: "0143 at the end")
    if _END_HINT.search(utt_norm):
        return plus + o[: len(o) - len(n)] + n
    if _START_HINT.search(utt_norm):
        return plus + n + o[len(n) :]

    # Where the correction differs least from what was read back; ties go to the end.
    def cost(i: int) -> tuple[int, int]:
        return sum(a != b for a, b in zip(o[i : i + len(n)], n, strict=True)), -i

    best = min(range(len(o) - len(n) + 1), key=cost)
    return plus + o[:best] + n + o[best + len(n) :]


def dropped_digit(old: str, new: str) -> bool:
    """``new`` is ``old`` with one digit lost on the line (720 55 0191 for 720 555 0191)."""
    o, n = old.lstrip("+"), new.lstrip("+")
    return len(n) == len(o) - 1 and any(o[:i] + o[i + 1 :] == n for i in range(len(o)))


def correction_runs(utt: str) -> list[str]:
    """The digit runs of a caller's answer to a read-back (where digits are expected): a
    position phrase's count is left out ("最后四位是5687" gives 5687, not 45687)."""
    text = _QUANTITY.sub(" ", _POSITION.sub(" ", digit_text(utt, sounds=True)))
    return [r for r in digit_runs(text, merge=True) if len(r.lstrip("+")) >= 2]


_OCLOCK = " o'clock"


def group(value: str, kind: str, lang: str) -> str:
    """How a value is read back, as said: phone numbers in digit groups (415 555 0134, 139 1234
    5678), times as "3 pm", "3:30 pm", "9 o'clock", 下午3点半, amounts as "$15", "$12.50", 15块."""
    if kind == "time":
        h, m = (int(x) for x in value.split(":"))
        if lang == "zh":
            part = "下午" if 12 < h < 18 else "晚上" if h >= 18 else ""
            hh = h - 12 if h > 12 else h
            return f"{part}{hh}点" + ("半" if m == 30 else f"{m}分" if m else "")
        # (A morning hour is kept without "am": "at 4" and "3:15" are read as such, and saying "am"
        # would add what the caller did not say.)
        h %= 24
        suffix = " pm" if h >= 12 else " am" if h == 0 else ""
        if m == 0:
            return f"{h % 12 or 12}{suffix or _OCLOCK}"
        return f"{h % 12 or 12}:{m:02d}{suffix}"
    if kind == "amount":
        return _yuan(value) if lang == "zh" else "$" + value.removesuffix(".00")
    plus = "+" if value.startswith("+") else ""
    d = value.lstrip("+")
    if kind == "code" or len(d) < 7:
        return plus + " ".join(d) if len(d) <= 6 else plus + _groups(d, 4)
    if len(d) == 11 and d.startswith("1") and lang == "zh":
        sizes = [3, 4, 4]
    elif len(d) == 10:
        sizes = [3, 3, 4]
    elif len(d) == 11 and d.startswith("1"):
        sizes = [1, 3, 3, 4]
    else:
        return plus + _groups(d, 4)
    out, i = [], 0
    for s in sizes:
        out.append(d[i : i + s])
        i += s
    return plus + " ".join(out)


def _groups(d: str, size: int) -> str:
    head = len(d) % size or size
    parts = [d[:head]] + [d[i : i + size] for i in range(head, len(d), size)]
    return " ".join(parts)


def _yuan(value: str) -> str:
    """An amount as said in Mandarin: 15块, 12块5, 12块3毛5, 8块零5分 (not "15.00元")."""
    whole, _, cents = value.partition(".")
    jiao, fen = (int(c) for c in (cents + "00")[:2])
    if not jiao and not fen:
        return f"{whole}块"
    if not fen:
        return f"{whole}块{jiao}"
    return f"{whole}块{jiao}毛{fen}" if jiao else f"{whole}块零{fen}分"
