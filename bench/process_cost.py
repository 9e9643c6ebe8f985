"""CPU time and peak memory of a server process over a block of a bench (the cost model
of docs/scaling.md)."""

from __future__ import annotations

import asyncio
import time


class ProcessCost:
    """CPU time and peak resident memory of the server process over a block (the cost
    model in docs/scaling.md): psutil samples RSS every 0.25 s."""

    def __init__(self, pid: int) -> None:
        import psutil

        self._proc = psutil.Process(pid)
        self._peak = 0
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        while True:
            self._peak = max(self._peak, self._proc.memory_info().rss)
            await asyncio.sleep(0.25)

    async def __aenter__(self) -> ProcessCost:
        t = self._proc.cpu_times()
        self._cpu0, self._t0 = t.user + t.system, time.monotonic()
        self._rss0 = self._proc.memory_info().rss
        self._task = asyncio.get_running_loop().create_task(self._sample())
        return self

    async def __aexit__(self, *exc: object) -> None:
        t = self._proc.cpu_times()
        self.cpu_s, self.wall_s = t.user + t.system - self._cpu0, time.monotonic() - self._t0
        if self._task is not None:
            self._task.cancel()

    def figures(self, calls_at_once: int) -> dict[str, float]:
        cores = self.cpu_s / self.wall_s if self.wall_s else 0.0
        return {
            "cpu_cores": round(cores, 2),
            "cpu_cores_per_call": round(cores / max(calls_at_once, 1), 3),
            "rss_start_mb": round(self._rss0 / 2**20, 1),
            "rss_peak_mb": round(self._peak / 2**20, 1),
        }
