"""Take-over of a live voice call over the real Twilio Media Streams wire format: the
owner's words reach the caller as audio (transcribed back by Whisper), the record shows
them with role ``owner``, ``end`` closes the call; screening reads the caller's number
from the stream and a blocked caller hears a short close. Real Whisper, VAD, TTS."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.main import create_app
from bench.phone import PhoneCall, pcm16_to_ulaw8k
from pipeline.tts import PiperEngine

from .conftest import make_settings
from .helpers import RedisProcess, ServerThread, serve
from .owner_helpers import english_owner, hear, latest_call_id, running_voice_app

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def voice_app(
    redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, ServerThread]]:
    with running_voice_app(redis_server.url, tmp_path_factory.mktemp("takeover")) as pair:
        yield pair


@pytest.fixture
async def client(voice_app: tuple[Any, ServerThread], clean_redis: RedisProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with english_owner(voice_app[1], clean_redis.url) as c:
        yield c


async def test_owner_says_and_ends_a_twilio_call(
    voice_app: tuple[Any, ServerThread], client: httpx.AsyncClient
) -> None:
    app, server = voice_app
    await client.put("/v1/lines/+15550100021")
    caller = PiperEngine().synthesize("Hi, this is FedEx. I have a package for Alex. Where should I leave it?")
    call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100021", from_number="+14155550123")
    await call.connect()
    await call.listen(max_wait_s=20)
    await call.say(pcm16_to_ulaw8k(caller.pcm, caller.rate), max_wait_s=25)
    cid = await latest_call_id(client)

    t0 = time.monotonic()
    r = await client.post(f"/v1/calls/{cid}/say", json={"text": "This is Alex. I will come down in two minutes."})
    assert r.status_code == 200 and r.json()["channel"] == "twilio", r.text
    owner_reply = await call.listen(max_wait_s=20, since=t0)
    assert owner_reply.latency_s is not None  # the caller heard something after the owner spoke
    heard = hear(app, owner_reply.audio).lower()
    assert any(w in heard for w in ("two minutes", "2 minutes", "come down")), heard

    r = await client.post(f"/v1/calls/{cid}/end", json={"text": "Thanks, goodbye."})
    assert r.status_code == 200, r.text
    await asyncio.wait_for(call.closed.wait(), 20)  # the service hung up after the owner's words
    await asyncio.sleep(0.5)
    record = (await client.get(f"/v1/calls/{cid}")).json()
    owner_lines = [e["text"] for e in record["transcript"] if e["role"] == "owner"]
    assert owner_lines == ["This is Alex. I will come down in two minutes.", "Thanks, goodbye."]
    assert record["end_reason"] == "owner_ended"
    assert record["caller_number"] == "+14155550123"
    assert record["screening"]["decision"] == "screen" and record["screening"]["reason"] == "not on any list"
    assert record["summary"]["owner_said"] == owner_lines and "+14155550123" in record["summary"]["text"]
    r = await client.post(f"/v1/calls/{cid}/say", json={"text": "hello?"})
    assert r.status_code == 409


async def test_blocked_caller_hears_a_short_close(
    voice_app: tuple[Any, ServerThread], client: httpx.AsyncClient
) -> None:
    app, server = voice_app
    await client.put("/v1/lines/+15550100022")
    (await client.put("/v1/screening", json={"block": ["+1900*"]})).raise_for_status()
    call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100022", from_number="+19005550000")
    await call.connect()  # the service speaks the close and hangs up; the caller just listens
    await asyncio.wait_for(call.closed.wait(), 30)
    close = hear(app, call.received()).lower()
    assert any(w in close for w in ("goodbye", "good bye", "take your call")), close
    record = (await client.get(f"/v1/calls/{await latest_call_id(client)}")).json()
    assert record["end_reason"] == "blocked" and record["turns"] == []
    assert record["screening"] == {
        "alert": "always", "caller": "+19005550000", "decision": "block", "reason": "on the block list", "matched": "+1900*",
    }  # fmt: skip


async def test_say_through_another_instance_is_relayed(
    voice_app: tuple[Any, ServerThread], client: httpx.AsyncClient, clean_redis: RedisProcess, tmp_path: Path
) -> None:
    """Two instances on one Redis: the call's audio is on A, the owner's say reaches B."""
    app, server = voice_app
    await client.put("/v1/lines/+15550100023")
    call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100023", from_number="+14155550124")
    await call.connect()
    await call.listen(max_wait_s=20)
    cid = await latest_call_id(client)
    with serve(create_app(make_settings(clean_redis.url, tmp_path))) as other:
        async with httpx.AsyncClient(base_url=other.base_url, timeout=30, headers=dict(client.headers)) as b:
            t0 = time.monotonic()
            r = await b.post(f"/v1/calls/{cid}/say", json={"text": "Hello, this is Alex, please hold on."})
            assert r.status_code == 200 and r.json()["channel"] == "twilio", r.text
            heard = await call.listen(max_wait_s=20, since=t0)
            words = hear(app, heard.audio).lower()
            assert any(w in words for w in ("hold on", "this is alex", "please hold")), words
            r = await b.post(f"/v1/calls/{cid}/end", json={"text": "Goodbye."})
            assert r.status_code == 200, r.text
            await asyncio.wait_for(call.closed.wait(), 20)
            await asyncio.sleep(0.5)
            r = await b.post(f"/v1/calls/{cid}/say", json={"text": "still there?"})
            assert r.status_code == 409
    record = (await client.get(f"/v1/calls/{cid}")).json()
    assert [e["text"] for e in record["transcript"] if e["role"] == "owner"] == [
        "Hello, this is Alex, please hold on.", "Goodbye.",
    ]  # fmt: skip
    assert record["end_reason"] == "owner_ended"
