"""Live voice calls over the real Twilio Media Streams wire format (and Telnyx, Plivo):
a real WebSocket client sends synthesized speech as 20 ms mu-law frames in real time and
receives the assistant's audio; real Whisper, Silero VAD, Smart Turn and local TTS."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import websockets

from app.main import create_app
from bench.fake_llm import FakeLLMConfig, create_fake_llm
from bench.phone import PhoneCall, _is_speech, pcm16_to_ulaw8k
from pipeline.tts import KokoroZhEngine, PiperEngine

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, serve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def voices() -> dict[str, object]:
    return {"en": PiperEngine(), "zh": KokoroZhEngine(voice="jm_kumo")}


def speak(voices: dict[str, object], lang: str, text: str) -> bytes:
    audio = voices[lang].synthesize(text)  # type: ignore[attr-defined]
    return pcm16_to_ulaw8k(audio.pcm, audio.rate)


async def _wait_voice_ready(base_url: str, limit_s: float = 180) -> None:
    deadline = time.monotonic() + limit_s
    async with httpx.AsyncClient(base_url=base_url) as client:
        while time.monotonic() < deadline:
            voice = (await client.get("/readyz")).json().get("voice", {})
            if voice.get("warm"):
                return  # speech not yet cached is synthesized during the call
            await asyncio.sleep(0.3)
    raise TimeoutError("voice models did not load")


@pytest.fixture(scope="module")
def voice_server(redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = make_settings(redis_server.url, tmp_path_factory.mktemp("voice"), voice=True, silence_timeout_s=5.0)
    with serve(create_app(settings)) as server:
        asyncio.run(_wait_voice_ready(server.base_url))
        yield server


@pytest.fixture
async def owner_api(voice_server: ServerThread, clean_redis: RedisProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=voice_server.base_url, timeout=30) as client:
        yield client


async def _setup_owner(client: httpx.AsyncClient, redis_url: str, *, lang: str, line: str) -> dict[str, str]:
    owner = await create_owner(client, redis_url, "Alex Chen" if lang == "en" else "陈先生", lang)
    client.headers["Authorization"] = owner["auth"]
    profile = {
        "display_name": "Alex Chen" if lang == "en" else "陈先生",
        "languages": [lang],
        "private_facts": [{"label": "mobile", "value": "13912345678" if lang == "zh" else "+1 415 555 0199"}],
    }
    (await client.put("/v1/profile", json=profile)).raise_for_status()
    (await client.put(f"/v1/lines/{line}")).raise_for_status()
    if lang == "en":
        await client.put("/v1/presets/regular/delivery", json={"response": "Please leave it with the front desk."})
    else:
        await client.put("/v1/presets/regular/takeout", json={"response": "麻烦放在门口就可以了。"})
    await _wait_voice_ready(str(client.base_url))
    return owner


async def _record(client: httpx.AsyncClient) -> dict[str, object]:
    """The newest call's final record: the caller's hang-up returns before the server has
    stopped the pipeline and saved it (seconds on a loaded machine)."""
    for _ in range(300):
        calls = (await client.get("/v1/calls", params={"limit": 1})).json()["calls"]
        if calls and calls[0]["ended_at"] is not None:
            return dict((await client.get(f"/v1/calls/{calls[0]['call_id']}")).json())
        await asyncio.sleep(0.1)
    raise AssertionError("no final call record")


def _ws(server: ServerThread, provider: str = "twilio") -> str:
    return f"{server.ws_url}/telephony/{provider}"


async def test_english_call(
    voice_server: ServerThread, owner_api: httpx.AsyncClient, clean_redis: RedisProcess, voices
) -> None:
    await _setup_owner(owner_api, clean_redis.url, lang="en", line="+15550100001")
    lines = [
        speak(voices, "en", "Hi, this is FedEx. I have a package for Alex. Where should I leave it?"),
        speak(voices, "en", "Okay. Please tell him the invoice is inside the box."),
    ]
    call = PhoneCall(_ws(voice_server), "+15550100001")
    await call.connect()
    greeting = await call.listen(max_wait_s=20)
    assert greeting.audio and any(_is_speech(greeting.audio[i : i + 160]) for i in range(0, len(greeting.audio), 160))
    first = await call.say(lines[0], max_wait_s=25)
    assert first.latency_s is not None
    second = await call.say(lines[1], max_wait_s=25)
    assert second.latency_s is not None
    await call.hangup()
    await asyncio.sleep(1.0)
    record = await _record(owner_api)
    turns = record["turns"]
    assert turns[0]["preset_conveyed"] == "regular:delivery", turns
    assert "front desk" in turns[0]["reply"]
    assert any("invoice" in m.lower() for m in record["owner_record"]["messages"]), record["owner_record"]
    assert record["end_reason"] == "caller_hangup" and record["channel"] == "twilio"
    spoken = [t for t in turns if t["caller_text"]]
    assert len(spoken) >= 2
    for t in spoken:
        assert t["timings"]["asr_ms"] is not None and t["timings"]["asr_ms"] > 0
        assert t["timings"]["voice_to_voice_ms"] is not None
    transcript = [e["role"] for e in record["transcript"]]
    assert transcript[:3] == ["assistant", "caller", "assistant"]


async def test_chinese_call_ends_by_assistant(
    voice_server: ServerThread, owner_api: httpx.AsyncClient, clean_redis: RedisProcess, voices
) -> None:
    await _setup_owner(owner_api, clean_redis.url, lang="zh", line="+8613800000001")
    lines = [speak(voices, "zh", "喂，你好，你的外卖到了。"), speak(voices, "zh", "好的，那我放门口了，再见。")]
    call = PhoneCall(_ws(voice_server), "+8613800000001")
    await call.connect()
    await call.listen(max_wait_s=20)
    await call.say(lines[0], max_wait_s=25)
    await call.say(lines[1], max_wait_s=25)
    await asyncio.wait_for(call.closed.wait(), 20)  # the assistant said goodbye and hung up
    record = await _record(owner_api)
    assert record["turns"][0]["preset_conveyed"] == "regular:takeout", record["turns"]
    assert "门口" in record["turns"][0]["reply"]
    assert record["turns"][-1]["end_call"] is True
    assert record["end_reason"] == "assistant_closed"
    assert record["lang"] == "zh"


async def test_barge_in_clears_and_new_turn_is_handled(
    voice_server: ServerThread, owner_api: httpx.AsyncClient, clean_redis: RedisProcess, voices
) -> None:
    await _setup_owner(owner_api, clean_redis.url, lang="en", line="+15550100002")
    interrupt = speak(voices, "en", "Sorry to cut in, is Alex there?")
    call = PhoneCall(_ws(voice_server), "+15550100002")
    await call.connect()
    # Wait for the greeting to start playing, then talk over it.
    for _ in range(100):
        if call.received():
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.8)
    reply = await call.say(interrupt, max_wait_s=25)
    assert "clear" in call.events()  # Twilio was told to drop the queued greeting audio
    assert reply.latency_s is not None
    await call.hangup()
    await asyncio.sleep(0.5)
    record = await _record(owner_api)
    assert record["turns"] and record["turns"][0]["act"] in ("owner_unavailable", "guide", "ask_purpose")
    assert record["stats"].get("barge_ins", 0) >= 1


async def test_malformed_and_oversized_frames_are_dropped_not_fatal(
    voice_server: ServerThread, owner_api: httpx.AsyncClient, clean_redis: RedisProcess, voices
) -> None:
    await _setup_owner(owner_api, clean_redis.url, lang="en", line="+15550100003")
    line = speak(voices, "en", "Hi, this is FedEx, where should I leave your package?")
    call = PhoneCall(_ws(voice_server), "+15550100003")
    await call.connect()
    await call.send_raw("{not json")
    await call.send_raw(json.dumps([1, 2, 3]))
    await call.send_raw(
        json.dumps({"event": "media", "media": {"payload": "%%%not-base64%%%"}, "streamSid": call.stream_sid})
    )
    await call.send_raw(json.dumps({"event": "media", "media": "oops"}))
    await call.send_raw(
        json.dumps({"event": "media", "media": {"payload": base64.b64encode(b"\xff" * 60000).decode()}})
    )  # > 64 KiB
    await call.send_raw(json.dumps({"event": "mark", "mark": {"name": "x"}, "streamSid": call.stream_sid}))
    await call.send_raw(
        json.dumps({"event": "dtmf", "dtmf": {"track": "inbound_track", "digit": "5"}, "streamSid": call.stream_sid})
    )
    await call.listen(max_wait_s=20)
    reply = await call.say(line, max_wait_s=25)
    assert reply.latency_s is not None  # the call went on
    await call.hangup()
    await asyncio.sleep(0.5)
    record = await _record(owner_api)
    dropped = record["stats"]["dropped_frames"]
    assert dropped.get("malformed", 0) >= 4 and dropped.get("oversize", 0) >= 1, dropped
    assert record["stats"].get("dtmf") == ["5"]
    assert record["turns"][0]["preset_conveyed"] == "regular:delivery", record["turns"]


async def test_unknown_line_refused(voice_server: ServerThread, owner_api: httpx.AsyncClient) -> None:
    call = PhoneCall(_ws(voice_server), "+19999999999")
    await call.connect()
    await asyncio.wait_for(call.closed.wait(), 10)
    assert call.close_code == 1008
    assert call.received() == b""


async def test_no_start_message_within_5_s(voice_server: ServerThread) -> None:
    t0 = time.monotonic()
    call = PhoneCall(_ws(voice_server), "+15550100001")
    await call.connect(send_start=False)
    await asyncio.wait_for(call.closed.wait(), 15)
    assert 4.5 <= time.monotonic() - t0 <= 12
    assert call.close_code == 1008


async def test_twiml_webhook(
    voice_server: ServerThread, owner_api: httpx.AsyncClient, clean_redis: RedisProcess
) -> None:
    await _setup_owner(owner_api, clean_redis.url, lang="en", line="+15550100004")
    async with httpx.AsyncClient(base_url=voice_server.base_url) as twilio:
        r = await twilio.post(
            "/telephony/twilio/voice", data={"To": "+1 555 010 0004", "From": "+15551234567", "CallSid": "CA1"}
        )
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/xml")
        assert "<Connect><Stream url=" in r.text and "/telephony/twilio" in r.text
        assert '<Parameter name="line" value="+15550100004"/>' in r.text
        r = await twilio.post("/telephony/twilio/voice", data={"To": "+15550000000"})
        assert "<Hangup/>" in r.text and "<Stream" not in r.text


async def test_twiml_signature_checked_when_token_set(
    redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path
) -> None:
    from app.routes.telephony import twilio_signature

    settings = make_settings(
        redis_server.url, tmp_path, voice=False, twilio_auth_token="tok_secret_123", public_url="https://ca.example.com"
    )
    with serve(create_app(settings)) as server:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            form = {"To": "+15550000000", "CallSid": "CA1"}
            assert (await client.post("/telephony/twilio/voice", data=form)).status_code == 403
            sig = twilio_signature("tok_secret_123", "https://ca.example.com/telephony/twilio/voice", form)
            r = await client.post("/telephony/twilio/voice", data=form, headers={"X-Twilio-Signature": sig})
            assert r.status_code == 200


async def test_llm_realizer_over_voice_with_ttft_guard(
    redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path, voices
) -> None:
    cfg = FakeLLMConfig(ttft_ms=40, mode="echo")
    with serve(create_fake_llm(cfg)) as llm:
        settings = make_settings(
            redis_server.url, tmp_path, voice=True, realizer="llm", llm_base_url=llm.base_url + "/v1",
            llm_ttft_deadline_ms=300, llm_admission_requests=2, llm_probe_interval_s=30,
        )  # fmt: skip
        with serve(create_app(settings)) as server:
            await _wait_voice_ready(server.base_url)
            async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
                await _setup_owner(client, clean_redis.url, lang="en", line="+15550100005")
                lines = [speak(voices, "en", "Hello, is Alex there?"), speak(voices, "en", "Can I talk to him now?")]
                call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100005")
                await call.connect()
                await call.listen(max_wait_s=20)
                first = await call.say(lines[0], max_wait_s=25)  # streamed from the LLM, spoken as it comes
                cfg.ttft_ms = 1500  # now too slow: the template is spoken instead
                t0 = time.monotonic()
                second = await call.say(lines[1], max_wait_s=25)
                await call.hangup()
                await asyncio.sleep(0.5)
                record = await _record(client)
    assert first.latency_s is not None and second.latency_s is not None
    realizers = [t["realizer"] for t in record["turns"]]
    assert realizers[0] == "llm" and realizers[1] == "template:deadline", realizers
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("provider", ["telnyx", "plivo"])
async def test_other_providers_get_the_greeting(
    provider: str, voice_server: ServerThread, owner_api: httpx.AsyncClient, clean_redis: RedisProcess
) -> None:
    await _setup_owner(owner_api, clean_redis.url, lang="en", line="+15550100006")
    if provider == "telnyx":
        start = {"event": "start", "stream_id": "st1", "start": {"call_control_id": "cc1", "to": "+15550100006", "from": "+1555",
                 "media_format": {"encoding": "PCMU", "sample_rate": 8000, "channels": 1}}}  # fmt: skip
        audio_event, payload = "media", lambda m: m["media"]["payload"]
    else:
        start = {
            "event": "start",
            "start": {"streamId": "st1", "callId": "c1"},
            "extra_headers": json.dumps({"line": "+15550100006"}),
        }
        audio_event, payload = "playAudio", lambda m: m["media"]["payload"]
    async with websockets.connect(_ws(voice_server, provider)) as ws:
        await ws.send(json.dumps(start))
        got = b""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(got) < 8000:
            msg = json.loads(await asyncio.wait_for(ws.recv(), 20))
            if msg.get("event") == audio_event:
                got += base64.b64decode(payload(msg))
    assert len(got) >= 8000  # a second of the greeting, in the provider's format


async def test_recording_to_wav(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path, voices) -> None:
    settings = make_settings(redis_server.url, tmp_path, voice=True, record_calls=True)
    with serve(create_app(settings)) as server:
        await _wait_voice_ready(server.base_url)
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
            await _setup_owner(client, clean_redis.url, lang="en", line="+15550100007")
            call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100007")
            await call.connect()
            await call.listen(max_wait_s=20)
            await call.say(speak(voices, "en", "Hi, is Alex there?"), max_wait_s=25)
            await call.hangup()
            await asyncio.sleep(1.0)
            record = await _record(client)
    _check_wav(Path(record["recording"]), tmp_path / "recordings")


def _check_wav(path: Path, folder: Path) -> None:
    import wave

    assert path.exists() and path.parent == folder
    with wave.open(str(path)) as w:
        assert w.getnchannels() == 2
        assert w.getnframes() / w.getframerate() > 3.0  # greeting + caller + reply


async def test_full_instance_answers_busy_politely(
    voice_server: ServerThread, owner_api: httpx.AsyncClient, clean_redis: RedisProcess
) -> None:
    """Past CALLASSIST_MAX_VOICE_CALLS: busy TwiML (both languages) and the stream refused
    with 1013 (try again later), not one more call slowing every other."""
    await _setup_owner(owner_api, clean_redis.url, lang="en", line="+15550100005")
    slots = voice_server.server.config.app.state.resources.voice.slots  # type: ignore[attr-defined]
    limit, slots.limit = slots.limit, 0
    try:
        async with httpx.AsyncClient(base_url=voice_server.base_url) as twilio:
            r = await twilio.post("/telephony/twilio/voice", data={"To": "+15550100005"})
        assert "busy" in r.text and "繁忙" in r.text and "<Hangup/>" in r.text and "<Stream" not in r.text
        call = PhoneCall(_ws(voice_server), "+15550100005")
        await call.connect()
        await asyncio.wait_for(call.closed.wait(), 10)
        assert call.close_code == 1013 and call.received() == b""
    finally:
        slots.limit = limit
