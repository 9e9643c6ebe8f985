"""Signing and delivering webhooks.

Each attempt is a JSON POST of the delivery's stored body with
``CallAssist-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>``
(Stripe's convention: existing verifiers work), plus ``CallAssist-Event`` and
``CallAssist-Delivery``. A 2xx is success; anything else (or no answer within the
timeout) is retried after ``base * 2**n`` seconds (capped at an hour) with full jitter
until ``max_age_s`` (24 h) after the delivery was created; then it goes to the
dead-letter list, from which the owner can replay it.

:class:`DeliveryWorker` is one task per process (started and cancelled in the app's
lifespan); it wakes at once for deliveries enqueued in this process and polls for the
others (other instances, retries).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import random
import time
from dataclasses import dataclass

import httpx

from .. import metrics
from ..events import OwnerEvent
from .ssrf import UrlRefused, check_url
from .store import Attempt, Delivery, WebhookStore

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "CallAssist-Signature"


def sign(secret: str, body: str | bytes, *, t: int | None = None) -> str:
    """The ``CallAssist-Signature`` header value for ``body``."""
    t = int(time.time()) if t is None else t
    raw = body.encode() if isinstance(body, str) else body
    mac = hmac.new(secret.encode(), f"{t}.".encode() + raw, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def verify(secret: str, body: bytes, header: str, *, tolerance_s: float = 300, now: float | None = None) -> bool:
    """Check a ``CallAssist-Signature`` header (what a receiver does)."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    t = parts.get("t", "")
    if not t.isdigit() or "v1" not in parts:
        return False
    if abs((time.time() if now is None else now) - int(t)) > tolerance_s:
        return False
    expected = sign(secret, body, t=int(t)).split("v1=", 1)[1]
    return hmac.compare_digest(expected, parts["v1"])


@dataclass(frozen=True)
class DeliveryOptions:
    allow_private: bool = False
    timeout_s: float = 5.0
    base_delay_s: float = 1.0
    max_delay_s: float = 3600.0
    max_age_s: float = 24 * 3600.0
    lease_s: float = 30.0
    poll_s: float = 0.25
    concurrency: int = 8


def backoff(attempts: int, options: DeliveryOptions, rng: random.Random | None = None) -> float:
    """Seconds before the next attempt after ``attempts`` failures: exponential, full jitter
    (between half and all of the step, so retries of many deliveries spread out)."""
    step = min(options.max_delay_s, options.base_delay_s * (2 ** max(0, attempts - 1)))
    return step * (0.5 + 0.5 * (rng or random).random())


class WebhookSink:
    """Turns owner events into deliveries for the owner's webhooks that want them."""

    def __init__(self, store: WebhookStore, wake: asyncio.Event | None = None) -> None:
        self.store = store
        self.wake = wake

    async def __call__(self, event: OwnerEvent) -> None:
        hooks = [h for h in await self.store.for_owner(event.owner_id) if h.wants(event.type)]
        if not hooks:
            return
        body = json.dumps(event.to_json(), ensure_ascii=False, separators=(",", ":"), default=str)
        for hook in hooks:
            await self.store.enqueue(hook, event.owner_id, event_id=event.id, event_type=event.type, body=body)
        if self.wake is not None:
            self.wake.set()


class DeliveryWorker:
    def __init__(self, store: WebhookStore, options: DeliveryOptions, *, client: httpx.AsyncClient | None = None):
        self.store = store
        self.options = options
        self.wake = asyncio.Event()
        self._client = client or httpx.AsyncClient(timeout=options.timeout_s, follow_redirects=False)
        self._task: asyncio.Task[None] | None = None
        self._inflight: set[asyncio.Task[None]] = set()
        self._claimed: set[str] = set()  # delivery ids leased to this worker, attempt not finished
        self._sem = asyncio.Semaphore(options.concurrency)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="webhook-deliveries")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for task in list(self._inflight):
            task.cancel()
        await asyncio.gather(*self._inflight, return_exceptions=True)
        if self._claimed:  # hand unfinished attempts back now rather than when their lease ends
            with contextlib.suppress(Exception):
                await self.store.release(sorted(self._claimed))
        await self._client.aclose()

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                claimed = await self.store.claim(lease_s=self.options.lease_s, limit=self.options.concurrency)
            except Exception:
                metrics.ERRORS.labels(component="webhooks").inc()
                if failures == 0:
                    log.warning("webhook queue unreachable; retrying")
                failures += 1
                # Back off while Redis is away (up to 5 s between tries), quietly.
                await asyncio.sleep(min(5.0, self.options.poll_s * 2 ** min(failures, 5)))
                continue
            if failures:
                log.info("webhook queue reachable again", extra={"failed_polls": failures})
                failures = 0
            for delivery_id in claimed:
                await self._sem.acquire()
                task = asyncio.get_running_loop().create_task(self._attempt_released(delivery_id))
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)
            if claimed:
                continue
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self.options.poll_s)

    async def _attempt_released(self, delivery_id: str) -> None:
        self._claimed.add(delivery_id)
        try:
            await self.attempt(delivery_id)
            self._claimed.discard(delivery_id)
        except Exception:
            self._claimed.discard(delivery_id)  # retried when its lease ends
            metrics.ERRORS.labels(component="webhooks").inc()
            log.exception("webhook attempt failed", extra={"delivery_id": delivery_id})
        finally:
            self._sem.release()

    async def attempt(self, delivery_id: str) -> Delivery | None:
        """One attempt at one delivery; returns it as stored afterwards."""
        d = await self.store.get_delivery(delivery_id)
        if d is None:
            await self.store.drop(delivery_id)
            return None
        hook = await self.store.get(d.owner_id, d.webhook_id)
        if hook is None or d.state != "pending":
            await self.store.drop(delivery_id)
            return d
        t0 = time.perf_counter()
        attempt = Attempt(t=round(time.time(), 3))
        try:
            await check_url(hook.url, allow_private=self.options.allow_private)
            response = await self._client.post(
                hook.url,
                content=d.body.encode(),
                headers={
                    "Content-Type": "application/json",
                    SIGNATURE_HEADER: sign(hook.secret, d.body),
                    "CallAssist-Event": d.event_type,
                    "CallAssist-Delivery": d.id,
                    "User-Agent": "CallAssist-Webhooks/1",
                },
            )
            attempt.status = response.status_code
            if not 200 <= response.status_code < 300:
                attempt.error = f"HTTP {response.status_code}"
        except UrlRefused as exc:
            attempt.error = f"refused: {exc}"
        except httpx.HTTPError as exc:
            attempt.error = type(exc).__name__
        attempt.ms = round((time.perf_counter() - t0) * 1000, 1)
        d.attempts.append(attempt)
        if attempt.error is None:
            d.state, d.next_at = "delivered", None
        elif time.time() - d.created_at >= self.options.max_age_s:
            d.state, d.next_at = "dead", None
        else:  # the last attempt falls exactly at the end of the window
            deadline = d.created_at + self.options.max_age_s
            d.next_at = round(min(time.time() + backoff(len(d.attempts), self.options), deadline), 3)
        metrics.WEBHOOK_ATTEMPTS.labels(outcome="ok" if attempt.error is None else d.state).inc()
        await self.store.finish(d)
        return d
