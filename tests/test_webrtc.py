"""WebRTC callers: the signalling API and the call page, then live calls on 127.0.0.1:
an aiortc client sending synthesized speech, and headless Chromium with a fake
microphone file pressing Call on the page (driven over the DevTools protocol).

Real Whisper, Silero VAD, Smart Turn and local TTS; ICE host candidates are limited
to 127.0.0.1 (CALLASSIST_WEBRTC_ICE_HOSTS) and no STUN server is used.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fractions
import json
import secrets
import shutil
import subprocess
import time
import wave
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import httpx
import numpy as np
import pytest
import redis
import soxr
import websockets
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription

from pipeline.tts import units

from .conftest import create_owner
from .helpers import RedisProcess, ServerThread, free_port
from .voice_instance import Instance, wait_ready

ROOT = Path(__file__).resolve().parent.parent
CALLER_LINE = "Hi, I have a delivery for Alex. Where should I leave the package?"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


# ------------------------------------------------------ API, no voice ----
# (First in the file: the shared ``api`` fixture flushes Redis, before this module's
# voice app seeds its owner.)


async def test_offer_and_page_without_voice(api: httpx.AsyncClient) -> None:
    """The shared test app runs with voice off: offers get 503, the page says so."""
    r = await api.post("/webrtc/offer", json={"sdp": "v=0", "type": "offer", "requestData": {"line": "x"}})
    assert r.status_code == 503 and r.json()["error"]["code"] == "unavailable" and r.headers["Retry-After"]
    r = await api.post("/webrtc/offer", json={"sdp": "v=0", "type": "offer"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error"
    page = await api.get("/call/alex-door")
    assert page.status_code == 404 and "text/html" in page.headers["content-type"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    config = json.loads(page.text.split('id="config">', 1)[1].split("</script>", 1)[0])
    assert config == {
        "line": "alex-door",
        "available": False,
        "voice": False,
        "iceServers": [],
        "offerUrl": "/webrtc/offer",
    }
    js = await api.get("/call/static/call.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert "RTCPeerConnection" in js.text and "requestData" in js.text
    assert (await api.get("/call/static/call.css")).headers["content-type"].startswith("text/css")
    assert (await api.get("/call/static/../settings.py")).status_code == 404
    assert (await api.get("/call/static/nope.js")).status_code == 404


# -------------------------------------------------------------- fixtures ----


@dataclass
class World:
    server: ServerThread
    redis_url: str
    line: str
    speech_48k: np.ndarray  # int16 mono, the caller's line
    lead_s: float  # the greeting's length: the caller waits for it
    tmp: Path
    owner_headers: dict[str, str] = field(default_factory=dict)

    @property
    def resources(self) -> Any:
        return self.server.server.config.app.state.resources  # type: ignore[attr-defined]

    def calls(self) -> list[dict[str, Any]]:
        r = redis.Redis.from_url(self.redis_url, decode_responses=True)
        try:
            out = [json.loads(r.get(k) or "{}") for k in r.scan_iter("ca:call:*")]
        finally:
            r.close()
        mine = [c for c in out if c.get("channel") == "webrtc" and c.get("line") == self.line]
        return sorted(mine, key=lambda c: c["started_at"])

    def wait_call(self, known: int, timeout_s: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            calls = self.calls()
            if len(calls) > known and calls[known].get("ended_at"):
                return calls[known]
            time.sleep(0.2)
        raise TimeoutError("no ended call record")


@pytest.fixture(scope="module")
def world(voice_app: Instance, redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> World:
    """An owner with a WebRTC link on the shared voice app, and the caller's speech."""
    tmp = tmp_path_factory.mktemp("webrtc")
    server = voice_app.server
    line = "alex-door-" + secrets.token_hex(3)
    greeting: list[str] = []

    async def seed() -> dict[str, str]:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
            owner = await create_owner(client, redis_server.url, "Alex Chen", "en")
            client.headers["Authorization"] = owner["auth"]
            await client.put("/v1/profile", json={"display_name": "Alex Chen", "languages": ["en"]})
            (await client.put(f"/v1/lines/{line}")).raise_for_status()
            r = await client.put(
                "/v1/presets/regular/delivery", json={"response": "Please leave it with the front desk."}
            )
            r.raise_for_status()
            r = await client.post("/v1/calls/text", json={"lang": "en"})
            greeting.append(r.json()["greeting"])
            return {"Authorization": owner["auth"]}

    headers = asyncio.run(seed())
    wait_ready(voice_app)
    synth = voice_app.resources.voice.synthesizer
    lead_s = sum(synth.synthesize_unit(u)[0].seconds for u in units(greeting[0]))
    audio, _, _ = synth.synthesize_unit(CALLER_LINE)
    x = np.frombuffer(audio.pcm, np.int16).astype(np.float32) / 32768
    speech = (np.clip(soxr.resample(x, audio.rate, 48000), -1, 1) * 32767).astype(np.int16)
    return World(server, redis_server.url, line, speech, lead_s, tmp, headers)


@pytest.fixture
async def client(world: World) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=world.server.base_url, timeout=30) as c:
        yield c


# ------------------------------------------------------------ signalling ----


async def test_signalling_errors_and_page(world: World, client: httpx.AsyncClient) -> None:
    offer = {"sdp": "v=0\r\n", "type": "offer"}
    r = await client.post("/webrtc/offer", json={**offer, "requestData": {"line": "no-such-line"}})
    assert r.status_code == 404 and r.json()["error"] == {
        "code": "not_found", "message": "no WebRTC line by that name", "field": "line",
    }  # fmt: skip
    r = await client.post("/webrtc/offer", json={**offer, "requestData": {"line": world.line}, "type": "answer"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request"
    r = await client.post("/webrtc/offer", json={**offer, "requestData": {"line": world.line}, "pc_id": "guess"})
    assert r.status_code == 404  # renegotiation only of one's own connection
    r = await client.patch("/webrtc/offer", json={"pc_id": "SmallWebRTCConnection#0-guess", "candidates": []})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = await client.post(
        "/webrtc/offer", json={"sdp": "x" * 20000, "type": "offer", "requestData": {"line": world.line}}
    )
    assert r.status_code in (413, 422)
    # A phone number that reaches the owner is not a WebRTC link.
    phone = "+1555" + str(secrets.randbelow(10**7)).zfill(7)
    (await client.put(f"/v1/lines/{phone}", headers=world.owner_headers)).raise_for_status()
    r = await client.post("/webrtc/offer", json={**offer, "requestData": {"line": phone}})
    assert r.status_code == 404

    page = await client.get(f"/call/{world.line}")
    assert page.status_code == 200 and world.line in page.text
    config = json.loads(page.text.split('id="config">', 1)[1].split("</script>", 1)[0])
    assert config["available"] is True and config["iceServers"] == [] and config["line"] == world.line
    assert "owner" not in page.text.lower() or "owner's behalf" in page.text  # no owner data on the page
    assert "Alex" not in page.text
    r = await client.get("/call/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert r.status_code == 404 and "<script>alert(1)" not in r.text


# -------------------------------------------------------- aiortc caller ----


class SpeechTrack(MediaStreamTrack):
    """A microphone for aiortc: silence, the caller's line, then silence; 20 ms frames
    of 48 kHz mono, in real time."""

    kind = "audio"

    def __init__(self, speech: np.ndarray, lead_s: float) -> None:
        super().__init__()
        self.pcm = np.concatenate([np.zeros(int(48000 * lead_s), np.int16), speech, np.zeros(48000 * 60, np.int16)])
        self.pos = 0
        self.start: float | None = None

    async def recv(self) -> av.AudioFrame:
        if self.start is None:
            self.start = time.monotonic()
        wait = self.start + self.pos / 48000 - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        chunk = self.pcm[self.pos : self.pos + 960]
        if len(chunk) < 960:
            chunk = np.zeros(960, np.int16)
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = 48000
        frame.pts = self.pos
        frame.time_base = fractions.Fraction(1, 48000)
        self.pos += 960
        return frame


async def test_aiortc_caller_speaks_and_hears_the_assistant(world: World, client: httpx.AsyncClient) -> None:
    known = len(world.calls())
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver(SpeechTrack(world.speech_48k, world.lead_s + 1.0), direction="sendrecv")
    channel = pc.createDataChannel("chat")
    messages: list[dict[str, Any]] = []
    heard: list[np.ndarray] = []
    pulls: list[asyncio.Task[None]] = []

    @channel.on("message")
    def on_message(raw: str) -> None:
        with contextlib.suppress(ValueError):
            messages.append(json.loads(raw))

    @pc.on("track")
    def on_track(track: Any) -> None:
        async def pull() -> None:
            with contextlib.suppress(Exception):
                while True:
                    frame = await track.recv()
                    heard.append(frame.to_ndarray().reshape(-1)[:: len(frame.layout.channels)])

        pulls.append(asyncio.ensure_future(pull()))

    async def pinger() -> None:
        while True:
            if channel.readyState == "open":
                channel.send(f"ping: {time.time()}")
            await asyncio.sleep(1)

    ping = asyncio.ensure_future(pinger())
    t0 = time.monotonic()
    try:
        await pc.setLocalDescription(await pc.createOffer())
        r = await client.post(
            "/webrtc/offer",
            json={"sdp": pc.localDescription.sdp, "type": "offer", "requestData": {"line": world.line}},
        )
        assert r.status_code == 200, r.text
        answer = r.json()
        assert answer["type"] == "answer" and answer["pc_id"]
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
        # Until the assistant has answered the caller's turn (over the data channel).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(m.get("type") == "transcript" and m.get("role") == "caller" and m.get("text") for m in messages):
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(4.0)  # hear the reply
    finally:
        ping.cancel()
        await pc.close()
        for task in pulls:
            task.cancel()
    elapsed = time.monotonic() - t0

    transcript = [m for m in messages if m.get("type") == "transcript"]
    assert messages and messages[0] == {"type": "call", "state": "connected", "lang": "en"}, messages[:3]
    assert transcript[0]["role"] == "assistant" and "Alex Chen" in transcript[0]["text"]
    caller = [m for m in transcript if m["role"] == "caller" and m["text"]]
    assert caller, transcript
    assert set(transcript[0]) == {"type", "role", "text", "turn"}  # nothing about the owner beyond what was said

    audio = np.concatenate(heard) if heard else np.zeros(1, np.int16)
    loud = [float(np.sqrt(np.mean(audio[i : i + 9600].astype(np.float32) ** 2))) for i in range(0, len(audio), 9600)]
    assert sum(level > 500 for level in loud) >= 10, "the assistant said (almost) nothing"

    call = world.wait_call(known)
    assert call["end_reason"] == "caller_hangup", call["end_reason"]
    assert any(t["preset_conveyed"] == "regular:delivery" for t in call["turns"]), call["turns"]
    v2v = next(t["timings"].get("voice_to_voice_ms") for t in call["turns"] if t["caller_text"])
    print(f"aiortc call: {elapsed:.1f} s, voice-to-voice {v2v} ms")


# ---------------------------------------------------------------- Chromium ----


class Cdp:
    """The Chrome DevTools protocol over one page's WebSocket."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        mid = self.next_id
        await self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(await asyncio.wait_for(self.ws.recv(), 30))
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))

    async def js(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")


def _fake_mic(world: World) -> Path:
    """What Chromium's fake microphone plays: silence through the greeting, the caller's
    line, then silence. The file starts at getUserMedia, before the call is connected:
    if the caller starts a little early they barge in, which is fine."""
    path = world.tmp / "mic.wav"
    pcm = np.concatenate(
        [np.zeros(int(48000 * (world.lead_s + 1.0)), np.int16), world.speech_48k, np.zeros(48000 * 60, np.int16)]
    )
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(48000)
        w.writeframes(pcm.tobytes())
    return path


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
async def test_chromium_calls_from_the_page(world: World) -> None:
    known = len(world.calls())
    port = free_port()
    profile = world.tmp / "chromium-profile"
    cmd = [
        CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--mute-audio", f"--user-data-dir={profile}",
        f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1",
        "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={_fake_mic(world)}%noloop",
        "--allow-loopback-in-peer-connection", "--autoplay-policy=no-user-gesture-required",
        "--window-size=900,1000", "about:blank",
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shot = ROOT / "artifacts" / "webrtc-call.png"
    try:
        page_ws = None
        deadline = time.monotonic() + 20
        async with httpx.AsyncClient() as http:
            while time.monotonic() < deadline and page_ws is None:
                with contextlib.suppress(httpx.HTTPError):
                    pages = (await http.get(f"http://127.0.0.1:{port}/json/list", timeout=2)).json()
                    page_ws = next((p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page"), None)
                if page_ws is None:
                    await asyncio.sleep(0.2)
        assert page_ws, "chromium did not start"
        async with websockets.connect(page_ws, max_size=2**25, open_timeout=20) as ws:
            cdp = Cdp(ws)
            await cdp.call("Page.enable")
            await cdp.call("Page.navigate", url=f"{world.server.base_url}/call/{world.line}")
            deadline = time.monotonic() + 15
            while await cdp.js("document.readyState + ':' + !!document.getElementById('call')") != "complete:true":
                assert time.monotonic() < deadline, "the page did not load"
                await asyncio.sleep(0.2)
            assert await cdp.js("document.body.dataset.state") == "idle"
            await cdp.js("document.getElementById('call').click()")
            # The caller's turn and the assistant's answer appear in the live transcript.
            deadline = time.monotonic() + 75
            entries: list[str] = []
            while time.monotonic() < deadline:
                entries = await cdp.js("[...document.querySelectorAll('#transcript li')].map(li => li.className)") or []
                state = await cdp.js("document.body.dataset.state")
                if state in ("error", "ended"):
                    break
                if "caller" in entries and entries[entries.index("caller") :].count("assistant") >= 1:
                    break
                await asyncio.sleep(0.3)
            await asyncio.sleep(1.5)
            texts = await cdp.js("[...document.querySelectorAll('#transcript li')].map(li => li.textContent)")
            status = await cdp.js("document.getElementById('status').textContent")
            png = await cdp.call("Page.captureScreenshot", format="png")
            shot.parent.mkdir(exist_ok=True)
            shot.write_bytes(base64.b64decode(png["data"]))
            assert "caller" in entries, (status, texts)
            assert await cdp.js("document.body.dataset.state") == "in-call", status
            await cdp.js("document.getElementById('lang').click()")  # the page in Chinese, mid-call
            assert await cdp.js("document.getElementById('call').textContent") == "挂断"
            await cdp.js("document.getElementById('call').click()")  # hang up
            assert await cdp.js("document.body.dataset.state") == "ended"
    finally:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await asyncio.wait_for(proc.wait(), 5)
    call = world.wait_call(known)
    assert call["end_reason"] == "caller_hangup"
    assert any(t["caller_text"] for t in call["turns"]), call["transcript"]
    assert shot.stat().st_size > 10_000
