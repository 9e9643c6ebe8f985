from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from app.main import create_app
from app.settings import Settings

from .helpers import RedisProcess, ServerThread, free_port, serve

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    """One real redis-server for the session; tests flush it (``clean_redis``)."""
    proc = RedisProcess(tmp_path_factory.mktemp("redis"), free_port())
    proc.start()
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def voice_app(redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One voice app for the session's SIP, Asterisk and WebRTC tests (``voice_instance.py``)."""
    from .voice_instance import start_instance, stop_instance, wait_ready

    app = start_instance(redis_server.url, tmp_path_factory.mktemp("voice-app"))
    try:
        wait_ready(app)  # models first: loading them starves the event loop for a while
        yield app
    finally:
        stop_instance(app)


@pytest.fixture
def clean_redis(redis_server: RedisProcess) -> RedisProcess:
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server


def make_settings(redis_url: str, tmp: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "env": "test",
        "redis_url": redis_url,
        "data_dir": tmp,
        "rate_limit_per_minute": 10_000,
        "voice": False,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def api_server(redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """The app on a real uvicorn, against the session's Redis."""
    settings = make_settings(redis_server.url, tmp_path_factory.mktemp("app"))
    with serve(create_app(settings)) as server:
        yield server


@pytest.fixture
async def api(api_server: ServerThread, clean_redis: RedisProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.base_url, timeout=10) as client:
        yield client


async def create_owner(
    client: httpx.AsyncClient, redis_url: str, name: str = "Alex", lang: str = "en"
) -> dict[str, str]:
    """Create an owner through the same store the CLI uses; returns owner_id, api_key, headers."""
    from redis.asyncio import Redis

    from presets.owners import OwnerStore

    r = Redis.from_url(redis_url, decode_responses=True)
    try:
        owner, key = await OwnerStore(r).create_owner(name, lang)  # type: ignore[arg-type]
    finally:
        await r.aclose()
    return {"owner_id": owner.owner_id, "api_key": key, "auth": f"Bearer {key}"}


@pytest.fixture
async def owner(api: httpx.AsyncClient, redis_server: RedisProcess) -> dict[str, str]:
    data = await create_owner(api, redis_server.url, "Alex Chen", "en")
    api.headers["Authorization"] = data["auth"]
    return data
