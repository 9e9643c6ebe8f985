"""Assemble a benchmark report and write it: ``report.json``, ``runs.jsonl``, ``report.html``.

``runs.jsonl`` holds every run (transcript, owner record, verdict) so that a saved
run can be rescored when the verifier changes; ``report.json`` holds the figures.
"""

from __future__ import annotations

import json
import platform
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .harness import AgentResult
from .line import NoiseStats
from .metrics import per_scenario, summarize
from .scenario import Scenario


def build_report(
    scenarios: list[Scenario],
    results: list[AgentResult],
    *,
    k: int,
    noise: NoiseStats,
    meta: dict[str, Any],
    judge: dict[str, dict[str, float | None]] | None = None,
) -> dict[str, Any]:
    agents: dict[str, Any] = {}
    for r in results:
        agents[r.agent] = summarize(scenarios, r.verdicts, k)
        if judge and r.agent in judge:
            agents[r.agent]["judge"] = judge[r.agent]
    counts = {r.agent: per_scenario(r.verdicts) for r in results}
    first_failure: dict[str, dict[str, list[str]]] = {}
    for r in results:
        seen: dict[str, list[str]] = {}
        for v in r.verdicts:
            if not v.passed and v.scenario_id not in seen:
                seen[v.scenario_id] = [f for g in v.gates.values() for f in g.failures][:4] or ["agent error"]
        first_failure[r.agent] = seen
    rows = []
    for sc in scenarios:
        rows.append(
            {
                "id": sc.id,
                **sc.slices(),
                "tags": list(sc.tags),
                "results": {
                    a: {
                        "passed": counts[a].get(sc.id, (0, 0))[0],
                        "attempts": counts[a].get(sc.id, (0, 0))[1],
                        "first_failure": first_failure[a].get(sc.id, []),
                    }
                    for a in counts
                },
            }
        )
    return {
        "meta": {
            "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "k": k,
            "scenarios": len(scenarios),
            **meta,
        },
        "line_noise": noise.realized(),
        "agents": agents,
        "scenarios": rows,
    }


def _run_line(run: Any, verdict: Any) -> str:
    data = asdict(run)
    data["verdict"] = verdict.to_dict()
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def write_report(out_dir: Path, report: dict[str, Any], results: list[AgentResult]) -> list[Path]:
    """Write the three files; returns their paths."""
    from .report_html import render_html

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    json_path.write_text(json.dumps(report, ensure_ascii=False, indent=2), "utf-8")
    runs_path = out_dir / "runs.jsonl"
    with runs_path.open("w", encoding="utf-8") as f:
        for r in results:
            for run, verdict in zip(r.runs, r.verdicts, strict=True):
                f.write(_run_line(run, verdict) + "\n")
    html_path = out_dir / "report.html"
    html_path.write_text(render_html(report), "utf-8")
    return [json_path, runs_path, html_path]
