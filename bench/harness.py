"""Drive agents through scenarios over the simulated phone line, k attempts each.

One call: the agent greets (``start``), then each caller turn goes through the
:class:`~bench.line.PhoneLine` (a split turn reaches the agent as two turns) and the
agent replies (``turn``), until the agent ends the call or the caller hangs up; then
``finish`` reports the owner's record. Every agent meets the same line errors on
attempt k of a scenario. An agent that raises or times out fails that run (it is
recorded, not fatal).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .caller import Caller, ScriptedCaller
from .line import NoiseStats, PhoneLine
from .protocol import Agent, Exchange, RunRecord
from .scenario import Scenario
from .verifier import Verdict, verify

log = logging.getLogger(__name__)

AgentFactory = Callable[[], Agent]
CallerFactory = Callable[[Scenario], Caller]
Progress = Callable[[str, Scenario, int], None]


@dataclass(frozen=True, slots=True)
class RunOptions:
    k: int = 5
    line: PhoneLine = field(default_factory=PhoneLine)
    turn_timeout_s: float = 30.0
    concurrency: int = 1
    max_exchanges: int = 40  # a hard stop for runaway calls (split turns included)


@dataclass(slots=True)
class AgentResult:
    agent: str
    runs: list[RunRecord] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)


async def run_call(
    agent: Agent,
    sc: Scenario,
    attempt: int,
    *,
    caller: Caller | None = None,
    options: RunOptions | None = None,
) -> RunRecord:
    """One attempt of one scenario; never raises for the agent's failures."""
    opts = options or RunOptions()
    caller = caller or ScriptedCaller(sc)
    run = RunRecord(sc.id, agent.name, attempt, scripted=caller.scripted)
    try:
        t0 = time.perf_counter()
        greeting = await asyncio.wait_for(agent.start(sc, attempt), opts.turn_timeout_s)
        run.exchanges.append(Exchange("greeting", -1, None, None, greeting, latency_ms=_ms(t0)))
        await _converse(agent, sc, attempt, caller, opts, run)
    except Exception as exc:  # the agent under test failed: score the run as failed
        run.error = f"{type(exc).__name__}: {exc}"[:500]
        log.warning("agent failed", extra={"agent": agent.name, "scenario": sc.id})
    try:
        outcome = await asyncio.wait_for(agent.finish(), opts.turn_timeout_s)
        run.owner_record = outcome.owner_record
    except Exception as exc:
        run.error = run.error or f"finish: {type(exc).__name__}: {exc}"[:500]
    run.ended = run.ended_turn is not None
    return run


async def _converse(agent: Agent, sc: Scenario, attempt: int, caller: Caller, opts: RunOptions, run: RunRecord) -> None:
    while len(run.exchanges) < opts.max_exchanges:
        turn = await caller.next(run.exchanges)
        if turn is None:
            return  # the caller hung up (or the script ran out)
        tx = opts.line.transmit(sc.id, attempt, turn.index, turn.text, sc.lang)
        for part_no, heard in enumerate(tx.parts):
            t0 = time.perf_counter()
            out = await asyncio.wait_for(agent.turn(heard), opts.turn_timeout_s)
            run.exchanges.append(
                Exchange(
                    kind="silence" if turn.text is None else "speech",
                    script_turn=turn.index,
                    said=turn.text,
                    heard=heard,
                    reply=out.reply,
                    preset_conveyed=tuple(out.preset_conveyed),
                    ended=out.ended,
                    noise=tx.errors if part_no == 0 else (),
                    latency_ms=_ms(t0),
                )
            )
            if out.ended:
                return


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


async def run_agent(
    factory: AgentFactory,
    scenarios: list[Scenario],
    *,
    options: RunOptions | None = None,
    caller_factory: CallerFactory | None = None,
    progress: Progress | None = None,
) -> AgentResult:
    """Every scenario ``k`` times; ``concurrency`` calls at once (one agent per worker)."""
    opts = options or RunOptions()
    jobs: asyncio.Queue[tuple[int, Scenario, int]] = asyncio.Queue()
    order = [(sc, a) for sc in scenarios for a in range(opts.k)]
    for i, (sc, a) in enumerate(order):
        jobs.put_nowait((i, sc, a))
    slots: list[tuple[RunRecord, Verdict] | None] = [None] * len(order)
    name = ""

    async def worker() -> None:
        nonlocal name
        agent = factory()
        name = agent.name
        while True:
            try:
                i, sc, attempt = jobs.get_nowait()
            except asyncio.QueueEmpty:
                return
            caller = caller_factory(sc) if caller_factory else None
            run = await run_call(agent, sc, attempt, caller=caller, options=opts)
            slots[i] = (run, verify(sc, run))
            if progress is not None:
                progress(agent.name, sc, attempt)

    async with asyncio.TaskGroup() as tg:  # a bug in one worker cancels the others
        for _ in range(max(1, min(opts.concurrency, len(order)))):
            tg.create_task(worker())
    result = AgentResult(name)
    for slot in slots:
        assert slot is not None
        result.runs.append(slot[0])
        result.verdicts.append(slot[1])
    return result


def line_noise(scenarios: list[Scenario], k: int, line: PhoneLine) -> NoiseStats:
    """The errors the line puts on every spoken scripted turn of every attempt
    (what every agent meets; independent of when an agent ends a call)."""
    stats = NoiseStats()
    for sc in scenarios:
        for attempt in range(k):
            for i, text in enumerate(sc.turns):
                if text is not None:
                    stats.add(line.transmit(sc.id, attempt, i, text, sc.lang).errors)
    return stats
