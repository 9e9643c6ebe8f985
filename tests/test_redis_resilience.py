"""Redis down -> 503 with Retry-After within 1 s; back -> normal; AOF survives restarts;
the embedded default starts and stops its own server cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from app.embedded_redis import EmbeddedRedis, _ping
from app.main import create_app

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, free_port, serve


async def test_redis_down_gives_503_then_recovers(tmp_path: Path) -> None:
    rp = RedisProcess(tmp_path / "r", free_port())
    rp.start()
    try:
        with serve(create_app(make_settings(rp.url, tmp_path))) as server:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
                data = await create_owner(client, rp.url)
                client.headers["Authorization"] = data["auth"]
                assert (await client.put("/v1/presets/regular/takeout", json={"response": "door"})).status_code == 200

                rp.stop()
                for method, path, body in [
                    ("GET", "/v1/presets", None),
                    ("PUT", "/v1/presets/regular/takeout", {"response": "porch"}),
                    ("GET", "/v1/profile", None),
                ]:
                    t0 = time.perf_counter()
                    r = await client.request(method, path, json=body)
                    elapsed = time.perf_counter() - t0
                    assert r.status_code == 503, r.text
                    assert int(r.headers["Retry-After"]) >= 1
                    assert r.json()["error"]["code"] == "unavailable"
                    assert "Traceback" not in r.text
                    assert elapsed < 1.0, elapsed
                r = await client.get("/readyz")
                assert r.status_code == 503 and "Retry-After" in r.headers
                assert (await client.get("/healthz")).status_code == 200

                rp.start()  # same port, same folder: AOF replayed
                r = await client.get("/v1/presets")
                assert r.status_code == 200, r.text
                assert r.json()["regular"]["takeout"]["response"] == "door"
                assert (await client.get("/readyz")).status_code == 200
    finally:
        rp.stop()


async def test_presets_survive_restart(tmp_path: Path) -> None:
    rp = RedisProcess(tmp_path / "r", free_port())
    rp.start()
    try:
        with serve(create_app(make_settings(rp.url, tmp_path))) as server:
            async with httpx.AsyncClient(base_url=server.base_url) as client:
                data = await create_owner(client, rp.url)
                client.headers["Authorization"] = data["auth"]
                await client.put("/v1/presets/regular/delivery", json={"response": "放快递柜"})
                pid = (
                    await client.post("/v1/presets/emergent", json={"trigger": "问他在哪", "response": "他在忙"})
                ).json()["id"]
        rp.stop()
        assert (tmp_path / "r" / "appendonly.aof").exists() or (tmp_path / "r" / "appendonlydir").exists()
        rp.start()
        with serve(create_app(make_settings(rp.url, tmp_path))) as server:
            async with httpx.AsyncClient(base_url=server.base_url, headers={"Authorization": data["auth"]}) as client:
                pool = (await client.get("/v1/presets")).json()
        assert pool["version"] == 2
        assert pool["regular"]["delivery"]["response"] == "放快递柜"
        assert pool["emergent"][0]["id"] == pid
    finally:
        rp.stop()


def test_embedded_redis_start_stop_and_sharing(tmp_path: Path) -> None:
    first = EmbeddedRedis(tmp_path)
    first.start()
    assert first.started_here and _ping(first.socket_path)
    second = EmbeddedRedis(tmp_path)
    second.start()
    assert not second.started_here  # attached to the running one
    proc = first._proc
    assert proc is not None
    first.stop()  # second still uses it: it keeps running
    assert _ping(second.socket_path)
    second.stop()  # last user out shuts it down
    assert not _ping(second.socket_path)
    assert proc.wait(timeout=5) == 0
    assert not (tmp_path / "redis.sock").exists()
    assert (tmp_path / "appendonly.aof").exists() or (tmp_path / "appendonlydir").exists()


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=60)


def test_serve_embedded_default_with_cli_beside_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLASSIST_")}
    env["CALLASSIST_DATA_DIR"] = str(tmp_path)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        created = _cli(env, "owner", "create", "--name", "王女士", "--lang", "zh")
        assert created.returncode == 0, created.stderr
        owner = json.loads(created.stdout)
        assert owner["api_key"].startswith("ca_") and owner["owner_id"]
        headers = {"Authorization": f"Bearer {owner['api_key']}"}
        assert httpx.get(base + "/v1/profile", headers=headers).json()["display_name"] == "王女士"
        rotated = json.loads(_cli(env, "owner", "rotate-key", owner["owner_id"]).stdout)
        assert httpx.get(base + "/v1/profile", headers=headers).status_code == 401
        assert (
            httpx.get(base + "/v1/profile", headers={"Authorization": f"Bearer {rotated['api_key']}"}).status_code
            == 200
        )
        assert _cli(env, "owner", "rotate-key", "own_missing").returncode == 1
        # Keys are stored only hashed.
        aof = b"".join(p.read_bytes() for p in (tmp_path / "redis").rglob("appendonly*") if p.is_file())
        assert owner["api_key"].encode() not in aof and rotated["api_key"].encode() not in aof
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert not (tmp_path / "redis" / "redis.sock").exists()
    assert not _ping(tmp_path / "redis" / "redis.sock")
    # The CLI alone starts the server, and stops it when done; data is still there.
    listed = _cli(env, "owner", "list")
    assert listed.returncode == 0 and "王女士" in listed.stdout
    assert not (tmp_path / "redis" / "redis.sock").exists()


@pytest.mark.parametrize("lang", ["fr"])
def test_cli_rejects_bad_lang(tmp_path: Path, lang: str) -> None:
    env = {**os.environ, "CALLASSIST_DATA_DIR": str(tmp_path)}
    r = _cli(env, "owner", "create", "--name", "x", "--lang", lang)
    assert r.returncode != 0


async def test_call_record_saved_after_redis_outage_and_never_goes_backwards(tmp_path: Path) -> None:
    """A call that ends while Redis is down (issue 15, item 5): the turn spoken during the
    outage and the end land once a real redis-server is back; a stale copy never wins."""
    import asyncio

    from redis.asyncio import Redis

    from app.resources import make_redis
    from pipeline.records import CallStore, RetryOptions
    from pipeline.session import CallServices, CallSession
    from presets.owners import OwnerStore
    from presets.pool import PresetStore

    rp = RedisProcess(tmp_path / "r", free_port())
    rp.start()
    redis: Redis = make_redis(rp.url, make_settings(rp.url, tmp_path))
    try:
        calls = CallStore(redis, 3600, retry=RetryOptions(first_delay_s=0.05, max_delay_s=0.2))
        owners = OwnerStore(redis)
        services = CallServices(redis=redis, owners=owners, presets=PresetStore(redis), calls=calls)
        owner, _ = await owners.create_owner("Alex", "en")
        session = await CallSession.open(services, owner_id=owner.owner_id, channel="twilio", line="+15550100")
        await session.turn("Hi, is Alex there?")
        stale = (await calls.get(session.call_id)).model_copy(deep=True)  # type: ignore[union-attr]

        rp.stop()
        await session.turn("Please tell him Sam called about the invoice.")
        await session.hangup("caller_hangup", outcome="caller_hangup")
        assert calls.pending == 1  # the newest version only: older ones are superseded

        rp.start()  # same port and folder: the AOF is replayed
        for _ in range(200):
            if calls.pending == 0:
                break
            await asyncio.sleep(0.05)
        assert calls.pending == 0 and calls.dropped == 0
        record = await calls.get(session.call_id)
        assert record is not None
        assert record.ended_at is not None and record.end_reason == "caller_hangup"
        assert [t.caller_text for t in record.turns] == [
            "Hi, is Alex there?",
            "Please tell him Sam called about the invoice.",
        ]

        # Another worker's stale copy of the record is refused: the record never goes backwards.
        other = CallStore(redis, 3600)
        await other.save(stale)
        again = await calls.get(session.call_id)
        assert again is not None and len(again.turns) == 2 and again.ended_at is not None
        await calls.close()
    finally:
        await redis.aclose()
        rp.stop()
