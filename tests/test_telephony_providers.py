"""Telnyx and Plivo, authenticated like Twilio (issue 15 leftovers): the webhook carries the
provider's own signature (Telnyx Ed25519 over ``timestamp|body``, Plivo V3 HMAC-SHA256
with a nonce), and its answer hands the media stream a short-lived ``stream_token`` (TeXML
``<Parameter>``, Plivo ``extraHeaders``) that the WebSocket checks. Real uvicorn, real
WebSocket clients speaking each provider's start message, keys generated for the test."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import ValidationError

from app.main import create_app
from app.settings import Settings
from app.stream_auth import make_stream_token, plivo_signature_v3, telnyx_signature_valid

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, serve

PUBLIC = "https://ca.example.com"
SECRET = "media-stream-secret-0123456789abcdef"
PLIVO_TOKEN = "plivo_auth_token_0123456789"
LINE = "+15550100001"
KEY = Ed25519PrivateKey.generate()
PUBLIC_KEY = base64.b64encode(KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def telnyx_headers(body: bytes, *, key: Ed25519PrivateKey = KEY, at: float | None = None) -> dict[str, str]:
    ts = str(int(time.time() if at is None else at))
    sig = base64.b64encode(key.sign(ts.encode() + b"|" + body)).decode()
    return {
        "telnyx-signature-ed25519": sig,
        "telnyx-timestamp": ts,
        "Content-Type": "application/x-www-form-urlencoded",
    }


@pytest.fixture
def server(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path) -> Iterator[ServerThread]:
    settings = make_settings(
        redis_server.url,
        tmp_path,
        public_url=PUBLIC,
        telnyx_public_key=PUBLIC_KEY,
        media_stream_secret=SECRET,
        plivo_auth_token=PLIVO_TOKEN,
    )
    with serve(create_app(settings)) as srv:
        yield srv


async def _line(server: ServerThread, redis_url: str) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as api:
        owner = await create_owner(api, redis_url)
        assert (await api.put(f"/v1/lines/{LINE}", headers={"Authorization": owner["auth"]})).status_code == 201


async def _stream_close_code(url: str, messages: list[dict[str, object]]) -> int:
    """Open the provider's media WebSocket, send its handshake, return the close code."""
    async with websockets.connect(url) as ws:
        for m in messages:
            await ws.send(json.dumps(m))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            async with asyncio.timeout(10):
                while True:
                    await ws.recv()
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code


def telnyx_start(params: object) -> list[dict[str, object]]:
    return [
        {"event": "connected", "version": "1.0.0"},
        {
            "event": "start",
            "sequence_number": "1",
            "stream_id": "32DE0DEA-53CB-4B21-89A4-9E1819C043BC",
            "start": {
                "user_id": "3e6f995f-85f7-4705-9741-53b116d28237",
                "call_control_id": "v3:MdI91X4lWFEs7IgbBEOT9M4AigoY08M0WWZFISt1Yw2axZ_IiE4pqg",
                "client_state": "",
                "from": "+15557654321",
                "to": LINE,
                "media_format": {"encoding": "PCMU", "sample_rate": 8000, "channels": 1},
                "custom_parameters": params,
            },
        },
    ]


def plivo_start(extra_headers: str) -> list[dict[str, object]]:
    return [
        {
            "event": "start",
            "sequenceNumber": 0,
            "start": {
                "callId": "2e8d3a3f-5c9b-4b8e-a6f1-0f1b2c3d4e5f",
                "streamId": "b8b0c7f1-4d6e-4a3e-9b2f-6c5d4e3f2a1b",
                "accountId": "MA0000000000000000",
                "tracks": ["inbound"],
                "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000},
            },
            "extra_headers": extra_headers,
        }
    ]


async def test_telnyx_webhook_needs_its_ed25519_signature(server: ServerThread, redis_server: RedisProcess) -> None:
    await _line(server, redis_server.url)
    body = urllib.parse.urlencode({"To": LINE, "From": "+15557654321", "CallSid": "v3:abc"}).encode()
    async with httpx.AsyncClient(base_url=server.base_url) as api:
        url = "/telephony/telnyx/voice"
        plain = {"Content-Type": "application/x-www-form-urlencoded"}
        assert (await api.post(url, content=body, headers=plain)).status_code == 403
        other = Ed25519PrivateKey.generate()
        assert (await api.post(url, content=body, headers=telnyx_headers(body, key=other))).status_code == 403
        stale = telnyx_headers(body, at=time.time() - 600)  # a replay of a 10-minute-old webhook
        assert (await api.post(url, content=body, headers=stale)).status_code == 403
        tampered = telnyx_headers(body)
        assert (await api.post(url, content=body + b"&x=1", headers=tampered)).status_code == 403
        ok = await api.post(url, content=body, headers=telnyx_headers(body))
    assert ok.status_code == 200, ok.text
    assert '<Stream url="wss://ca.example.com/telephony/telnyx" bidirectionalMode="rtp">' in ok.text
    token = re.search(r'<Parameter name="stream_token" value="([^"]+)"/>', ok.text)
    assert token is not None and f'<Parameter name="line" value="{LINE}"/>' in ok.text

    ws = server.ws_url + "/telephony/telnyx"
    # 1008: refused; 1013: past authentication (this server has voice off).
    assert await _stream_close_code(ws, telnyx_start({"line": LINE})) == 1008
    assert await _stream_close_code(ws, telnyx_start({"line": LINE, "stream_token": "v1.9999999999.x"})) == 1008
    wrong_line = make_stream_token(SECRET, "+15550100009")
    assert await _stream_close_code(ws, telnyx_start({"line": LINE, "stream_token": wrong_line})) == 1008
    assert await _stream_close_code(ws, telnyx_start({"line": LINE, "stream_token": token.group(1)})) == 1013
    # Call Control's list form of custom_parameters, with a token from `callassist stream-token`.
    as_list = [{"name": "line", "value": LINE}, {"name": "stream_token", "value": make_stream_token(SECRET, LINE)}]
    assert await _stream_close_code(ws, telnyx_start(as_list)) == 1013


async def test_plivo_webhook_needs_its_v3_signature(server: ServerThread, redis_server: RedisProcess) -> None:
    await _line(server, redis_server.url)
    form = {"To": LINE, "From": "+15557654321", "CallUUID": "2e8d3a3f", "Direction": "inbound"}
    async with httpx.AsyncClient(base_url=server.base_url) as api:
        url = "/telephony/plivo/voice?app=callassist"
        nonce = "12345678901234567890"
        signature = plivo_signature_v3(PLIVO_TOKEN, PUBLIC + url, form, nonce)
        signed = {"X-Plivo-Signature-V3": signature, "X-Plivo-Signature-V3-Nonce": nonce}
        assert (await api.post(url, data=form)).status_code == 403
        wrong = {**signed, "X-Plivo-Signature-V3-Nonce": "0" * 20}
        assert (await api.post(url, data=form, headers=wrong)).status_code == 403
        assert (await api.post(url, data={**form, "To": "+15550100009"}, headers=signed)).status_code == 403
        rotated = {**signed, "X-Plivo-Signature-V3": "b2xkLXNpZ25hdHVyZQ==," + signature}  # old key, new key
        assert (await api.post(url, data=form, headers=rotated)).status_code == 200
        ok = await api.post(url, data=form, headers=signed)
    assert ok.status_code == 200, ok.text
    stream = re.search(r'<Stream [^>]*extraHeaders="([^"]+)"[^>]*>([^<]+)</Stream>', ok.text)
    assert stream is not None, ok.text
    assert stream.group(2) == "wss://ca.example.com/telephony/plivo"
    headers = dict(kv.split("=", 1) for kv in stream.group(1).split(","))
    assert headers["line"] == LINE and headers["stream_token"].startswith("v1.")

    ws = server.ws_url + "/telephony/plivo"
    assert await _stream_close_code(ws, plivo_start(f"line={LINE}")) == 1008
    assert await _stream_close_code(ws, plivo_start(f"line={LINE},stream_token=v1.9999999999.x")) == 1008
    assert await _stream_close_code(ws, plivo_start(stream.group(1))) == 1013


async def test_unknown_lines_and_open_development_mode(
    redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path
) -> None:
    """Without the provider credentials (development) the webhooks are open and answer in
    both languages; an unknown line gets the 'not in service' answer, not a stream."""
    with serve(create_app(make_settings(redis_server.url, tmp_path))) as srv:
        async with httpx.AsyncClient(base_url=srv.base_url) as api:
            telnyx = await api.post("/telephony/telnyx/voice", data={"To": "+15550100077"})
            plivo = await api.post("/telephony/plivo/voice", data={"To": "+15550100077"})
    for answer in (telnyx, plivo):
        assert answer.status_code == 200 and "<Stream" not in answer.text
        assert "not in service" in answer.text and "无法接通" in answer.text


def test_telnyx_key_settings() -> None:
    with pytest.raises(ValidationError, match="MEDIA_STREAM_SECRET"):
        Settings(env="test", telnyx_public_key=PUBLIC_KEY)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="Ed25519"):
        Settings(env="test", telnyx_public_key="bm90IGEga2V5", media_stream_secret=SECRET)  # type: ignore[call-arg]
    assert not telnyx_signature_valid(PUBLIC_KEY, "123", b"", "not base64!")
