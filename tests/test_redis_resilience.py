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
