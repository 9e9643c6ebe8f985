"""How many voice calls one instance takes at once, whatever the transport.

The budget is measured (``callassist bench voice --concurrency``): past it every caller's
latency grows, so one more caller is answered busy (TwiML ``<Say>`` + hang-up, SIP 503
with Retry-After, WebRTC 503, a telephony WebSocket closed with 1013) instead of
degrading every call in progress.

A call holds its slot while its media flows. Once the caller's media has ended (the
caller hung up, or the assistant's goodbye has been played) the slot is free for the
next caller at once; the call's post-call work (the summary, the final save, the owner's
``call.ended`` event and webhooks) runs outside the slot (:meth:`CallSlots.after`):
bounded in time, counted in :attr:`CallSlots.finishing`, and awaited by the SIGTERM drain
and at shutdown (:meth:`CallSlots.wait_finished`), so no record is lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from . import metrics

log = logging.getLogger(__name__)

BUSY_RETRY_AFTER_S = 30
POST_CALL_TIMEOUT_S = 60.0  # one call's post-call work never runs longer (then it is logged and counted)


@dataclass
class CallSlots:
    """A counter with a limit; :meth:`take` (or :meth:`acquire` / :meth:`release`) around
    each voice call's media, :meth:`after` for its post-call work.

    While ``draining`` (SIGTERM: the instance is leaving) no new call is admitted and the
    calls in progress finish; every transport asks :attr:`full` before answering.
    """

    limit: int = 8
    in_use: int = 0
    refused: int = 0
    draining: bool = False
    post_call_timeout_s: float = POST_CALL_TIMEOUT_S
    _after: set[asyncio.Task[None]] = field(default_factory=set, repr=False, init=False)

    @property
    def full(self) -> bool:
        """No new voice call here: at the budget, or draining."""
        return self.draining or self.in_use >= self.limit

    @property
    def state(self) -> str:
        """``draining``, ``full`` or ``accepting`` (what /readyz and SIP OPTIONS report)."""
        if self.draining:
            return "draining"
        return "full" if self.in_use >= self.limit else "accepting"

    def acquire(self, transport: str) -> bool:
        if self.full:
            self.refused += 1
            metrics.CALLS.labels(transport=transport, outcome="busy").inc()
            return False
        self.in_use += 1
        return True

    def release(self) -> None:
        self.in_use = max(0, self.in_use - 1)

    def take(self, transport: str) -> Slot | None:
        """A slot for one call (None: busy), released once whoever gets there first."""
        return Slot(self) if self.acquire(transport) else None

    # ------------------------------------------------------ post-call work ----

    @property
    def finishing(self) -> int:
        """Calls whose media has ended and whose post-call work is still running."""
        return len(self._after)  # a task leaves the set when it is done

    @property
    def busy(self) -> int:
        """What the drain waits for: calls in progress plus calls still finishing."""
        return self.in_use + self.finishing

    def after(self, work: Coroutine[Any, Any, None], *, call_id: str) -> asyncio.Task[None]:
        """Run a call's post-call work outside its slot, bounded by ``post_call_timeout_s``."""
        task = asyncio.get_running_loop().create_task(self._bounded(work, call_id), name=f"post-call {call_id}")
        self._after.add(task)
        task.add_done_callback(self._after.discard)
        return task

    async def _bounded(self, work: Coroutine[Any, Any, None], call_id: str) -> None:
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.post_call_timeout_s):
                await work
        except TimeoutError:
            metrics.ERRORS.labels(component="post_call").inc()
            log.error("post-call work timed out", extra={"call_id": call_id, "limit_s": self.post_call_timeout_s})
        except Exception:
            metrics.ERRORS.labels(component="post_call").inc()
            log.exception("post-call work failed", extra={"call_id": call_id})
        else:
            log.debug("post-call work done", extra={"call_id": call_id, "s": round(time.monotonic() - started, 3)})

    async def wait_finished(self, timeout_s: float | None = None) -> bool:
        """Until every call's post-call work is done (True), or ``timeout_s`` passed (False)."""
        # Only this loop's tasks can be awaited (one process may run several loops: tests, benches).
        loop = asyncio.get_running_loop()
        pending = [t for t in self._after if not t.done() and t.get_loop() is loop]
        if not pending:
            return True
        _, still = await asyncio.wait(pending, timeout=timeout_s)
        return not still


@dataclass
class Slot:
    """One admitted call's slot: :meth:`release` is idempotent, so the call frees it when
    the caller's media ends and the transport's ``finally`` cannot free it twice."""

    slots: CallSlots
    released: bool = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.slots.release()


@dataclass
class RealTimeGate:
    """Drops caller audio that arrives faster than real time (beyond a small burst):
    a sender pushing 10x real time must not grow buffers or starve other calls."""

    burst_s: float = 1.0
    clock: Callable[[], float] = time.monotonic  # injectable for tests
    _start: float | None = None
    _received_s: float = 0.0
    dropped: int = field(default=0)

    def admit(self, seconds: float) -> bool:
        now = self.clock()
        if self._start is None:
            self._start = now
        if self._received_s + seconds > (now - self._start) + self.burst_s + 1e-9:
            self.dropped += 1
            return False
        self._received_s += seconds
        return True
