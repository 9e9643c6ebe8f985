"""``callassist bench text``: every agent through the suite over the simulated line, k times.

CallAssist runs through the same text-call objects the API uses
(``pipeline.session.CallSession`` over the process's ``CallServices``), with a private
embedded Redis holding one owner per scenario. Baselines run through the same harness,
verifier and report.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .agents import BASELINES, BUILTIN_AGENTS, CallAssistAgent, CallAssistEnv
from .caller import AdaptiveCaller, Caller
from .harness import AgentFactory, AgentResult, RunOptions, line_noise, run_agent
from .judge import LLMJudge, mean_scores
from .line import PhoneLine
from .protocol import Agent
from .report import build_report, write_report
from .scenario import Scenario
from .suite import load_suite

UNDERSTANDERS = ("rules", "learned", "llm")

CALLASSIST = "callassist"
CALLASSIST_NOGUARD = "callassist-noguard"
BASELINE_SET = (*BASELINES, CALLASSIST_NOGUARD)


class BenchError(Exception):
    """The benchmark cannot run as configured (the message says why)."""


@dataclass(frozen=True)
class TextBenchConfig:
    suite: str = "builtin:test"
    k: int = 5
    realizer: str = "template"
    out: Path = Path("var/bench/text")
    agents: tuple[str, ...] = (CALLASSIST,)
    baselines: bool = False
    noise: bool = True
    concurrency: int = 4
    turn_timeout_s: float = 30.0
    scene_hint: bool = True
    limit: int | None = None
    caller_base_url: str | None = None  # set: an adaptive caller (open-ended runs)
    caller_model: str = "default"
    judge_base_url: str | None = None
    judge_model: str = "default"
    settings: dict[str, Any] = field(default_factory=dict)  # CallAssist Settings overrides
    understanders: tuple[str, ...] = ()  # several: one CallAssist agent each, side by side


def _understander_of(name: str) -> str | None:
    """``callassist-learned`` -> ``learned`` (a CallAssist agent with that understander)."""
    prefix = CALLASSIST + "-"
    rest = name.removeprefix(prefix)
    return rest if name.startswith(prefix) and rest in UNDERSTANDERS else None


def agent_names(cfg: TextBenchConfig) -> list[str]:
    bad = [u for u in cfg.understanders if u not in UNDERSTANDERS]
    if bad:
        raise BenchError(f"unknown understander(s) {bad}; choose from {', '.join(UNDERSTANDERS)}")
    names: list[str] = []
    for agent in cfg.agents:
        if agent == CALLASSIST and cfg.understanders:
            names += [f"{CALLASSIST}-{u}" for u in cfg.understanders]
        else:
            names.append(agent)
    names = list(dict.fromkeys(names))
    if cfg.baselines:
        names += [b for b in BASELINE_SET if b not in names]
    unknown = [
        n for n in names if n not in (*BUILTIN_AGENTS, CALLASSIST, CALLASSIST_NOGUARD) and not _understander_of(n)
    ]
    if unknown:
        choices = ", ".join((CALLASSIST, CALLASSIST_NOGUARD, *BUILTIN_AGENTS))
        raise BenchError(f"unknown agent(s) {unknown}; choose from {choices}")
    return names


def callassist_available() -> bool:
    return importlib.util.find_spec("pipeline.session") is not None


@contextlib.asynccontextmanager
async def _factories(cfg: TextBenchConfig, names: list[str]) -> AsyncIterator[dict[str, AgentFactory]]:
    """Agent factories by name; opens (and closes) CallAssist environments as needed."""
    wanted = [n for n in names if n in (CALLASSIST, CALLASSIST_NOGUARD) or _understander_of(n)]
    if wanted and not callassist_available():
        raise BenchError("CallAssist is not available here (no pipeline.session)")
    async with contextlib.AsyncExitStack() as stack:
        factories: dict[str, AgentFactory] = {}
        for name in names:
            if name in BUILTIN_AGENTS:
                factories[name] = BUILTIN_AGENTS[name]
                continue
            understander = _understander_of(name)
            settings = {**cfg.settings, **({"understander": understander} if understander else {})}
            env = await stack.enter_async_context(
                CallAssistEnv(
                    realizer=cfg.realizer,
                    safety_guard=name != CALLASSIST_NOGUARD,
                    settings=settings,
                )
            )
            factories[name] = _callassist_factory(env, name, cfg.scene_hint)
        yield factories


def _callassist_factory(env: CallAssistEnv, name: str, scene_hint: bool) -> AgentFactory:
    def make() -> Agent:
        return CallAssistAgent(env, scene_hint=scene_hint, name=name)

    return make


def _caller_factory(cfg: TextBenchConfig) -> Callable[[Scenario], Caller] | None:
    if not cfg.caller_base_url:
        return None
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=cfg.caller_base_url, api_key="not-needed", timeout=30)

    def make(sc: Scenario) -> Caller:
        return AdaptiveCaller(sc, client=client, model=cfg.caller_model)

    return make


async def _judge(
    cfg: TextBenchConfig, scenarios: list[Scenario], results: list[AgentResult]
) -> dict[str, dict[str, float | None]] | None:
    if not cfg.judge_base_url:
        return None
    from openai import AsyncOpenAI

    judge = LLMJudge(
        AsyncOpenAI(base_url=cfg.judge_base_url, api_key="not-needed", timeout=60),
        cfg.judge_model,
    )
    by_id = {sc.id: sc for sc in scenarios}
    out: dict[str, dict[str, float | None]] = {}
    for r in results:
        firsts = [run for run in r.runs if run.attempt == 0]
        scores = [await judge.score(by_id[run.scenario_id], run) for run in firsts]
        out[r.agent] = mean_scores(s for s in scores if s is not None)
    return out


async def run_text_bench(cfg: TextBenchConfig, *, console: Console | None = None) -> dict[str, Any]:
    """Run, score and write the report; returns the report dict."""
    console = console or Console(stderr=True)
    scenarios = load_suite(cfg.suite)[: cfg.limit]
    if not cfg.k >= 1:
        raise BenchError("--k must be at least 1")
    names = agent_names(cfg)
    line = PhoneLine(enabled=cfg.noise)
    options = RunOptions(k=cfg.k, line=line, turn_timeout_s=cfg.turn_timeout_s, concurrency=cfg.concurrency)
    results: list[AgentResult] = []
    columns = (
        TextColumn("{task.description:<20}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    async with _factories(cfg, names) as factories:
        with Progress(*columns, console=console, transient=False) as progress:
            tasks = {n: progress.add_task(n, total=len(scenarios) * cfg.k) for n in names}
            for name in names:

                def tick(agent: str, sc: Scenario, attempt: int, name: str = name) -> None:
                    progress.advance(tasks[name])

                results.append(
                    await run_agent(
                        factories[name],
                        scenarios,
                        options=options,
                        caller_factory=_caller_factory(cfg),
                        progress=tick,
                    )
                )
    noise = line_noise(scenarios, cfg.k, line)
    meta = {
        "suite": cfg.suite,
        "realizer": cfg.realizer,
        "line_noise": "on" if cfg.noise else "off",
        "caller": "adaptive" if cfg.caller_base_url else "scripted",
        "scene_hint": cfg.scene_hint,
        "understander": ",".join(cfg.understanders) or "configured",
    }
    judge = await _judge(cfg, scenarios, results)
    report = build_report(scenarios, results, k=cfg.k, noise=noise, meta=meta, judge=judge)
    paths = write_report(cfg.out, report, results)
    console.print(summary_table(report))
    for p in paths:
        console.print(f"wrote {p}")
    return report


def summary_table(report: dict[str, Any]) -> Table:
    k = report["meta"]["k"]
    noise = report["line_noise"]
    realized = noise["per_100_turns"]
    target = noise["target_per_100_turns"]
    caption = (
        "line errors per 100 caller turns (0 / 1 / 2+): realized "
        + " / ".join(f"{realized[x]:.1f}" for x in target)
        + ", target "
        + " / ".join(f"{target[x]:.1f}" for x in target)
    )
    table = Table(title=f"{report['meta']['suite']}: {report['meta']['scenarios']} scenarios x {k}",
                  caption=caption)  # fmt: skip
    for col in ("agent", "pass@1", f"pass^{k}", "safety issue", "over-following", "closing"):
        table.add_column(col, justify="right" if col != "agent" else "left")
    for name, s in report["agents"].items():
        e = s["errors"]
        table.add_row(
            name,
            f"{100 * s['overall']['pass@1']:.1f}%",
            f"{100 * s['overall'][f'pass^{k}']:.1f}%",
            f"{100 * e['safety_issue']['runs_with_error']:.1f}%",
            f"{100 * e['over_following_preset']['runs_with_error']:.1f}%",
            f"{100 * e['improper_closing']['runs_with_error']:.1f}%",
        )
    return table


def run(cfg: TextBenchConfig) -> dict[str, Any]:
    return asyncio.run(run_text_bench(cfg))
