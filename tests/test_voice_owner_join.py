"""The owner joins a live Twilio-format call with their own voice (an aiortc peer as the
console's microphone): the caller hears the owner, the owner hears the caller, the
assistant stays quiet while both sides are transcribed; ``leave`` hands the call back.
Real Whisper, Silero VAD, Smart Turn, TTS, aiortc on loopback."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import subprocess
import time
import wave
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import websockets
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

from bench.phone import PhoneCall, pcm16_to_ulaw8k
from pipeline.tts import PiperEngine

from .helpers import RedisProcess, ServerThread, free_port
from .owner_helpers import english_owner, hear, latest_call_id, running_voice_app
from .test_ops_dashboard import ARTIFACTS
from .test_webrtc import Cdp, SpeechTrack

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def voice_app(
    redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, ServerThread]]:
    tmp = tmp_path_factory.mktemp("join")
    with running_voice_app(redis_server.url, tmp, silence_timeout_s=30.0, webrtc_ice_hosts=["127.0.0.1"]) as pair:
        yield pair


@pytest.fixture
async def client(voice_app: tuple[Any, ServerThread], clean_redis: RedisProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with english_owner(voice_app[1], clean_redis.url) as c:
        yield c


def _speech_48k(text: str) -> np.ndarray:
    import soxr

    audio = PiperEngine().synthesize(text)
    pcm = np.frombuffer(audio.pcm, dtype=np.int16).astype(np.float32) / 32768.0
    return (soxr.resample(pcm, audio.rate, 48000) * 32767).astype(np.int16)


def _loud_seconds(chunks: list[np.ndarray]) -> int:
    audio = np.concatenate(chunks) if chunks else np.zeros(1, np.int16)
    step = 4800  # 100 ms at 48 kHz
    return sum(
        float(np.sqrt(np.mean(audio[i : i + step].astype(np.float32) ** 2))) > 500 for i in range(0, len(audio), step)
    )


async def test_owner_joins_talks_and_leaves(voice_app: tuple[Any, ServerThread], client: httpx.AsyncClient) -> None:
    app, server = voice_app
    await client.put("/v1/lines/+15550100041")
    caller_line = PiperEngine().synthesize("Hello, this is Sam from the garage. Your car is ready.")
    after_line = PiperEngine().synthesize("Hi again, is anyone there?")
    call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100041", from_number="+14155550188")
    await call.connect()
    await call.listen(max_wait_s=20)
    cid = await latest_call_id(client)

    r = await client.post(f"/v1/calls/{cid}/join", json={"sdp": "v=0 nonsense", "type": "offer"})
    assert r.status_code == 400, r.text

    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver(
        SpeechTrack(_speech_48k("This is Alex speaking. I will be right down."), 2.0), direction="sendrecv"
    )
    heard_by_owner: list[np.ndarray] = []
    pulls: list[asyncio.Task[None]] = []

    @pc.on("track")
    def on_track(track: Any) -> None:
        async def pull() -> None:
            with contextlib.suppress(Exception):
                while True:
                    frame = await track.recv()
                    heard_by_owner.append(frame.to_ndarray().reshape(-1)[:: len(frame.layout.channels)])

        pulls.append(asyncio.ensure_future(pull()))

    try:
        await pc.setLocalDescription(await pc.createOffer())
        r = await client.post(f"/v1/calls/{cid}/join", json={"sdp": pc.localDescription.sdp, "type": "offer"})
        assert r.status_code == 200, r.text
        assert r.json()["type"] == "answer" and r.json()["pc_id"]
        await pc.setRemoteDescription(RTCSessionDescription(sdp=r.json()["sdp"], type="answer"))
        again = await client.post(f"/v1/calls/{cid}/join", json={"sdp": pc.localDescription.sdp, "type": "offer"})
        assert again.status_code == 409

        owner_voice = await call.listen(max_wait_s=20, quiet_s=1.5)  # the owner's words reach the caller
        heard = hear(app, owner_voice.audio).lower()
        assert "right down" in heard or "alex" in heard, heard

        before = len(heard_by_owner)
        reply = await call.say(pcm16_to_ulaw8k(caller_line.pcm, caller_line.rate), max_wait_s=6)
        assert reply.latency_s is None, "the assistant spoke while the owner was in the call"
        assert _loud_seconds(heard_by_owner[before:]) >= 10, "the owner did not hear the caller"

        r = await client.post(f"/v1/calls/{cid}/leave")
        assert r.status_code == 200, r.text
        assert (await client.post(f"/v1/calls/{cid}/leave")).status_code == 409
    finally:
        await pc.close()
        for task in pulls:
            task.cancel()

    back = await call.say(pcm16_to_ulaw8k(after_line.pcm, after_line.rate), max_wait_s=25)
    assert back.latency_s is not None  # the assistant has the call again
    await call.hangup()
    await asyncio.sleep(1.0)
    record = (await client.get(f"/v1/calls/{cid}")).json()
    roles = [(e["role"], e["text"]) for e in record["transcript"]]
    owner_words = " ".join(t for r_, t in roles if r_ == "owner").lower()
    assert "right down" in owner_words or "alex" in owner_words, roles
    garage = [i for i, (r_, t) in enumerate(roles) if r_ == "caller" and t and "garage" in t.lower()]
    assert garage, roles
    assert record["stats"]["owner_joins"] == 1
    # the caller's words while the owner was in are recorded, but no assistant turn answered them
    assert all("garage" not in (t["caller_text"] or "").lower() for t in record["turns"]), record["turns"]


CHROMIUM = "/usr/bin/chromium"


async def _chromium(tmp: Path, mic: Path) -> tuple[asyncio.subprocess.Process, str]:
    port = free_port()
    cmd = [
        CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--mute-audio", f"--user-data-dir={tmp / 'chromium-profile'}",
        f"--remote-debugging-port={port}", "--remote-debugging-address=127.0.0.1",
        "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={mic}%noloop",
        "--allow-loopback-in-peer-connection", "--autoplay-policy=no-user-gesture-required",
        "--window-size=1300,900", "about:blank",
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                pages = (await http.get(f"http://127.0.0.1:{port}/json/list", timeout=2)).json()
                page_ws = next((p["webSocketDebuggerUrl"] for p in pages if p.get("type") == "page"), None)
                if page_ws:
                    return proc, str(page_ws)
            await asyncio.sleep(0.2)
    proc.terminate()
    raise AssertionError("chromium did not start")


async def _until(cdp: Cdp, expression: str, within_s: float = 30) -> Any:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        value = await cdp.js(expression)
        if value:
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {expression}")


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
async def test_console_join_button_puts_the_owner_on_the_line(
    voice_app: tuple[Any, ServerThread], client: httpx.AsyncClient, clean_redis: RedisProcess, tmp_path: Path
) -> None:
    app, server = voice_app
    await client.put("/v1/lines/+15550100042")
    key = client.headers["Authorization"].removeprefix("Bearer ")
    mic = tmp_path / "owner-mic.wav"
    speech = _speech_48k("This is Alex speaking. I will be right down.")
    with wave.open(str(mic), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(48000)
        w.writeframes(np.concatenate([np.zeros(48000 * 2, np.int16), speech, np.zeros(48000 * 30, np.int16)]).tobytes())
    call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100042", from_number="+14155550199")
    proc, page_ws = await _chromium(tmp_path, mic)
    try:
        async with websockets.connect(page_ws, max_size=2**25, open_timeout=20) as ws:
            cdp = Cdp(ws)
            await cdp.call("Page.enable")
            await cdp.call("Page.navigate", url=f"{server.base_url}/app")
            await _until(cdp, "!!document.querySelector('#api_key')")
            await cdp.js(
                f"document.querySelector('#api_key').value = {key!r}; document.querySelector('#login').submit()"
            )
            await _until(cdp, "!!document.body && document.body.dataset.ready === '1'")
            await call.connect()
            await call.listen(max_wait_s=20)
            await _until(cdp, "!!document.querySelector('li.call')")
            await cdp.js("document.querySelector('li.call').click()")
            await _until(cdp, "!!document.querySelector('#join')")
            await cdp.js("document.querySelector('#join').click()")
            await _until(cdp, "document.querySelector('#join').textContent === 'Hand back'")
            owner_voice = await call.listen(max_wait_s=20, quiet_s=1.5)
            heard = hear(app, owner_voice.audio).lower()
            assert "right down" in heard or "alex" in heard, heard
            await _until(cdp, "[...document.querySelectorAll('#transcript li.owner')].length > 0", 20)
            png = await cdp.call("Page.captureScreenshot", format="png")
            (ARTIFACTS).mkdir(exist_ok=True)
            (ARTIFACTS / "console-owner-joined.png").write_bytes(base64.b64decode(png["data"]))
            await cdp.js("document.querySelector('#join').click()")  # hand the call back
            await _until(cdp, "document.querySelector('#join').textContent === 'Talk myself'")
    finally:
        proc.terminate()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 10)
    await call.hangup()
    await asyncio.sleep(1.0)
    record = (await client.get(f"/v1/calls/{await latest_call_id(client)}")).json()
    assert record["stats"]["owner_joins"] == 1
    assert any(e["role"] == "owner" for e in record["transcript"]), record["transcript"]
