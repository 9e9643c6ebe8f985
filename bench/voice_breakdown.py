"""``bench voice`` figures per language and line condition: recognition error per turn,
calls passing every gate, and caller-heard latency."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .callers import CallProfile
from .stats import summary_ms


def breakdown(
    turns: list[dict[str, Any]], runs: list[Any], profiles: dict[str, CallProfile], langs: dict[str, str]
) -> dict[str, Any]:
    """{"lang/condition": {...}}, one row per language ("lang/all"), and per caller voice
    ("lang/voice:NAME", "lang/condition/voice:NAME")."""
    groups: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"errors": 0, "length": 0, "turns": 0, "turns_exact": 0, "latency_s": [], "calls": 0, "passed": 0}
    )
    for t in turns:
        keys = [f"{t['lang']}/{t.get('condition', 'clean')}", f"{t['lang']}/all"]
        if t.get("voice"):  # per caller voice too: a robotic voice is not a phone line's fault
            keys += [f"{t['lang']}/voice:{t['voice']}", f"{t['lang']}/{t.get('condition', 'clean')}/voice:{t['voice']}"]
        for key in keys:
            g = groups[key]
            g["errors"] += t.get("errors", 0)
            g["length"] += t.get("length", 0)
            g["turns"] += 1
            g["turns_exact"] += int(t.get("errors", 0) == 0)
            if t.get("heard_ms") is not None:
                g["latency_s"].append(t["heard_ms"] / 1000)
    for run, verdict in runs:
        prof = profiles.get(run.scenario_id)
        lang = langs[run.scenario_id]
        cond = prof.condition.name if prof else "clean"
        keys = [f"{lang}/{cond}", f"{lang}/all"]
        if prof is not None:
            keys += [f"{lang}/voice:{prof.voice.name}", f"{lang}/{cond}/voice:{prof.voice.name}"]
        for key in keys:
            groups[key]["calls"] += 1
            groups[key]["passed"] += int(bool(verdict.passed))
    out: dict[str, Any] = {}
    for key in sorted(groups):
        g = groups[key]
        out[key] = {
            "recognition_error": round(g["errors"] / g["length"], 4) if g["length"] else None,
            "turns": g["turns"],
            "turns_exact": g["turns_exact"],
            "calls": g["calls"],
            "calls_passed": g["passed"],
            "latency": summary_ms(g["latency_s"]),
        }
    return out


def print_breakdown(rows: dict[str, Any]) -> None:
    print("per language / line condition (error = CER zh, WER en, per caller turn):")
    for key, r in rows.items():
        err = "   -  " if r["recognition_error"] is None else f"{r['recognition_error'] * 100:5.1f}%"
        lat = r["latency"]
        print(
            f"  {key:40} error {err}  exact turns {r['turns_exact']}/{r['turns']}  "
            f"calls passed {r['calls_passed']}/{r['calls']}  p50 {lat.get('p50_ms')} ms p90 {lat.get('p90_ms')} ms"
        )
