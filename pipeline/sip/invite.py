"""The server side of one INVITE (RFC 3261 section 17.2.1): provisional and final
answers, a final answer retransmitted (timer G: T1 doubling up to T2) until the ACK
comes or 64*T1 pass."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from .dialog import SipCall
from .message import SipMessage, response_to, stamp_via

T1 = 0.5
T2 = 4.0
TIMEOUT_64T1 = 64 * T1
# A caller that does not ACK our 200 OK within this is not a caller: the dialog ends and
# its slot is free (RFC 3261 allows 64*T1 = 32 s; a real UA ACKs within a round trip).
# Errors are retransmitted as long: they hold no slot, and fewer resends limit reflection.
ACK_WAIT_S = 4.0

Send = Callable[[bytes, tuple[str, int]], None]


class InviteTransaction:
    """``respond`` sends an answer (and remembers it for retransmitted INVITEs);
    ``finish`` sends the final one and retransmits it until :meth:`ack`."""

    def __init__(
        self, call: SipCall, source: tuple[str, int], send: Send, *, request: SipMessage | None = None
    ) -> None:
        self.call = call
        self.source = source
        self.request = request or call.invite  # a re-INVITE answers its own request
        self._send = send
        self.last = b""
        self.final: int | None = None
        self.admit_task: asyncio.Task[int | None] | None = None
        self.acked = asyncio.Event()
        self.forget_at: float | None = None  # kept a little after it ends, to absorb retransmissions

    def respond(
        self,
        status: int,
        *,
        extra: list[tuple[str, str]] | None = None,
        body: bytes = b"",
        reason: str | None = None,
    ) -> None:
        res = response_to(self.request, status, to_tag=self.call.local_tag, extra=extra, body=body, reason=reason)
        stamp_via(res, self.source)
        self.last = res.encode()
        self._send(self.last, self.source)

    def resend(self) -> None:
        if self.last:
            self._send(self.last, self.source)

    def finish(
        self,
        status: int,
        *,
        extra: list[tuple[str, str]] | None = None,
        body: bytes = b"",
        reason: str | None = None,
        warning: str | None = None,
    ) -> None:
        headers = list(extra or [])
        if warning:
            headers.append(("Warning", f'399 callassist "{warning}"'))
        self.final = status
        self.respond(status, extra=headers, body=body, reason=reason)

    def ack(self) -> None:
        self.acked.set()

    async def retransmit(self, on_timeout: Callable[[], Awaitable[None]]) -> None:
        """Until ACK; ``on_timeout`` runs when none came (a 2xx: end the call)."""
        interval = T1
        deadline = time.monotonic() + ACK_WAIT_S
        try:
            while time.monotonic() < deadline:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(interval):
                        await self.acked.wait()
                        return
                self.resend()
                interval = min(interval * 2, T2)
            await on_timeout()
        finally:
            self.forget_at = time.monotonic() + TIMEOUT_64T1 / 4
