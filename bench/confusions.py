"""What a phone recogniser mishears: Chinese homophones and English sound-alikes.

Chinese: a character becomes another *common* character (GB2312 level 1, the 3,755
most frequent) with the same pinyin and tone, e.g. 卖 -> 麦, 到 -> 道.
English: a word becomes a similar-sounding word or phrase from a small list, the
kind of slip a phone recogniser makes on names and content words.
"""

from __future__ import annotations

from functools import lru_cache

from pypinyin import Style, lazy_pinyin, pinyin

from .textnorm import word_set

EN_CONFUSIONS: dict[str, tuple[str, ...]] = {
    "here": ("hear",), "there": ("their",), "their": ("there",), "right": ("write",),
    "wait": ("weight",), "four": ("for",), "for": ("four",), "two": ("too",), "to": ("two",),
    "door": ("drawer", "floor"), "floor": ("door",), "leave": ("leaf", "live"),
    "left": ("lift",), "package": ("packet",), "parcel": ("partial",),
    "signature": ("signal",), "sign": ("sine",), "spilled": ("spelled",),
    "building": ("bidding",), "lobby": ("hobby",), "driver": ("diver",), "order": ("odor",),
    "meet": ("meat",), "ride": ("right",), "late": ("rate",), "mail": ("male",),
    "sale": ("sail",), "message": ("massage",), "number": ("lumber",),
    "address": ("a dress",), "insurance": ("assurance",), "loan": ("lone",), "code": ("coat",),
    "front": ("font",), "desk": ("disk",), "street": ("treat",), "gate": ("great",),
    "west": ("vest",), "east": ("yeast",), "week": ("weak",), "weekend": ("week and",),
    "tomorrow": ("to borrow",), "tonight": ("to night",),
    "flight": ("fight",), "cab": ("cap",), "car": ("card",), "corner": ("coroner",),
    "food": ("foot",), "soup": ("soap",), "bag": ("back",), "back": ("bag",),
    "call": ("cold",), "calling": ("colin",), "hold": ("old",), "owner": ("loaner",),
    "contract": ("con tract",), "deadline": ("dead line",), "client": ("klein",),
    "report": ("deport",), "school": ("skull",), "doctor": ("docked her",),
    "appointment": ("a point meant",), "account": ("a count",), "bank": ("bang",),
    "card": ("cart",), "police": ("please",),
    "apartment": ("department",), "unit": ("you knit",),
    "outside": ("out side",), "downstairs": ("down stairs",), "entrance": ("entrants",),
    "pickup": ("pick up",), "refund": ("re fund",), "wrong": ("rung",),
    "damaged": ("damage",), "missing": ("mixing",),
    "chen": ("chan",), "alex": ("alec",), "sarah": ("sara",), "li": ("lee",),
    "morgan": ("organ",), "priya": ("pria",), "marcus": ("marcos",), "kim": ("ken",),
    "becker": ("backer",), "elena": ("helena",), "ruiz": ("reese",), "dana": ("donna",),
    "whitfield": ("wheatfield",), "shah": ("shaw",), "oneil": ("o'neal",),
    "jordan": ("jordyn",), "nguyen": ("win",), "patel": ("pastel",), "hughes": ("hues",),
}  # fmt: skip

#: Words a recogniser drops (fillers and short function words).
EN_DROPPABLE = word_set("uh um so just the a like well oh yeah okay hey hi and then really actually")


@lru_cache(maxsize=1)
def _common_chars() -> tuple[str, ...]:
    """GB2312 level-1 characters (the most frequent 3,755 hanzi)."""
    chars: list[str] = []
    for hi in range(0xB0, 0xD8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.append(bytes((hi, lo)).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return tuple(chars)


@lru_cache(maxsize=1)
def _homophone_index() -> dict[str, tuple[str, ...]]:
    """Tone-marked pinyin -> the common characters read that way."""
    index: dict[str, list[str]] = {}
    for ch in _common_chars():
        index.setdefault(lazy_pinyin(ch, style=Style.TONE3)[0], []).append(ch)
    return {k: tuple(v) for k, v in index.items()}


def zh_readings(text: str) -> list[str]:
    """Tone-marked pinyin of each hanzi of ``text`` in order, read in context."""
    readings = [r[0] for r in pinyin(text, style=Style.TONE3, errors="ignore")]
    hanzi = [c for c in text if "\u4e00" <= c <= "\u9fff"]
    if len(readings) != len(hanzi):  # a character pypinyin does not know: read one by one
        readings = [lazy_pinyin(c, style=Style.TONE3)[0] for c in hanzi]
    return readings


def zh_homophones(char: str, reading: str) -> tuple[str, ...]:
    """Common characters with the same pinyin and tone as ``char`` read as ``reading``."""
    return tuple(c for c in _homophone_index().get(reading, ()) if c != char)
