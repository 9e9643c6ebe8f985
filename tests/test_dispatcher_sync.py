"""`callassist sip dispatcher-sync` against a real Kamailio: the dispatcher list follows
the set of ready instances (as a headless Service's DNS answers it) and Kamailio reloads
it over JSON-RPC; an unchanged set does not reload."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.dispatcher_sync import DispatcherSync, SyncOptions, render_list, resolve_all

from .helpers import _wait_port, free_port

ROOT = Path(__file__).resolve().parents[1]


def test_list_rendering_is_stable_and_brackets_ipv6() -> None:
    text = render_list(["10.0.0.12", "10.0.0.11", "fd00::5", "10.0.0.11"], port=5060)
    assert text.splitlines()[1:] == ["1 sip:10.0.0.11:5060", "1 sip:10.0.0.12:5060", "1 sip:[fd00::5]:5060"]
    assert resolve_all("name.that.does.not.exist.invalid") == []
    assert "127.0.0.1" in resolve_all("localhost")


@pytest.fixture
def kamailio(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    if shutil.which("kamailio") is None:
        pytest.skip("kamailio is not installed")
    work = tmp_path / "kamailio"
    work.mkdir()
    listing = work / "dispatcher.list"
    listing.write_text("1 sip:127.0.0.1:5999\n")
    rpc = free_port()
    cmd = [
        "kamailio", "-f", str(ROOT / "deploy/kamailio/kamailio.cfg"), "-DD", "-E",
        "-A", "WITH_RPC_HTTP", "-A", f"RPC_PORT={rpc}", "-A", f"RPC_LISTEN=tcp:127.0.0.1:{rpc}",
        "-A", f"LISTEN=udp:127.0.0.1:{free_port()}", "-A", f'DISPATCHER_LIST="{listing}"',
        "-Y", str(work), "-P", str(work / "kamailio.pid"), "-m", "32", "-M", "4", "-w", str(work),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_port(rpc, timeout=15)
        yield listing, rpc
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=5)


async def _kamailio_targets(client: httpx.AsyncClient, rpc: int) -> set[str]:
    resp = await client.post(
        f"http://127.0.0.1:{rpc}/RPC", json={"jsonrpc": "2.0", "method": "dispatcher.list", "id": 9}
    )
    result = resp.json()["result"]
    return {d["DEST"]["URI"] for s in result["RECORDS"] for d in s["SET"]["TARGETS"]}


async def test_dispatcher_follows_the_ready_instances(kamailio: tuple[Path, int]) -> None:
    listing, rpc = kamailio
    ready = ["127.0.0.11", "127.0.0.12"]  # what the headless Service's DNS name answers
    sync = DispatcherSync(
        SyncOptions(name="callassist-sip", port=5070, list_path=listing, rpc_url=f"http://127.0.0.1:{rpc}/RPC"),
        resolver=lambda name: list(ready),
    )
    async with httpx.AsyncClient(timeout=3) as client:
        assert await _kamailio_targets(client, rpc) == {"sip:127.0.0.1:5999"}
        await asyncio.sleep(1.1)  # Kamailio takes one reload a second (reload_delta)
        assert await sync.step(client) is True
        assert await _kamailio_targets(client, rpc) == {"sip:127.0.0.11:5070", "sip:127.0.0.12:5070"}
        assert await sync.step(client) is False  # same set: no rewrite, no reload
        ready.remove("127.0.0.11")  # a pod drains (not ready): it leaves the Service's answer
        ready.append("127.0.0.13")  # a new pod scaled up
        await asyncio.sleep(1.1)
        assert await sync.step(client) is True
        assert await _kamailio_targets(client, rpc) == {"sip:127.0.0.12:5070", "sip:127.0.0.13:5070"}
        assert sync.reloads == 2
        assert listing.read_text().splitlines()[1:] == ["1 sip:127.0.0.12:5070", "1 sip:127.0.0.13:5070"]


async def test_a_failed_reload_is_retried_on_the_next_round(tmp_path: Path) -> None:
    listing = tmp_path / "d.list"
    rounds: list[str] = []
    dead = free_port()  # nothing listens: Kamailio restarting
    sync = DispatcherSync(
        SyncOptions(name="x", list_path=listing, rpc_url=f"http://127.0.0.1:{dead}/RPC", interval_s=0.05),
        resolver=lambda name: rounds.append(name) or ["127.0.0.21"],  # type: ignore[func-returns-value]
    )
    stop = asyncio.Event()
    task = asyncio.create_task(sync.run(stop=stop))
    await asyncio.sleep(0.3)
    stop.set()
    await asyncio.wait_for(task, 2)
    # Written, reload refused, and tried again every round (not given up after the first).
    assert sync.reloads == 0 and listing.exists() and len(rounds) >= 3
