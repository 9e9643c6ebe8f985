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


@dataclass
class SoakReport:
    calls_sequential: int = 0
    calls_concurrent: int = 0
    failed_calls: int = 0
    samples: list[Sample] = field(default_factory=list)
    baseline: Sample | None = None
    final: Sample | None = None

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
            "baseline": asdict(self.baseline) if self.baseline else None,
            "final": asdict(self.final) if self.final else None,
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "rss_growth": round(self.rss_growth, 4),
            "samples": [asdict(s) for s in self.samples],
        }


_METRIC = re.compile(r'^(process_resident_memory_bytes|callassist_runtime\{kind="(\w+)"\}) ([0-9.e+-]+)$', re.M)


async def sample(client: httpx.AsyncClient, calls: int) -> Sample:
    text = (await client.get("/metrics")).text
    values: dict[str, float] = {}
    for m in _METRIC.finditer(text):
        values[m.group(2) or "rss"] = float(m.group(3))
    return Sample(
        t=round(time.time(), 1),
        calls=calls,
        rss_mb=round(values.get("rss", 0) / 2**20, 1),
        threads=int(values.get("threads", -1)),
        tasks=int(values.get("tasks", -1)),
        finished_alive=int(values.get("finished_calls_alive", -1)),
    )


async def one_call(url: str, audio: bytes) -> bool:
    call = PhoneCall(url, LINE)
    try:
        await call.connect()
        await call.listen(max_wait_s=10, quiet_s=0.6)
        reply = await call.say(audio, max_wait_s=10, quiet_s=0.8)
        return reply.latency_s is not None
    except Exception:
        return False
    finally:
        await call.hangup()


async def _settle(client: httpx.AsyncClient, calls: int, baseline: Sample | None, limit_s: float = 20) -> Sample:
    """Once the calls are over: until threads and tasks are back (or ``limit_s``)."""
    deadline = time.monotonic() + limit_s
    s = await sample(client, calls)
    while time.monotonic() < deadline:
        done = s.finished_alive == 0 and (
            baseline is None or (s.threads <= baseline.threads and s.tasks <= baseline.tasks)
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
    async with httpx.AsyncClient(base_url=server.base_url, headers=headers, timeout=30) as client:
        await client.put("/v1/profile", json={"display_name": "Alex Chen", "languages": ["en"]})
        (await client.put(f"/v1/lines/{LINE}")).raise_for_status()
        from .demo import wait_ready

        await wait_ready(client)
        piper = PiperEngine()
        audios = [pcm16_to_ulaw8k(a.pcm, a.rate) for a in (piper.synthesize(t) for t in CALLER_LINES)]
        done = 0
        for i in range(calls):
            ok = await one_call(url, audios[i % len(audios)])
            report.failed_calls += not ok
            done += 1
            if done == warmup:
                report.baseline = await _settle(client, done, None, limit_s=5)
                report.samples.append(report.baseline)
                print(f"  baseline after {done} calls: {report.baseline}", flush=True)
            elif done % 10 == 0:
                report.samples.append(await sample(client, done))
                print(f"  {report.samples[-1]}", flush=True)
        report.calls_sequential = done
        stop = time.monotonic() + minutes * 60

        async def worker(k: int) -> None:
            nonlocal done
            while time.monotonic() < stop:
                ok = await one_call(url, audios[k % len(audios)])
                report.failed_calls += not ok
                report.calls_concurrent += 1
                done += 1
                if not ok:
                    await asyncio.sleep(1.0)  # refused or failed: no tight loop of retries

        async def watch() -> None:
            while time.monotonic() < stop:
                await asyncio.sleep(30)
                report.samples.append(await sample(client, done))
                print(f"  {report.samples[-1]}", flush=True)

        if minutes > 0 and concurrency > 0:
            await asyncio.gather(watch(), *(worker(k) for k in range(concurrency)))
        report.final = await _settle(client, done, report.baseline)
        report.samples.append(report.final)
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
    server_env = {"CALLASSIST_MAX_VOICE_CALLS": str(max(8, concurrency) + 4), **(env or {})}
    with running_server(env=server_env) as server:
        report = asyncio.run(
            _soak(server, calls=calls, concurrency=concurrency, minutes=minutes, warmup=min(warmup, calls))
        )
    b, f = report.baseline, report.final
    print(
        f"soak: {report.calls_sequential} calls in sequence + {report.calls_concurrent} at {concurrency} at once "
        f"({minutes:g} min); failed {report.failed_calls}"
    )
    if b and f:
        print(
            f"RSS {b.rss_mb:.0f} MB after warm-up -> {f.rss_mb:.0f} MB ({report.rss_growth:+.1%}), peak "
            f"{report.peak_rss_mb:.0f} MB; threads {b.threads} -> {f.threads}; tasks {b.tasks} -> {f.tasks}; "
            f"finished calls still alive {f.finished_alive}"
        )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "soak.json").write_text(json.dumps(report.summary(), indent=2), encoding="utf-8")
        print(f"wrote {out / 'soak.json'}")
    return report
