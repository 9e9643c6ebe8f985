"""The main job must not flake (issue 15, item 12): a caller hanging up, or being hung
up on mid-sentence, is the normal end of a call for the simulated phone caller, so the
demo's calls end cleanly every time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import websockets

from bench.demo import SCRIPTS, Voices, place_call, seed, wait_ready
from bench.phone import ULAW_SILENCE, PhoneCall
from bench.server import running_server


async def test_assistant_hanging_up_mid_sentence_ends_the_call_cleanly() -> None:
    """A real WebSocket server that hangs up after a few of the caller's frames."""
    received: list[str] = []

    async def assistant(ws: websockets.ServerConnection) -> None:
        async for message in ws:
            received.append(json.loads(message)["event"])
            if received.count("media") == 5:
                await ws.close(1000, "assistant closed the call")
                return

    async with websockets.serve(assistant, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        call = PhoneCall(f"ws://127.0.0.1:{port}", "+15550100001")
        await call.connect()
        reply = await call.say(ULAW_SILENCE * 200, max_wait_s=5)  # 4 s of speech; hung up after 0.1 s
        assert call.closed.is_set() and call.close_code == 1000
        assert reply.latency_s is None
        # Talking into a line the assistant closed: nothing happens (this raised
        # ConnectionClosedOK out of the demo when a frame was already on its way).
        await call.send_raw(json.dumps({"event": "media", "media": {"payload": ""}}))
        await call.say(ULAW_SILENCE * 5)
        await call.hangup()
    assert received[:2] == ["connected", "start"] and received.count("media") == 5


@pytest.mark.slow
def test_demo_calls_end_cleanly_several_times(tmp_path: Path) -> None:
    """The demo's English and Chinese calls, twice each, on one embedded-default server."""
    with running_server(data_dir=tmp_path / "data", log_path=tmp_path / "server.log") as server:
        records = asyncio.run(_place_demo_calls(server, tmp_path, repeats=2))
    assert len(records) == 4
    for record in records:
        assert record["ended_at"] is not None, record.get("end_reason")
        assert record["end_reason"] in ("assistant_closed", "caller_hangup"), record["end_reason"]
        assert len(record["turns"]) >= 3
    log = (tmp_path / "server.log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log, log[-3000:]


async def _place_demo_calls(server: object, out: Path, *, repeats: int) -> list[dict[str, object]]:
    voices = await asyncio.to_thread(Voices)
    records: list[dict[str, object]] = []
    for lang in ("en", "zh"):
        script = SCRIPTS[lang]
        owner = json.loads(server.cli("owner", "create", "--name", script.owner, "--lang", lang))  # type: ignore[attr-defined]
        headers = {"Authorization": f"Bearer {owner['api_key']}"}
        base = server.base_url  # type: ignore[attr-defined]
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
            await seed(client, script)
            await wait_ready(client)
            for _ in range(repeats):
                log = await place_call(server, client, script, voices, out)  # type: ignore[arg-type]
                records.append((await client.get(f"/v1/calls/{log.call_id}")).json())
    return records
