"""SIP calls into the voice pipeline: the dialled user resolves the owner's line, the
call runs in the same VoiceCall (coordinator, safety guard, records) as every other
transport, with channel ``sip``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable

from presets.models import normalize_line
from presets.owners import OwnerStore

from .. import metrics
from ..records import CallRecord
from ..screening import sip_caller
from ..voice import VoiceResources, open_voice_call
from .dialog import SipCall
from .transport import LINE_RATE, RtpTransport

log = logging.getLogger(__name__)

SIP_LINE_KINDS = ("sip", "phone")


def sip_line_candidates(user: str | None, host: str | None = None) -> list[str]:
    """The lines a dialled SIP user may be, most specific first: ``user@host``,
    ``user``, then ``user`` read as a phone number."""
    out: list[str] = []
    if not user:
        return out
    for raw in (f"sip:{user}@{host}" if host else None, f"sip:{user}", user):
        if raw is None:
            continue
        try:
            value, _ = normalize_line(raw)
        except ValueError:
            continue
        if value not in out:
            out.append(value)
    return out


def line_candidates(call: SipCall) -> list[str]:
    """The Request-URI's user first, then the To header's (a proxy may have rewritten
    the Request-URI)."""
    out = sip_line_candidates(call.user, call.host)
    out += [c for c in sip_line_candidates(call.to_user, call.host) if c not in out]
    return out


async def resolve_line(owners: OwnerStore, candidates: list[str], kinds: tuple[str, ...]) -> tuple[str, str] | None:
    """(owner_id, line) of the first candidate registered with one of ``kinds``."""
    for line in candidates:
        owner_id = await owners.owner_for_line(line)
        if owner_id is None:
            continue
        for registered in await owners.list_lines(owner_id):
            if registered.line == line and registered.kind in kinds:
                return owner_id, line
    return None


class VoiceCallHandler:
    """The SIP server's call handler: admit by line, then run the voice call."""

    def __init__(self, voice: VoiceResources | None, owners: OwnerStore, *, instance: str) -> None:
        self.voice = (
            dataclasses.replace(voice, options=dataclasses.replace(voice.options, out_sample_rate=LINE_RATE))
            if voice is not None
            else None
        )
        self.owners = owners
        self.instance = instance

    async def admit(self, call: SipCall) -> int | None:
        if self.voice is None:
            metrics.CALLS.labels(transport="sip", outcome="voice_off").inc()
            return 503
        try:
            async with asyncio.timeout(2.0):
                resolved = await resolve_line(self.owners, line_candidates(call), SIP_LINE_KINDS)
        except Exception:
            metrics.ERRORS.labels(component="sip").inc()
            log.warning("line lookup failed", exc_info=True)
            return 503
        if resolved is None:
            metrics.CALLS.labels(transport="sip", outcome="unknown_line").inc()
            return 404
        if self.voice.slots.full:  # the instance's voice-call budget (503 + Retry-After)
            metrics.CALLS.labels(transport="sip", outcome="busy").inc()
            return 503
        call.context = resolved
        return None

    def accepting(self) -> bool:
        return self.voice is not None and not self.voice.slots.full

    async def run(self, call: SipCall) -> None:
        assert self.voice is not None and call.media is not None and call.plan is not None
        owner_id, line = call.context
        slot = self.voice.slots.take("sip")
        if slot is None:
            call.end_reason = "busy"
            return  # filled up between the INVITE and its ACK: hang up at once
        try:
            await self._talk(call, owner_id, line, slot.release)
        finally:
            slot.release()

    async def _talk(self, call: SipCall, owner_id: str, line: str, media_ended: Callable[[], None]) -> None:
        assert self.voice is not None and call.media is not None and call.plan is not None
        voice_call = await open_voice_call(
            self.voice, owner_id=owner_id, line=line, channel="sip", transport_name="sip",
            caller_number=sip_caller(call.invite.get("From")),
        )  # fmt: skip
        record = voice_call.session.record
        record.stats["sip"] = {"instance": self.instance, "codec": call.plan.codec, "call_id": call.call_id}
        transport = RtpTransport(call.media)

        async def watch_hangup() -> None:
            await call.hangup.wait()
            await transport.caller_hung_up()

        def last_facts(rec: CallRecord) -> None:
            rec.stats["sip"]["rtp"] = call.media.stats.as_dict() if call.media is not None else {}
            rec.stats["sip"]["end"] = call.end_reason or "assistant_closed"

        watcher = asyncio.get_running_loop().create_task(watch_hangup())
        try:
            # The slot is freed at the BYE (media_ended), before the post-call work.
            await voice_call.run(transport, on_finish=last_facts, on_media_end=media_ended)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
