"""The ``callassist`` command line."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar, cast

import typer

from presets.models import Lang

from .resources import Resources
from .settings import get_settings

T = TypeVar("T")

cli = typer.Typer(
    no_args_is_help=True, add_completion=False, help="CallAssist: answers calls for you."
)
owner_cli = typer.Typer(no_args_is_help=True, help="Owner accounts and API keys.")
cli.add_typer(owner_cli, name="owner")


def _load_plugins() -> None:
    """Command groups from other packages (bench), found by entry point so that the
    app never imports them: ``[project.entry-points."callassist.cli"]``."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="callassist.cli"):
        try:
            group = ep.load()
        except ImportError as exc:  # an optional extra is not installed
            logging.getLogger(__name__).debug("cli plugin %s unavailable: %s", ep.name, exc)
            continue
        cli.add_typer(group, name=ep.name)


def setup_logging() -> None:
    level = os.environ.get("CALLASSIST_LOG_LEVEL", "INFO").upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def with_resources(fn: Callable[[Resources], Awaitable[T]]) -> T:
    """Run ``fn`` against the configured Redis (attaching to, or starting, the embedded one)."""

    async def run() -> T:
        res = Resources.open(get_settings())
        try:
            return await fn(res)
        finally:
            await res.close()

    return asyncio.run(run())


def echo_json(data: object) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default from settings)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default from settings)")] = None,
) -> None:
    """Run the service (embedded Redis unless CALLASSIST_REDIS_URL is set)."""
    import uvicorn

    from .main import create_app

    setup_logging()
    settings = get_settings()
    uvicorn.run(
        create_app(settings),
        host=host or settings.host,
        port=settings.port if port is None else port,
        log_level=os.environ.get("CALLASSIST_LOG_LEVEL", "info").lower(),
        ws_max_size=64 * 1024,
    )


@owner_cli.command("create")
def owner_create(
    name: Annotated[str, typer.Option("--name", help="The owner's name")],
    lang: Annotated[str, typer.Option("--lang", help="zh or en")] = "zh",
) -> None:
    """Create an owner; prints {"owner_id", "api_key"} (the key is shown only once)."""
    if lang not in ("zh", "en"):
        raise typer.BadParameter("--lang must be zh or en")
    if not name.strip():
        raise typer.BadParameter("--name must not be empty")

    async def run(res: Resources) -> dict[str, str]:
        owner, key = await res.owners.create_owner(name.strip(), cast(Lang, lang))
        return {"owner_id": owner.owner_id, "api_key": key}

    echo_json(with_resources(run))


@owner_cli.command("rotate-key")
def owner_rotate_key(owner_id: str) -> None:
    """Issue a new API key for OWNER_ID; the old key stops working."""
    from presets.errors import NotFound

    async def run(res: Resources) -> dict[str, str]:
        return {"owner_id": owner_id, "api_key": await res.owners.rotate_key(owner_id)}

    try:
        echo_json(with_resources(run))
    except NotFound as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(1) from exc


@owner_cli.command("list")
def owner_list() -> None:
    """List owners (ids, names, languages; never keys)."""

    async def run(res: Resources) -> list[dict[str, object]]:
        return [o.model_dump(mode="json") for o in await res.owners.list_owners()]

    echo_json(with_resources(run))


def main() -> None:
    _load_plugins()
    cli()
