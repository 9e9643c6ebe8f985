"""``callassist bench voice``: scenarios through the real Twilio WebSocket path.

Each scenario's owner is seeded over the REST API of a ``callassist serve`` started on
embedded defaults; each caller turn is synthesized (piper for English, Kokoro for
Chinese), sent in real time as 20 ms mu-law frames, and the assistant's reply is read
back from the call record. The same verifier as ``bench text`` scores every call (the
noise is the real one: 8 kHz mu-law, Whisper). Latency is what the caller hears: end of
the caller's speech -> first assistant audio, plus the server's per-stage timings.

A concurrency sweep then places C calls at once for growing C and reports the most
concurrent calls this machine sustains before the p90 latency doubles.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .asr_error import error_rate
from .callers import CallerVoices, CallProfile, profile_for
from .harness import RunOptions, run_agent
from .line import PhoneLine
from .phone import PhoneCall
from .process_cost import ProcessCost
from .protocol import CallOutcome, OwnerRecordView, TurnOutcome
from .scenario import Scenario
from .server import RunningServer, running_server
from .stats import summary_ms
from .voice_breakdown import breakdown, print_breakdown


@dataclass
class VoiceStats:
    client_latency_s: list[float] = field(default_factory=list)
    by_lang: dict[str, list[float]] = field(default_factory=dict)
    server: dict[str, list[float]] = field(default_factory=dict)
    no_reply: int = 0
    turns: list[dict[str, Any]] = field(default_factory=list)  # per caller turn, for diagnosis

    def add_server(self, timings: dict[str, Any]) -> None:
        for key in ("voice_to_voice_ms", "asr_ms", "decision_ms", "embed_ms", "tts_first_audio_ms", "first_token_ms"):
            value = timings.get(key)
            if isinstance(value, int | float):
                self.server.setdefault(key, []).append(float(value) / 1000)


@dataclass
class Seeded:
    line: str
    api_key: str
    ids: dict[str, str]  # stored emergent preset id -> "emergent:N"


async def seed_owner(server: RunningServer, sc: Scenario, line: str) -> Seeded:
    """The scenario's owner, profile, line and presets, through the CLI and REST API."""
    owner = json.loads(
        await asyncio.to_thread(server.cli, "owner", "create", "--name", sc.owner.display_name, "--lang", sc.lang)
    )
    headers = {"Authorization": f"Bearer {owner['api_key']}"}
    async with httpx.AsyncClient(base_url=server.base_url, headers=headers, timeout=30) as c:
        facts = [{"label": k.replace("_", " ")[:60], "value": v} for k, v in sc.owner.private.items()]
        profile = {"display_name": sc.owner.display_name, "languages": [sc.lang], "private_facts": facts}
        (await c.put("/v1/profile", json=profile)).raise_for_status()
        (await c.put(f"/v1/lines/{line}")).raise_for_status()
        ids: dict[str, str] = {}
        if sc.presets.regular is not None:
            (await c.put(f"/v1/presets/regular/{sc.scene}", json={"response": sc.presets.regular})).raise_for_status()
        for i, p in enumerate(sc.presets.emergent):
            body: dict[str, Any] = {"trigger": p.trigger, "response": p.response}
            if p.scenes:
                body["scenes"] = list(p.scenes)
            r = await c.post("/v1/presets/emergent", json=body)
            r.raise_for_status()
            ids[r.json()["id"]] = f"emergent:{i}"
    return Seeded(line, owner["api_key"], ids)


class PhoneAgent:
    """An Agent (bench.protocol) that is a real phone call to CallAssist."""

    name = "callassist-voice"

    def __init__(
        self,
        server: RunningServer,
        voices: CallerVoices,
        stats: VoiceStats,
        seeded: dict[str, Seeded],
        profiles: dict[str, CallProfile],
    ) -> None:
        self.server = server
        self.voices = voices
        self.stats = stats
        self.seeded = seeded
        self.profiles = profiles
        self._profile: CallProfile | None = None
        self._speech_end: dict[int, float] = {}
        self._client: httpx.AsyncClient | None = None
        self._call: PhoneCall | None = None
        self._call_id: str | None = None
        self._ids: dict[str, str] = {}
        self._seen = 0
        self._lang = "en"
        self._audio: dict[int, bytes] = {}
        self._turn_no = 0

    async def start(self, scenario: Scenario, attempt: int) -> str:
        self._lang = scenario.lang
        seeded = self.seeded[scenario.id]
        line, self._ids = seeded.line, seeded.ids
        headers = {"Authorization": f"Bearer {seeded.api_key}"}
        self._client = httpx.AsyncClient(base_url=self.server.base_url, headers=headers, timeout=30)
        self._call_id = None
        # The caller's lines are synthesized and put on the call's line before dialling
        # (no CPU contention during the call).
        profile = self._profile = self.profiles[scenario.id]
        self._audio, self._speech_end = {}, {}
        for i, t in enumerate(scenario.caller.turns):
            if t:
                self._audio[i], self._speech_end[i], _ = await self.voices.speak(t, scenario.lang, profile, i)
        idle = await self.voices.idle(profile, self.voices.levels.get(profile.seed, 0.1))
        self._turn_no = 0
        self._seen = 0
        url = self.server.base_url.replace("http://", "ws://") + "/telephony/twilio"
        self._call = PhoneCall(url, line, idle=idle)
        await self._call.connect()
        await self._call.listen(max_wait_s=20)
        record = await self._record()
        return str(record.get("greeting", ""))

    async def _record(self) -> dict[str, Any]:
        assert self._client is not None
        if self._call_id is None:
            for _ in range(100):
                calls = (await self._client.get("/v1/calls", params={"limit": 1})).json()["calls"]
                if calls:
                    self._call_id = calls[0]["call_id"]
                    break
                await asyncio.sleep(0.1)
        if self._call_id is None:
            return {}
        return dict((await self._client.get(f"/v1/calls/{self._call_id}")).json())

    def _key(self, preset_id: str | None) -> tuple[str, ...]:
        if not preset_id:
            return ()
        if preset_id.startswith("regular:"):
            return ("regular",)
        return (self._ids[preset_id],) if preset_id in self._ids else ()

    async def turn(self, text: str | None) -> TurnOutcome:
        assert self._call is not None
        index = self._turn_no
        self._turn_no += 1
        if self._call.closed.is_set():
            return TurnOutcome(reply="", ended=True)
        if text is None:
            reply = await self._call.listen(max_wait_s=15)
        else:
            assert self._profile is not None
            if index not in self._audio:
                self._audio[index], self._speech_end[index], _ = await self.voices.speak(
                    text, self._lang, self._profile, index
                )
            reply = await self._call.say(self._audio[index], max_wait_s=20, speech_end_s=self._speech_end[index])
        if reply.latency_s is not None and text is not None:
            self.stats.client_latency_s.append(reply.latency_s)
            self.stats.by_lang.setdefault(self._lang, []).append(reply.latency_s)
        elif text is not None:
            self.stats.no_reply += 1
        await asyncio.sleep(0.2)
        record = await self._record()
        turns = record.get("turns", [])[self._seen :]
        self._seen += len(turns)
        for t in turns:
            if t.get("caller_text"):
                self.stats.add_server(t.get("timings", {}))
        if text is not None:
            heard = " ".join(str(t.get("caller_text") or "") for t in turns).strip()
            errors, length = error_rate(text, heard, self._lang)
            self.stats.turns.append(
                {
                    "lang": self._lang,
                    **(self._profile.label() if self._profile else {}),
                    "said": text,
                    "heard": heard,
                    "errors": errors,
                    "length": length,
                    "heard_ms": None if reply.latency_s is None else round(reply.latency_s * 1000, 1),
                    "server": [{"caller_text": t.get("caller_text"), **t.get("timings", {})} for t in turns],
                }
            )
        conveyed: tuple[str, ...] = tuple(k for t in turns for k in self._key(t.get("preset_conveyed")))
        ended = any(t.get("end_call") for t in turns) or self._call.closed.is_set()
        return TurnOutcome(reply=" ".join(t["reply"] for t in turns), preset_conveyed=conveyed, ended=ended)

    async def finish(self) -> CallOutcome:
        if self._call is not None and not self._call.closed.is_set():
            await self._call.hangup()
        await asyncio.sleep(0.3)
        record = await self._record() if self._client else {}
        rec = record.get("owner_record", {})
        view = OwnerRecordView(
            messages=tuple(rec.get("messages", [])),
            exceptions=tuple(rec.get("exceptions", [])),
            requests=tuple(rec.get("requests", [])),
            caller=rec.get("caller"),
            callback_number=rec.get("callback_number"),
        )
        if self._client is not None:
            await self._client.aclose()
        self._client, self._call, self._call_id = None, None, None
        return CallOutcome(owner_record=view, ended=bool(record.get("ended_at")))


async def _run_batch(
    server: RunningServer,
    voices: CallerVoices,
    scenarios: list[Scenario],
    concurrency: int,
    seeded: dict[str, Seeded],
    profiles: dict[str, CallProfile],
) -> tuple[VoiceStats, list[Any]]:
    stats = VoiceStats()
    opts = RunOptions(k=1, line=PhoneLine(enabled=False), turn_timeout_s=90, concurrency=concurrency)
    result = await run_agent(lambda: PhoneAgent(server, voices, stats, seeded, profiles), scenarios, options=opts)
    return stats, list(zip(result.runs, result.verdicts, strict=True))


def _pick(scenarios: list[Scenario], limit: int) -> list[Scenario]:
    """An even mix of languages and scenes, scripted (not adaptive) callers."""
    scripted = [s for s in scenarios if s.caller.adaptive is None]
    by_lang = {lang: [s for s in scripted if s.lang == lang] for lang in ("en", "zh")}
    out: list[Scenario] = []
    i = 0
    while len(out) < limit and any(i < len(v) for v in by_lang.values()):
        for lang in ("en", "zh"):
            if i < len(by_lang[lang]) and len(out) < limit:
                out.append(by_lang[lang][i])
        i += 1
    return out


def run_voice_bench(
    *,
    suite: str,
    limit: int,
    concurrency: list[int],
    out: Path,
    sweep_calls: int = 0,
    line: str = "clean",
    calls_at_once: int = 1,
    data_dir: Path | None = None,
) -> dict[str, Any]:
    """``line``: "clean" (one voice per language, 8 kHz mu-law only), "realistic" (voices
    and line conditions cycled over the calls, seeded) or one condition's name."""
    from .suite import load_suite

    scenarios = _pick(load_suite(suite), limit)
    profiles = {sc.id: profile_for(sc.id, sc.lang, i, line=line) for i, sc in enumerate(scenarios)}
    out.mkdir(parents=True, exist_ok=True)
    # The sweep measures the budget, so it must not be refused by the budget it measures.
    env = {
        "CALLASSIST_SILENCE_TIMEOUT_S": "4",
        "CALLASSIST_MAX_VOICE_CALLS": str(max([8, calls_at_once, *concurrency])),
    }
    # A kept data folder keeps the owners' synthesized sentences for the next run: the
    # first run of 24 owners spends most of its time precomputing their template audio.
    with running_server(env=env, log_path=out / "server.log", data_dir=data_dir) as server:
        report = asyncio.run(_bench(server, scenarios, concurrency, sweep_calls, profiles, calls_at_once))
    report["suite"] = suite
    report["line"] = line
    report["calls_at_once"] = calls_at_once
    report["by_condition"] = breakdown(
        report["turns"], report.pop("_runs"), profiles, {s.id: s.lang for s in scenarios}
    )
    (out / "voice.json").write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    _print(report)
    print_breakdown(report["by_condition"])
    return report


async def _bench(
    server: RunningServer,
    scenarios: list[Scenario],
    levels: list[int],
    sweep_calls: int,
    profiles: dict[str, CallProfile],
    calls_at_once: int,
) -> dict[str, Any]:
    voices = await asyncio.to_thread(CallerVoices)
    # Owners are set up before the calls, as in real use (their known sentences are
    # synthesized when the profile and presets are saved).
    base = int(time.time()) % 100000 * 100
    seeded = {sc.id: await seed_owner(server, sc, f"+1555{base + i:07d}") for i, sc in enumerate(scenarios)}
    await _warm(server)
    # Caller lines are synthesized before the calls, outside the bench's per-turn timeout
    # (Kokoro on a loaded machine took longer than it for a 5-turn call: TimeoutError).
    await voices.prepare([(sc.caller.turns, sc.lang, profiles[sc.id]) for sc in scenarios])
    stats, runs = await _run_batch(server, voices, scenarios, calls_at_once, seeded, profiles)
    passed = sum(bool(verdict.passed) for _, verdict in runs)
    report: dict[str, Any] = {
        "scenarios": len(runs),
        "passed": passed,
        "pass_rate": round(passed / len(runs), 3) if runs else 0.0,
        "failures": [
            {"scenario": r.scenario_id, "gates": v.to_dict().get("gates"), "error": r.error}
            for r, v in runs
            if not v.passed
        ],
        "caller_heard_latency": summary_ms(stats.client_latency_s),
        "caller_heard_latency_by_lang": {lang: summary_ms(v) for lang, v in sorted(stats.by_lang.items())},
        "server": {k: summary_ms(v) for k, v in stats.server.items()},
        "turns_without_reply": stats.no_reply,
        "turns": stats.turns,
        "concurrency": [],
        "_runs": runs,
    }
    base_p90: float | None = None
    for level in levels:
        batch = (scenarios * ((max(sweep_calls, level) // len(scenarios)) + 1))[: max(sweep_calls, level)]
        async with ProcessCost(server.proc.pid) as cost:
            lstats, _ = await _run_batch(server, voices, batch, level, seeded, profiles)
        summary = summary_ms(lstats.client_latency_s)
        report["concurrency"].append(
            {"calls_at_once": level, **summary, "no_reply": lstats.no_reply, **cost.figures(level)}
        )
        p90 = summary.get("p90_ms")
        if base_p90 is None and isinstance(p90, float):
            base_p90 = p90
        elif base_p90 is not None and isinstance(p90, float) and p90 > 2 * base_p90:
            break
    sustained = [c["calls_at_once"] for c in report["concurrency"] if base_p90 and c.get("p90_ms", 1e9) <= 2 * base_p90]
    report["max_concurrent_before_p90_doubles"] = max(sustained) if sustained else None
    return report


async def _warm(server: RunningServer, timeout_s: float = 900) -> None:
    """Until the ASR model is loaded and every owner's known sentences are synthesized."""
    deadline = time.monotonic() + timeout_s
    # A server loading models and synthesizing on a loaded machine can take over 5 s to answer.
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as c:
        while time.monotonic() < deadline:
            voice = (await c.get("/readyz")).json().get("voice", {})
            if voice.get("warm") and voice.get("tts_pending", 1) == 0:
                return
            await asyncio.sleep(0.5)


def _print(report: dict[str, Any]) -> None:
    print(f"voice calls: {report['passed']}/{report['scenarios']} passed every gate")
    lat = report["caller_heard_latency"]
    print(
        "end of caller speech -> first assistant audio (as heard): "
        f"p50 {lat['p50_ms']} ms, p90 {lat['p90_ms']} ms, p99 {lat['p99_ms']} ms (n={lat['n']})"
    )
    for lang, s in report["caller_heard_latency_by_lang"].items():
        print(f"  {lang}: p50 {s['p50_ms']} ms, p90 {s['p90_ms']} ms (n={s['n']})")
    for key, s in report["server"].items():
        print(f"server {key}: p50 {s['p50_ms']} ms, p90 {s['p90_ms']} ms, p99 {s['p99_ms']} ms")
    for c in report["concurrency"]:
        print(
            f"concurrency {c['calls_at_once']}: p50 {c['p50_ms']} ms, p90 {c['p90_ms']} ms (n={c['n']}); "
            f"server CPU {c.get('cpu_cores')} cores busy, {c.get('cpu_cores_per_call')} per call; "
            f"RSS peak {c.get('rss_peak_mb')} MB"
        )
    print(f"most concurrent calls before p90 doubles: {report['max_concurrent_before_p90_doubles']}")
