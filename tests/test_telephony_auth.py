"""The telephony media WebSocket (issue 15, items 7 and 10): with Twilio's auth token
set a stream needs Twilio's signed upgrade or the short-lived token our TwiML hands it;
audio faster than real time is dropped and counted; the TwiML stream URL never comes
from X-Forwarded-Host."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from pydantic import ValidationError

from app.main import create_app
from app.settings import Settings
from app.stream_auth import check_stream_token, make_stream_token, stream_secret, twilio_signature
from bench.phone import PhoneCall
from pipeline.admission import CallSlots, RealTimeGate
from pipeline.telephony import GuardedSerializer, StartInfo, make_serializer

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, serve

TOKEN = "tok_secret_0123456789"
PUBLIC = "https://ca.example.com"


@pytest.fixture
def signed_server(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path) -> Iterator[ServerThread]:
    settings = make_settings(redis_server.url, tmp_path, twilio_auth_token=TOKEN, public_url=PUBLIC)
    with serve(create_app(settings)) as server:
        yield server


async def _close_code(server: ServerThread, params: dict[str, str], headers: dict[str, str] | None = None) -> int:
    call = PhoneCall(server.ws_url + "/telephony/twilio", "+15550100001")
    call._ws = await websockets.connect(call.url, additional_headers=headers or {})
    call._recv_task = asyncio.get_running_loop().create_task(call._receive())
    await call._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
    await call.send_start({k: v for k, v in params.items() if k != "line"})
    await asyncio.wait_for(call.closed.wait(), 10)
    assert call.close_code is not None
    return call.close_code


async def test_stream_needs_a_signed_upgrade_or_a_token(
    signed_server: ServerThread, redis_server: RedisProcess
) -> None:
    async with httpx.AsyncClient(base_url=signed_server.base_url) as api:
        owner = await create_owner(api, redis_server.url)
        await api.put("/v1/lines/+15550100001", headers={"Authorization": owner["auth"]})
        form = {"To": "+15550100001", "From": "+15557654321", "CallSid": "CA1"}
        sig = twilio_signature(TOKEN, PUBLIC + "/telephony/twilio/voice", form)
        twiml = (await api.post("/telephony/twilio/voice", data=form, headers={"X-Twilio-Signature": sig})).text
    token = re.search(r'<Parameter name="stream_token" value="([^"]+)"/>', twiml)
    assert token is not None, twiml
    # 1008: refused; 1013: past authentication (this server has voice off).
    assert await _close_code(signed_server, {}) == 1008
    assert await _close_code(signed_server, {"stream_token": "v1.9999999999.forged"}) == 1008
    assert await _close_code(signed_server, {"stream_token": token.group(1)}) == 1013
    other_line = make_stream_token(stream_secret(signed_server_settings(), "twilio") or "", "+15550100009")
    assert await _close_code(signed_server, {"stream_token": other_line}) == 1008  # bound to its line
    upgrade = twilio_signature(TOKEN, "wss://ca.example.com/telephony/twilio", {})
    assert await _close_code(signed_server, {}, {"X-Twilio-Signature": upgrade}) == 1013
    assert await _close_code(signed_server, {}, {"X-Twilio-Signature": "AAAA"}) == 1008


def signed_server_settings() -> Settings:
    return Settings(env="test", twilio_auth_token=TOKEN, public_url=PUBLIC)  # type: ignore[arg-type]


def test_stream_tokens_expire() -> None:
    secret = "s" * 32
    token = make_stream_token(secret, "+15550100001", now=1000.0, ttl_s=120)
    assert check_stream_token(secret, "+15550100001", token, now=1100.0)
    assert not check_stream_token(secret, "+15550100001", token, now=1121.0)
    assert not check_stream_token("t" * 32, "+15550100001", token, now=1100.0)
    assert not check_stream_token(secret, "+15550100001", "v1.1" + "9" * 5000 + ".x", now=1100.0)


async def test_stream_url_ignores_forwarded_host(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    await api.put("/v1/lines/+15550100001")
    r = await api.post(
        "/telephony/twilio/voice",
        data={"To": "+15550100001"},
        headers={"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"},
    )
    assert r.status_code == 200 and "evil.example" not in r.text and "/telephony/twilio" in r.text


def test_production_needs_public_url_with_twilio_token() -> None:
    with pytest.raises(ValidationError) as err:
        Settings(env="production", ops_token="x" * 24, twilio_auth_token=TOKEN)  # type: ignore[arg-type]
    assert "PUBLIC_URL" in str(err.value) and TOKEN not in str(err.value)


async def test_audio_faster_than_real_time_is_dropped_and_counted() -> None:
    now = [0.0]
    info = StartInfo("twilio", "MZ1", "CA1", "+15550100001", None)
    serializer = GuardedSerializer(
        make_serializer(info), "twilio", gate=RealTimeGate(burst_s=1.0, clock=lambda: now[0])
    )
    frame = json.dumps({"event": "media", "media": {"payload": base64.b64encode(b"\xff" * 160).decode()}})
    for _ in range(500):  # 10 s of audio, sent at once
        await serializer.deserialize(frame)
    assert serializer.dropped["too_fast"] == 450  # only the 1 s burst went through
    now[0] = 2.0  # two seconds later: two more seconds of audio are welcome
    for _ in range(150):
        await serializer.deserialize(frame)
    assert serializer.dropped["too_fast"] == 500


def test_call_slots_refuse_past_the_budget() -> None:
    slots = CallSlots(limit=2)
    assert slots.acquire("twilio") and slots.acquire("sip")
    assert not slots.acquire("webrtc") and slots.full and slots.refused == 1
    slots.release()
    assert slots.acquire("twilio")


def test_stream_token_cli(tmp_path: Path) -> None:
    """``callassist stream-token`` mints what a Telnyx/Plivo stream carries."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CALLASSIST_MEDIA_STREAM_SECRET": "m" * 32, "CALLASSIST_DATA_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "app", "stream-token", "--line", "+1 555 010 0001"],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    token = json.loads(out.stdout)["stream_token"]
    assert check_stream_token("m" * 32, "+15550100001", token)
    bare = {k: v for k, v in env.items() if k != "CALLASSIST_MEDIA_STREAM_SECRET"}
    assert (
        subprocess.run(
            [sys.executable, "-m", "app", "stream-token", "--line", "+15550100001"],
            env=bare,
            capture_output=True,
            timeout=60,
        ).returncode
        == 2
    )
