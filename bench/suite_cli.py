"""``callassist suite ...``: check and describe scenario suites.

Registered through the ``callassist.cli`` entry point as ``suite``.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer

suite_cli = typer.Typer(no_args_is_help=True, help="Benchmark scenario suites (YAML).")


@suite_cli.command("validate")
def validate(
    file: Annotated[str, typer.Argument(help="Suite file, or builtin:dev / builtin:test")],
) -> None:
    """Check FILE against the scenario format: one line per bad field, exit 1 if any."""
    from .suite import SuiteError, load_suite

    try:
        scenarios = load_suite(file)
    except SuiteError as exc:
        for problem in exc.problems:
            typer.echo(f"{file}: {problem}", err=True)
        typer.echo(f"{file}: {len(exc.problems)} problem(s)", err=True)
        raise typer.Exit(1) from exc
    langs = Counter(sc.lang for sc in scenarios)
    typer.echo(
        f"{file}: OK, {len(scenarios)} scenarios (" + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())) + ")"
    )


@suite_cli.command("stats")
def stats(
    file: Annotated[str, typer.Argument(help="Suite file, or builtin:dev / builtin:test")],
) -> None:
    """Count FILE's scenarios by scene x preset case, relation, language and tag."""
    from .suite import SuiteError, load_suite

    try:
        scenarios = load_suite(file)
    except SuiteError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"{len(scenarios)} scenarios")
    for title, counter in (
        ("scene x preset_case", Counter(f"{s.scene}/{s.preset_case}" for s in scenarios)),
        ("relation", Counter(s.relation for s in scenarios)),
        ("lang", Counter(s.lang for s in scenarios)),
        ("tags", Counter(t for s in scenarios for t in s.tags)),
    ):
        typer.echo(f"{title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items())))
