"""A compact SIP user agent server over UDP (RFC 3261): answers calls, bridges their
RTP to a call handler, and hangs up.

    INVITE   100 Trying; the handler admits (404 unknown line, 486 busy, 503 off) or
             the call is answered with 200 OK + SDP answer (PCMU/PCMA, RFC 4733
             events), retransmitted until ACK; late offers get our offer in the 200
    ACK      media starts; the handler's ``run`` runs; when it returns we send BYE
    BYE      200 OK; the handler sees ``call.hangup``
    CANCEL   200 OK and 487 to the INVITE while it is still pending; else 481
    OPTIONS  200 OK (capabilities); REGISTER and other known methods 405; unknown 501
    INFO     in a dialog: application/dtmf-relay key presses are recorded
    garbage  400 Bad Request (or 505/413/416) to the sender; never a crash

Responses go back to the request's source address (RFC 3581 symmetric response
routing), which also suits a proxy such as Kamailio in front.

This module receives and dispatches, and runs INVITE admission; the established dialogs
are in :mod:`pipeline.sip.dialogs`, the shared state and primitives in :mod:`pipeline.sip.base`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

from .. import metrics
from . import message as sipmsg
from . import sdp
from .base import ALLOW
from .dialog import SipCall
from .dialogs import DialogRequests
from .invite import InviteTransaction
from .media import RtpSession
from .message import SipMessage, SipParseError

log = logging.getLogger(__name__)

KNOWN_NOT_ALLOWED = {"REGISTER", "SUBSCRIBE", "NOTIFY", "PUBLISH", "MESSAGE", "REFER", "UPDATE", "PRACK"}
BUSY_RETRY_AFTER_S = 30


class CallHandler(Protocol):
    """What the server asks of the application."""

    async def admit(self, call: SipCall) -> int | None:
        """None to answer the call, else the SIP status to reject it with (404, 486, 503)."""
        ...

    def accepting(self) -> bool:
        """Would a new call be admitted now (OPTIONS answers 200, else 503)?"""
        ...

    async def run(self, call: SipCall) -> None:
        """The call, from ACK until it ends; return to hang up (the server sends BYE)."""
        ...


@dataclass(frozen=True)
class SipConfig:
    host: str = "127.0.0.1"
    port: int = 5060
    advertise: str | None = None  # address put in Contact, Via and SDP; default: host
    rtp_ports: tuple[int, int] | None = None  # None: any free port
    max_calls: int = 16
    max_calls_per_source: int = 4
    user_agent: str = "CallAssist"

    @property
    def public_host(self) -> str:
        host = self.advertise or self.host
        if host in ("0.0.0.0", "::", ""):
            raise ValueError("set an advertised address when listening on all interfaces")
        return host


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, server: SipServer) -> None:
        self.server = server

    def datagram_received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        self.server._datagram(data, (str(addr[0]), int(addr[1])))

    def error_received(self, exc: Exception) -> None:
        log.debug("sip socket error", extra={"error": repr(exc)})


class SipServer(DialogRequests):
    """Listen with :meth:`start`; :meth:`close` hangs up every call and stops."""

    # ---------------------------------------------------------- lifecycle ----

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        family = 10 if ":" in self.config.host else 2  # AF_INET6 / AF_INET
        transport, _ = await loop.create_datagram_endpoint(
            lambda: _Protocol(self), local_addr=(self.config.host, self.config.port), family=family
        )
        self._transport = transport
        self.port = int(transport.get_extra_info("sockname")[1])
        log.info("sip server listening", extra={"host": self.config.host, "port": self.port})

    async def close(self) -> None:
        timers = list(self._timers)
        for timer in timers:
            timer.cancel()
        await asyncio.gather(*timers, return_exceptions=True)
        for call in list(self.calls.values()):
            call.end_reason = call.end_reason or "shutdown"
            call.hangup.set()
            if call.state == "confirmed":
                self._spawn(self._send_bye(call, wait_s=1.0))
        tasks = list(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=3.0)
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for call in list(self.calls.values()):
            await self._release(call)
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    # ------------------------------------------------------------ receive ----

    def _datagram(self, data: bytes, addr: tuple[str, int]) -> None:
        if not data.strip(b"\r\n\t "):
            if data.startswith(b"\r\n\r\n"):
                self._send(b"\r\n", addr)  # RFC 5626 keep-alive pong
            return
        try:
            msg = sipmsg.parse(data)
        except SipParseError as exc:
            self._count("malformed")
            metrics.DROPPED_FRAMES.labels(transport="sip", reason="malformed").inc()
            if not data.startswith((b"SIP/2.0 ", b"ACK ")):  # responses and ACKs are never answered
                self._reject_malformed(data, addr, exc)
            return
        try:
            if msg.is_request:
                self._request(msg, addr)
            else:
                self._response(msg)
        except SipParseError as exc:
            self._count("malformed")
            if msg.is_request and msg.method != "ACK":  # an ACK is never answered
                self._reply(msg, addr, exc.status, reason=exc.reason if exc.status == 400 else None)
        except Exception:
            metrics.ERRORS.labels(component="sip").inc()
            log.exception("sip request failed")
            if msg.is_request and msg.method != "ACK":
                with contextlib.suppress(Exception):
                    self._reply(msg, addr, 500)

    def _reject_malformed(self, data: bytes, addr: tuple[str, int], exc: SipParseError) -> None:
        res = SipMessage(status=exc.status, reason=sipmsg.REASONS.get(exc.status, "Bad Request"))
        res.headers = sipmsg.partial_headers(data)
        res.add("Warning", f'399 callassist "{exc.reason}"')
        self._send(res.encode(), addr)

    def _request(self, msg: SipMessage, addr: tuple[str, int]) -> None:
        method = msg.method or ""
        self._count(method.lower())
        if method not in ("ACK", "CANCEL"):
            cached = self._done.get((msg.branch, method))
            if cached is not None:
                self._send(cached[0], addr)  # a retransmission: the same answer again
                return
        if method == "INVITE":
            tx = self._invites.get(msg.branch)
            if tx is not None:
                tx.resend()
                return
            if msg.to_tag:
                self._reinvite(msg, addr)
            else:
                self._invite(msg, addr)
        elif method == "ACK":
            self._ack(msg)
        elif method == "BYE":
            self._bye(msg, addr)
        elif method == "CANCEL":
            self._cancel(msg, addr)
        elif method == "OPTIONS":
            if self.handler.accepting():
                self._reply(msg, addr, 200, extra=self._capabilities())
            else:  # full or draining: a dispatcher (Kamailio) marks us inactive and routes elsewhere
                self._reply(msg, addr, 503, extra=[*self._capabilities(), ("Retry-After", str(BUSY_RETRY_AFTER_S))])
        elif method == "INFO":
            self._info(msg, addr)
        elif method in KNOWN_NOT_ALLOWED:
            self._reply(msg, addr, 405, extra=[("Allow", ALLOW)])
        else:
            self._reply(msg, addr, 501, extra=[("Allow", ALLOW)])

    # ------------------------------------------------------------- INVITE ----

    def _invite(self, msg: SipMessage, addr: tuple[str, int]) -> None:
        mf = msg.get("Max-Forwards")
        if mf is not None and int(mf) == 0:
            self._reply(msg, addr, 483)
            return
        require = msg.get("Require")
        if require:
            self._reply(msg, addr, 420, extra=[("Unsupported", require)])
            return
        call = SipCall.from_invite(msg, addr)
        now = time.monotonic()
        self._invites = {b: t for b, t in self._invites.items() if t.forget_at is None or t.forget_at > now}
        tx = InviteTransaction(call, addr, self._send)
        self._invites[msg.branch] = tx
        tx.respond(100)
        if call.call_id in self.calls:
            self._final(tx, 482, reason="Loop Detected")
            return
        if len(self.calls) >= self.config.max_calls:
            self._final(tx, 503, extra=[("Retry-After", str(BUSY_RETRY_AFTER_S))])
            return
        if sum(1 for c in self.calls.values() if c.source[0] == addr[0]) >= self.config.max_calls_per_source:
            self._count("busy_source")
            self._final(tx, 486)
            return
        if msg.body:
            ctype = (msg.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if ctype != "application/sdp":
                self._final(tx, 415, extra=[("Accept", "application/sdp")])
                return
            try:
                call.offer = sdp.parse(msg.body.decode("utf-8", "replace"))
                call.plan = sdp.negotiate(call.offer, addr[0])
            except sdp.SdpError as exc:
                self._final(tx, 488, reason=None, warning=str(exc))
                return
        self.calls[call.call_id] = call
        tx.admit_task = self._spawn(self._admit(tx))

    async def _admit(self, tx: InviteTransaction) -> int | None:
        call = tx.call
        try:
            status = await self.handler.admit(call)
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.ERRORS.labels(component="sip").inc()
            log.exception("sip admission failed")
            status = 500
        if tx.final is not None:
            return None  # cancelled meanwhile
        if status is not None:
            extra = [("Retry-After", str(BUSY_RETRY_AFTER_S))] if status == 503 else None
            self._final(tx, status, extra=extra)
            return status
        media = RtpSession(self.config.host, port_range=self.config.rtp_ports)
        try:
            await media.open()
        except OSError:
            self._final(tx, 503, extra=[("Retry-After", "5")])
            return 503
        if tx.final is not None:  # cancelled while the port was being opened
            await media.close()
            return None
        call.media = media
        call.local_sdp = sdp.LocalDescription(self.config.public_host, media.port)
        body = (
            call.local_sdp.answer(call.offer, call.plan)
            if call.offer is not None and call.plan is not None
            else call.local_sdp.offer()
        )
        self._final(
            tx,
            200,
            extra=[("Contact", self._contact()), *self._capabilities()[:2], ("Content-Type", "application/sdp")],
            body=body.encode(),
        )
        return None
