"""A small in-process time series of the call-path metrics, for the ``/ops`` dashboard.

Every ``interval_s`` the :class:`Sampler` reads the Prometheus metrics of
:mod:`pipeline.metrics` (the same objects ``/metrics`` exposes) into a :class:`Snapshot`
and derives one :class:`dict` point from it: latency percentiles over the last
``window_s`` seconds, computed from histogram bucket increases exactly as PromQL's
``histogram_quantile(q, sum by (le) (increase(x_bucket[window])))`` would, so ``/ops``
and the Grafana dashboard agree; gauges as they are; counter totals and their increase
over the window. Points live in a ring buffer (``capacity`` of them, one hour by
default) and are lost on restart: Prometheus is the long-term store.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.metrics import MetricWrapperBase

from pipeline import metrics as m

QUANTILES = (0.5, 0.9, 0.99)

# Dashboard name -> histogram. The order is the dashboard's order.
LATENCIES: dict[str, MetricWrapperBase] = {
    "voice_to_voice": m.VOICE_TO_VOICE,
    "asr": m.ASR_SECONDS,
    "decision": m.DECISION_SECONDS,
    "realizer_ttft": m.REALIZER_TTFT,
    "tts_first_audio": m.TTS_FIRST_AUDIO,
    "safety_guard": m.GUARD_SECONDS,
}

# Dashboard name -> (counter, the label its breakdown is by, or None).
COUNTERS: dict[str, tuple[MetricWrapperBase, str | None]] = {
    "calls_started": (m.CALLS_STARTED, None),
    "calls_ended": (m.CALLS, "outcome"),
    "turns": (m.TURNS, None),
    "presets_conveyed": (m.PRESETS_CONVEYED, "kind"),
    "interventions": (m.SAFETY_INTERVENTIONS, "constraint"),
    "input_flags": (m.INPUT_FLAGS, "kind"),
    "fallbacks": (m.TTFT_FALLBACKS, "reason"),
    "dropped_frames": (m.DROPPED_FRAMES, "reason"),
    "errors": (m.ERRORS, "component"),
}


@dataclass(frozen=True)
class Buckets:
    """A histogram's cumulative bucket counts (upper bounds ascending, the last +Inf)."""

    bounds: tuple[float, ...]
    counts: tuple[float, ...]

    def minus(self, base: Buckets | None) -> Buckets:
        if base is None or base.bounds != self.bounds:
            return self
        # A negative increase can only mean a reset; count from zero then, as PromQL does.
        if any(c < b for c, b in zip(self.counts, base.counts, strict=True)):
            return self
        return Buckets(self.bounds, tuple(c - b for c, b in zip(self.counts, base.counts, strict=True)))

    @property
    def total(self) -> float:
        return self.counts[-1] if self.counts else 0.0


def histogram_quantile(q: float, buckets: Buckets) -> float | None:
    """The q-quantile by linear interpolation inside the bucket (Prometheus's method)."""
    total = buckets.total
    if total <= 0:
        return None
    rank = q * total
    for i, (bound, count) in enumerate(zip(buckets.bounds, buckets.counts, strict=True)):
        if count >= rank:
            if math.isinf(bound):
                return buckets.bounds[i - 1] if i > 0 else None
            lower = buckets.bounds[i - 1] if i > 0 else 0.0
            below = buckets.counts[i - 1] if i > 0 else 0.0
            inside = count - below
            if inside <= 0:
                return bound
            return lower + (bound - lower) * (rank - below) / inside
    return None


@dataclass
class Snapshot:
    """The metrics at one instant, as cumulative values."""

    t: float
    histograms: dict[tuple[str, str], Buckets] = field(default_factory=dict)  # (name, group)
    counters: dict[tuple[str, str], float] = field(default_factory=dict)  # (name, label value)
    active_calls: float = 0.0
    redis_up: float | None = None
    endpoints: dict[str, dict[str, float]] = field(default_factory=dict)


def _samples(metric: MetricWrapperBase, suffix: str = "") -> Iterable[tuple[dict[str, str], float]]:
    """The samples named ``<family><suffix>`` (``_bucket``, ``_total``; "" for a gauge)."""
    for family in metric.collect():
        for sample in family.samples:
            if sample.name == family.name + suffix:
                yield sample.labels, sample.value


def _read_histogram(metric: MetricWrapperBase, group_by: str | None) -> dict[str, Buckets]:
    """Sum the bucket counts over all label sets, per value of ``group_by`` ("" = all)."""
    sums: dict[str, dict[float, float]] = {}
    for labels, value in _samples(metric, "_bucket"):
        bound = float(labels["le"])
        groups = [""] if group_by is None else ["", labels.get(group_by, "")]
        for group in groups:
            per = sums.setdefault(group, {})
            per[bound] = per.get(bound, 0.0) + value
    out: dict[str, Buckets] = {}
    for group, per in sums.items():
        bounds = tuple(sorted(per))
        out[group] = Buckets(bounds, tuple(per[b] for b in bounds))
    return out


def take_snapshot(*, now: float | None = None, redis_up: float | None = None) -> Snapshot:
    snap = Snapshot(t=time.time() if now is None else now, redis_up=redis_up)
    for name, hist in LATENCIES.items():
        group_by = "realizer" if name == "realizer_ttft" else None
        for group, buckets in _read_histogram(hist, group_by).items():
            snap.histograms[(name, group)] = buckets
    for name, (counter, label) in COUNTERS.items():
        for labels, value in _samples(counter, "_total"):
            key = (name, labels.get(label, "") if label else "")
            snap.counters[key] = snap.counters.get(key, 0.0) + value
    snap.active_calls = sum(v for _, v in _samples(m.ACTIVE_CALLS))
    for labels, value in _samples(m.ENDPOINT_UP):
        snap.endpoints.setdefault(labels["endpoint"], {})["up"] = value
    for labels, value in _samples(m.ENDPOINT_MEDIAN_TTFT):
        snap.endpoints.setdefault(labels["endpoint"], {})["median_ttft_ms"] = round(value * 1000, 3)
    return snap


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def derive_point(snap: Snapshot, base: Snapshot | None) -> dict[str, Any]:
    """One dashboard point: percentiles and counter increases since ``base``, totals now."""
    latency: dict[str, dict[str, float | None]] = {}
    ttft_p50: dict[str, float | None] = {}
    for (name, group), buckets in snap.histograms.items():
        delta = buckets.minus(base.histograms.get((name, group)) if base else None)
        if group:
            if delta.total > 0:
                ttft_p50[group] = _ms(histogram_quantile(0.5, delta))
            continue
        stats: dict[str, float | None] = {f"p{round(q * 100)}": _ms(histogram_quantile(q, delta)) for q in QUANTILES}
        stats["count"] = delta.total
        latency[name] = stats
    totals: dict[str, float] = {}
    window: dict[str, float] = {}
    breakdown: dict[str, dict[str, float]] = {}
    for (name, label), value in snap.counters.items():
        before = base.counters.get((name, label), 0.0) if base else 0.0
        increase = value - before if value >= before else value
        totals[name] = totals.get(name, 0.0) + value
        window[name] = window.get(name, 0.0) + increase
        if label:
            breakdown.setdefault(name, {})[label] = value
    for name in COUNTERS:
        totals.setdefault(name, 0.0)
        window.setdefault(name, 0.0)
    return {
        "t": round(snap.t, 3),
        "active_calls": snap.active_calls,
        "redis_up": snap.redis_up,
        "latency": latency,
        "ttft_p50_by_realizer": ttft_p50,
        "endpoints": snap.endpoints,
        "totals": totals,
        "window": window,
        "by": breakdown,
    }


class Series:
    """The ring buffer of points, and enough raw snapshots to cover one window."""

    def __init__(self, *, interval_s: float, window_s: float, capacity: int) -> None:
        self.interval_s = interval_s
        self.window_s = window_s
        self.points: deque[dict[str, Any]] = deque(maxlen=capacity)
        # One snapshot per interval over the window, plus slack for a late sampler.
        self._raw: deque[Snapshot] = deque(maxlen=max(2, math.ceil(window_s / interval_s) + 4))

    def baseline(self, t: float) -> Snapshot | None:
        """The newest snapshot at least a window old, else the oldest one kept."""
        best: Snapshot | None = None
        for snap in self._raw:
            if snap.t <= t - self.window_s:
                best = snap
        if best is None and self._raw:
            best = self._raw[0]
        return best

    def add(self, snap: Snapshot) -> dict[str, Any]:
        # The first point is its own baseline: the metrics are process-wide and hold
        # whatever happened before this series began (in tests: other apps' calls).
        point = derive_point(snap, self.baseline(snap.t) or snap)
        self._raw.append(snap)
        self.points.append(point)
        return point

    def current(self, snap: Snapshot) -> dict[str, Any]:
        """A point for right now, not kept."""
        return derive_point(snap, self.baseline(snap.t) or snap)

    def since(self, t: float | None) -> list[dict[str, Any]]:
        if t is None:
            return list(self.points)
        return [p for p in self.points if p["t"] > t]
