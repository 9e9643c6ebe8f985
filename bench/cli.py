"""``callassist bench ...`` commands (registered through the callassist.cli entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

bench_cli = typer.Typer(no_args_is_help=True, help="Benchmarks and evaluation that print figures.")


@bench_cli.command("api")
def bench_api(
    clients: Annotated[int, typer.Option(help="Concurrent clients")] = 8,
    seconds: Annotated[float, typer.Option(help="Duration of each phase, seconds")] = 5.0,
) -> None:
    """GET /v1/presets and PUT regular on loopback: requests/s, p50 and p99 latency."""
    from .api import run_api_bench

    run_api_bench(clients=clients, seconds=seconds)


@bench_cli.command("text")
def bench_text(
    suite: Annotated[str, typer.Option(help="Suite file, or builtin:dev / builtin:test")] = "builtin:test",
    k: Annotated[int, typer.Option(help="Attempts per scenario (pass^k)", min=1)] = 5,
    realizer: Annotated[str, typer.Option(help="CallAssist realizer: template or llm")] = "template",
    out: Annotated[Path, typer.Option(help="Folder for report.json/.html and runs.jsonl")] = Path("var/bench/text"),
    baselines: Annotated[bool, typer.Option("--baselines", help="Also run the baselines (incl. guard off)")] = False,
    agent: Annotated[
        list[str] | None,
        typer.Option(help="Agent(s) under test (repeatable): callassist, reference, echo, ..."),
    ] = None,
    noise: Annotated[bool, typer.Option(help="Simulated phone-line errors")] = True,
    concurrency: Annotated[int, typer.Option(help="Calls at once per agent", min=1)] = 4,
    scene_hint: Annotated[bool, typer.Option(help="Tell CallAssist the scene")] = True,
    limit: Annotated[int | None, typer.Option(help="Only the first N scenarios")] = None,
    caller_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL: an adaptive caller")] = None,
    caller_model: Annotated[str, typer.Option(help="Model of the adaptive caller")] = "default",
    judge_base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL: the optional LLM judge")] = None,
    judge_model: Annotated[str, typer.Option(help="Model of the LLM judge")] = "default",
    llm_base_url: Annotated[
        str | None, typer.Option(help="CallAssist's LLM realizer endpoint(s), comma-separated")
    ] = None,
    llm_model: Annotated[str | None, typer.Option(help="CallAssist's LLM realizer model")] = None,
) -> None:
    """Text calls over a simulated noisy phone line: pass@1, pass^k, error types, HTML report."""
    from .suite import SuiteError
    from .text import BenchError, TextBenchConfig, run

    if realizer not in ("template", "llm"):
        raise typer.BadParameter("--realizer must be template or llm")
    settings: dict[str, str] = {}
    if llm_base_url:
        settings["llm_base_url"] = llm_base_url
    if llm_model:
        settings["llm_model"] = llm_model
    cfg = TextBenchConfig(
        suite=suite,
        k=k,
        realizer=realizer,
        out=out,
        agents=tuple(agent or ("callassist",)),
        baselines=baselines,
        noise=noise,
        concurrency=concurrency,
        scene_hint=scene_hint,
        limit=limit,
        caller_base_url=caller_base_url,
        caller_model=caller_model,
        judge_base_url=judge_base_url,
        judge_model=judge_model,
        settings=settings,
    )
    try:
        run(cfg)
    except (BenchError, SuiteError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
