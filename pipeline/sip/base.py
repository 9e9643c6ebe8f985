"""What the SIP server's parts share: its state (calls, transactions, tasks), sending,
answering a request, and the addresses it puts in Contact.

:class:`SipBase` is the root of :class:`pipeline.sip.server.SipServer` (receiving,
INVITE) and :class:`pipeline.sip.dialogs.DialogRequests` (established dialogs).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from . import message as sipmsg
from .dialog import SipCall
from .invite import TIMEOUT_64T1, InviteTransaction
from .message import SipMessage, response_to, stamp_via

if TYPE_CHECKING:
    from .server import CallHandler, SipConfig

ALLOW = "INVITE, ACK, BYE, CANCEL, OPTIONS, INFO"
TX_CACHE_LIMIT = 10_000


class SipBase:
    """The server's state and the primitives every part uses."""

    def __init__(self, config: SipConfig, handler: CallHandler) -> None:
        self.config = config
        self.handler = handler
        self.calls: dict[str, SipCall] = {}
        self.port = config.port
        self._transport: asyncio.DatagramTransport | None = None
        self._invites: dict[str, InviteTransaction] = {}  # by INVITE branch
        self._done: dict[tuple[str, str], tuple[bytes, float]] = {}  # non-INVITE responses, for retransmissions
        self._client: dict[str, asyncio.Future[SipMessage]] = {}  # our requests (BYE), by branch
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timers: set[asyncio.Task[Any]] = set()
        self.counters: dict[str, int] = {}

    def _spawn(self, coro: Any, *, background: bool = False) -> asyncio.Task[Any]:
        """A tracked task; ``background`` ones (retransmission timers) are simply
        cancelled on close, the others (calls, BYEs) get a few seconds to finish."""
        task = asyncio.get_running_loop().create_task(coro)
        tasks = self._timers if background else self._tasks
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def _count(self, key: str) -> None:
        self.counters[key] = self.counters.get(key, 0) + 1

    def _send(self, data: bytes, addr: tuple[str, int]) -> None:
        if self._transport is not None:
            self._transport.sendto(data, addr)

    def _capabilities(self) -> list[tuple[str, str]]:
        return [("Allow", ALLOW), ("Accept", "application/sdp"), ("Server", self.config.user_agent)]

    def _reply(
        self,
        req: SipMessage,
        addr: tuple[str, int],
        status: int,
        *,
        extra: list[tuple[str, str]] | None = None,
        reason: str | None = None,
        to_tag: str | None = None,
    ) -> bytes:
        res = response_to(req, status, to_tag=to_tag or sipmsg.new_tag(), extra=extra, reason=reason)
        stamp_via(res, addr)
        data = res.encode()
        self._send(data, addr)
        if req.method not in ("INVITE", "ACK") and status >= 200:
            self._remember(req, data)
        return data

    def _remember(self, req: SipMessage, data: bytes) -> None:
        now = time.monotonic()
        if len(self._done) > TX_CACHE_LIMIT or (self._done and next(iter(self._done.values()))[1] < now):
            self._done = {k: v for k, v in self._done.items() if v[1] > now}
        self._done[(req.branch, req.method or "")] = (data, now + TIMEOUT_64T1)

    def _hostport(self) -> str:
        host = self.config.public_host
        return f"{f'[{host}]' if ':' in host else host}:{self.port}"

    def _contact(self) -> str:
        return f"<sip:callassist@{self._hostport()}>"
