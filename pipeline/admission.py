"""How many voice calls one instance takes at once, whatever the transport.

The budget is measured (``callassist bench voice --concurrency``): past it every caller's
latency grows, so one more caller is answered busy (TwiML ``<Say>`` + hang-up, SIP 503
with Retry-After, WebRTC 503, a telephony WebSocket closed with 1013) instead of
degrading every call in progress.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import metrics

BUSY_RETRY_AFTER_S = 30


@dataclass
class CallSlots:
    """A counter with a limit; :meth:`acquire` / :meth:`release` around each voice call.

    While ``draining`` (SIGTERM: the instance is leaving) no new call is admitted and the
    calls in progress finish; every transport asks :attr:`full` before answering.
    """

    limit: int = 8
    in_use: int = 0
    refused: int = 0
    draining: bool = False

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
