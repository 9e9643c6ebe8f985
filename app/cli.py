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

cli = typer.Typer(no_args_is_help=True, add_completion=False, help="CallAssist: answers calls for you.")
owner_cli = typer.Typer(no_args_is_help=True, help="Owner accounts and API keys.")
cli.add_typer(owner_cli, name="owner")
sip_cli = typer.Typer(no_args_is_help=True, help="SIP front-end helpers (Kamailio).")
cli.add_typer(sip_cli, name="sip")


def _load_plugins() -> None:
    """Command groups from other packages (bench), found by entry point so that the
    app never imports them: ``[project.entry-points."callassist.cli"]``."""
    from importlib.metadata import entry_points

    for ep in entry_points(group="callassist.cli"):
        try:
            obj = ep.load()
        except ImportError as exc:  # an optional extra is not installed
            logging.getLogger(__name__).debug("cli plugin %s unavailable: %s", ep.name, exc)
            continue
        if isinstance(obj, typer.Typer):
            cli.add_typer(obj, name=ep.name)
        else:
            cli.command(name=ep.name)(obj)


def setup_logging(default: str = "INFO") -> None:
    level = os.environ.get("CALLASSIST_LOG_LEVEL", default).upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:  # pipecat logs through loguru, at DEBUG by default: far too much for a phone service
        import sys

        from loguru import logger

        logger.remove()
        logger.add(sys.stderr, level="DEBUG" if level == "DEBUG" else "WARNING")
    except ImportError:
        pass


def with_resources(fn: Callable[[Resources], Awaitable[T]]) -> T:
    """Run ``fn`` against the configured Redis (attaching to, or starting, the embedded one)."""

    async def run() -> T:
        res = Resources.open(get_settings(), voice=False)
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

    from .drain import DrainingServer
    from .main import create_app

    setup_logging()
    settings = get_settings()
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=host or settings.host,
        port=settings.port if port is None else port,
        log_level=os.environ.get("CALLASSIST_LOG_LEVEL", "info").lower(),
        ws_max_size=1024 * 1024,
    )
    # SIGTERM drains (no new calls; active ones finish, at most MAX_CALL_S), then exits.
    DrainingServer(config, app=app, max_drain_s=settings.max_call_s + 5).run()


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


@cli.command()
def chat(
    owner: Annotated[str | None, typer.Option("--owner", help="Owner id")] = None,
    line: Annotated[str | None, typer.Option("--line", help="Or: the line the caller dials")] = None,
    lang: Annotated[str | None, typer.Option("--lang", help="zh or en (default: the owner's first language)")] = None,
    scene: Annotated[str | None, typer.Option("--scene", help="Scene hint (takeout, delivery, taxi, ...)")] = None,
    show: Annotated[bool, typer.Option("--show/--no-show", help="Show each turn's decision")] = True,
) -> None:
    """Play the caller in an interactive text call. Empty line = silence; /quit hangs up."""
    from pipeline.session import CallSession

    if lang not in (None, "zh", "en"):
        raise typer.BadParameter("--lang must be zh or en")

    async def run(res: Resources) -> None:
        owner_id = owner
        if line:
            from presets.models import normalize_line

            owner_id = await res.owners.owner_for_line(normalize_line(line)[0])
        if not owner_id:
            typer.echo("error: give --owner OWNER_ID or a registered --line", err=True)
            raise typer.Exit(2)
        await res.owners.get_owner(owner_id)
        session = await CallSession.open(
            res.services,
            owner_id=owner_id,
            lang=cast(Lang | None, lang),
            scene_hint=scene,
            channel="text",
        )
        typer.secho(f"assistant: {session.greeting}", fg="green")
        while not session.ended:
            try:
                said = await asyncio.to_thread(input, "caller> ")
            except EOFError:
                said = "/quit"
            if said.strip() == "/quit":
                await session.hangup("caller_hangup", outcome="caller_hangup")
                break
            result = await session.turn(said or None)
            typer.secho(f"assistant: {result.reply}", fg="green")
            if show:
                typer.secho(
                    f"  [{result.caller_act} -> {result.act}, scene={result.scene}, relation={result.relation}, "
                    f"preset={result.preset_conveyed}, decision {result.timings['decision_ms']:.1f} ms]",
                    dim=True,
                )
        typer.echo("owner record:")
        echo_json(session.record.owner_record)

    setup_logging("WARNING")
    with_resources(run)


@sip_cli.command("dispatcher-sync")
def dispatcher_sync(
    name: Annotated[str, typer.Option(help="DNS name of the instances (the headless SIP Service)")],
    list_path: Annotated[str, typer.Option("--list", help="dispatcher.list to write")],
    port: Annotated[int, typer.Option(help="The instances' SIP port")] = 5060,
    rpc: Annotated[str, typer.Option(help="Kamailio JSON-RPC over HTTP")] = "http://127.0.0.1:5071/RPC",
    interval: Annotated[float, typer.Option(help="Seconds between syncs")] = 5.0,
) -> None:
    """Keep Kamailio's dispatcher list equal to the ready instances (runs until stopped)."""
    from pathlib import Path

    from .dispatcher_sync import DispatcherSync, SyncOptions

    setup_logging()
    options = SyncOptions(name=name, port=port, list_path=Path(list_path), rpc_url=rpc, interval_s=interval)
    asyncio.run(DispatcherSync(options).run())


@cli.command("stream-token")
def stream_token(
    line: Annotated[str, typer.Option("--line", help="The called line the stream is for")],
    provider: Annotated[str, typer.Option(help="twilio, telnyx or plivo")] = "telnyx",
) -> None:
    """Print a short-lived stream_token for a media stream to LINE (give it as the stream's
    custom parameter ``stream_token``; needs CALLASSIST_MEDIA_STREAM_SECRET or, for Twilio /
    Plivo, CALLASSIST_TWILIO_AUTH_TOKEN / CALLASSIST_PLIVO_AUTH_TOKEN)."""
    from presets.models import normalize_line

    from .stream_auth import STREAM_TOKEN_TTL_S, make_stream_token, stream_secret

    secret = stream_secret(get_settings(), provider)
    if secret is None:
        typer.echo("error: no stream secret configured: streams are open", err=True)
        raise typer.Exit(2)
    echo_json({"stream_token": make_stream_token(secret, normalize_line(line)[0]), "ttl_s": STREAM_TOKEN_TTL_S})


def main() -> None:
    # Two cores shared by ASR, TTS, VAD and embeddings: thread pools must sleep, not spin,
    # while they wait; and nothing may reach for a model hub.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _load_plugins()
    cli()
