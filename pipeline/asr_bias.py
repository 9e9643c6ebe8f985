"""Context biasing for Whisper: the words a call is likely to hear.

Whisper's ``hotwords`` (a prompt prefix) tilts decoding toward the terms it holds. Per
call that is: the owner's name, the scene's vocabulary (or the vocabulary of every
scene the owner has presets for), key terms of the owner's preset triggers and
responses (names, places such as 南门 / "Building C", codes), most specific first,
bounded in length because the prompt is short. Key terms are extracted when a preset
pool is saved (``Precomputer.on_pool_saved`` warms the cache), not during a call.
"""

from __future__ import annotations

import re
from functools import lru_cache

from coordinator.types import CallState

from .asr import SCENE_HOTWORDS

MAX_CHARS = {"zh": 120, "en": 200}
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d[\d\-]*")
_EN_STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "me",
        "him",
        "her",
        "us",
        "them",
        "my",
        "your",
        "his",
        "our",
        "their",
        "please",
        "just",
        "can",
        "could",
        "would",
        "should",
        "will",
        "not",
        "no",
        "yes",
        "okay",
        "ok",
        "thanks",
        "thank",
        "there",
        "here",
        "what",
        "when",
        "where",
        "who",
        "how",
        "why",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "tell",
        "say",
        "said",
        "let",
        "know",
        "call",
        "back",
        "right",
        "now",
        "then",
        "also",
        "about",
        "into",
        "over",
        "some",
        "any",
        "all",
        "leave",
    }
)
_ZH_STOP = frozenset(
    {
        "一下",
        "一点",
        "可以",
        "就是",
        "这个",
        "那个",
        "什么",
        "时候",
        "如果",
        "然后",
        "因为",
        "所以",
        "已经",
        "现在",
        "我们",
        "你们",
        "他们",
        "谢谢",
        "麻烦",
        "不用",
        "没有",
    }
)
_ZH_PLACE = re.compile(r"(门|楼|号|路|街|区|栋|单元|柜|站|层|室|口|店|厦|园|村|院)$")


@lru_cache(maxsize=4096)
def key_terms(text: str, lang: str) -> tuple[str, ...]:
    """The specific words of one preset text: names, places, codes, content nouns."""
    if lang == "zh":
        import jieba

        words = [w.strip() for w in jieba.lcut(text)]
        picked = [w for w in words if len(w) >= 2 and w not in _ZH_STOP and re.search(r"[\u4e00-\u9fff\d]", w)]
        # Places first (南门, 快递柜): they are what callers and Whisper disagree on most.
        picked.sort(key=lambda w: 0 if _ZH_PLACE.search(w) else 1)
    else:
        words = _EN_WORD.findall(text)
        picked = [w for w in words if w.lower() not in _EN_STOP and (len(w) > 3 or w[0].isupper() or w[0].isdigit())]
        picked.sort(key=lambda w: 0 if w[0].isupper() or w[0].isdigit() else 1)
    return tuple(dict.fromkeys(picked))


def call_hotwords(
    *,
    lang: str,
    scene: str | None,
    owner_name: str = "",
    preset_texts: list[str] | None = None,
    scenes: list[str] | None = None,
) -> str:
    """The hotwords string for one call turn in ``lang`` (most specific terms first)."""
    terms: list[str] = []
    if owner_name:
        terms.append(owner_name)
    for text in preset_texts or []:
        terms.extend(key_terms(text, lang))
    for s in [scene] if scene else list(scenes or []):
        if s in SCENE_HOTWORDS:
            terms.extend(SCENE_HOTWORDS[s][lang].split())
    out: list[str] = []
    size = 0
    for term in dict.fromkeys(terms):
        if size + len(term) + 1 > MAX_CHARS.get(lang, 200):
            break
        out.append(term)
        size += len(term) + 1
    return " ".join(out)


# ------------------------------------------------------- number turns ----
# Whisper base writes a spoken number as numerals, homophones or words (七 as 漆, 一 as
# 衣, "oh two" as "I know you") unless its prompt shows digits: on turns where a number is
# expected the prompt leads with an example written in digit groups. The example is
# never a real number the caller could have said back whole: a transcript holding it is
# the prompt read back, not the caller (``number_text`` drops it).
NUMBER_HINT = {"zh": "电话号码 138 0000 0000", "en": "phone number 555 000 0000"}
_HINT_DIGITS = {lang: re.sub(r"\D", "", hint) for lang, hint in NUMBER_HINT.items()}
_NUMBER_CUE = re.compile(
    r"电话|号码|手机|回电|打给我|打我|联系我|\b(?:number|phone|cell|mobile|call (?:me|us)|reach (?:me|us))\b",
    re.IGNORECASE,
)


def expects_number(state: CallState) -> bool:
    """Whether the call's next caller turn is expected to hold a number: a number or code
    was just read back (or asked for again), or the assistant asked for a callback number."""
    return state.readback is not None or state.awaiting == "callback"


def number_hotwords(hotwords: str, lang: str) -> str:
    """The call's hotwords for a number-expected turn: the digits example first."""
    hint = NUMBER_HINT.get(lang, NUMBER_HINT["en"])
    return f"{hint} {hotwords}".strip()[: MAX_CHARS.get(lang, 200) + len(hint) + 1]


def plausible_number(value: str, lang: str) -> bool:
    """A whole phone number as callers give them: a Chinese mobile (1[3-9] and 9 digits) or
    a number with its area code (0…, 10-12 digits); in English a North American number (10
    digits, or 11 with the leading 1) or a UK one (0 and 9-10 digits); any 8-15 digits
    with a leading +."""
    v = value.lstrip("+")
    if value.startswith("+"):
        return 8 <= len(v) <= 15
    if lang == "zh":
        return bool(re.fullmatch(r"1[3-9]\d{9}|0\d{9,11}", v))
    return bool(re.fullmatch(r"1?[2-9]\d{9}|0\d{9,10}", v))


def _numbers(text: str, lang: str) -> list[str]:
    from coordinator.spoken_numbers import extract

    return [v.value for v in extract(text, lang, callback_context=True) if v.kind == "callback"]


def wants_number_pass(text: str, lang: str) -> bool:
    """A turn decoded with the call's own hotwords that names a number (电话/号码/"my
    number") but holds no whole one: worth a second decode with :func:`number_hotwords`."""
    if not _NUMBER_CUE.search(text):
        return False
    return not any(plausible_number(v, lang) for v in _numbers(text, lang))


def number_text(first: str, second: str, lang: str) -> str:
    """Of a turn's two decodes (own hotwords, number hotwords), the one to act on: the
    second when its number is more plausible (a whole number where the first has none, or
    more digits), and it is not the example read back."""

    def score(text: str) -> tuple[bool, int]:
        found = _numbers(text, lang)
        return any(plausible_number(v, lang) for v in found), max((len(v) for v in found), default=0)

    if not second or _HINT_DIGITS.get(lang, "") in re.sub(r"\D", "", second):
        return first
    return second if score(second) > score(first) else first
