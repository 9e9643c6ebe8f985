"""The SIP server's established dialogs: the ACK that confirms a call (media starts,
the handler runs, then our BYE), the caller's BYE, CANCEL, re-INVITE and INFO (RFC 4733
key presses over ``application/dtmf-relay``), and our own BYE as a UAC transaction.

:class:`DialogRequests` sits between :class:`pipeline.sip.base.SipBase` (the state and
the primitives) and :class:`pipeline.sip.server.SipServer` (receiving, INVITE); the
INVITE's final answer (:meth:`DialogRequests._final`, retransmitted until ACK) is here
because it is what a dialog starts or ends with.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from .. import metrics
from . import sdp
from .base import SipBase
from .dialog import SipCall
from .invite import T1, T2, TIMEOUT_64T1, InviteTransaction
from .message import SipMessage, SipParseError

if TYPE_CHECKING:
    pass

log = logging.getLogger("pipeline.sip.server")  # one logger for the SIP server


class DialogRequests(SipBase):
    """Requests inside a dialog, and the dialog's end."""

    def _final(
        self,
        tx: InviteTransaction,
        status: int,
        *,
        extra: list[tuple[str, str]] | None = None,
        body: bytes = b"",
        reason: str | None = None,
        warning: str | None = None,
    ) -> None:
        """A final answer to the INVITE, retransmitted until ACK (or 32 s)."""
        tx.finish(status, extra=extra, body=body, reason=reason, warning=warning)
        self._spawn(tx.retransmit(lambda: self._no_ack(tx)), background=True)
        if status >= 300:
            if self.calls.get(tx.call.call_id) is tx.call:
                del self.calls[tx.call.call_id]
            tx.call.state = "terminated"
            metrics.CALLS.labels(transport="sip", outcome=f"rejected_{status}").inc()

    async def _no_ack(self, tx: InviteTransaction) -> None:
        if tx.final == 200 and tx.call.state == "early":
            # The caller never confirmed the call: end it (RFC 3261 13.3.1.4).
            tx.call.end_reason = "no_ack"
            tx.call.state = "confirmed"
            # One BYE, not retransmitted: the source may be spoofed (no amplification).
            await self._send_bye(tx.call, wait_s=T1 / 2)
            await self._release(tx.call)

    def _ack(self, msg: SipMessage) -> None:
        tx = self._invites.get(msg.branch)
        if tx is not None and tx.final is not None and tx.final >= 300:
            tx.ack()  # ACK to our error response: the transaction is over
            return
        call = self.calls.get(msg.call_id)
        if call is None or not call.matches(msg):
            return  # for a call that has gone
        answered = False
        for t in self._invites.values():
            if t.call is call and t.final == 200:
                t.ack()  # the INVITE's (or a re-INVITE's) 200 OK: stop retransmitting it
                answered = True
        if call.state != "early" or not answered or call.media is None:
            return  # a retransmitted ACK, or one for a re-INVITE
        if call.offer is None:  # late offer: the answer is in the ACK
            try:
                call.plan = sdp.negotiate(sdp.parse(msg.body.decode("utf-8", "replace")), call.source[0])
            except sdp.SdpError:
                call.end_reason = "bad_sdp_in_ack"
                call.state = "confirmed"
                self._spawn(self._hang_up(call))
                return
        call.state = "confirmed"
        assert call.media is not None and call.plan is not None
        call.media.start(call.plan, signaling_host=call.source[0])
        self._spawn(self._run(call))

    async def _run(self, call: SipCall) -> None:
        try:
            await self.handler.run(call)
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.ERRORS.labels(component="sip").inc()
            log.exception("sip call failed", extra={"call_id": call.call_id})
        if call.state == "confirmed":
            call.end_reason = call.end_reason or "assistant_closed"
            if call.media is not None:
                await call.media.drain(3.0)
            await self._send_bye(call)
        await self._release(call)

    async def _hang_up(self, call: SipCall) -> None:
        await self._send_bye(call)
        await self._release(call)

    async def _release(self, call: SipCall) -> None:
        call.state = "terminated"
        call.hangup.set()
        if self.calls.get(call.call_id) is call:
            del self.calls[call.call_id]
        if call.media is not None:
            await call.media.close()

    def _in_dialog(self, msg: SipMessage, addr: tuple[str, int]) -> SipCall | None:
        call = self.calls.get(msg.call_id)
        if call is None or not call.matches(msg) or call.state == "terminated":
            self._reply(msg, addr, 481)
            return None
        cseq = msg.cseq[0]
        if cseq < call.remote_cseq:
            self._reply(msg, addr, 500, reason="Out of Order")
            return None
        call.remote_cseq = cseq
        return call

    def _bye(self, msg: SipMessage, addr: tuple[str, int]) -> None:
        call = self._in_dialog(msg, addr)
        if call is None:
            return
        self._reply(msg, addr, 200, to_tag=call.local_tag)
        call.end_reason = call.end_reason or "caller_hangup"
        call.state = "terminated"
        if call.media is not None:
            call.media.sending = False  # nobody is listening any more
        call.hangup.set()  # the handler's run() returns; _run() then releases the call

    def _cancel(self, msg: SipMessage, addr: tuple[str, int]) -> None:
        tx = self._invites.get(msg.branch)
        if tx is None or tx.call.call_id != msg.call_id:
            self._reply(msg, addr, 481)
            return
        self._reply(msg, addr, 200, to_tag=tx.call.local_tag)
        if tx.final is None:
            if tx.admit_task is not None:
                tx.admit_task.cancel()
            tx.call.end_reason = "cancelled"
            self._final(tx, 487)
            self._spawn(self._release(tx.call))

    def _reinvite(self, msg: SipMessage, addr: tuple[str, int]) -> None:
        call = self._in_dialog(msg, addr)
        if call is None or call.media is None or call.local_sdp is None:
            return
        if call.state != "confirmed":
            self._reply(msg, addr, 491, reason="Request Pending")
            return
        offer = sdp.parse(msg.body.decode("utf-8", "replace")) if msg.body else None
        try:
            plan = sdp.negotiate(offer, addr[0]) if offer is not None else call.plan
        except sdp.SdpError as exc:
            self._reply(msg, addr, 488, extra=[("Warning", f'399 callassist "{exc}"')], to_tag=call.local_tag)
            return
        assert plan is not None
        call.plan = plan
        call.media.update(plan)
        call.local_sdp.version += 1
        body = call.local_sdp.answer(offer, plan) if offer is not None else call.local_sdp.offer()
        tx = InviteTransaction(call, addr, self._send, request=msg)
        self._invites[msg.branch] = tx
        extra = [("Contact", self._contact()), ("Content-Type", "application/sdp")]
        self._final(tx, 200, extra=extra, body=body.encode())

    def _info(self, msg: SipMessage, addr: tuple[str, int]) -> None:
        call = self._in_dialog(msg, addr)
        if call is None:
            return
        ctype = (msg.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if ctype == "application/dtmf-relay":
            for line in msg.body.decode("utf-8", "replace").splitlines():
                key, _, value = line.partition("=")
                value = value.strip()
                if key.strip().lower() == "signal" and len(value) == 1 and value.upper() in "0123456789*#ABCD":
                    call.info_dtmf.append(value.upper())
                    if call.media is not None:
                        call.media.stats.events.append(value.upper())
                        call.media.events.put_nowait(value.upper())
        self._reply(msg, addr, 200, to_tag=call.local_tag)

    # ------------------------------------------------------- our requests ----

    async def _send_bye(self, call: SipCall, *, wait_s: float = TIMEOUT_64T1) -> int | None:
        """BYE as a UAC non-INVITE transaction (timer E retransmissions, timer F)."""
        if call.state == "terminated" and call.end_reason == "caller_hangup":
            return None
        call.state = "terminated"
        req, branch = call.bye(self._hostport(), self.config.user_agent)
        data = req.encode()
        try:
            dest = call.next_hop()
        except SipParseError:
            return None
        fut: asyncio.Future[SipMessage] = asyncio.get_running_loop().create_future()
        self._client[branch] = fut
        interval = T1
        deadline = time.monotonic() + wait_s
        try:
            while time.monotonic() < deadline:
                self._send(data, dest)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(interval, max(0.01, deadline - time.monotonic()))):
                        res = await asyncio.shield(fut)
                        return res.status
                interval = min(interval * 2, T2)
            return None
        finally:
            self._client.pop(branch, None)

    def _response(self, msg: SipMessage) -> None:
        fut = self._client.get(msg.branch)
        if fut is not None and not fut.done() and (msg.status or 0) >= 200:
            fut.set_result(msg)
