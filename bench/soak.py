"""``callassist bench soak``: memory, threads and tasks over many voice calls (issue 15,
item 8). A real ``callassist serve`` (embedded Redis) takes Twilio Media Streams calls
from the simulated phone caller: first ``calls`` in sequence, then ``concurrency`` at
once for ``minutes``. Each call: the greeting, one caller line, the reply, hang-up.

Figures come from the server's own /metrics: ``process_resident_memory_bytes`` (RSS)
and ``callassist_runtime`` (asyncio tasks, threads, finished voice calls still alive).
The baseline is taken after ``warmup`` calls (models, caches and pools are warm by
then); the pass rule is RSS growth after warm-up <= ``max_growth`` and threads, tasks
and live call objects back to baseline once the calls are over.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .phone import PhoneCall, pcm16_to_ulaw8k
from .server import RunningServer, running_server

LINE = "+15550199001"
CALLER_LINES = ("Hi, is Alex there?", "Hello, I have a delivery for Alex.")


@dataclass
class Sample:
    t: float
    calls: int
    rss_mb: float
    threads: int
    tasks: int
    finished_alive: int
    trims: int = -1  # malloc_trim runs in the server so far
    cpu_s: float = -1.0  # the server process's CPU time so far (user + system)


@dataclass
class SoakReport:
    calls_sequential: int = 0
    calls_concurrent: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    samples: list[Sample] = field(default_factory=list)
    baseline: Sample | None = None
    final: Sample | None = None
    # The allocator's view at the end (GET /ops/api/memory), then after a forced
    # malloc_trim (POST /ops/api/memory/trim): what trimming still hands back.
    memory_baseline: dict[str, Any] | None = None
    memory_final: dict[str, Any] | None = None
    memory_after_trim: dict[str, Any] | None = None
    # The server's CPU over the calls in sequence after warm-up: seconds per call, and
    # cores busy while one call is active (issue 16's cost per call).
    cpu: dict[str, float] | None = None

    @property
    def failed_calls(self) -> int:
        """Calls the server took and did not answer (busy refusals are not failures)."""
        return sum(n for k, n in self.outcomes.items() if k not in ("ok", "busy"))

    def count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1

    @property
    def rss_growth(self) -> float:
        if self.baseline is None or self.final is None:
            return 0.0
        return self.final.rss_mb / self.baseline.rss_mb - 1

    @property
    def peak_rss_mb(self) -> float:
        return max((s.rss_mb for s in self.samples), default=0.0)

    def summary(self) -> dict[str, Any]:
        return {
            "calls_sequential": self.calls_sequential,
            "calls_concurrent": self.calls_concurrent,
            "failed_calls": self.failed_calls,
            "outcomes": self.outcomes,
            "memory_baseline": self.memory_baseline,
            "memory_final": self.memory_final,
            "memory_after_trim": self.memory_after_trim,
            "cpu": self.cpu,
            "baseline": asdict(self.baseline) if self.baseline else None,
            "final": asdict(self.final) if self.final else None,
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "rss_growth": round(self.rss_growth, 4),
            "samples": [asdict(s) for s in self.samples],
        }


_METRIC = re.compile(
    r'^(process_resident_memory_bytes|process_cpu_seconds_total|callassist_runtime\{kind="(\w+)"\}) ([0-9.e+-]+)$', re.M
)


async def sample(client: httpx.AsyncClient, calls: int) -> Sample:
    text = (await client.get("/metrics")).text
    values: dict[str, float] = {}
    for m in _METRIC.finditer(text):
        key = m.group(2) or ("cpu" if m.group(1) == "process_cpu_seconds_total" else "rss")
        values[key] = float(m.group(3))
    return Sample(
        t=round(time.time(), 1),
        calls=calls,
        rss_mb=round(values.get("rss", 0) / 2**20, 1),
        threads=int(values.get("threads", -1)),
        tasks=int(values.get("tasks", -1)),
        finished_alive=int(values.get("finished_calls_alive", -1)),
        trims=int(values.get("memory_trims", -1)),
        cpu_s=round(values.get("cpu", -1.0), 2),
    )


BUSY_CLOSE = 1013  # the telephony WebSocket's "busy: too many calls" close code

# What a call came to. "busy" is the server keeping its budget (admission), not a
# failure; "no_greeting" / "no_reply" are timeouts (nothing heard within 10 s).
OUTCOMES = ("ok", "busy", "no_greeting", "no_reply", "error")


async def one_call(url: str, audio: bytes) -> str:
    """One call; its outcome (one of :data:`OUTCOMES`)."""
    call = PhoneCall(url, LINE)
    try:
        await call.connect()
        greeting = await call.listen(max_wait_s=10, quiet_s=0.6)
        if call.closed.is_set() and call.close_code == BUSY_CLOSE:
            return "busy"
        if greeting.latency_s is None:
            return "no_greeting"
        reply = await call.say(audio, max_wait_s=10, quiet_s=0.8)
        return "ok" if reply.latency_s is not None else "no_reply"
    except Exception:
        return "error"
    finally:
        await call.hangup()


async def _active_calls(client: httpx.AsyncClient) -> int:
    voice = (await client.get("/readyz")).json().get("voice") or {}
    return int(voice.get("calls", 0))


async def _settle(client: httpx.AsyncClient, calls: int, baseline: Sample | None, limit_s: float = 30) -> Sample:
    """Once the calls are over: until the server has no call left (a caller's hang-up
    reaches it a moment later) and has trimmed since, and threads and tasks are back
    (or ``limit_s``). Sampling before the server's own trim would count pages it is
    about to hand back."""
    deadline = time.monotonic() + limit_s
    idle_trims: int | None = None
    s = await sample(client, calls)
    while time.monotonic() < deadline:
        if idle_trims is None and await _active_calls(client) == 0:
            idle_trims = s.trims
        done = (
            idle_trims is not None
            and s.trims > idle_trims
            and s.finished_alive == 0
            and (baseline is None or (s.threads <= baseline.threads and s.tasks <= baseline.tasks))
        )
        if done:
            break
        await asyncio.sleep(1.0)
        s = await sample(client, calls)
    return s


async def _soak(server: RunningServer, *, calls: int, concurrency: int, minutes: float, warmup: int) -> SoakReport:
    from pipeline.tts import PiperEngine

    owner = json.loads(server.cli("owner", "create", "--name", "Alex Chen", "--lang", "en"))
    headers = {"Authorization": f"Bearer {owner['api_key']}"}
    report = SoakReport()
    url = server.base_url.replace("http://", "ws://") + "/telephony/twilio"
    ops_headers = {"Authorization": f"Bearer {server.env['CALLASSIST_OPS_TOKEN']}"}
    async with (
        httpx.AsyncClient(base_url=server.base_url, headers=headers, timeout=30) as client,
        httpx.AsyncClient(base_url=server.base_url, headers=ops_headers, timeout=60) as ops,
    ):
        await client.put("/v1/profile", json={"display_name": "Alex Chen", "languages": ["en"]})
        (await client.put(f"/v1/lines/{LINE}")).raise_for_status()
        from .demo import wait_ready

        await wait_ready(client)
        piper = PiperEngine()
        audios = [pcm16_to_ulaw8k(a.pcm, a.rate) for a in (piper.synthesize(t) for t in CALLER_LINES)]
        done = 0
        for i in range(calls):
            report.count(await one_call(url, audios[i % len(audios)]))
            done += 1
            if done == warmup:
                report.baseline = await _settle(ops, done, None, limit_s=15)
                report.samples.append(report.baseline)
                report.memory_baseline = (await ops.get("/ops/api/memory")).json()
                print(f"  baseline after {done} calls: {report.baseline}", flush=True)
            elif done % 10 == 0:
                report.samples.append(await sample(ops, done))
                print(f"  {report.samples[-1]}", flush=True)
        report.calls_sequential = done
        report.cpu = _cpu_per_call(report.baseline, await sample(ops, done))
        if report.cpu:
            print(f"  server CPU per call in sequence: {report.cpu}", flush=True)
        stop = time.monotonic() + minutes * 60

        async def worker(k: int) -> None:
            nonlocal done
            while time.monotonic() < stop:
                outcome = await one_call(url, audios[k % len(audios)])
                report.count(outcome)
                report.calls_concurrent += 1
                done += 1
                if outcome != "ok":
                    await asyncio.sleep(1.0)  # refused or failed: no tight loop of retries

        async def watch() -> None:
            while time.monotonic() < stop:
                await asyncio.sleep(30)
                report.samples.append(await sample(ops, done))
                print(f"  {report.samples[-1]}", flush=True)

        if minutes > 0 and concurrency > 0:
            await asyncio.gather(watch(), *(worker(k) for k in range(concurrency)))
        report.final = await _settle(ops, done, report.baseline)
        report.samples.append(report.final)
        report.memory_final = (await ops.get("/ops/api/memory")).json()
        trimmed = (await ops.post("/ops/api/memory/trim")).json()
        report.memory_after_trim = trimmed["after"]
    return report


def run_soak(
    *,
    calls: int = 200,
    concurrency: int = 8,
    minutes: float = 10.0,
    warmup: int = 10,
    out: Path | None = None,
    env: dict[str, str] | None = None,
) -> SoakReport:
    """Start a server, soak it, print and (with ``out``) save the figures."""
    # Headroom over the workers: a call's slot is freed a moment after its caller hangs up.
    server_env = {
        "CALLASSIST_MAX_VOICE_CALLS": str(max(8, concurrency) + 4),
        "CALLASSIST_OPS_TOKEN": secrets.token_urlsafe(24),
        **(env or {}),
    }
    with running_server(env=server_env) as server:
        report = asyncio.run(
            _soak(server, calls=calls, concurrency=concurrency, minutes=minutes, warmup=min(warmup, calls))
        )
    b, f = report.baseline, report.final
    print(
        f"soak: {report.calls_sequential} calls in sequence + {report.calls_concurrent} at {concurrency} at once "
        f"({minutes:g} min); failed {report.failed_calls} "
        + "("
        + ", ".join(f"{k} {n}" for k, n in report.outcomes.items())
        + "; busy is the server refusing past its budget, not a failure)"
    )
    if b and f:
        print(
            f"RSS {b.rss_mb:.0f} MB after warm-up -> {f.rss_mb:.0f} MB ({report.rss_growth:+.1%}), peak "
            f"{report.peak_rss_mb:.0f} MB; threads {b.threads} -> {f.threads}; tasks {b.tasks} -> {f.tasks}; "
            f"finished calls still alive {f.finished_alive}"
        )
    for label, mem in (
        ("after warm-up", report.memory_baseline),
        ("at the end", report.memory_final),
        ("after malloc_trim", report.memory_after_trim),
    ):
        if mem and mem.get("malloc"):
            m = mem["malloc"]
            print(
                f"allocator {label}: RSS {mem['rss'] / 2**20:.0f} MB; malloc in use {m['in_use'] / 2**20:.0f} MB, "
                f"freed but kept {m['free_kept'] / 2**20:.0f} MB, mmap {m['mmap'] / 2**20:.0f} MB; "
                f"Python objects {mem['gc_objects']}"
            )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "soak.json").write_text(json.dumps(report.summary(), indent=2), encoding="utf-8")
        print(f"wrote {out / 'soak.json'}")
    return report


def _cpu_per_call(first: Sample | None, last: Sample) -> dict[str, float] | None:
    """CPU seconds per call and cores busy per active call between two samples."""
    if first is None or first.cpu_s < 0 or last.cpu_s < 0 or last.calls <= first.calls or last.t <= first.t:
        return None
    cpu = last.cpu_s - first.cpu_s
    return {
        "calls": last.calls - first.calls,
        "cpu_s_per_call": round(cpu / (last.calls - first.calls), 2),
        "wall_s_per_call": round((last.t - first.t) / (last.calls - first.calls), 1),
        "cores_per_active_call": round(cpu / (last.t - first.t), 3),
    }
