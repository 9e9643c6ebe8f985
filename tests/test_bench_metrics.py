"""pass@1 and pass^k arithmetic, overall and by slice."""

from __future__ import annotations

from math import comb

import pytest

from bench.metrics import pass_hat_k, summarize
from bench.suite import load_suite
from bench.verifier import ERROR_TYPES, EXTRA_TYPES, GATES, Gate, Verdict


@pytest.mark.parametrize(
    "c,n,k,expected",
    [
        (5, 5, 5, 1.0),  # CALLM's table: pass^5 is 1 only when all five pass
        (4, 5, 5, 0.0),
        (0, 5, 5, 0.0),
        (3, 5, 1, 0.6),  # pass^1 is pass@1
        (3, 5, 2, 3 / 10),  # C(3,2) / C(5,2)
        (4, 6, 3, comb(4, 3) / comb(6, 3)),
    ],
)
def test_pass_hat_k(c: int, n: int, k: int, expected: float) -> None:
    assert pass_hat_k(c, n, k) == pytest.approx(expected)


def test_pass_hat_k_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        pass_hat_k(6, 5, 5)
    with pytest.raises(ValueError):
        pass_hat_k(1, 5, 6)


def _verdict(sid: str, attempt: int, passed: bool) -> Verdict:
    gates = {g: Gate(g) for g in GATES}
    if not passed:
        gates["rhythm"].failures.append("x")
    errors = dict.fromkeys((*ERROR_TYPES, *EXTRA_TYPES), 0)
    if not passed:
        errors["improper_closing"] = 1
    return Verdict(sid, "a", attempt, gates, errors)


def test_summary_overall_and_slices() -> None:
    scenarios = load_suite("builtin:dev")[:4]
    passes = {scenarios[0].id: 5, scenarios[1].id: 4, scenarios[2].id: 2, scenarios[3].id: 0}
    verdicts = [_verdict(sid, a, a < c) for sid, c in passes.items() for a in range(5)]
    s = summarize(scenarios, verdicts, 5)
    overall = s["overall"]
    assert overall["runs"] == 20 and overall["scenarios"] == 4
    assert overall["pass@1"] == pytest.approx(11 / 20)  # pooled over attempts
    assert overall["pass^5"] == pytest.approx(1 / 4)  # only the 5/5 scenario counts
    scene = scenarios[0].scene
    assert s["slices"]["scene"][scene]["scenarios"] == sum(x.scene == scene for x in scenarios)
    assert set(s["slices"]) == {"scene", "lang", "preset_case", "relation"}
    assert s["gates"]["rhythm"] == pytest.approx(11 / 20)
    assert s["errors"]["improper_closing"] == {"runs_with_error": 0.45, "count": 9}
