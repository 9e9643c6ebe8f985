"""Private facts -> the patterns that find them in any spoken form.

For each (label, value) the owner marked private we derive, once per context:

- digit windows: every 4-digit window of every digit run of the value (>= 4 digits),
  so a phone number is caught whole, in part, regrouped, in Chinese numerals or
  read digit by digit (the sentence side is normalized to digits first);
- Chinese fragments (matched in the compact view): the whole value, address parts at
  street level and below (漕溪北路, 漕溪, 88号, 3栋, 1201室), other short segments;
- English fragments (matched in the normalized view, word-bounded): street and unit
  parts in every abbreviation (Elm Street / Elm St, apartment 4B / apt 4b), proper
  nouns and distinctive words; the pinyin of Chinese names and street cores, so
  "Caoxi Road" is caught on an English call about 漕溪北路.

City, district and province names are not fragments: too coarse to identify a
home, and callers say them all the time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ._text import CJK, compact, normalize, wordset

_CJK_RE = re.compile(f"[{CJK}]")
_DIGITS = re.compile(r"\d+")
_COARSE = ("特别行政区", "自治区", "自治州", "省", "市", "区", "县")
_ZH_ADDR = re.compile(
    rf"[{CJK}a-z0-9]+?(?:特别行政区|自治区|自治州|省|市|区|县|镇|乡|街道|大道|路|街|巷|弄|胡同|"
    r"村|小区|花园|家园|公寓|大厦|大楼|广场|苑|号楼|号院|号|栋|幢|座|单元|楼|层|室|道)"
)
_ZH_ORG = re.compile(
    rf"[{CJK}a-z0-9]+?(?:股份有限公司|有限责任公司|有限公司|分公司|公司|集团|研究所|研究院|事务所|"
    r"支行|银行|医院|大学|学院|中学|小学|幼儿园|中心|工作室)"
)
_ZH_ORG_TAIL = re.compile(r"(?:股份有限公司|有限责任公司|有限公司|分公司|公司|集团|科技|技术|网络|信息)+$")
_ZH_STREET = ("大道", "路", "街", "巷", "弄", "胡同", "街道", "道")
_ZH_COMPOUND = ("小区", "花园", "家园", "公寓", "大厦", "大楼", "广场", "苑")
_ZH_SPLIT = re.compile(rf"[^{CJK}a-z0-9]+|[的和与及在]")
_ZH_STOP = wordset(
    "妻子 老婆 太太 丈夫 老公 先生 儿子 女儿 孩子 父母 爸爸 妈妈 家人 地址 住址 手机 电话 号码 "
    "公司 单位 每周 每天 工作日 周末 上午 下午 晚上 早上 中午 上班 下班 工作 家里 车牌 "
    "身体 银行 医院 学校 上海 北京 中国 深圳 广州 杭州 南京 研究所 有限公司 中心"
)

_EN_STREET_TYPES = {
    "street": "street|st", "road": "road|rd", "avenue": "avenue|ave|av", "lane": "lane|ln",
    "drive": "drive|dr", "boulevard": "boulevard|blvd", "way": "way", "court": "court|ct",
    "place": "place|pl", "terrace": "terrace|ter", "close": "close", "crescent": "crescent",
    "square": "square|sq", "parkway": "parkway|pkwy", "highway": "highway|hwy",
}  # fmt: skip
_EN_TYPE_OF = {alt: canon for canon, alts in _EN_STREET_TYPES.items() for alt in alts.split("|")}
_EN_UNIT_TYPES = {
    "apartment": "apartment|apt|flat|unit|suite|ste", "room": "room|rm", "floor": "floor|fl",
    "building": "building|bldg|block",
}  # fmt: skip
_EN_UNIT_OF = {alt: canon for canon, alts in _EN_UNIT_TYPES.items() for alt in alts.split("|")}
_EN_STREET = re.compile(
    r"(?:(\d+[a-z]?)\s+)?((?:[a-z][a-z'-]*\s+){0,3}?[a-z][a-z'-]*)\s+("
    + "|".join(sorted(_EN_TYPE_OF, key=len, reverse=True))
    + r")\b\.?"
)
_EN_UNIT = re.compile(
    r"\b(" + "|".join(sorted(_EN_UNIT_OF, key=len, reverse=True)) + r")\b\.?\s*(?:no\.?\s*|#\s*)?"
    r"([a-z]?\d+[a-z]?|[a-z])\b"
)
_ALNUM = re.compile(r"[a-z0-9]*(?:[a-z][0-9]|[0-9][a-z])[a-z0-9]*")
_EN_TOKEN = re.compile(r"[\s,;]+")
_PROPER = re.compile(r"\b[A-Z][A-Za-z'&-]+(?:\s+[A-Z][A-Za-z'&-]+)*")
_EN_STOP = wordset(
    "about after before every weekday weekdays weekend weekends morning mornings afternoon "
    "evening evenings night nights office works working until daily usually always house "
    "street number mobile phone address family school company floor building monday "
    "tuesday wednesday thursday friday saturday sunday january february march april june "
    "july august september october november december through between around there their "
    "where which while other others things people since often sometimes later early "
    "north south east west home private personal mister madam doctor hospital apartment "
    "the road avenue lane drive city state county district province china shanghai beijing "
    "america london york wife husband daughter children mother father brother sister "
    "plate license account balance salary health condition schedule workplace type apt unit "
    "suite room main park church high mill station bridge water king queen market green lake "
    "hill river spring forest garden sunset center central college union first second third "
    "fourth fifth sixth seventh eighth ninth tenth medical royal general national city "
    "international university elementary middle bank group inc ltd corp services solutions "
    "systems tech technologies checking savings ending due"
)
_DIRECTIONS = wordset("north south east west n s e w")
_ZH_DIR = "东南西北中"


# Word edges that also hold next to Chinese characters ("是Mary": no \b between 是 and M).
_B = r"(?<![a-z0-9])"
_E = r"(?![a-z0-9])"


def _word(body: str) -> str:
    return _B + body + _E


_RELATION = re.compile(
    r"^(?:女儿|儿子|妻子|老婆|丈夫|老公|爱人|孩子|父亲|母亲|爸爸|妈妈|哥哥|弟弟|姐姐|妹妹|太太|先生|对象|"
    r"男朋友|女朋友)+"
)


@dataclass(frozen=True, slots=True)
class FactPatterns:
    """Everything derived from one context's private facts (see module docstring)."""

    windows: frozenset[str]
    digits: tuple[str, ...]  # every digit run of every value (>= 4 digits)
    windows3: frozenset[str]  # 3-digit windows of long numbers (phones), used with context
    exact: frozenset[str]  # 3-digit parts of addresses (room 302): caught when said alone
    alnum: re.Pattern[str] | None  # letter-digit codes (plates, unit ids), any separators
    zh: re.Pattern[str] | None
    en: re.Pattern[str] | None
    fragments: tuple[str, ...]


def _alt_regex(parts: set[str]) -> re.Pattern[str] | None:
    if not parts:
        return None
    return re.compile("|".join(sorted(parts, key=len, reverse=True)))


def _pinyin_regex(text: str) -> str | None:
    from pypinyin import lazy_pinyin  # slow import (~0.3 s), only when facts hold Chinese

    syllables = [s for s in lazy_pinyin(text) if s.isalpha()]
    if len(syllables) < 2 or len("".join(syllables)) < 4:
        return None
    return _word(r"[\s-]?".join(map(re.escape, syllables)))


def _zh_address(norm_value: str, zh: set[str], pinyin: set[str]) -> None:
    for frag in _ZH_ADDR.findall(compact(norm_value)):
        if frag.endswith(_COARSE) and not frag.endswith(("小区", "园区", "街区")):
            continue
        zh.add(frag)
        num = _DIGITS.match(frag)
        if num and len(frag) - num.end() <= 2:
            continue  # 88号, 3栋: the digits with their unit are the fragment
        for suffixes, min_core in ((_ZH_STREET, 2), (_ZH_COMPOUND, 3)):
            suffix = next((s for s in suffixes if frag.endswith(s)), None)
            if suffix is None:
                continue
            core = frag[: -len(suffix)]
            for part in {core, core.rstrip(_ZH_DIR)}:
                if len(part) >= min_core and part not in _ZH_STOP:
                    zh.add(part)
                    rx = _pinyin_regex(part)
                    if rx:
                        pinyin.add(rx)


def _zh_org(norm_value: str, zh: set[str], pinyin: set[str]) -> bool:
    found = False
    for frag in _ZH_ORG.findall(compact(norm_value)):
        found = True
        zh.add(frag)
        core = _ZH_ORG_TAIL.sub("", frag)
        for part in {core, frag[: len(core)]}:
            if len(part) >= 2 and part not in _ZH_STOP and part != frag:
                zh.add(part)
                rx = _pinyin_regex(part) if len(part) <= 4 else None
                if rx:
                    pinyin.add(rx)
    return found


def _zh_generic(norm_value: str, zh: set[str], pinyin: set[str]) -> None:
    segments = _ZH_SPLIT.split(norm_value)
    segments += [_RELATION.sub("", seg) for seg in segments if _RELATION.match(seg)]
    for seg in segments:
        if not _CJK_RE.search(seg) or seg in _ZH_STOP or len(seg) < 2:
            continue
        if len(seg) <= 6:
            zh.add(seg)
            if len(seg) <= 4:
                rx = _pinyin_regex(seg)
                if rx:
                    pinyin.add(rx)
        else:
            zh.update(seg[i : i + 4] for i in range(len(seg) - 3))


def _en_street_regex(num: str | None, core: str, kind: str) -> set[str]:
    types = _EN_STREET_TYPES[_EN_TYPE_OF[kind]]
    words = r"\s+".join(map(re.escape, core.split()))
    out = {_word(rf"{words}\s+(?:{types})")}
    if num:
        out.add(_word(rf"{re.escape(num)}\s+{words}"))
    for token in core.split():
        if len(token) >= 4 and token not in _DIRECTIONS and token not in _EN_STOP:
            out.add(_word(re.escape(token)))
    return out


def _en_address(norm_value: str, en: set[str]) -> None:
    for m in _EN_STREET.finditer(norm_value):
        num, core, kind = m.group(1), m.group(2), m.group(3)
        core_words = [w for w in core.split() if w not in ("at", "on", "in", "the", "of")]
        if core_words:
            en.update(_en_street_regex(num, " ".join(core_words), kind))
    for m in _EN_UNIT.finditer(norm_value):
        kind, ident = _EN_UNIT_OF[m.group(1)], m.group(2)
        en.add(_word(rf"(?:{_EN_UNIT_TYPES[kind]})\.?\s*(?:no\.?\s*|#\s*)?{re.escape(ident)}"))
        if re.search(r"[a-z]", ident) and re.search(r"\d", ident):
            en.add(_word(re.escape(ident)))


def _en_generic(raw_value: str, norm_value: str, en: set[str]) -> None:
    for m in _PROPER.finditer(raw_value):
        words = m.group(0).lower().split()
        if len(m.group(0)) >= 4 and " ".join(words) not in _EN_STOP:
            en.add(_word(r"\s+".join(map(re.escape, words))))
        en.update(_word(re.escape(w)) for w in words if len(w) >= 4 and w not in _EN_STOP)


def _is_address(label: str, norm_value: str) -> bool:
    lab = label.lower()
    if any(k in lab for k in ("address", "地址", "住址", "home", "家", "住", "office", "公司")):
        return True
    return bool(_ZH_ADDR.search(compact(norm_value)) or _EN_STREET.search(norm_value))


def _owner_tokens(owner_name: str) -> set[str]:
    norm = normalize(owner_name)
    tokens = {norm, compact(norm), *norm.split()}
    return {t for t in tokens if t}


def _drop_owner(parts: set[str], owner: set[str]) -> set[str]:
    return {p for p in parts if p not in owner and p.removeprefix(_B).removesuffix(_E) not in owner}


@lru_cache(maxsize=256)
def fact_patterns(private_facts: tuple[tuple[str, str], ...], owner_name: str) -> FactPatterns:
    """Compile the patterns for one owner's private facts (cached per facts+name)."""
    windows: set[str] = set()
    windows3: set[str] = set()
    digits: set[str] = set()
    exact: set[str] = set()
    alnum: set[str] = set()
    zh: set[str] = set()
    en: set[str] = set()
    pinyin: set[str] = set()
    fragments: set[str] = set()
    for label, value in private_facts:
        norm_value = normalize(value)
        if not norm_value:
            continue
        fragments.add(value.strip())
        for run in _DIGITS.findall(compact(norm_value)):
            windows.update(run[i : i + 4] for i in range(len(run) - 3))
            if len(run) >= 4:
                digits.add(run)
            if len(run) >= 7:
                windows3.update(run[i : i + 3] for i in range(len(run) - 2))
            if len(run) == 3 and _is_address(label, norm_value):
                exact.add(run)
        alnum.update(t for t in _ALNUM.findall(compact(norm_value)) if len(t) >= 4 and not t.isdigit())
        has_cjk = bool(_CJK_RE.search(norm_value))
        words = [w for w in _EN_TOKEN.split(norm_value) if w]
        if has_cjk:
            zh.add(compact(norm_value))
        elif len(norm_value) <= 60 and sum(c.isalpha() for c in norm_value) >= 4:
            en.add(_word(r"[\s,;.-]+".join(map(re.escape, words))))
        if _is_address(label, norm_value):
            if has_cjk:
                _zh_address(norm_value, zh, pinyin)
                _zh_org(norm_value, zh, pinyin)
            _en_address(norm_value, en)
            head = re.split(r"[,;]", value, maxsplit=1)[0]
            if not (_EN_STREET.search(normalize(head)) or _EN_UNIT.search(normalize(head))):
                _en_generic(head, normalize(head), en)
        else:
            if has_cjk:
                for piece in _ZH_SPLIT.split(norm_value):
                    _zh_org(piece, zh, pinyin)
                _zh_generic(norm_value, zh, pinyin)
            _en_generic(value, norm_value, en)
    owner = _owner_tokens(owner_name)
    zh = {z for z in _drop_owner(zh, owner) if len(z) >= 2 and not z.isdigit()}
    zh_parts = {re.escape(z) if not z[0].isdigit() else rf"(?<!\d){re.escape(z)}" for z in zh}
    en_parts = _drop_owner(en, owner) | pinyin
    fragments.update(zh)
    return FactPatterns(
        windows=frozenset(windows),
        windows3=frozenset(windows3),
        digits=tuple(sorted(digits)),
        exact=frozenset(exact),
        alnum=_alt_regex({r"(?<![a-z0-9])" + r"[\s·.-]?".join(map(re.escape, t)) + r"(?![a-z0-9])" for t in alnum}),
        zh=_alt_regex(zh_parts),
        en=_alt_regex(en_parts),
        fragments=tuple(sorted(fragments, key=len, reverse=True)),
    )
