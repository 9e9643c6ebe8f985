"""The simulated phone line: seeded, CALLM's error rates, realistic kinds of error."""

from __future__ import annotations

import random
import re

import pytest
from pypinyin import Style, lazy_pinyin

from bench.harness import line_noise
from bench.line import TARGET_RATES, NoiseStats, PhoneLine, corrupt
from bench.suite import load_suite

ZH = "喂，你好，我是快递员，你的快递到了，电话13912345678，放哪里？"
EN = "Hi, this is the FedEx driver, I'm at the front door of building 4, call me at 4155550188."


def test_same_seed_same_errors_different_attempts_differ() -> None:
    line = PhoneLine()
    a = [line.transmit("s1", 0, t, ZH, "zh") for t in range(200)]
    b = [line.transmit("s1", 0, t, ZH, "zh") for t in range(200)]
    c = [line.transmit("s1", 1, t, ZH, "zh") for t in range(200)]
    assert a == b
    assert a != c


def test_silence_stays_silence_and_a_clean_line_is_clean() -> None:
    assert PhoneLine().transmit("s", 0, 0, None, "zh").parts == (None,)
    assert PhoneLine(enabled=False).transmit("s", 0, 0, EN, "en").parts == (EN,)


def test_realized_rates_are_near_callm_targets() -> None:
    line = PhoneLine()
    stats = NoiseStats()
    for attempt in range(1500):
        for turn, (text, lang) in enumerate(((ZH, "zh"), (EN, "en"))):
            stats.add(line.transmit("rates", attempt, turn, text, lang).errors)
    realized = stats.realized()["per_100_turns"]
    for key, target in TARGET_RATES.items():
        assert abs(realized[key] - target) < 1.5, (key, realized)


def test_realized_rates_on_the_builtin_suites_are_reported_and_close() -> None:
    scenarios = load_suite("builtin:dev") + load_suite("builtin:test")
    report = line_noise(scenarios, 5, PhoneLine()).realized()
    assert report["turns"] > 3000
    assert report["target_per_100_turns"] == TARGET_RATES
    for key, target in TARGET_RATES.items():
        assert abs(report["per_100_turns"][key] - target) < 2.0, report
    assert {"mishear", "clip", "split", "punct", "lowercase"} <= set(report["errors_by_kind"])


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


@pytest.mark.parametrize("lang,text", [("zh", ZH), ("en", EN)])
def test_digits_are_dropped_or_added_never_swapped(lang: str, text: str) -> None:
    seen: set[str] = set()
    for seed in range(3000):
        heard, kinds = corrupt(text, lang, random.Random(seed), 2)
        heard = heard.replace("\x1e", " ")
        before, after = _digits(text), _digits(heard)
        if before == after:
            continue
        seen.update(k for k in kinds if k.startswith("digit"))
        # One digit fewer or one more, everything else in order: never a substitution.
        if len(after) == len(before) - 1:
            assert any(before[:i] + before[i + 1 :] == after for i in range(len(before)))
        elif len(after) == len(before) + 1:
            assert any(after[:i] + after[i + 1 :] == before for i in range(len(after)))
        else:  # a clipped turn may lose the number's end, never change a digit in place
            assert before.startswith(after) or before.endswith(after), (before, after)
    assert seen == {"digit_drop", "digit_add"}


def test_chinese_mishearings_are_homophones() -> None:
    changed = 0
    for seed in range(300):
        heard, kinds = corrupt("你的外卖到了，放门口吧", "zh", random.Random(seed), 1)
        if kinds == ["mishear"]:
            changed += 1
            assert heard != "你的外卖到了，放门口吧"
            assert lazy_pinyin(heard, style=Style.TONE3) == lazy_pinyin(
                "你的外卖到了，放门口吧", style=Style.TONE3
            ) or lazy_pinyin(heard) == lazy_pinyin("你的外卖到了，放门口吧")
    assert changed > 50


def test_english_mishearings_come_from_the_sound_alike_list() -> None:
    for seed in range(200):
        heard, kinds = corrupt("Please leave it at the door", "en", random.Random(seed), 1)
        if kinds == ["mishear"]:
            assert heard in {
                "Please leaf it at the door", "Please live it at the door",
                "Please leave it at the drawer", "Please leave it at the floor",
            }  # fmt: skip


def test_split_turns_reach_the_agent_as_two_parts() -> None:
    line = PhoneLine()
    splits = [tx for attempt in range(400) if "split" in (tx := line.transmit("split", attempt, 0, EN, "en")).errors]
    assert splits
    for tx in splits:
        assert len(tx.parts) == 2 and all(p and p.strip() for p in tx.parts)
