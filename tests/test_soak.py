"""A short soak (issue 15, item 8): voice calls in sequence and at once through a real
server; afterwards threads and asyncio tasks are back to their baseline, no finished
call object is still alive, the service trimmed the heap itself while calls overlapped,
and a forced trim at the end finds little left to hand back. The long run with the RSS
figures is ``callassist bench soak``."""

from __future__ import annotations

import os

import pytest

from bench.soak import OUTCOMES, run_soak

pytestmark = pytest.mark.slow


def test_short_soak_returns_to_baseline() -> None:
    report = run_soak(calls=8, warmup=3, concurrency=3, minutes=0.5)
    assert report.baseline is not None and report.final is not None
    assert set(report.outcomes) == set(OUTCOMES)
    # Busy refusals are the server keeping its budget (counted apart), not failures.
    assert report.failed_calls == 0, report.outcomes
    assert report.calls_concurrent >= 3
    assert report.final.finished_alive == 0  # no voice call object outlives its call
    # Idle workers of asyncio's default executor stay once started (bounded: cores + 4).
    assert report.final.threads <= report.baseline.threads + min(32, (os.cpu_count() or 1) + 4)
    assert report.final.tasks <= report.baseline.tasks
    assert report.rss_growth <= 0.25, report.summary()  # a short run: loose; the bench holds 10%
    # The service trims after call ends (not only at zero calls): more than once here.
    assert report.final.trims > report.baseline.trims >= 1
    assert report.memory_final is not None and report.memory_after_trim is not None
    left = report.memory_final["rss"] - report.memory_after_trim["rss"]
    assert left < 0.05 * report.memory_final["rss"], (report.memory_final, report.memory_after_trim)
