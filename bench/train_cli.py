"""``callassist train ...``: reproduce the learned models from the data in the repo."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

train_cli = typer.Typer(no_args_is_help=True, help="Train the learned models from the repo's data.")


@train_cli.command("nlu")
def train_nlu(
    data: Annotated[Path, typer.Option(help="Corpus folder (train/ and dev/; test/ is never read)")] = Path("data/nlu"),
    out: Annotated[Path | None, typer.Option(help="Weights file (default: the packaged one)")] = None,
    seed: Annotated[int, typer.Option(help="Random seed")] = 20261201,
    cache: Annotated[bool, typer.Option(help="Keep e5 vectors in var/cache between runs")] = True,
    pairs_only: Annotated[
        bool, typer.Option(help="Refit only the trigger-pair model on the committed heads (new trigger pairs only)")
    ] = False,
) -> None:
    """Fit the understander's heads and trigger model (seeded; a few minutes on 2 cores)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from coordinator.nlu.model import WEIGHTS_PATH

    from .nlu.train import TrainConfig, refit_triggers, train

    cfg = TrainConfig(
        data=data, out=out or WEIGHTS_PATH, seed=seed, cache=Path("var/cache/nlu-e5.npz") if cache else None
    )
    _, meta = (refit_triggers if pairs_only else train)(cfg, log=typer.echo)
    typer.echo(json.dumps(meta, indent=1))


@train_cli.command("turn-end")
def train_turn_end(
    data: Annotated[Path, typer.Option(help="Corpus folder (train/ fits, dev/ sets the threshold)")] = Path("data/nlu"),
    out: Annotated[Path | None, typer.Option(help="Weights file (default: the packaged one)")] = None,
    seed: Annotated[int, typer.Option(help="Random seed")] = 20261201,
) -> None:
    """Fit the text end-of-turn classifier: a whole utterance vs the same utterance cut at
    a sentence boundary (seeded; about a minute)."""
    from pipeline.turn_model import WEIGHTS_PATH

    from .turn_end_train import train

    meta = train(data=data, out=out or WEIGHTS_PATH, seed=seed, log=typer.echo)
    typer.echo(json.dumps(meta, indent=1))
