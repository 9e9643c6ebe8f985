"""``callassist bench decisions``: decision time per turn and the template realizer's
first-token time, over many scripted calls through CallSession (the API's objects)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from .agents import CallAssistEnv
from .stats import summary_ms
from .suite import load_suite


async def _run(suites: list[str], repeats: int, understander: str) -> dict[str, Any]:
    from pipeline.session import CallSession

    timings: dict[str, list[float]] = {"decision_ms": [], "coordinator_ms": [], "first_token_ms": [], "total_ms": []}
    turns = calls = 0
    async with CallAssistEnv(realizer="template", settings={"understander": understander}) as env:
        for spec in suites:
            for sc in load_suite(spec):
                owner_id, _ = await env.seed(sc)
                for _ in range(repeats):
                    session = await CallSession.open(env.services, owner_id=owner_id, lang=sc.lang, scene_hint=sc.scene)  # type: ignore[arg-type]
                    calls += 1
                    for text in sc.caller.turns:
                        if session.ended:
                            break
                        r = await session.turn(text)
                        turns += 1
                        for key in timings:
                            value = r.timings.get(key)
                            if isinstance(value, int | float):
                                timings[key].append(float(value) / 1000)
                    await session.hangup("caller_hangup")
    return {"calls": calls, "turns": turns, **{k: summary_ms(v) for k, v in timings.items()}}


def run_decision_bench(
    *, suites: list[str], repeats: int, out: Path | None, understanders: tuple[str, ...] = ("rules",)
) -> dict[str, Any]:
    reports = {u: _report(suites, repeats, u) for u in understanders}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "decisions.json").write_text(json.dumps(reports, indent=2), encoding="utf-8")
    return reports


def _report(suites: list[str], repeats: int, understander: str) -> dict[str, Any]:
    report = asyncio.run(_run(suites, repeats, understander))
    print(f"understander {understander}: {report['calls']} calls, {report['turns']} caller turns (template realizer)")
    names = {
        "coordinator_ms": "understanding + coordinator decide()",
        "decision_ms": "decision (embedding + understanding + decide)",
        "first_token_ms": "template realizer first token",
        "total_ms": "whole turn (incl. guard, record save)",
    }
    for key, label in names.items():
        s = report[key]
        print(f"{label:46} p50 {s['p50_ms']:8} ms  p99 {s['p99_ms']:8} ms  max {s['max_ms']} ms")
    return report
