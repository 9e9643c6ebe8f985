"""``callassist bench decisions``: decision time per turn and the template realizer's
first-token time, over many scripted calls through CallSession (the API's objects).

Each scenario is called twice per repeat, interleaved so both see the same machine load:

- ``text``: a text call; the turn's e5 embedding is computed inside the decision (the
  full synchronous cost);
- ``voice``: the voice path's order of events, without audio. Its speculative transcript
  is offered to :meth:`CallSession.precompute` before the turn is decided; a turn the voice
  path holds for a pause (a statement waits for 0.9 s, a short turn 0.7 s:
  ``pipeline.turns``) is decided once the precomputed embedding is ready, a turn it ends at
  once (a question, a closing) right after the offer, so the decision waits for the rest
  of the embedding. ``decision_ms`` is then the critical-path cost.

The caller-turn vector cache is emptied before every call: each call pays as a first
caller would (scripted texts recur across repeats, real ones rarely do).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from .agents import CallAssistEnv
from .stats import summary_ms
from .suite import load_suite

_KEYS = ("decision_ms", "coordinator_ms", "embed_ms", "first_token_ms", "total_ms")
MODES = ("text", "voice")


def held_for_pause(text: str) -> bool:
    """Whether the voice path waits after this transcript before answering (the
    :meth:`pipeline.turns.TurnTranscriber._pause_s` rule, and the short-turn grace, without the audio clock)."""
    from pipeline.turns import _short, words_end_after

    return _short(text) or words_end_after(text) != 0.0


class _Timings:
    def __init__(self) -> None:
        self.all: dict[str, list[float]] = {k: [] for k in _KEYS}
        self.held: list[float] = []  # decision_ms of turns held for a pause (voice)
        self.at_once: list[float] = []  # ... of turns answered as soon as transcribed
        self.hits = self.misses = 0

    def add(self, timings: dict[str, Any], held: bool | None) -> None:
        for key in _KEYS:
            value = timings.get(key)
            if isinstance(value, int | float):
                self.all[key].append(float(value) / 1000)
        if held is not None and isinstance(timings.get("decision_ms"), int | float):
            (self.held if held else self.at_once).append(float(timings["decision_ms"]) / 1000)
        early = timings.get("embed_precomputed")
        if early is not None:
            self.hits += int(early == 1.0)
            self.misses += int(early != 1.0)

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: summary_ms(v) for k, v in self.all.items()}
        out["held_decision_ms"] = summary_ms(self.held)
        out["at_once_decision_ms"] = summary_ms(self.at_once)
        n = self.hits + self.misses
        out["precomputed"] = {"hit": self.hits, "miss": self.misses, "hit_rate": round(self.hits / n, 4) if n else None}
        return out


async def _call(env: CallAssistEnv, sc: Any, owner_id: str, mode: str, t: _Timings) -> int:
    from pipeline.session import CallSession
    from presets.embeddings import Embedder

    Embedder.forget()
    session = await CallSession.open(env.services, owner_id=owner_id, lang=sc.lang, scene_hint=sc.scene)  # type: ignore[arg-type]
    turns = 0
    for text in sc.caller.turns:
        if session.ended:
            break
        held = None
        if mode == "voice" and text:
            held = held_for_pause(text)
            job = session.precompute(text)
            if held and job is not None:
                await asyncio.wait_for(asyncio.shield(job), 10)  # the pause outlasts the embedding
        r = await session.turn(text)
        turns += 1
        t.add(r.timings, held)
    await session.hangup("caller_hangup")
    return turns


async def _run(suites: list[str], repeats: int, understander: str) -> dict[str, Any]:
    timings = {m: _Timings() for m in MODES}
    turns = calls = 0
    started = time.perf_counter()
    async with CallAssistEnv(realizer="template", settings={"understander": understander}) as env:
        warm_s = time.perf_counter() - started  # start-up, including the understanding warm-up
        for spec in suites:
            for sc in load_suite(spec):
                owner_id, _ = await env.seed(sc)
                for _ in range(repeats):
                    for mode in MODES:
                        turns += await _call(env, sc, owner_id, mode, timings[mode])
                        calls += 1
    return {
        "calls": calls,
        "turns": turns,
        "startup_s": round(warm_s, 2),
        **{mode: t.report() for mode, t in timings.items()},
    }


def run_decision_bench(
    *, suites: list[str], repeats: int, out: Path | None, understanders: tuple[str, ...] = ("rules",)
) -> dict[str, Any]:
    reports = {u: _report(suites, repeats, u) for u in understanders}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "decisions.json").write_text(json.dumps(reports, indent=2), encoding="utf-8")
    return reports


def _line(label: str, s: dict[str, Any]) -> None:
    print(f"  {label:58} p50 {s['p50_ms']:8} ms  p99 {s['p99_ms']:8} ms  max {s['max_ms']} ms  (n={s['n']})")


def _report(suites: list[str], repeats: int, understander: str) -> dict[str, Any]:
    report = asyncio.run(_run(suites, repeats, understander))
    print(
        f"understander {understander}: {report['calls']} calls ({report['calls'] // 2} text + voice-path each),"
        f" {report['turns']} caller turns (template realizer); start-up {report['startup_s']} s"
    )
    text, voice = report["text"], report["voice"]
    print(" text call: the embedding computed inline (the full synchronous cost)")
    _line("decision (embedding + understanding + decide)", text["decision_ms"])
    _line("  of which the e5 embedding (turns that need one)", text["embed_ms"])
    _line("  of which understanding + coordinator decide()", text["coordinator_ms"])
    _line("whole turn (incl. guard, record save)", text["total_ms"])
    pre = voice["precomputed"]
    rate = "n/a" if pre["hit_rate"] is None else f"{100 * pre['hit_rate']:.1f}%"
    print(f" voice path: embedding precomputed from the speculative transcript (hit rate {rate}, {pre})")
    _line("decision on the critical path (all turns)", voice["decision_ms"])
    _line("  turns held for a pause (statements, short turns)", voice["held_decision_ms"])
    _line("  turns answered at once (questions, closings)", voice["at_once_decision_ms"])
    _line("  of which waiting for the embedding", voice["embed_ms"])
    _line("template realizer first token", text["first_token_ms"])
    return report
