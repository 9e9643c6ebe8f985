"""``callassist demo`` (registered through the callassist.cli entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def demo(
    lang: Annotated[str, typer.Option(help="en, zh or both")] = "both",
    out: Annotated[Path, typer.Option(help="Where transcripts and WAV recordings go")] = Path("demo-output"),
    data_dir: Annotated[
        Path | None, typer.Option(help="Keep the service's data here (default: a temporary folder)")
    ] = None,
) -> None:
    """Place simulated phone calls (one English, one Chinese) through the real Twilio WebSocket
    path of a CallAssist started on embedded defaults; print the live transcript with
    per-turn latency and the owner's message; save WAVs."""
    from .demo import run_demo

    langs = ["en", "zh"] if lang == "both" else [lang]
    if any(x not in ("en", "zh") for x in langs):
        raise typer.BadParameter("--lang must be en, zh or both")
    run_demo(langs=langs, out=out, data_dir=data_dir)
