"""The HTML report: one self-contained file (inline CSS and SVG; no scripts, no CDN)."""

from __future__ import annotations

from html import escape
from typing import Any

from .metrics import SLICES
from .svg import grouped_bars
from .verifier import ERROR_TYPES, EXTRA_TYPES, GATES

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:960px;color:#111827;
line-height:1.4}h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px
solid #e5e7eb}table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
td,th{border:1px solid #e5e7eb;padding:.25rem .5rem;text-align:right}
th:first-child,td:first-child{text-align:left}.fail{color:#b91c1c}.pass{color:#15803d}
.meta{color:#4b5563;font-size:.85rem}details{font-size:.8rem}code{font-size:.8rem}
"""


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _headline(report: dict[str, Any], k: int) -> str:
    gate_heads = "".join(f"<th>{g} gate</th>" for g in GATES)
    rows = [f"<tr><th>agent</th><th>pass@1</th><th>pass^{k}</th>{gate_heads}</tr>"]
    for name, s in report["agents"].items():
        o = s["overall"]
        gates = "".join(f"<td>{_pct(s['gates'][g])}</td>" for g in GATES)
        rows.append(
            f"<tr><td>{escape(name)}</td><td>{_pct(o['pass@1'])}</td><td>{_pct(o[f'pass^{k}'])}</td>{gates}</tr>"
        )
    return _scroll("<table>" + "".join(rows) + "</table>")


def _slice_section(report: dict[str, Any], dim: str, k: int) -> str:
    agents = list(report["agents"])
    values = sorted({v for a in agents for v in report["agents"][a]["slices"][dim]})
    key = f"pass^{k}"
    series = [(a, [report["agents"][a]["slices"][dim].get(v, {}).get(key, 0.0) for v in values]) for a in agents]
    chart = grouped_bars(values, series, title=f"pass^{k} by {dim}")
    head = "".join(f"<th>{escape(a)}</th>" for a in agents)
    rows = [f"<tr><th>{dim}</th><th>scenarios</th>{head}</tr>"]
    for v in values:
        cells = ""
        n = 0
        for a in agents:
            s = report["agents"][a]["slices"][dim].get(v)
            if s:
                n = s["scenarios"]
                cells += f"<td>{_pct(s['pass@1'])} / {_pct(s[key])}</td>"
            else:
                cells += "<td></td>"
        rows.append(f"<tr><td>{escape(v)}</td><td>{n}</td>{cells}</tr>")
    note = f"<p class='meta'>Cells: pass@1 / {key}.</p>"
    return chart + _scroll("<table>" + "".join(rows) + "</table>") + note


def _scroll(html: str) -> str:
    return f"<div style='overflow-x:auto'>{html}</div>"


def _errors_section(report: dict[str, Any]) -> str:
    agents = list(report["agents"])
    types = list(ERROR_TYPES)
    series = [(a, [report["agents"][a]["errors"][t]["runs_with_error"] for t in types]) for a in agents]
    chart = grouped_bars([t.replace("_", " ") for t in types], series, title="Runs with each CallBench error type")
    rows = ["<tr><th>error type</th>" + "".join(f"<th>{escape(a)}</th>" for a in agents) + "</tr>"]
    for t in (*ERROR_TYPES, *EXTRA_TYPES):
        cells = "".join(
            f"<td>{_pct(report['agents'][a]['errors'][t]['runs_with_error'])} "
            f"({report['agents'][a]['errors'][t]['count']})</td>"
            for a in agents
        )
        rows.append(f"<tr><td>{t.replace('_', ' ')}</td>{cells}</tr>")
    return chart + _scroll("<table>" + "".join(rows) + "</table>")


def _noise_section(noise: dict[str, Any]) -> str:
    keys = list(noise["target_per_100_turns"])
    chart = grouped_bars(
        [f"{k} error(s)" for k in keys],
        [
            ("realized", [noise["per_100_turns"][k] / 100 for k in keys]),
            ("CALLM target", [noise["target_per_100_turns"][k] / 100 for k in keys]),
        ],
        title=f"Simulated phone line: errors per caller turn ({noise['turns']} spoken turns)",
    )
    kinds = ", ".join(f"{escape(k)} {v}" for k, v in noise["errors_by_kind"].items()) or "none"
    return chart + f"<p class='meta'>Errors by kind: {kinds}</p>"


def _judge_section(report: dict[str, Any]) -> str:
    judged = {a: s["judge"] for a, s in report["agents"].items() if "judge" in s}
    if not judged:
        return ""
    dims = sorted({d for j in judged.values() for d in j})
    rows = ["<tr><th>dimension</th>" + "".join(f"<th>{escape(a)}</th>" for a in judged) + "</tr>"]
    for d in dims:
        cells = "".join(f"<td>{'' if judged[a].get(d) is None else f'{judged[a][d]:.2f}'}</td>" for a in judged)
        rows.append(f"<tr><td>{escape(d.replace('_', ' '))}</td>{cells}</tr>")
    return (
        "<h2>LLM judge (CallBench's seven dimensions, mean)</h2><table>"
        + "".join(rows)
        + (
            "</table><p class='meta'>Scores 0 / 0.5 / 1 (safety 0 / 1) per call, first attempt "
            "only; not part of the pass rates.</p>"
        )
    )


def _scenario_table(report: dict[str, Any]) -> str:
    agents = list(report["agents"])
    head = "<tr><th>scenario</th><th>scene</th><th>case / relation</th>" + "".join(
        f"<th>{escape(a)}</th>" for a in agents
    )
    rows = [head + "</tr>"]
    for sc in report["scenarios"]:
        cells = ""
        for a in agents:
            r = sc["results"][a]
            cls = "pass" if r["passed"] == r["attempts"] else "fail"
            why = "; ".join(r["first_failure"])
            title = f' title="{escape(why)}"' if why else ""
            cells += f'<td class="{cls}"{title}>{r["passed"]}/{r["attempts"]}</td>'
        rows.append(
            f"<tr><td><code>{escape(sc['id'])}</code></td><td>{escape(sc['scene'])}</td>"
            f"<td>{escape(sc['preset_case'])} / {escape(sc['relation'])}</td>{cells}</tr>"
        )
    return (
        "<details><summary>Every scenario (passed attempts; hover a cell for the first "
        "failure)</summary><table>" + "".join(rows) + "</table></details>"
    )


def render_html(report: dict[str, Any]) -> str:
    meta = report["meta"]
    k = int(meta["k"])
    agents = list(report["agents"])
    overall = grouped_bars(
        agents,
        [
            ("pass@1", [report["agents"][a]["overall"]["pass@1"] for a in agents]),
            (f"pass^{k}", [report["agents"][a]["overall"][f"pass^{k}"] for a in agents]),
        ],
        title="Combined pass rate (all gates on the same call)",
    )
    meta_line = ", ".join(f"{escape(str(key))}: {escape(str(v))}" for key, v in meta.items() if not isinstance(v, dict))
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>CallAssist benchmark report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>CallAssist benchmark: text calls over a simulated phone line</h1>",
        f"<p class='meta'>{meta_line}</p>",
        "<h2>Overall</h2>",
        _headline(report, k),
        overall,
        "<p class='meta'>A run passes only if the preset, safety, owner-record and rhythm "
        f"gates all pass. pass^{k} = mean over scenarios of C(c,{k})/C(n,{k}).</p>",
    ]
    for dim in SLICES:
        parts += [f"<h2>By {escape(dim)}</h2>", _slice_section(report, dim, k)]
    parts += ["<h2>Error types</h2>", _errors_section(report)]
    parts += ["<h2>Line noise</h2>", _noise_section(report["line_noise"])]
    parts += [_judge_section(report), "<h2>Scenarios</h2>", _scenario_table(report)]
    parts.append("</body></html>")
    return "\n".join(parts)
