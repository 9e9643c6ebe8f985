"""The smaller findings of issue 15 (item 10): API responses carry nosniff and no-store,
production does not publish the schema, secrets in a query string stay out of the access
log, wrong ops-login tokens are throttled, and a WebSocket frame over 1 MiB ends that
connection without an ASGI exception."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets

from app.main import create_app
from app.middleware import RedactQueryFilter

from .conftest import make_settings
from .helpers import RedisProcess, ServerThread, serve


async def test_api_responses_are_nosniff_and_not_cached(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    for r in (await api.get("/v1/presets"), await api.get("/v1/calls/nope"), await api.get("/v1/lines", headers={})):
        assert r.headers["x-content-type-options"] == "nosniff", r.url
        assert r.headers["cache-control"] == "no-store", r.url
    r = await api.get("/healthz")
    assert r.headers["x-content-type-options"] == "nosniff"


def test_production_does_not_publish_the_schema(redis_server: RedisProcess, tmp_path: Path) -> None:
    app = create_app(make_settings(redis_server.url, tmp_path, env="production", ops_token="o" * 32))
    paths = {getattr(r, "path", "") for r in app.routes}
    assert not {"/openapi.json", "/docs", "/redoc"} & paths
    dev = create_app(make_settings(redis_server.url, tmp_path))
    assert "/openapi.json" in {getattr(r, "path", "") for r in dev.routes}


def test_access_log_keeps_no_query_secret() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/ops?token=s3cr3t-ops-token&x=1", "1.1", 400), None,
    )  # fmt: skip
    RedactQueryFilter().filter(record)
    line = record.getMessage()
    assert "s3cr3t" not in line and "token=[redacted]&x=1" in line


@pytest.fixture
def ops_server(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path) -> Iterator[ServerThread]:
    with serve(create_app(make_settings(redis_server.url, tmp_path, ops_token="right-token-0123456789"))) as s:
        yield s


async def test_wrong_ops_login_tokens_are_throttled(ops_server: ServerThread) -> None:
    async with httpx.AsyncClient(base_url=ops_server.base_url) as c:
        codes = [
            (
                await c.post(
                    "/ops/login",
                    content=f"token=guess{i}",
                    headers={"Content-Type": "application/x-www-form-urlencoded"},
                )
            ).status_code
            for i in range(12)
        ]
        assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
        # Even the right token waits out the minute from this address.
        r = await c.post(
            "/ops/login",
            content="token=right-token-0123456789",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_oversized_websocket_frame_is_no_server_error(ops_server: ServerThread) -> None:
    collect = _Collect()
    loggers = [logging.getLogger(n) for n in ("uvicorn.error", "uvicorn", "")]
    for lg in loggers:
        lg.addHandler(collect)
    try:
        async with websockets.connect(ops_server.ws_url + "/telephony/twilio", max_size=None) as ws:
            await ws.send("x" * (2 * 1024 * 1024))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
        await asyncio.sleep(0.3)  # the server finishes the connection
    finally:
        for lg in loggers:
            lg.removeHandler(collect)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009  # message too big
    assert not collect.records, [r.getMessage() for r in collect.records]
