"""The soak's CPU-per-call figure (issue 16's cost per call), from two /metrics samples."""

from __future__ import annotations

from bench.soak import Sample, _cpu_per_call


def _s(t: float, calls: int, cpu: float) -> Sample:
    return Sample(t=t, calls=calls, rss_mb=900, threads=5, tasks=8, finished_alive=0, cpu_s=cpu)


def test_cpu_per_call_and_cores_per_active_call() -> None:
    figures = _cpu_per_call(_s(100.0, 2, 60.0), _s(388.0, 22, 100.0))
    assert figures == {"calls": 20, "cpu_s_per_call": 2.0, "wall_s_per_call": 14.4, "cores_per_active_call": 0.139}


def test_no_figure_without_the_metric_or_calls() -> None:
    assert _cpu_per_call(None, _s(1, 2, 1)) is None
    assert _cpu_per_call(_s(0, 2, -1), _s(10, 4, 5)) is None  # process_cpu_seconds_total missing
    assert _cpu_per_call(_s(0, 2, 1), _s(10, 2, 5)) is None  # no call in between
