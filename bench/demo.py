"""``callassist demo``: the main job on embedded defaults, needing no outside service.

Starts the service (its embedded Redis in a fresh folder), seeds a demo owner per
language with presets, and places simulated calls through the real Twilio-format
WebSocket: each caller line is synthesized, sent in real time as 20 ms mu-law frames;
the assistant's audio comes back, is transcribed for display and saved as WAV. Prints
the live transcript with per-turn latency (end of caller speech -> first assistant
audio) and the owner's message at the end.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from .phone import PhoneCall, pcm16_to_ulaw8k, save_call_wav, save_wav, ulaw8k_to_pcm16
from .server import RunningServer, running_server


@dataclass
class DemoScript:
    lang: str
    owner: str
    line: str
    profile: dict[str, Any]
    regular: dict[str, str]
    emergent: list[dict[str, Any]]
    turns: list[str | None]  # None = the caller stays silent
    scene_hint: str | None = None


SCRIPTS = {
    "en": DemoScript(
        lang="en",
        owner="Alex Chen",
        line="+15550100001",
        profile={
            "display_name": "Alex Chen",
            "languages": ["en"],
            "private_facts": [
                {"label": "mobile", "value": "+1 415 555 0199"},
                {"label": "home address", "value": "1200 Elm Street, Apartment 4B"},
            ],
        },
        regular={"delivery": "Please leave it with the front desk."},
        emergent=[
            {
                "trigger": "someone asks where I am",
                "response": "Alex is in a meeting right now; please leave a message.",
            }
        ],
        turns=[
            "Hi, this is Priya from Zendesk. Is Alex around?",
            "Do you know where he is right now?",
            "Okay. Please tell him the contract is ready to sign. My number is 415 555 0134.",
            "Great, thanks. Bye!",
        ],
    ),
    "zh": DemoScript(
        lang="zh",
        owner="陈先生",
        line="+8613800000001",
        profile={
            "display_name": "陈先生",
            "languages": ["zh"],
            "private_facts": [
                {"label": "手机", "value": "13912345678"},
                {"label": "住址", "value": "上海市徐汇区漕溪北路88号"},
            ],
        },
        regular={"takeout": "麻烦放在门口就可以了，谢谢。"},
        emergent=[{"trigger": "有人问我什么时候回来", "response": "他今天会晚一点回来，有事可以给他留言。"}],
        turns=["喂，你好，你的外卖到了。", "他什么时候回来啊？", None, "好的，那我放门口了，再见。"],
    ),
}


@dataclass
class TurnLog:
    caller: str | None
    heard: str
    latency_ms: float | None
    reply_text: str | None = None


@dataclass
class CallLog:
    lang: str
    call_id: str | None
    greeting_heard: str
    turns: list[TurnLog] = field(default_factory=list)
    owner_record: dict[str, Any] = field(default_factory=dict)
    wav: str | None = None


class Voices:
    """The caller's voice (synthesis) and ears (recognition of the assistant)."""

    def __init__(self) -> None:
        from pipeline.asr import SpeechRecognizer
        from pipeline.tts import KokoroZhEngine, PiperEngine

        self.en = PiperEngine()
        self.zh = KokoroZhEngine(voice="jm_kumo")  # a male caller; the assistant speaks as jf_gongitsune
        self.asr = SpeechRecognizer(threads=2)
        self.asr.load()

    def speak(self, text: str, lang: str) -> bytes:
        audio = (self.zh if lang == "zh" else self.en).synthesize(text)
        return pcm16_to_ulaw8k(audio.pcm, audio.rate)

    def hear(self, ulaw: bytes, lang: str) -> str:
        import soxr

        if not ulaw:
            return ""
        pcm = np.frombuffer(ulaw8k_to_pcm16(ulaw), dtype=np.int16).astype(np.float32) / 32768.0
        return self.asr.transcribe_sync(soxr.resample(pcm, 8000, 16000), lang).text


async def seed(client: httpx.AsyncClient, script: DemoScript) -> None:
    (await client.put("/v1/profile", json=script.profile)).raise_for_status()
    (await client.put(f"/v1/lines/{script.line}")).raise_for_status()
    for scene, response in script.regular.items():
        (await client.put(f"/v1/presets/regular/{scene}", json={"response": response})).raise_for_status()
    for preset in script.emergent:
        (await client.post("/v1/presets/emergent", json=preset)).raise_for_status()


async def wait_ready(client: httpx.AsyncClient, timeout_s: float = 600) -> None:
    """Until the ASR model is loaded and known sentences are synthesized."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        voice = (await client.get("/readyz")).json().get("voice", {})
        if voice.get("warm") and voice.get("tts_pending", 1) == 0:
            return
        await asyncio.sleep(0.5)


def _p(text: str) -> None:
    print(text, flush=True)


async def _current_call_id(client: httpx.AsyncClient) -> str | None:
    for _ in range(50):
        calls = (await client.get("/v1/calls", params={"limit": 1})).json()["calls"]
        if calls:
            return str(calls[0]["call_id"])
        await asyncio.sleep(0.1)
    return None


async def _record(client: httpx.AsyncClient, call_id: str | None) -> dict[str, Any]:
    if call_id is None:
        return {}
    r = await client.get(f"/v1/calls/{call_id}")
    return dict(r.json()) if r.status_code == 200 else {}


async def place_call(
    server: RunningServer, client: httpx.AsyncClient, script: DemoScript, voices: Voices, out: Path
) -> CallLog:
    log_turns: list[TurnLog] = []
    url = server.base_url.replace("http://", "ws://") + "/telephony/twilio"
    # The caller's lines are synthesized before dialling, so the caller's own CPU use
    # never competes with the assistant during the call.
    spoken = [
        None if line is None else await asyncio.to_thread(voices.speak, line, script.lang) for line in script.turns
    ]
    call = PhoneCall(url, script.line)
    await call.connect()
    greeting = await call.listen(max_wait_s=20)
    call_id = await _current_call_id(client)
    record = await _record(client, call_id)
    _p(f"  assistant: {record.get('greeting', '')}")
    replies = [greeting]
    for line, audio in zip(script.turns, spoken, strict=True):
        if call.closed.is_set():
            break
        before = len(record.get("turns", []))
        if audio is None:
            _p("  caller:    (silence)")
            reply = await call.listen(max_wait_s=20)
        else:
            _p(f"  caller:    {line}")
            reply = await call.say(audio, max_wait_s=20)
        replies.append(reply)
        ms = None if reply.latency_s is None else reply.latency_s * 1000
        record = await _record(client, call_id)
        said = " / ".join(t["reply"] for t in record.get("turns", [])[before:]) or "(no reply)"
        lat = "no reply" if ms is None else f"{ms:.0f} ms"
        if audio is None:  # the assistant spoke up after the caller's silence: not a reply latency
            _p(f"  assistant: {said}    [the caller stayed silent; not a reply latency]")
            ms = None
        else:
            _p(f"  assistant: {said}    [end of caller speech -> first assistant audio: {lat}]")
        log_turn = TurnLog(line, "", ms, said)
        log_turns.append(log_turn)
    await call.hangup()
    await asyncio.sleep(0.5)
    record = await _record(client, call_id)
    (out / f"call-{script.lang}.json").write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")
    log = CallLog(script.lang, call_id, "", log_turns, record.get("owner_record", {}))
    # What the caller actually heard: the assistant's audio, transcribed after the call.
    heard = [await asyncio.to_thread(voices.hear, r.audio, script.lang) for r in replies]
    log.greeting_heard = heard[0]
    for turn, text in zip(log.turns, heard[1:], strict=False):
        turn.heard = text
    _p("  --- what the caller heard (assistant audio, transcribed) ---")
    for text in heard:
        _p(f"  heard: {text or '(nothing)'}")
    wav = out / f"call-{script.lang}.wav"
    save_call_wav(wav, call)
    save_wav(out / f"assistant-{script.lang}.wav", call.received())
    log.wav = str(wav)
    return log


def _owner_message(record: dict[str, Any]) -> list[str]:
    lines = []
    if record.get("caller"):
        lines.append(f"caller: {record['caller']}")
    for key in ("messages", "exceptions", "requests"):
        for item in record.get(key, []):
            lines.append(f"{key[:-1]}: {item}")
    if record.get("callback_number"):
        confirmed = {True: " (confirmed when read back)", False: " (NOT confirmed)"}.get(
            record.get("callback_confirmed"), ""
        )
        lines.append(f"callback: {record['callback_number']}{confirmed}")
    if record.get("presets_conveyed"):
        lines.append(f"presets conveyed: {', '.join(record['presets_conveyed'])}")
    return lines or ["(no message)"]


async def _run(server: RunningServer, langs: list[str], out: Path) -> list[CallLog]:
    _p("loading the caller's voices and ears ...")
    voices = await asyncio.to_thread(Voices)
    logs = []
    for lang in langs:
        script = SCRIPTS[lang]
        owner = json.loads(server.cli("owner", "create", "--name", script.owner, "--lang", lang))
        headers = {"Authorization": f"Bearer {owner['api_key']}"}
        async with httpx.AsyncClient(base_url=server.base_url, headers=headers, timeout=30) as client:
            await seed(client, script)
            _p(f"waiting for the assistant's voice ({lang}) to be prepared ...")
            await wait_ready(client)
            _p(f"\n=== call in {'English' if lang == 'en' else 'Chinese'} to {script.owner} ({script.line}) ===")
            log = await place_call(server, client, script, voices, out)
            _p("  --- owner's message ---")
            for line in _owner_message(log.owner_record):
                _p(f"  {line}")
            _p(f"  recording: {log.wav}")
            logs.append(log)
    return logs


def run_demo(*, langs: list[str], out: Path, data_dir: Path | None = None) -> list[CallLog]:
    out.mkdir(parents=True, exist_ok=True)
    _p("starting CallAssist with its embedded Redis ...")
    with running_server(data_dir=data_dir, log_path=out / "server.log") as server:
        _p(f"service up at {server.base_url}")
        logs = asyncio.run(_run(server, langs, out))
    lat = [t.latency_ms for log in logs for t in log.turns if t.latency_ms is not None]
    if lat:
        median, worst = float(np.median(lat)), max(lat)
        _p(
            "\nper-turn latency (end of caller speech -> first assistant audio): "
            f"median {median:.0f} ms, max {worst:.0f} ms over {len(lat)} turns"
        )
    summary = [
        {
            "lang": lg.lang,
            "call_id": lg.call_id,
            "turns": [t.__dict__ for t in lg.turns],
            "owner_record": lg.owner_record,
        }
        for lg in logs
    ]
    (out / "demo.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    _p(f"transcripts and WAVs in {out}/")
    return logs
