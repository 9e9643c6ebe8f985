"""The harness end to end: agents, baselines, callers, report files, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from bench.agents import BASELINES, AlwaysConveyAgent, EchoAgent, HangUpAgent, ReferenceAgent
from bench.caller import AdaptiveCaller
from bench.cli import bench_cli
from bench.harness import RunOptions, run_agent, run_call
from bench.judge import LLMJudge, mean_scores, parse_scores
from bench.line import PhoneLine, Transmission
from bench.metrics import summarize
from bench.protocol import CallOutcome, TurnOutcome
from bench.scenario import Scenario
from bench.suite import load_suite
from bench.text import BenchError, TextBenchConfig, agent_names
from bench.verifier import verify

CLEAN = RunOptions(k=1, line=PhoneLine(enabled=False))


@pytest.fixture(scope="module")
def dev() -> list[Scenario]:
    return load_suite("builtin:dev")


async def test_reference_agent_passes_every_dev_scenario_on_a_clean_line(
    dev: list[Scenario],
) -> None:
    """The expectations are consistent and satisfiable: an agent doing exactly what
    they say passes every gate of every scenario."""
    result = await run_agent(ReferenceAgent, dev, options=CLEAN)
    failed = [v.to_dict() for v in result.verdicts if not v.passed]
    assert not failed, failed[:3]


async def test_baselines_fail_where_they_should(dev: list[Scenario]) -> None:
    options = RunOptions(k=2, line=PhoneLine())
    summaries = {}
    for name, factory in BASELINES.items():
        result = await run_agent(factory, dev, options=options)
        summaries[name] = summarize(dev, result.verdicts, 2)
    for name, s in summaries.items():
        assert s["overall"]["pass@1"] == 0.0, name
    always = summaries["always-convey"]["errors"]
    assert always["over_following_preset"]["runs_with_error"] > 0.3
    assert always["repeated_preset_delivery"]["runs_with_error"] > 0.5
    echo = summaries["echo"]["errors"]
    assert echo["irrelevant_answer"]["runs_with_error"] > 0.9
    assert summaries["echo"]["gates"]["owner"] < 0.7
    hang_up = summaries["hang-up"]
    assert hang_up["errors"]["improper_closing"]["runs_with_error"] == 1.0
    assert hang_up["gates"]["safety"] == 1.0  # naive agents can look good on naive metrics
    # The always-convey agent never misses a preset that was due.
    assert always["missed_preset"]["runs_with_error"] == 0.0


class _Broken(EchoAgent):
    name = "broken"

    async def turn(self, text: str | None) -> TurnOutcome:
        raise RuntimeError("boom")


async def test_an_agent_that_raises_fails_its_run(dev: list[Scenario]) -> None:
    run = await run_call(_Broken(), dev[0], 0, options=CLEAN)
    assert run.error == "RuntimeError: boom"
    assert not verify(dev[0], run).passed


class _SplittingLine:
    """Delivers every spoken turn in two halves."""

    def transmit(self, scenario_id: str, attempt: int, turn: int, text: str | None, lang: str) -> Transmission:
        if text is None:
            return Transmission((None,))
        half = len(text) // 2
        return Transmission((text[:half], text[half:]), ("split",))


async def test_split_turns_are_two_replies_to_one_caller_turn(dev: list[Scenario]) -> None:
    sc = next(s for s in dev if None not in s.turns)
    opts = RunOptions(k=1, line=_SplittingLine())  # type: ignore[arg-type]
    run = await run_call(EchoAgent(), sc, 0, options=opts)
    speech = [e for e in run.exchanges if e.kind == "speech"]
    assert len(speech) == 2 * len(sc.turns)
    assert [e.script_turn for e in speech[:2]] == [0, 0]
    assert speech[0].noise == ("split",) and speech[1].noise == ()


async def test_hang_up_ends_after_the_first_turn(dev: list[Scenario]) -> None:
    run = await run_call(HangUpAgent(), dev[0], 0, options=CLEAN)
    assert run.ended and run.ended_turn == 0 and len(run.exchanges) == 2


async def test_always_convey_reports_the_preset_it_says(dev: list[Scenario]) -> None:
    sc = next(s for s in dev if s.preset_case == "regular")
    run = await run_call(AlwaysConveyAgent(), sc, 0, options=CLEAN)
    assert all(e.preset_conveyed == ("regular",) for e in run.exchanges[1:])


# ------------------------------------------------------- adaptive caller ----


class _FakeChat:
    """An OpenAI-compatible client double: returns the scripted contents in order."""

    def __init__(self, contents: list[str]) -> None:
        self.contents = list(contents)
        self.requests: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    async def _create(self, **kwargs: Any) -> Any:
        self.requests.append(kwargs)
        content = self.contents.pop(0)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=content))])


async def test_adaptive_caller_continues_then_hangs_up(dev: list[Scenario]) -> None:
    sc = dev[0]
    client = _FakeChat(["<silence>", "好的，谢谢", "<hangup>"])
    caller = AdaptiveCaller(sc, client=client, model="m")
    run = await run_call(ReferenceAgent(), sc, 0, caller=caller, options=CLEAN)
    said = [e.said for e in run.exchanges if e.kind != "greeting"]
    assert said[0] == sc.turns[0] and said[1] is None
    assert not run.scripted
    roles = [m["role"] for m in client.requests[-1]["messages"]]
    assert roles[0] == "system" and "assistant" in roles and "user" in roles


# ------------------------------------------------------------------ judge ----


def test_judge_scores_are_snapped_and_not_applicable_without_presets() -> None:
    text = (
        'Sure: {"semantic_understanding": 0.7, "context_use": 1, "active_guidance": 0.4, '
        '"response_quality": 0.5, "preset_compliance": 0, "dialogue_rhythm": 1, "safety": 0.6}'
    )
    scores = parse_scores(text, has_presets=True)
    assert scores["semantic_understanding"] == 0.5 and scores["safety"] == 1.0
    assert parse_scores(text, has_presets=False)["preset_compliance"] is None
    assert parse_scores("no json", has_presets=True)["safety"] is None
    assert mean_scores([scores, {**scores, "context_use": 0.0}])["context_use"] == 0.5


async def test_llm_judge_with_a_fake_endpoint(dev: list[Scenario]) -> None:
    sc = dev[0]
    run = await run_call(ReferenceAgent(), sc, 0, options=CLEAN)
    judge = LLMJudge(_FakeChat(['{"safety": 1, "context_use": 0.5}']), "m")
    scores = await judge.score(sc, run)
    assert scores is not None and scores["safety"] == 1.0 and scores["context_use"] == 0.5


# ------------------------------------------------------------ CLI, report ----


def test_bench_text_writes_json_and_a_self_contained_html_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = ["text", "--suite", "builtin:dev", "--k", "2", "--limit", "12", "--out", str(out),
            "--agent", "reference", "--agent", "echo", "--agent", "hang-up"]  # fmt: skip
    result = CliRunner().invoke(bench_cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert set(report["agents"]) == {"reference", "echo", "hang-up"}
    assert report["meta"]["k"] == 2 and report["meta"]["scenarios"] == 12
    assert set(report["agents"]["echo"]["slices"]) == {"scene", "lang", "preset_case", "relation"}
    assert report["line_noise"]["target_per_100_turns"] == {"0": 76.6, "1": 18.5, "2+": 4.9}
    assert len((out / "runs.jsonl").read_text("utf-8").splitlines()) == 3 * 12 * 2
    html = (out / "report.html").read_text("utf-8")
    assert html.count("<svg") >= 6 and "<script" not in html and "http://cdn" not in html
    assert "pass^2" in html and "realized" in html


def test_bench_text_rejects_unknown_agents_and_suites(tmp_path: Path) -> None:
    with pytest.raises(BenchError):
        agent_names(TextBenchConfig(agents=("nobody",)))
    names = agent_names(TextBenchConfig(baselines=True))
    assert names == ["callassist", "always-convey", "echo", "hang-up", "callassist-noguard"]
    res = CliRunner().invoke(bench_cli, ["text", "--suite", "builtin:nope", "--agent", "echo",
                                         "--out", str(tmp_path)])  # fmt: skip
    assert res.exit_code == 1 and "no built-in suite" in res.output


# ---------------------------------------------------------------- CallAssist ----


async def test_callassist_runs_through_the_harness(dev: list[Scenario]) -> None:
    pytest.importorskip("pipeline.session")
    from bench.agents import CallAssistAgent, CallAssistEnv

    picked = [s for s in dev if s.preset_case == "regular"][:2] + [s for s in dev if s.preset_case == "emergent"][:1]
    async with CallAssistEnv() as env:
        result = await run_agent(lambda: CallAssistAgent(env), picked, options=CLEAN)
    assert [r.error for r in result.runs] == [None] * len(picked)
    assert all(r.exchanges[0].reply for r in result.runs)  # greeted
    assert all(len(r.exchanges) >= 2 for r in result.runs)


class _Recorder(EchoAgent):
    """Checks the harness calls start / turn / finish in order, once per call."""

    name = "recorder"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def start(self, scenario: Scenario, attempt: int) -> str:
        self.calls.append("start")
        return await super().start(scenario, attempt)

    async def turn(self, text: str | None) -> TurnOutcome:
        self.calls.append("turn")
        return TurnOutcome("嗯，您说。", ended=len(self.calls) > 2)

    async def finish(self) -> CallOutcome:
        self.calls.append("finish")
        return CallOutcome()


async def test_protocol_order(dev: list[Scenario]) -> None:
    agent = _Recorder()
    await run_call(agent, dev[0], 0, options=CLEAN)
    assert agent.calls == ["start", "turn", "turn", "finish"]
