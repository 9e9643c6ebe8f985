"""pass@1, pass^k and error-type rates, overall and by slice.

For a scenario with n scored attempts of which c pass, pass@1 is c/n pooled over all
attempts, and pass^k is C(c, k) / C(n, k) (the chance that k attempts drawn without
replacement all pass; Yao et al. 2024), averaged over scenarios with equal weight.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from math import comb
from typing import Any

from .scenario import Scenario
from .verifier import ERROR_TYPES, EXTRA_TYPES, GATES, Verdict

SLICES: tuple[str, ...] = ("scene", "lang", "preset_case", "relation")


def pass_hat_k(c: int, n: int, k: int) -> float:
    """C(c, k) / C(n, k): the chance that k of the n attempts, drawn at random, all pass."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got c={c} n={n} k={k}")
    return comb(c, k) / comb(n, k)


def _scores(counts: Iterable[tuple[int, int]], k: int) -> dict[str, float | int]:
    counts = list(counts)
    n_runs = sum(n for _, n in counts)
    return {
        "scenarios": len(counts),
        "runs": n_runs,
        "pass@1": round(sum(c for c, _ in counts) / n_runs, 4) if n_runs else 0.0,
        f"pass^{k}": (round(sum(pass_hat_k(c, n, k) for c, n in counts) / len(counts), 4) if counts else 0.0),
    }


def per_scenario(verdicts: Iterable[Verdict]) -> dict[str, tuple[int, int]]:
    """scenario id -> (passed attempts, attempts)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for v in verdicts:
        out[v.scenario_id][0] += v.passed
        out[v.scenario_id][1] += 1
    return {k: (c, n) for k, (c, n) in out.items()}


def summarize(scenarios: list[Scenario], verdicts: list[Verdict], k: int) -> dict[str, Any]:
    """Overall and per-slice pass rates, gate pass rates, error-type rates of one agent."""
    counts = per_scenario(verdicts)
    by_id = {sc.id: sc for sc in scenarios}
    slices: dict[str, dict[str, Any]] = {}
    for dim in SLICES:
        groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for sid, cn in counts.items():
            groups[by_id[sid].slices()[dim]].append(cn)
        slices[dim] = {value: _scores(groups[value], k) for value in sorted(groups)}
    n = len(verdicts) or 1
    gates = {g: round(sum(v.gates[g].passed for v in verdicts) / n, 4) for g in GATES}
    errors = {
        t: {
            "runs_with_error": round(sum(v.errors[t] > 0 for v in verdicts) / n, 4),
            "count": sum(v.errors[t] for v in verdicts),
        }
        for t in (*ERROR_TYPES, *EXTRA_TYPES)
    }
    return {
        "overall": _scores(counts.values(), k),
        "slices": slices,
        "gates": gates,
        "errors": errors,
    }
