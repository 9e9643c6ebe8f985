"""Models load before the service is ready, not on the first request (the intermittent
503 "storage is unreachable" right after start-up): a fresh ``callassist serve`` process
answers ``/readyz`` ready only with ``models_loaded`` (and ``callassist_models_loaded 1``
in its metrics), and a text call placed the moment it is ready gets 201 and 200, with
concurrent requests answered alongside (no retry). Real process, real Redis."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from presets.owners import OwnerStore

from .helpers import RedisProcess
from .scale_helpers import Proc, start_instance


@pytest.fixture
def fresh(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path) -> Iterator[Proc]:
    proc = start_instance("fresh", redis_server.url, tmp_path, voice=False)
    try:
        yield proc
    finally:
        proc.proc.terminate()
        proc.proc.wait(30)


async def _owner_key(redis_url: str) -> str:
    r = Redis.from_url(redis_url, decode_responses=True)
    try:
        _, key = await OwnerStore(r).create_owner("Alex Chen", "en")
    finally:
        await r.aclose()
    return key


async def _ready(client: httpx.AsyncClient, limit_s: float = 120) -> dict[str, object]:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            r = await client.get("/readyz")
        except httpx.TransportError:
            await asyncio.sleep(0.05)
            continue
        body = dict(r.json())
        if r.status_code == 200:
            return body
        assert body.get("status") == "starting" and body.get("models_loaded") is False, body
        await asyncio.sleep(0.05)
    raise TimeoutError("the service did not become ready")


async def test_models_are_loaded_before_ready_and_the_first_call_succeeds(
    fresh: Proc, redis_server: RedisProcess
) -> None:
    key = await _owner_key(redis_server.url)
    h = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=fresh.base_url, timeout=30, headers=h) as client:
        ready = await _ready(client)
        assert ready["models_loaded"] is True and ready["status"] == "ready"
        # The very first text calls (both languages), with reads alongside: no 503.
        starts = [client.post("/v1/calls/text", json={"lang": lang}) for lang in ("en", "zh")]
        reads = [client.get("/v1/profile") for _ in range(8)]
        answers = await asyncio.gather(*starts, *reads)
        assert [r.status_code for r in answers] == [201, 201] + [200] * 8, [r.text for r in answers]
        turns = [
            client.post(f"/v1/calls/{answers[0].json()['call_id']}/turns", json={"text": "Hi, is Alex there?"}),
            client.post(f"/v1/calls/{answers[1].json()['call_id']}/turns", json={"text": "你好，外卖到了，放哪里？"}),
        ]
        assert [r.status_code for r in await asyncio.gather(*turns)] == [200, 200]
    assert fresh.metric("callassist_models_loaded") == 1
    log = fresh.log.read_text()
    assert "Traceback" not in log, log[-3000:]
