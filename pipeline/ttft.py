"""The TTFT guard's endpoint side: rolling median time-to-first-token per LLM endpoint,
admission at start-up (CALLM's method) and out-of-service probing.

- :meth:`Endpoint.measure_ttft` streams one short request and returns its TTFT.
- :func:`admit`: two warm-up requests, then ``n`` requests streamed one at a time; the
  endpoint is admitted only if their median TTFT <= the limit (1000 ms).
- :class:`EndpointHealth`: every real request's TTFT goes into a rolling window. A
  request that misses the deadline is cancelled at once, so its TTFT is unknown: a
  probe measures the endpoint's real TTFT instead (a probe that times out records its
  timeout, 3x the limit). When the median exceeds the limit the endpoint is taken out
  of service and probed periodically until its median is back under the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

PROBE_MESSAGES = [
    {"role": "system", "content": "Reply with one short word."},
    {"role": "user", "content": "Say OK."},
]


@dataclass
class Endpoint:
    """One OpenAI-compatible server (vLLM, llama.cpp, a hosted API)."""

    base_url: str
    model: str
    api_key: str = "not-needed"
    timeout_s: float = 10.0
    _client: Any = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.base_url.rstrip("/")

    @property
    def client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s, max_retries=0
            )
        return self._client

    async def stream(self, messages: list[dict[str, str]], *, max_tokens: int = 120) -> Any:
        return await self.client.chat.completions.create(
            model=self.model,
            messages=messages,
            stream=True,
            max_tokens=max_tokens,
            temperature=0.3,
        )

    async def measure_ttft(self, messages: list[dict[str, str]] | None = None) -> float:
        """Seconds to the first non-empty content token of one streamed request."""
        t0 = time.perf_counter()
        stream = await self.stream(messages or PROBE_MESSAGES, max_tokens=8)
        try:
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    return time.perf_counter() - t0
        finally:
            with contextlib.suppress(Exception):
                await stream.close()
        return time.perf_counter() - t0


@dataclass
class AdmissionResult:
    endpoint: str
    admitted: bool
    median_ms: float
    samples_ms: list[float]
    error: str | None = None


async def admit(endpoint: Endpoint, *, limit_ms: float = 1000.0, n: int = 5, warmups: int = 2) -> AdmissionResult:
    """CALLM's admission: two warm-ups, then n requests one at a time; median <= limit."""
    samples: list[float] = []
    try:
        for _ in range(warmups):
            await endpoint.measure_ttft()
        for _ in range(n):
            samples.append(await endpoint.measure_ttft() * 1000)
    except Exception as exc:
        log.warning("llm endpoint admission failed", extra={"endpoint": endpoint.name, "error": repr(exc)})
        return AdmissionResult(endpoint.name, False, float("inf"), samples, repr(exc))
    median = statistics.median(samples)
    ok = median <= limit_ms
    log.info(
        "llm endpoint admission",
        extra={"endpoint": endpoint.name, "admitted": ok, "median_ttft_ms": round(median, 1)},
    )
    return AdmissionResult(endpoint.name, ok, median, samples)


class EndpointHealth:
    """Rolling median TTFT of one endpoint, with out-of-service probing."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        limit_ms: float = 1000.0,
        window: int = 9,
        probe_interval_s: float = 5.0,
        on_change: Any = None,
    ) -> None:
        self.endpoint = endpoint
        self.limit_ms = limit_ms
        self.samples: deque[float] = deque(maxlen=window)
        self.in_service = True
        self.probe_interval_s = probe_interval_s
        self._probe_task: asyncio.Task[None] | None = None
        self._miss_probe: asyncio.Task[None] | None = None
        self._on_change = on_change

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def record(self, ttft_ms: float) -> None:
        """A measured TTFT (from a real request or a probe)."""
        self.samples.append(ttft_ms)
        self._check()

    def record_miss(self) -> None:
        """A request missed the deadline (and was cancelled): measure the endpoint instead."""
        if self._miss_probe is None or self._miss_probe.done():
            try:
                self._miss_probe = asyncio.get_running_loop().create_task(self._probe_once())
            except RuntimeError:
                self._miss_probe = None

    def _check(self) -> None:
        median = self.median_ms
        if self.in_service and median is not None and median > self.limit_ms:
            self._set(False)
            log.warning(
                "llm endpoint out of service: median TTFT over limit",
                extra={"endpoint": self.endpoint.name, "median_ttft_ms": round(median, 1)},
            )
            self._start_probing()
        elif not self.in_service and median is not None and median <= self.limit_ms:
            self._set(True)
            log.info(
                "llm endpoint back in service",
                extra={"endpoint": self.endpoint.name, "median_ttft_ms": round(median, 1)},
            )
        elif self._on_change is not None:
            self._on_change(self)

    def _set(self, in_service: bool) -> None:
        self.in_service = in_service
        if self._on_change is not None:
            self._on_change(self)

    def _start_probing(self) -> None:
        if self._probe_task is None or self._probe_task.done():
            try:
                self._probe_task = asyncio.get_running_loop().create_task(self._probe_loop())
            except RuntimeError:  # no running loop: probing starts with the next record
                self._probe_task = None

    async def _probe_once(self) -> None:
        timeout = self.limit_ms / 1000 * 3
        try:
            ttft = await asyncio.wait_for(self.endpoint.measure_ttft(), timeout=timeout)
            self.samples.append(ttft * 1000)
        except Exception:
            self.samples.append(timeout * 1000)
        self._check()

    async def _probe_loop(self) -> None:
        while not self.in_service:
            await asyncio.sleep(self.probe_interval_s)
            await self._probe_once()

    async def close(self) -> None:
        for task in (self._probe_task, self._miss_probe):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._probe_task = self._miss_probe = None
