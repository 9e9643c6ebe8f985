"""Per-context data the checks need, computed once and cached.

A call's context changes a little every turn (one more caller utterance), so the
expensive parts are cached separately: private-fact patterns per (facts, owner),
authorized spans per (presets, allowed texts), normalization per utterance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ._facts import FactPatterns, fact_patterns
from ._text import CJK, View, compact, normalize_cached, split_sentences
from .types import GuardContext

_TITLES_ZH = "先生|女士|小姐|太太|老师|总|经理|医生|律师|师傅|老板|哥|姐"
_TITLE_ZH_END = re.compile(f"(?:{_TITLES_ZH})$")
_CJK_RE = re.compile(f"[{CJK}]")
_NUM = re.compile(r"\d+")
_HALF = re.compile(r"(\d+)点半")
_HM = re.compile(r"(\d+)点(\d+)分?")
_PRICE_FRAC = re.compile(r"(\d+)[块元](\d)")
_TRIM = "。.!?！？;；,，、 "
_QUESTION = re.compile(r"[?？]|[吗呢么]\s*$|\b(?:is|are|was|has|have|did|does|do|can|will)\b.*\?")

# Relative dates and weekdays, Chinese and English, to one key each.
_DATE_KEYS: tuple[tuple[str, str], ...] = (
    ("d+2", r"大后天|后天|day after tomorrow"),
    ("d+1", r"明天|明日|明早|明晚|tomorrow"),
    ("tonight", r"今晚|今天晚上|tonight"),
    ("next_week", r"下周|下个?星期|下个?礼拜|next week"),
    ("next_month", r"下个?月|next month"),
    ("weekend", r"周末|weekend"),
    ("month_end", r"月底|end of (?:the|this) month"),
    ("dow1", r"周一|星期一|礼拜一|monday"),
    ("dow2", r"周二|星期二|礼拜二|tuesday"),
    ("dow3", r"周三|星期三|礼拜三|wednesday"),
    ("dow4", r"周四|星期四|礼拜四|thursday"),
    ("dow5", r"周五|星期五|礼拜五|friday"),
    ("dow6", r"周六|星期六|礼拜六|saturday"),
    ("dow7", r"周日|周天|星期日|星期天|礼拜天|礼拜日|sunday"),
    ("morning", r"(?<!早)上午|早上|早晨|(?<!good )morning"),
    ("noon", r"中午|noon|midday"),
    ("afternoon", r"下午(?!好)|(?<!good )afternoon"),
    ("evening", r"(?<![今明])晚上(?!好)|傍晚|(?<!good )evening"),
)
DATE_RX: tuple[tuple[str, re.Pattern[str]], ...] = tuple((key, re.compile(rx)) for key, rx in _DATE_KEYS)


def date_keys(norm: str) -> set[str]:
    """The relative-date keys mentioned in normalized text."""
    return {key for key, rx in DATE_RX if rx.search(norm)}


@dataclass(frozen=True, slots=True)
class Authorized:
    """Owner-authorized and vetted wordings: presets and allowed texts."""

    wholes: tuple[str, ...]  # compact form of every text and of each of its sentences
    masks: tuple[str, ...]  # lower-cased sentences (trimmed), longest first, to blank out
    text: str  # compact forms joined, for "is this span authorized" lookups
    norm: str  # normalized forms joined, for English word lookups


@dataclass(frozen=True, slots=True)
class Support:
    """What the reply may state as fact: presets, allowed texts, the caller's words."""

    numbers: frozenset[str]
    stream: str
    dates: frozenset[str]
    text: str  # compact, for Chinese lookups
    norm: str  # normalized, for English lookups
    stated: str  # normalized statements only (questions left out), for status claims


@dataclass(frozen=True, slots=True)
class Compiled:
    """Everything the checks read for one context."""

    facts: FactPatterns
    owner: re.Pattern[str] | None
    authorized: Authorized
    support: Support
    last_caller: str  # normalized last caller utterance ("" if none)


@lru_cache(maxsize=256)
def owner_pattern(owner_name: str) -> re.Pattern[str] | None:
    """Regex over normalized text for the ways the owner may be named."""
    norm = normalize_cached(owner_name)
    if not norm:
        return None
    names = {re.escape(norm)}
    if _CJK_RE.search(norm):
        surname = _TITLE_ZH_END.sub("", norm)
        if surname and surname != norm and len(surname) <= 2:
            names.add(f"{re.escape(surname)}(?:{_TITLES_ZH})")
            from pypinyin import lazy_pinyin

            py = "".join(lazy_pinyin(surname))
            names.add(rf"\b(?:mr|ms|mrs|miss|dr)\.?\s+{re.escape(py)}\b")
    else:
        tokens = [t for t in re.split(r"[\s.]+", norm) if len(t) >= 2]
        names.update(rf"\b(?:(?:mr|ms|mrs|miss|dr)\.?\s+)?{re.escape(t)}\b" for t in tokens)
    return re.compile("|".join(sorted(names, key=len, reverse=True)))


def substitute_owner(view: View, owner: re.Pattern[str] | None) -> View:
    """Name the owner as he/他 so the static rules need not know the name."""
    if owner is None or not owner.search(view.norm):
        return view

    def repl(m: re.Match[str]) -> str:
        return "他" if _CJK_RE.search(m.group(0)) else "he"

    return View.of(view.raw, owner.sub(repl, view.norm))


@lru_cache(maxsize=256)
def authorized(preset_texts: tuple[str, ...], allowed_texts: tuple[str, ...]) -> Authorized:
    """Compile the authorized wordings of one context (cached)."""
    wholes: set[str] = set()
    masks: set[str] = set()
    norms: list[str] = []
    for text in (*preset_texts, *allowed_texts):
        norm = normalize_cached(text)
        norms.append(norm)
        wholes.add(compact(norm))
        for sentence in split_sentences(text):
            s_norm = normalize_cached(sentence)
            wholes.add(compact(s_norm))
            trimmed = s_norm.strip(_TRIM)
            if len(compact(trimmed)) >= 2:
                masks.add(trimmed)
    wholes.discard("")
    return Authorized(
        wholes=tuple(sorted(wholes, key=len, reverse=True)),
        masks=tuple(sorted(masks, key=len, reverse=True)),
        text="\n".join(sorted(wholes)),
        norm="\n".join(norms),
    )


@lru_cache(maxsize=4096)
def _numbers_of(norm: str) -> tuple[frozenset[str], str]:
    numbers: set[str] = set()
    for m in _NUM.finditer(norm):
        numbers.add(m.group(0).lstrip("0") or "0")
    for m in _HALF.finditer(norm):
        numbers.update({"30", m.group(1) + "30"})
    for m in _HM.finditer(norm):
        numbers.add(m.group(1) + m.group(2))
    for m in _PRICE_FRAC.finditer(norm):
        numbers.add(m.group(1) + m.group(2))
    for n in list(numbers):
        value = int(n) if len(n) <= 3 else -1
        if 1 <= value <= 12:
            numbers.add(str(value + 12))
        elif 13 <= value <= 24:
            numbers.add(str(value - 12))
    stream = "|".join(re.sub(r"\D", "", m) for m in re.findall(r"\d[\d\s\-.,:/]*", norm))
    return frozenset(numbers), stream


@lru_cache(maxsize=256)
def support(texts: tuple[str, ...]) -> Support:
    """Compile the factual support (presets, allowed texts, conversation, owner name)."""
    numbers: set[str] = set()
    streams: list[str] = []
    dates: set[str] = set()
    norms: list[str] = []
    for text in texts:
        norm = normalize_cached(text)
        norms.append(norm)
        nums, stream = _numbers_of(norm)
        numbers.update(nums)
        streams.append(stream)
        dates.update(date_keys(norm))
    joined = "\n".join(norms)
    stated = "\n".join(
        normalize_cached(sentence)
        for text in texts
        for sentence in split_sentences(text)
        if not _QUESTION.search(sentence)
    )
    return Support(
        numbers=frozenset(numbers),
        stream="|".join(streams),
        dates=frozenset(dates),
        text=compact(joined.replace("\n", "|")),
        norm=joined,
        stated=stated + "\n" + compact(stated),
    )


@lru_cache(maxsize=64)
def compile_context(ctx: GuardContext) -> Compiled:
    """All per-context data for ``ctx`` (cached; sub-parts cached separately)."""
    texts = (*ctx.preset_texts, *ctx.allowed_texts, *ctx.conversation, ctx.owner_name)
    return Compiled(
        facts=fact_patterns(ctx.private_facts, ctx.owner_name),
        owner=owner_pattern(ctx.owner_name),
        authorized=authorized(ctx.preset_texts, ctx.allowed_texts),
        support=support(texts),
        last_caller=normalize_cached(ctx.conversation[-1]) if ctx.conversation else "",
    )
