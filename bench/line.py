"""A simulated phone line: what a speech recogniser would transcribe, errors included.

Following CALLM, each caller turn gets 0, 1, or 2+ recognition errors at the rates
measured on real phone calls (per 100 caller turns: 76.6, 18.5, 4.9). Draws are
seeded by (scenario, attempt, turn), so attempt k of a scenario meets the same
errors whichever agent is under test. Error kinds, applied in code:

- ``digit_drop`` / ``digit_add``: a digit lost or doubled in a number (never a clean
  swap of one digit for another, which no agent could catch without a read-back);
- ``mishear``: a Chinese character heard as a homophone (same pinyin and tone), or
  an English word heard as a similar-sounding one (names included);
- ``word_drop``: an English filler or function word lost;
- ``clip``: the start or the end of the turn cut off;
- ``split``: the end-of-turn detector splits the turn in two (the agent hears two turns);
- ``punct`` / ``lowercase``: punctuation lost, casing lost.

A silence turn stays silence and is not counted.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .confusions import EN_CONFUSIONS, EN_DROPPABLE, zh_homophones, zh_readings

#: CALLM's measured distribution of recognition errors per caller turn.
TARGET_RATES: dict[str, float] = {"0": 76.6, "1": 18.5, "2+": 4.9}
_SPLIT = "\x1e"
_HAN = re.compile(r"[\u4e00-\u9fff]")
_ZH_PUNCT = re.compile(r"[，。？！、；：,.?!;:…]+")
_EN_PUNCT = re.compile(r"[,.?!;:…]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


@dataclass(frozen=True, slots=True)
class Transmission:
    """What reached the agent for one caller turn: one part, or two if it was split."""

    parts: tuple[str | None, ...]
    errors: tuple[str, ...] = ()


def turn_rng(scenario_id: str, attempt: int, turn: int) -> random.Random:
    digest = hashlib.sha256(f"{scenario_id}\x1f{attempt}\x1f{turn}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def error_count(rng: random.Random) -> int:
    u = rng.random()
    if u < TARGET_RATES["0"] / 100:
        return 0
    if u < (TARGET_RATES["0"] + TARGET_RATES["1"]) / 100:
        return 1
    return 2 if rng.random() < 0.8 else 3


# ------------------------------------------------------------- error ops ----

Op = Callable[[str, random.Random], str | None]


def _digit_drop(text: str, rng: random.Random) -> str | None:
    runs = [m for m in re.finditer(r"\d{3,}", text)]
    if not runs:
        return None
    m = rng.choice(runs)
    i = rng.randrange(m.start(), m.end())
    return text[:i] + text[i + 1 :]


def _digit_add(text: str, rng: random.Random) -> str | None:
    runs = [m for m in re.finditer(r"\d{3,}", text)]
    if not runs:
        return None
    m = rng.choice(runs)
    i = rng.randrange(m.start(), m.end())
    return text[:i] + text[i] + text[i:]  # a doubled digit: the length changes, never a swap


def _zh_mishear(text: str, rng: random.Random) -> str | None:
    positions = [m.start() for m in _HAN.finditer(text)]
    readings = zh_readings(text)
    candidates = [
        (pos, alts)
        for pos, reading in zip(positions, readings, strict=False)
        if (alts := zh_homophones(text[pos], reading))
    ]
    if not candidates:
        return None
    pos, alts = rng.choice(candidates)
    return text[:pos] + rng.choice(alts) + text[pos + 1 :]


def _en_mishear(text: str, rng: random.Random) -> str | None:
    words = [m for m in _WORD.finditer(text) if m.group(0).lower() in EN_CONFUSIONS]
    if not words:
        return None
    m = rng.choice(words)
    new = rng.choice(EN_CONFUSIONS[m.group(0).lower()])
    if m.group(0)[0].isupper():
        new = new[0].upper() + new[1:]
    return text[: m.start()] + new + text[m.end() :]


def _en_word_drop(text: str, rng: random.Random) -> str | None:
    words = [m for m in _WORD.finditer(text) if m.group(0).lower() in EN_DROPPABLE]
    if not words or len(_WORD.findall(text)) < 3:
        return None
    m = rng.choice(words)
    out = text[: m.start()] + text[m.end() :]
    return re.sub(r"^[\s,]+", "", re.sub(r"\s{2,}", " ", out))


def _zh_clip(text: str, rng: random.Random) -> str | None:
    han = [m.start() for m in _HAN.finditer(text)]
    if len(han) < 5:
        return None
    n = rng.choice((1, 1, 2))
    if rng.random() < 0.5:  # the start was lost
        return text[han[n] :]
    cut = han[-n]
    return text[:cut].rstrip("，,、")


def _en_clip(text: str, rng: random.Random) -> str | None:
    words = list(_WORD.finditer(text))
    if len(words) < 4:
        return None
    if rng.random() < 0.5:
        return text[words[1].start() :]
    n = rng.choice((1, 1, 2))
    return text[: words[-n].start()].rstrip(" ,")


def _split(text: str, rng: random.Random, *, min_units: int, unit: re.Pattern[str]) -> str | None:
    units = [m.start() for m in unit.finditer(text)]
    if len(units) < min_units:
        return None
    mid = len(text) // 2
    bounds = [m.end() for m in re.finditer(r"[，。？！,.?!;；]\s*", text) if 0 < m.end() < len(text)]
    lo, hi = units[min_units // 3], units[-(min_units // 3)]
    bounds = [b for b in bounds if lo <= b <= hi]
    if bounds:
        point = min(bounds, key=lambda b: abs(b - mid))
    else:
        inner = [u for u in units if lo <= u <= hi]
        point = min(inner, key=lambda u: abs(u - mid) + rng.random())
    return text[:point].rstrip() + _SPLIT + text[point:].lstrip()


def _zh_split(text: str, rng: random.Random) -> str | None:
    return _split(text, rng, min_units=8, unit=_HAN)


def _en_split(text: str, rng: random.Random) -> str | None:
    return _split(text, rng, min_units=6, unit=_WORD)


def _zh_punct(text: str, rng: random.Random) -> str | None:
    if not _ZH_PUNCT.search(text):
        return None
    return _ZH_PUNCT.sub(" ", text).strip()


def _en_punct(text: str, rng: random.Random) -> str | None:
    if not _EN_PUNCT.search(text):
        return None
    return re.sub(r"\s{2,}", " ", _EN_PUNCT.sub("", text)).strip()


def _lowercase(text: str, rng: random.Random) -> str | None:
    return text.lower() if text != text.lower() else None


# Kind -> (op, weight); only applicable kinds are drawn. Numbers are where recognisers
# slip most, so a turn holding one usually gets its error there. Split is applied last.
_OPS: dict[str, dict[str, tuple[Op, int]]] = {
    "zh": {
        "mishear": (_zh_mishear, 5),
        "digit_drop": (_digit_drop, 5),
        "digit_add": (_digit_add, 3),
        "clip": (_zh_clip, 2),
        "punct": (_zh_punct, 2),
        "split": (_zh_split, 1),
    },
    "en": {
        "mishear": (_en_mishear, 4),
        "word_drop": (_en_word_drop, 1),
        "digit_drop": (_digit_drop, 5),
        "digit_add": (_digit_add, 3),
        "clip": (_en_clip, 2),
        "punct": (_en_punct, 2),
        "lowercase": (_lowercase, 2),
        "split": (_en_split, 1),
    },
}


def corrupt(text: str, lang: str, rng: random.Random, n: int) -> tuple[str, list[str]]:
    """Apply up to ``n`` errors of distinct kinds (``mishear`` may repeat once; at most one
    digit error per turn, so a drop and an add never combine into a swap)."""
    ops = dict(_OPS["en" if lang == "en" else "zh"])
    applied: list[str] = []
    do_split = False
    while len(applied) + do_split < n and ops:
        kinds = sorted(ops)
        kind = rng.choices(kinds, weights=[ops[k][1] for k in kinds])[0]
        op = ops[kind][0]
        if kind == "split":
            ops.pop(kind)
            if op(text, rng) is not None:
                do_split = True
            continue
        new = op(text, rng)
        if kind != "mishear" or applied.count("mishear") >= 1:
            ops.pop(kind)
        if new is None or not new.strip() or new == text:
            ops.pop(kind, None)
            continue
        text = new
        applied.append(kind)
        if kind.startswith("digit"):  # a drop plus an add in one number could read as a swap
            ops.pop("digit_drop", None)
            ops.pop("digit_add", None)
    if do_split:
        split = _OPS["en" if lang == "en" else "zh"]["split"][0](text, rng)
        if split is not None:
            text = split
            applied.append("split")
    return text, applied


# ------------------------------------------------------------------ line ----


@dataclass
class NoiseStats:
    """Realized error rates over the spoken caller turns that went through a line."""

    turns: int = 0
    by_count: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)

    def add(self, errors: tuple[str, ...]) -> None:
        self.turns += 1
        n = len(errors)
        self.by_count["0" if n == 0 else "1" if n == 1 else "2+"] += 1
        self.by_kind.update(errors)

    def merge(self, other: NoiseStats) -> None:
        self.turns += other.turns
        self.by_count.update(other.by_count)
        self.by_kind.update(other.by_kind)

    def realized(self) -> dict[str, Any]:
        """Per 100 spoken caller turns, next to CALLM's targets."""
        per100 = {k: round(100 * self.by_count[k] / self.turns, 2) if self.turns else 0.0 for k in TARGET_RATES}
        return {
            "turns": self.turns,
            "per_100_turns": per100,
            "target_per_100_turns": dict(TARGET_RATES),
            "errors_by_kind": dict(sorted(self.by_kind.items())),
        }


@dataclass(frozen=True, slots=True)
class PhoneLine:
    """Transcribes caller turns with seeded recognition errors (``enabled=False``: clean)."""

    enabled: bool = True

    def transmit(self, scenario_id: str, attempt: int, turn: int, text: str | None, lang: str) -> Transmission:
        if text is None:
            return Transmission((None,))
        if not self.enabled:
            return Transmission((text,))
        rng = turn_rng(scenario_id, attempt, turn)
        n = error_count(rng)
        if n == 0:
            return Transmission((text,))
        heard, errors = corrupt(text, lang, rng, n)
        parts = tuple(p for p in heard.split(_SPLIT) if p.strip())
        return Transmission(parts or (text,), tuple(errors))
