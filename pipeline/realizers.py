"""Realizers turn a Decision into words: the template (instant, the default) or an LLM
behind any OpenAI-compatible endpoint, streamed, with the TTFT guard.

TTFT guard: the LLM's first token must arrive within ``deadline_ms`` (600 ms by
default). If it does not, the stream is cancelled and the Decision's template
wording is used instead; the miss counts against the endpoint's rolling median, and
an endpoint whose median exceeds the limit is taken out of service (see ``ttft.py``).

Conveying a preset always uses the template, even in LLM mode: the owner's words are
said verbatim, and their audio is synthesized in advance.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from coordinator.prompt import build_messages
from coordinator.types import Act, CallContext, CallState, Decision

from . import metrics
from .ttft import EndpointHealth

log = logging.getLogger(__name__)


@dataclass
class Realization:
    """One turn's wording as it streams, and how it was produced."""

    source: str  # "template" | "llm"
    endpoint: str | None = None
    first_token_ms: float | None = None
    fallback: str | None = None  # "deadline" | "out_of_service" | "error" | "preset"
    chunks: AsyncIterator[str] | None = field(default=None, repr=False)


class Realizer(Protocol):
    name: str

    async def realize(self, decision: Decision, state: CallState, ctx: CallContext) -> Realization: ...


async def _once(text: str) -> AsyncIterator[str]:
    yield text


class TemplateRealizer:
    """The decision's own wording, at once."""

    name = "template"

    async def realize(self, decision: Decision, state: CallState, ctx: CallContext) -> Realization:
        t0 = time.perf_counter()
        real = Realization("template", chunks=_once(decision.text))
        real.first_token_ms = (time.perf_counter() - t0) * 1000
        metrics.REALIZER_TTFT.labels(realizer="template", endpoint="none").observe(real.first_token_ms / 1000)
        return real


class LLMRealizer:
    """Streams the wording from the first in-service endpoint, within the TTFT deadline."""

    name = "llm"

    def __init__(self, endpoints: list[EndpointHealth], *, deadline_ms: float = 600.0, max_tokens: int = 120) -> None:
        self.endpoints = endpoints
        self.deadline_ms = deadline_ms
        self.max_tokens = max_tokens
        self._template = TemplateRealizer()
        self._cleanup: set[asyncio.Task[None]] = set()

    def _fallback(self, decision: Decision, reason: str, endpoint: str | None, waited_ms: float | None) -> Realization:
        metrics.TTFT_FALLBACKS.labels(reason=reason).inc()
        log.info("ttft guard: template wording used", extra={"reason": reason, "endpoint": endpoint})
        return Realization(
            "template",
            endpoint=endpoint,
            first_token_ms=waited_ms,
            fallback=reason,
            chunks=_once(decision.text),
        )

    async def realize(self, decision: Decision, state: CallState, ctx: CallContext) -> Realization:
        # The owner's words and numbers read back are said exactly as decided.
        if decision.preset is not None or decision.act in (Act.CONVEY_PRESET, Act.READ_BACK):
            real = await self._template.realize(decision, state, ctx)
            real.fallback = "preset"
            return real
        health = next((h for h in self.endpoints if h.in_service), None)
        if health is None:
            return self._fallback(decision, "out_of_service", None, None)
        name = health.endpoint.name
        messages = build_messages(decision, state, ctx)
        t0 = time.perf_counter()
        deadline = t0 + self.deadline_ms / 1000
        stream: Any = None
        try:
            stream = await asyncio.wait_for(
                health.endpoint.stream(messages, max_tokens=self.max_tokens),
                timeout=self.deadline_ms / 1000,
            )
            iterator = stream.__aiter__()
            while True:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise TimeoutError
                chunk = await asyncio.wait_for(iterator.__anext__(), timeout=remaining)
                text = chunk.choices[0].delta.content if chunk.choices else None
                if text and text.strip():
                    break
        except (TimeoutError, StopAsyncIteration) as exc:
            waited = (time.perf_counter() - t0) * 1000
            self._close_later(stream)
            if isinstance(exc, StopAsyncIteration):
                return self._fallback(decision, "empty", name, waited)
            health.record_miss()
            return self._fallback(decision, "deadline", name, waited)
        except Exception as exc:
            waited = (time.perf_counter() - t0) * 1000
            self._close_later(stream)
            health.record_miss()  # an erroring endpoint is measured like a slow one
            log.warning("llm realizer error", extra={"endpoint": name, "error": repr(exc)})
            return self._fallback(decision, "error", name, waited)
        ttft = (time.perf_counter() - t0) * 1000
        health.record(ttft)
        metrics.REALIZER_TTFT.labels(realizer="llm", endpoint=_label(name)).observe(ttft / 1000)
        return Realization("llm", endpoint=name, first_token_ms=ttft, chunks=self._rest(text, iterator, stream))

    async def _rest(self, first: str, iterator: Any, stream: Any) -> AsyncIterator[str]:
        try:
            yield first
            async for chunk in iterator:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
        finally:
            with contextlib.suppress(Exception):
                await stream.close()

    def _close_later(self, stream: Any) -> None:
        """Cancel the abandoned stream without making the caller wait for it."""
        if stream is None:
            return

        async def close() -> None:
            with contextlib.suppress(Exception):
                await stream.close()

        task = asyncio.get_running_loop().create_task(close())
        self._cleanup.add(task)
        task.add_done_callback(self._cleanup.discard)

    async def aclose(self) -> None:
        for task in list(self._cleanup):
            with contextlib.suppress(Exception):
                await task
        for h in self.endpoints:
            await h.close()


def _label(endpoint: str) -> str:
    """Endpoint label for metrics: host:port only (bounded, no paths or keys)."""
    from urllib.parse import urlparse

    parsed = urlparse(endpoint)
    return parsed.netloc or "unknown"
