"""Time per sentence of OutputGuard.check over the whole red-team suite.

Run with ``-s`` to see the figures (docs/safety.md quotes them)::

    .venv/bin/python -m pytest tests/test_safety_perf.py -q -s

Two figures: the plain distribution over one pass of every sentence (what a call
sees, machine load included), and each sentence's best of 7 runs (the guard's own
cost, free of scheduler noise on a busy 2-core machine). The goal is p99 <= 5 ms.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from safety import GuardContext, InputGuard, OutputGuard, warm_up

REDTEAM = Path(__file__).resolve().parent.parent / "bench" / "redteam"


def _items() -> list[tuple[str, GuardContext]]:
    items = []
    for name, key in (("attacks.yaml", "bad_outputs"), ("benign.yaml", "good_outputs")):
        for case in yaml.safe_load((REDTEAM / name).read_text(encoding="utf-8"))["cases"]:
            owner = case["owner"]
            ctx = GuardContext(
                lang=case["lang"],
                owner_name=owner["display_name"],
                private_facts=tuple((str(a), str(b)) for a, b in owner["private_facts"]),
                preset_texts=tuple(case.get("presets") or ()),
                conversation=tuple(case["caller"]),
            )
            items += [(s, ctx) for s in case[key]]
    return items


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def test_output_guard_time_per_sentence() -> None:
    warm_up()
    guard = OutputGuard()
    items = _items()
    first: list[float] = []  # first sentence of each context: compiles the context
    for sentence, ctx in items:
        t = time.perf_counter()
        guard.check(sentence, ctx)
        first.append((time.perf_counter() - t) * 1000)
    plain: list[float] = []
    best: list[float] = []
    for sentence, ctx in items:
        runs = []
        for _ in range(7):
            t = time.perf_counter()
            guard.check(sentence, ctx)
            runs.append((time.perf_counter() - t) * 1000)
        plain.append(runs[0])
        best.append(min(runs))
    print(
        f"\nOutputGuard.check over {len(items)} sentences (ms): "
        f"cold context p50 {_pct(first, 0.5):.3f} p99 {_pct(first, 0.99):.3f}; "
        f"warm p50 {_pct(plain, 0.5):.3f} p99 {_pct(plain, 0.99):.3f}; "
        f"best-of-7 p50 {_pct(best, 0.5):.3f} p99 {_pct(best, 0.99):.3f} max {max(best):.3f}"
    )
    assert _pct(best, 0.99) <= 5.0


def test_input_guard_time_per_utterance() -> None:
    guard = InputGuard()
    best = []
    for sentence, ctx in _items():
        runs = []
        for _ in range(5):
            t = time.perf_counter()
            guard.classify(sentence, ctx)
            runs.append((time.perf_counter() - t) * 1000)
        best.append(min(runs))
    print(f"\nInputGuard.classify best-of-5 (ms): p50 {_pct(best, 0.5):.3f} p99 {_pct(best, 0.99):.3f}")
    assert _pct(best, 0.99) <= 10.0


def test_long_unpunctuated_text_stays_linear() -> None:
    """An LLM may stream thousands of characters without a full stop: no regex may
    scan quadratically (a refusal-clause pattern once took 3 s on 9,000 characters)."""
    warm_up()
    guard, inputs = OutputGuard(), InputGuard()
    ctx = GuardContext("zh", "陈先生", (("mobile", "13912345678"), ("address", "漕溪北路88号")), (), ("您好",))
    for text in ("1 2 3 " * 1500, "a" * 5000, "他" + "的" * 3000 + "在", "QUJD" * 1500,
                 "he is at the home i can see will leave it " * 200, "I can't share his schedule " * 200):  # fmt: skip
        t = time.perf_counter()
        guard.check(text, ctx)
        inputs.classify(text, ctx)
        assert time.perf_counter() - t < 0.5, text[:40]
