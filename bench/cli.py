"""``callassist bench ...`` commands (registered through the callassist.cli entry point)."""

from __future__ import annotations

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
