"""Generate the provisioned Grafana dashboard (dashboards/callassist.json).

The panels are the ``/ops`` dashboard's, on Prometheus data. Run after editing:

    .venv/bin/python deploy/grafana/dashboard.py

tests/test_ops_deploy.py checks that the JSON file is this script's output and that
every query parses in a real Prometheus.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "dashboards" / "callassist.json"
DS = {"type": "prometheus", "uid": "prometheus"}
RATE = "$__rate_interval"

# (dashboard name, histogram, title, threshold in seconds or None)
LATENCIES = [
    ("voice_to_voice", "callassist_voice_to_voice_seconds", "Voice-to-voice (end of speech → first audio)", 1.5),
    ("asr", "callassist_asr_seconds", "ASR", None),
    ("decision", "callassist_decision_seconds", "Decision (coordinator)", None),
    ("realizer_ttft", "callassist_realizer_ttft_seconds", "Realizer TTFT", 1.0),
    ("tts_first_audio", "callassist_tts_first_audio_seconds", "TTS first audio", None),
    ("safety_guard", "callassist_safety_guard_seconds", "Safety guard (per sentence)", None),
]


def quantile(q: float, hist: str, by: str = "le", window: str = RATE) -> str:
    return f"histogram_quantile({q}, sum by ({by}) (rate({hist}_bucket[{window}])))"


def target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def thresholds(limit: float | None, *, below_is_bad: bool = False) -> dict[str, Any]:
    """Green, then red from ``limit`` up (or, with ``below_is_bad``, red below it)."""
    base, above = ("red", "green") if below_is_bad else ("green", "red")
    steps: list[dict[str, Any]] = [{"color": base, "value": None}]
    if limit is not None:
        steps.append({"color": above, "value": limit})
    return {"mode": "absolute", "steps": steps}


def stat(
    title: str, expr: str, *, unit: str = "short", limit: float | None = None, below_is_bad: bool = False
) -> dict[str, Any]:
    return {
        "type": "stat",
        "title": title,
        "datasource": DS,
        "targets": [target(expr, title, "A")],
        "fieldConfig": {
            "defaults": {"unit": unit, "thresholds": thresholds(limit, below_is_bad=below_is_bad)},
            "overrides": [],
        },
        "options": {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "colorMode": "value",
            "graphMode": "area",
            "textMode": "value",
        },
    }


def timeseries(
    title: str,
    targets: list[dict[str, Any]],
    *,
    unit: str = "s",
    limit: float | None = None,
    description: str = "",
) -> dict[str, Any]:
    custom: dict[str, Any] = {"lineWidth": 2, "fillOpacity": 0, "showPoints": "auto", "spanNulls": False}
    if limit is not None:
        custom["thresholdsStyle"] = {"mode": "line+area"}
    return {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": targets,
        "fieldConfig": {
            "defaults": {"unit": unit, "min": 0, "custom": custom, "thresholds": thresholds(limit)},
            "overrides": [],
        },
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
    }


def bars(title: str, expr: str, legend: str) -> dict[str, Any]:
    return {
        "type": "bargauge",
        "title": title,
        "datasource": DS,
        "targets": [{**target(expr, legend, "A"), "instant": True, "range": False}],
        "fieldConfig": {"defaults": {"unit": "short", "min": 0, "thresholds": thresholds(None)}, "overrides": []},
        "options": {
            "orientation": "horizontal",
            "displayMode": "basic",
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "showUnfilled": True,
        },
    }


def row(title: str) -> dict[str, Any]:
    return {"type": "row", "title": title, "collapsed": False, "panels": []}


def layout(panels: list[tuple[dict[str, Any], int, int]]) -> list[dict[str, Any]]:
    """Place (panel, width, height) left to right on Grafana's 24-column grid."""
    out: list[dict[str, Any]] = []
    x = y = row_h = 0
    for panel, w, h in panels:
        if panel["type"] == "row" or x + w > 24:
            x, y, row_h = 0, y + row_h, 0
        out.append({**panel, "id": len(out) + 1, "gridPos": {"x": x, "y": y, "w": w, "h": h}})
        x += w
        row_h = max(row_h, h)
        if panel["type"] == "row":
            x, y, row_h = 0, y + h, 0
    return out


def build() -> dict[str, Any]:
    ttft = "callassist_realizer_ttft_seconds"
    v2v = "callassist_voice_to_voice_seconds"
    now: list[tuple[dict[str, Any], int, int]] = [
        (row("Now"), 24, 1),
        (stat("Active calls", "sum(callassist_active_calls)"), 3, 4),
        (stat("Calls started", "sum(increase(callassist_calls_started_total[$__range]))"), 3, 4),
        (stat("Caller turns", "sum(increase(callassist_turns_total[$__range]))"), 3, 4),
        (stat("Median TTFT", quantile(0.5, ttft, window="1m"), unit="s", limit=1.0), 3, 4),
        (stat("Voice-to-voice p90", quantile(0.9, v2v, window="5m"), unit="s", limit=1.5), 3, 4),
        (stat("TTFT-guard fallbacks", "sum(increase(callassist_ttft_guard_fallbacks_total[$__range]))"), 3, 4),
        (stat("Safety interventions", "sum(increase(callassist_safety_interventions_total[$__range]))"), 3, 4),
        (stat("Redis up", "min(callassist_redis_up)", limit=1, below_is_bad=True), 3, 4),
    ]
    overview: list[tuple[dict[str, Any], int, int]] = [
        (row("Latency and guards"), 24, 1),
        (
            timeseries(
                "Median TTFT against the 1000 ms line",
                [
                    target(quantile(0.5, ttft, window="1m"), "all realizers p50", "A"),
                    target(quantile(0.5, ttft, by="le, realizer", window="1m"), "{{realizer}} p50", "B"),
                    target("callassist_llm_median_ttft_seconds", "{{endpoint}} rolling median", "C"),
                ],
                limit=1.0,
                description="CALLM: median time to first token <= 1000 ms. Alert: CallAssistMedianTTFTOver1s.",
            ),
            24,
            8,
        ),
        (
            timeseries(
                "Active calls",
                [target("sum by (transport) (callassist_active_calls)", "{{transport}}", "A")],
                unit="short",
            ),
            12,
            7,
        ),
        (
            timeseries(
                "Fallbacks and interventions",
                [
                    target(
                        f"sum(increase(callassist_ttft_guard_fallbacks_total[{RATE}]))", "TTFT-guard fallbacks", "A"
                    ),
                    target(
                        f"sum(increase(callassist_safety_interventions_total[{RATE}]))", "safety interventions", "B"
                    ),
                    target(f"sum(increase(callassist_errors_total[{RATE}]))", "errors", "C"),
                ],
                unit="short",
            ),
            12,
            7,
        ),
    ]
    latency: list[tuple[dict[str, Any], int, int]] = [(row("Latency percentiles over time"), 24, 1)]
    for _, hist, title, limit in LATENCIES:
        latency.append(
            (
                timeseries(
                    title,
                    [
                        target(quantile(q, hist), f"p{round(q * 100)}", ref)
                        for q, ref in ((0.5, "A"), (0.9, "B"), (0.99, "C"))
                    ],
                    limit=limit,
                ),
                8,
                7,
            )
        )
    breakdown: list[tuple[dict[str, Any], int, int]] = [
        (row("Safety and fallbacks"), 24, 1),
        (
            bars(
                "Safety interventions by constraint",
                "sum by (constraint) (increase(callassist_safety_interventions_total[$__range]))",
                "{{constraint}}",
            ),
            8,
            7,
        ),
        (
            bars(
                "TTFT-guard fallbacks by reason",
                "sum by (reason) (increase(callassist_ttft_guard_fallbacks_total[$__range]))",
                "{{reason}}",
            ),
            8,
            7,
        ),
        (
            {
                "type": "text",
                "title": "Recent calls",
                "options": {
                    "mode": "markdown",
                    "content": "Recent calls and their transcripts are on the service's own "
                    "dashboard, **/ops** (ops token), which reads the call records in Redis. "
                    "Prometheus holds no per-call data: its labels never carry call or owner ids.",
                },
            },
            8,
            7,
        ),
    ]
    return {
        "uid": "callassist-ops",
        "title": "CallAssist ops",
        "tags": ["callassist"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": []},
        "annotations": {"list": []},
        "links": [],
        "panels": layout(now + overview + latency + breakdown),
    }


def render() -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
