"""Signed webhooks end to end: a real receiver on loopback verifies every signature
(Stripe's scheme, implemented here independently); the service is restarted while a
delivery is failing and the delivery still arrives; dead letters are listed and
replayed; URLs reaching internal addresses are refused."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request, Response

from app.main import create_app

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, serve


@dataclass
class Receiver:
    """What the loopback receiver saw; ``status`` is what it answers."""

    status: int = 200
    got: list[dict[str, Any]] = field(default_factory=list)
    refused: int = 0

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/hook")
        async def hook(request: Request) -> Response:
            body = await request.body()
            if self.status >= 300:
                self.refused += 1
                return Response(status_code=self.status)
            self.got.append({"headers": dict(request.headers), "body": body, "at": time.time()})
            return Response(status_code=204)

        return app


def verify_stripe_style(secret: str, body: bytes, header: str) -> bool:
    """A receiver's check, written from the documented scheme (not the service's code)."""
    items = dict(part.split("=", 1) for part in header.split(","))
    signed = items["t"].encode() + b"." + body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return abs(time.time() - int(items["t"])) < 300 and hmac.compare_digest(expected, items["v1"])


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, ServerThread]]:
    rec = Receiver()
    with serve(rec.app()) as server:
        yield rec, server


def _own_db(redis_url: str) -> str:
    """A database of its own: the session's other servers (their delivery workers refuse
    loopback receivers) share the queue of database 0 and would take these deliveries."""
    return redis_url.rsplit("/", 1)[0] + "/3"


def _settings(redis_url: str, tmp: Path, **extra: object) -> Any:
    return make_settings(
        _own_db(redis_url), tmp, webhook_allow_private=True, webhook_retry_base_s=0.2, webhook_timeout_s=2.0, **extra
    )


@pytest.fixture
async def app_server(clean_redis: RedisProcess, tmp_path: Path) -> AsyncIterator[ServerThread]:
    with serve(create_app(_settings(clean_redis.url, tmp_path))) as server:
        yield server


async def _register(client: httpx.AsyncClient, url: str, events: list[str]) -> dict[str, Any]:
    r = await client.post("/v1/webhooks", json={"url": url, "events": events})
    assert r.status_code == 201, r.text
    return dict(r.json())


async def _call(client: httpx.AsyncClient, text: str) -> str:
    cid = str((await client.post("/v1/calls/text", json={"lang": "en"})).json()["call_id"])
    await client.post(f"/v1/calls/{cid}/turns", json={"text": text})
    await client.post(f"/v1/calls/{cid}/hangup")
    return cid


async def _until(pred: Any, within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if pred():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def test_every_delivery_is_signed_and_listed(
    app_server: ServerThread, receiver: tuple[Receiver, ServerThread], clean_redis: RedisProcess
) -> None:
    rec, rserver = receiver
    async with httpx.AsyncClient(base_url=app_server.base_url, timeout=10) as client:
        owner = await create_owner(client, _own_db(clean_redis.url))
        client.headers["Authorization"] = owner["auth"]
        hook = await _register(client, f"{rserver.base_url}/hook", ["*"])
        assert hook["id"].startswith("wh_") and hook["secret"].startswith("whsec_")
        listed = (await client.get("/v1/webhooks")).json()["webhooks"]
        assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
        cid = await _call(client, "Hi, this is Dana from the bank, please ask Alex to call me back on 415 555 0123.")
        await _until(lambda: any(json.loads(g["body"])["type"] == "call.ended" for g in rec.got), 10)
        for got in rec.got:
            header = got["headers"]["callassist-signature"]
            assert verify_stripe_style(hook["secret"], got["body"], header), header
            assert not verify_stripe_style("whsec_wrong", got["body"], header)
        # delivered concurrently, so in any order; the event ids give the order
        bodies = sorted((json.loads(g["body"]) for g in rec.got), key=lambda b: tuple(map(int, b["id"].split("-"))))
        types = [b["type"] for b in bodies]
        assert types[0] == "call.started" and types[-1] == "call.ended" and "turn.caller" in types
        ended = next(json.loads(g["body"]) for g in rec.got if json.loads(g["body"])["type"] == "call.ended")
        assert ended["call_id"] == cid and ended["data"]["summary"]["callback_number"] == "4155550123"
        assert {g["headers"]["callassist-event"] for g in rec.got} == set(types)
        deliveries = (await client.get(f"/v1/webhooks/{hook['id']}/deliveries")).json()["deliveries"]
        assert len(deliveries) == len(rec.got) and all(d["state"] == "delivered" for d in deliveries)
        assert all(d["attempts"][0]["status"] == 204 for d in deliveries)
        # only the events asked for
        only = await _register(client, f"{rserver.base_url}/hook", ["call.ended"])
        await _call(client, "Hello?")
        await _until(lambda: len([g for g in rec.got if json.loads(g["body"])["type"] == "call.ended"]) >= 3, 10)
        mine = (await client.get(f"/v1/webhooks/{only['id']}/deliveries")).json()["deliveries"]
        assert [d["event_type"] for d in mine] == ["call.ended"]
        assert (await client.delete(f"/v1/webhooks/{only['id']}")).status_code == 204
        assert (await client.delete(f"/v1/webhooks/{only['id']}")).status_code == 404
        assert (await client.get(f"/v1/webhooks/{only['id']}/deliveries")).status_code == 404


async def test_restart_while_failing_loses_nothing(
    receiver: tuple[Receiver, ServerThread], clean_redis: RedisProcess, tmp_path: Path
) -> None:
    rec, rserver = receiver
    rec.status = 503
    settings = _settings(clean_redis.url, tmp_path)
    first = ServerThread(create_app(settings))
    first.start()
    try:
        async with httpx.AsyncClient(base_url=first.base_url, timeout=10) as client:
            owner = await create_owner(client, _own_db(clean_redis.url))
            client.headers["Authorization"] = owner["auth"]
            hook = await _register(client, f"{rserver.base_url}/hook", ["call.ended"])
            await _call(client, "Hello, this is Sam, please tell Alex the meeting moved to Friday.")
            await _until(lambda: rec.refused >= 2, 10)  # failing, being retried
    finally:
        first.stop()
    refused_before = rec.refused
    rec.status = 200
    second = ServerThread(create_app(settings), port=first.port)
    second.start()
    try:
        await _until(lambda: len(rec.got) == 1, 15)
        async with httpx.AsyncClient(base_url=second.base_url, timeout=10) as client:
            client.headers["Authorization"] = owner["auth"]
            deliveries = (await client.get(f"/v1/webhooks/{hook['id']}/deliveries")).json()["deliveries"]
    finally:
        second.stop()
    got = rec.got[0]
    assert verify_stripe_style(hook["secret"], got["body"], got["headers"]["callassist-signature"])
    assert json.loads(got["body"])["type"] == "call.ended"
    assert len(deliveries) == 1 and deliveries[0]["state"] == "delivered"
    assert deliveries[0]["id"] == got["headers"]["callassist-delivery"]
    assert len(deliveries[0]["attempts"]) >= refused_before + 1
    assert [a["status"] for a in deliveries[0]["attempts"]][-1] == 204


async def test_dead_letters_are_listed_and_replayed(
    receiver: tuple[Receiver, ServerThread], clean_redis: RedisProcess, tmp_path: Path
) -> None:
    rec, rserver = receiver
    rec.status = 500
    with serve(create_app(_settings(clean_redis.url, tmp_path, webhook_max_age_s=1.0))) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
            owner = await create_owner(client, _own_db(clean_redis.url))
            client.headers["Authorization"] = owner["auth"]
            hook = await _register(client, f"{rserver.base_url}/hook", ["call.started"])
            await client.post("/v1/calls/text", json={"lang": "en"})
            url = f"/v1/webhooks/{hook['id']}/deliveries"
            dead: list[dict[str, Any]] = []
            for _ in range(100):
                dead = (await client.get(url, params={"state": "dead"})).json()["deliveries"]
                if dead:
                    break
                await asyncio.sleep(0.1)
            assert len(dead) == 1 and len(dead[0]["attempts"]) >= 2
            # every attempt failed (a 500, or a timeout on a loaded machine)
            assert all(a["error"] for a in dead[0]["attempts"]) and any(a["status"] == 500 for a in dead[0]["attempts"])
            rec.status = 200
            r = await client.post(f"{url}/{dead[0]['id']}/replay")
            assert r.status_code == 200 and r.json()["state"] == "pending"
            await _until(lambda: len(rec.got) == 1, 10)
            r = await client.post(f"{url}/{dead[0]['id']}/replay")
            assert r.status_code == 409  # only dead letters are replayed
            assert (await client.post(f"{url}/whd_nope/replay")).status_code == 404
            after = (await client.get(url)).json()["deliveries"][0]
            assert after["state"] == "delivered" and after["replays"] == 1
            assert (await client.get(url, params={"state": "dead"})).json()["deliveries"] == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook", "http://localhost/hook", "http://10.1.2.3/hook", "http://192.168.0.10/",
        "http://169.254.169.254/latest/meta-data", "http://[::1]/hook", "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/", "ftp://example.com/x", "http://user:pw@93.184.216.34/",
    ],
)  # fmt: skip
async def test_internal_urls_are_refused(api: httpx.AsyncClient, owner: dict[str, str], url: str) -> None:
    r = await api.post("/v1/webhooks", json={"url": url, "events": ["call.ended"]})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "url"


async def test_webhook_body_is_validated(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    r = await api.post("/v1/webhooks", json={"url": "http://93.184.216.34/hook", "events": ["call.exploded"]})
    assert r.status_code == 422 and r.json()["error"]["field"] == "events"
    r = await api.post("/v1/webhooks", json={"url": "http://93.184.216.34/hook", "events": []})
    assert r.status_code == 422 and r.json()["error"]["field"] == "events"
    r = await api.post("/v1/webhooks", json={"url": "http://93.184.216.34/hook", "events": ["call.ended"]})
    assert r.status_code == 201  # a public address is fine (nothing is sent until an event)
    assert (await api.delete(f"/v1/webhooks/{r.json()['id']}")).status_code == 204
