"""Graceful shutdown for a phone service: SIGTERM drains, it does not cut calls.

uvicorn's own SIGTERM handling closes every connection at once, which would hang up every
caller on a media WebSocket. :class:`DrainingServer` changes the first SIGTERM into a
drain: the instance stops admitting (``/readyz`` answers 503 ``draining``, SIP OPTIONS
503, the Twilio webhook sends new calls back to the service address, a new media stream
is refused), the calls in progress finish, bounded by ``max_call_s``, their records are
saved as each ends (the drain waits for that post-call work too, which runs after a call
has freed its slot), and only then does the server exit. A second SIGTERM or a SIGINT
exits at once, as uvicorn would.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from types import FrameType
from typing import Any

import uvicorn

log = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    """A uvicorn server whose first SIGTERM drains the app's calls before exiting."""

    def __init__(self, config: uvicorn.Config, *, app: Any, max_drain_s: float, poll_s: float = 0.2) -> None:
        super().__init__(config)
        self._app = app
        self.max_drain_s = max_drain_s
        self.poll_s = poll_s
        self._drain: asyncio.Task[None] | None = None
        self.drain_started: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig != signal.SIGTERM or self.drain_started is not None or self.should_exit:
            super().handle_exit(sig, frame)
            return
        self.drain_started = time.monotonic()
        # A signal handler interrupts the loop's own code: start the drain from the loop.
        loop = asyncio.get_event_loop()
        loop.call_soon_threadsafe(self._begin_drain, loop)

    def _begin_drain(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._drain is None:
            self._drain = loop.create_task(self._drain_then_exit(), name="drain")

    def _active(self) -> int:
        """Voice calls in progress plus calls whose post-call work (summary, final save,
        owner's events) is still running: exiting before those would lose records."""
        res = getattr(self._app.state, "resources", None)
        if res is None or res.voice is None:
            return 0
        return int(res.voice.slots.busy)

    async def _drain_then_exit(self) -> None:
        res = getattr(self._app.state, "resources", None)
        if res is not None:
            res.draining = True
            if res.voice is not None:
                res.voice.slots.draining = True
        active = self._active()
        log.warning("SIGTERM: draining", extra={"active_calls": active, "max_drain_s": self.max_drain_s})
        assert self.drain_started is not None
        deadline = self.drain_started + self.max_drain_s
        # The call counter is shared by every transport; polling it 5 times a second is
        # cheaper than threading an event through each of them.
        while self._active() > 0 and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(self.poll_s)
        left = self._active()
        if left:
            log.warning("drain deadline reached; ending the remaining calls", extra={"active_calls": left})
        else:
            log.warning("drained", extra={"seconds": round(time.monotonic() - self.drain_started, 2)})
        self.should_exit = True
