"""The simulated caller of ``callassist bench readback``: the numbers and the spoken
forms it gives them in (digit words, "oh" and "double", pairs, grouped, 幺 and 两, Arabic
digits; ``dev`` frames here, ``heldout`` in ``bench/readback_heldout.json``), and what it
says to each reply (yes when the number read back is right, "no, it's ..." when wrong,
slower the second time, digit by digit when asked)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

_EN_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_ZH_WORDS = "零一二三四五六七八九"
_EN_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
_EN_FRAMES = [
    "My number is {n}.",
    "You can reach me at {n}.",
    "Please have Alex call me back at {n}.",
    "This is Dana from the clinic, call me back on {n}, thanks.",
    "It's about the invoice. My cell is {n}.",
    "Could you ask him to call me at {n}?",
]
_ZH_FRAMES = [
    "我的电话是{n}。",
    "麻烦让陈先生回电话到{n}。",
    "你记一下我的手机号，{n}。",
    "我是快递员，号码{n}，到了给我打电话。",
    "有事打我手机{n}，谢谢。",
    "我姓王，回电号码是{n}。",
]


@dataclass(frozen=True)
class Case:
    lang: str
    number: str  # the digits
    said: str  # the sentence the caller says
    form: str  # how the digits are spoken


def _en_digits(d: str, *, zero: str = "oh", doubles: bool = False) -> str:
    out: list[str] = []
    i = 0
    while i < len(d):
        if doubles and i + 1 < len(d) and d[i] == d[i + 1]:
            out.append("double " + _EN_WORDS[int(d[i])])
            i += 2
            continue
        out.append(zero if d[i] == "0" else _EN_WORDS[int(d[i])])
        i += 1
    return " ".join(out)


def _en_pair(p: str) -> str:
    a, b = int(p[0]), int(p[1])
    if a < 2:
        return _en_digits(p)
    return _EN_TENS[a] + ("" if b == 0 else "-" + _EN_WORDS[b])


def en_spoken(number: str, form: str) -> str:
    a, b, c = number[:3], number[3:6], number[6:]
    if form == "digits":
        return f"{a} {b} {c}"
    if form == "dashes":
        return f"{a}-{b}-{c}"
    if form == "dots":
        return f"{a}.{b}.{c}"
    if form == "zero":
        return ", ".join(_en_digits(x, zero="zero") for x in (a, b, c))
    if form == "double":
        return ", ".join(_en_digits(x, doubles=True) for x in (a, b, c))
    if form == "pairs":
        return f"{_en_digits(a)}, {_en_digits(b)}, {_en_pair(c[:2])} {_en_pair(c[2:])}"
    return ", ".join(_en_digits(x) for x in (a, b, c))  # "words": oh for zero


def zh_spoken(number: str, form: str) -> str:
    groups = (number[:3], number[3:7], number[7:])
    if form == "digits":
        return " ".join(groups)
    table = {
        "yao": {"1": "幺"},
        "liang": {"2": "两"},
        "ling": {"0": "〇"},
        "mixed": {"1": "幺", "2": "两", "0": "零"},
    }.get(form, {})
    words = ["".join(table.get(ch, _ZH_WORDS[int(ch)]) for ch in g) for g in groups]
    return "".join(words) if form == "run" else "，".join(words)


EN_FORMS = ("words", "digits", "double", "zero", "pairs", "dashes")
ZH_FORMS = ("grouped", "run", "yao", "liang", "ling", "digits")


SETS = ("dev", "heldout")


def _set_data(name: str) -> dict[str, Any]:
    """The frames, forms and seed of a case set: ``dev`` (the phrasings above, tuned on)
    or ``heldout`` (package data written apart, for the reported figure)."""
    if name == "dev":
        return {
            "seed": 14,
            "en": {"forms": EN_FORMS, "frames": _EN_FRAMES},
            "zh": {"forms": ZH_FORMS, "frames": _ZH_FRAMES},
        }
    if name not in SETS:
        raise ValueError(f"unknown case set {name!r}: one of {', '.join(SETS)}")
    from importlib.resources import files

    return dict(json.loads(files("bench").joinpath(f"readback_{name}.json").read_text(encoding="utf-8")))


def cases(per_lang: int, seed: int | None = None, *, case_set: str = "dev") -> list[Case]:
    """``per_lang`` callback sentences per language, formats and frames cycling."""
    data = _set_data(case_set)
    rng = random.Random(data["seed"] if seed is None else seed)
    en_forms, en_frames = data["en"]["forms"], data["en"]["frames"]
    zh_forms, zh_frames = data["zh"]["forms"], data["zh"]["frames"]
    out: list[Case] = []
    for i in range(per_lang):
        form = en_forms[i % len(en_forms)]
        number = f"{rng.randint(2, 9)}{rng.randint(0, 99):02d}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"
        if form == "double":
            number = number[:7] + number[6] + number[8:]  # make a pair to say "double"
        frame = en_frames[(i // len(en_forms) + i) % len(en_frames)]
        out.append(Case("en", number, frame.format(n=en_spoken(number, form)), form))
    for i in range(per_lang):
        form = zh_forms[i % len(zh_forms)]
        number = "1" + rng.choice("3456789") + "".join(rng.choice("0123456789") for _ in range(9))
        if form in ("liang", "mixed") and "2" not in number:
            number = number[:5] + "2" + number[6:]
        if form in ("ling", "mixed") and "0" not in number:
            number = number[:8] + "0" + number[9:]
        frame = zh_frames[(i // len(zh_forms) + i) % len(zh_frames)]
        out.append(Case("zh", number, frame.format(n=zh_spoken(number, form)), form))
    return out


def _correction(case: Case, attempt: int) -> str:
    """A person correcting a wrong read-back: no, and the number again; the second time
    slower, group by group."""
    if case.lang == "zh":
        if attempt <= 1:
            return f"不对，是{zh_spoken(case.number, 'grouped')}。"
        groups = zh_spoken(case.number, "grouped").split("，")
        return "不对，我再说一遍。" + "。".join(groups) + "。"
    if attempt <= 1:
        return f"No, it's {en_spoken(case.number, 'words')}."
    groups = en_spoken(case.number, "words").split(", ")
    return "No. It's " + ". ".join(groups) + "."


def _spelled(case: Case) -> str:
    """The number digit by digit, as a person says it when asked to."""
    if case.lang == "zh":
        return "好的。" + "，".join(_ZH_WORDS[int(ch)] for ch in case.number) + "。"
    return "Okay. " + ", ".join("oh" if ch == "0" else _EN_WORDS[int(ch)] for ch in case.number) + "."


def _confirm(case: Case) -> str:
    return "对，没错。" if case.lang == "zh" else "Yes, that's right."


def asked_digit_by_digit(reply: str) -> bool:
    return "一位一位" in reply or "digit by digit" in reply.lower()


def _again(case: Case) -> str:
    """The number once more, when the assistant asks for it (no read-back to deny)."""
    if case.lang == "zh":
        return f"是{zh_spoken(case.number, 'grouped')}。"
    return f"It's {en_spoken(case.number, 'words')}."


def next_words(case: Case, state: Any, act: Any, reply: str, wrong: int) -> tuple[str | None, int]:
    """What the simulated caller says to the assistant's reply (None: the call is done for
    this bench), and how many wrong read-backs it has denied so far."""
    from coordinator.types import Act

    if act in (Act.ASK_REPEAT, Act.CLARIFY):
        return "", wrong  # the same words again
    if act != Act.READ_BACK:
        return None, wrong
    if asked_digit_by_digit(reply):
        return _spelled(case), wrong
    items = [state.record.captured[i] for i in (state.readback or {}).get("items", [])]
    if not items:
        return _again(case), wrong  # "could you say the number again?"
    if any(it["kind"] == "callback" and it["value"].lstrip("+") == case.number for it in items):
        return _confirm(case), wrong
    return _correction(case, wrong + 1), wrong + 1
