"""Text helpers shared by the coordinator: language, normalisation, numbers, pronouns."""

from __future__ import annotations

import re
import unicodedata

from .types import Lang

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_PUNCT = re.compile(r"[^\w']+|_+", re.UNICODE)

_ZH_DIGITS = {
    "零": "0", "〇": "0", "○": "0", "洞": "0", "一": "1", "幺": "1", "壹": "1", "二": "2",
    "两": "2", "贰": "2", "三": "3", "叁": "3", "四": "4", "肆": "4", "五": "5", "伍": "5",
    "六": "6", "陆": "6", "七": "7", "柒": "7", "拐": "7", "八": "8", "捌": "8", "九": "9",
    "玖": "9", "勾": "9",
}  # fmt: skip
_EN_DIGITS = {
    "zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_EN_DIGIT_RUN = re.compile(
    r"\b(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double|triple)[\s,.-]*){4,}",
    re.IGNORECASE,
)


def detect_lang(text: str) -> Lang | None:
    """zh if the text has Chinese characters (and not mostly English), en if it has
    English words, None for neither (digits, noise)."""
    cjk = len(_CJK.findall(text))
    words = len(_LATIN_WORD.findall(text))
    if cjk == 0 and words == 0:
        return None
    if cjk >= 2 or (cjk >= 1 and words <= 1):
        return "zh" if cjk * 1.0 >= words * 0.8 else "en"
    return "en"


def is_substantive(text: str, lang: Lang) -> bool:
    if lang == "zh":
        return len(_CJK.findall(text)) >= 4
    return len(_LATIN_WORD.findall(text)) >= 3


def short_turn(text: str, zh_max: int, en_max: int) -> bool:
    """At most ``zh_max`` hanzi and ``en_max`` English words."""
    return len(re.findall(r"[\u4e00-\u9fff]", text)) <= zh_max and len(re.findall(r"[A-Za-z']+", text)) <= en_max


def normalize(text: str) -> str:
    """Lower-case, NFKC, punctuation and whitespace collapsed to single spaces."""
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'").replace("‘", "'")
    return _PUNCT.sub(" ", text).strip(" '")


def compact(text: str) -> str:
    """:func:`normalize` without spaces or apostrophes (for Chinese substring matching)."""
    return normalize(text).replace(" ", "").replace("'", "")


def spoken_digits(text: str) -> str:
    """Map spoken digits (一三九, 幺, "one three nine", "double five") to ASCII digits."""
    out = "".join(_ZH_DIGITS.get(ch, ch) for ch in text)

    def words_to_digits(m: re.Match[str]) -> str:
        digits: list[str] = []
        repeat = 1
        for tok in re.findall(r"[a-z]+", m.group(0).lower()):
            if tok == "double":
                repeat = 2
            elif tok == "triple":
                repeat = 3
            elif tok in _EN_DIGITS:
                digits.append(_EN_DIGITS[tok] * repeat)
                repeat = 1
        return "".join(digits) + " "

    return _EN_DIGIT_RUN.sub(words_to_digits, out)


_PHONE_RUN = re.compile(r"\+?\d[\d\s\-().]{5,}\d")


def find_phone_number(text: str) -> str | None:
    """The first run of 7-15 digits (spoken or written, possibly grouped)."""
    for m in _PHONE_RUN.finditer(spoken_digits(text)):
        digits = re.sub(r"\D", "", m.group(0))
        if 7 <= len(digits) <= 15:
            return ("+" if m.group(0).startswith("+") else "") + digits
    return None


_ZH_FEMALE = re.compile(r"(女士|小姐|太太|夫人|阿姨|姐|妹|妈|奶奶|姥姥)")
_EN_FEMALE = re.compile(r"^(ms|mrs|miss|madam)\b\.?", re.IGNORECASE)
_EN_MALE = re.compile(r"^(mr|sir)\b\.?", re.IGNORECASE)


_EN_PRONOUNS = {
    "she": {"sub": "she", "obj": "her", "pos": "her", "be": "is", "Sub": "She"},
    "he": {"sub": "he", "obj": "him", "pos": "his", "be": "is", "Sub": "He"},
    "they": {"sub": "they", "obj": "them", "pos": "their", "be": "are", "Sub": "They"},
}
_ZH_PRONOUN = {"she": "她", "he": "他", "they": "他"}  # spoken Chinese has no neutral singular; 他 is the generic


def pronouns(owner_name: str, lang: Lang, pronoun: str | None = None) -> dict[str, str]:
    """Pronouns for the owner: the profile's ``pronoun`` (he / she / they) when set, else
    guessed from the display name (neutral when unsure)."""
    if pronoun is None:
        female = (_ZH_FEMALE if lang == "zh" else _EN_FEMALE).search(owner_name)
        male = lang == "zh" or _EN_MALE.search(owner_name)
        pronoun = "she" if female else "he" if male else "they"
    if lang == "zh":
        p = _ZH_PRONOUN[pronoun]
        return {"sub": p, "obj": p, "pos": p + "的"}
    return dict(_EN_PRONOUNS[pronoun])
