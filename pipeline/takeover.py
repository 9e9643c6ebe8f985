"""Take-over: the owner speaks into a live call (``say``), ends it (``end``), or joins it
with their own voice (``join`` / ``leave``), on whichever instance carries it.

:class:`LiveCalls` is the one registry of calls that can be taken over in this process:
voice calls (Twilio / Telnyx / Plivo WebSocket, WebRTC, SIP) register while their
pipeline runs; a live voice call exists only in the memory of the instance that carries
its audio. Text calls keep their state in Redis, so any instance can take one over: the
owner's words are recorded at once and handed to the caller with the next reply
(``owner_said`` in the turn's response), kept in ``ca:call:{id}:owner`` until then.

The owner's words are the owner's decision: spoken as written (not rewritten by the
realizer nor replaced by the safety guard), and recorded with role ``owner``.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Protocol

from redis.asyncio import Redis

from .records import CallRecord
from .session import CallServices, CallSession
from .takeover_relay import TakeoverRelay
from .text_calls import TextCallError, open_record, text_call

log = logging.getLogger(__name__)

MAX_OWNER_TEXT = 500

OWNER_CLOSE = {
    "en": "Sorry, I have to end the call now. Thank you for calling, goodbye.",
    "zh": "不好意思，现在要先挂断了，感谢您的来电，再见。",
}


class TakeoverError(TextCallError):
    """The call cannot be taken over; ``code`` says why (``not_live``, ``ended``, or a
    :class:`TextCallError` code for a text call)."""


class LiveControl(Protocol):
    """What a live (voice) call offers the owner."""

    session: CallSession

    async def owner_say(self, text: str) -> None: ...

    async def owner_end(self, text: str | None) -> None: ...

    async def owner_join(self, *, sdp: str, sdp_type: str, ice_servers: list[Any]) -> dict[str, str]: ...

    async def owner_leave(self) -> None: ...


def _outbox_key(call_id: str) -> str:
    return f"ca:call:{call_id}:owner"


class LiveCalls:
    """The calls of this process that the owner can speak into."""

    def __init__(self, services: CallServices) -> None:
        self.services = services
        self._voice: dict[str, LiveControl] = {}
        self.ice_servers: list[Any] = []  # for the owner's WebRTC leg (join)
        self.relay: TakeoverRelay | None = None  # say/end for calls carried by another instance

    @property
    def redis(self) -> Redis:
        return self.services.redis

    async def register(self, control: LiveControl) -> None:
        self._voice[control.session.call_id] = control
        if self.relay is not None:
            try:
                await self.relay.announce(control.session.call_id)
            except Exception:
                log.warning("could not announce a live call: take-over only through this instance")

    async def unregister(self, call_id: str) -> None:
        self._voice.pop(call_id, None)
        if self.relay is not None:
            with contextlib.suppress(Exception):
                await self.relay.forget(call_id)

    async def relayed(self, message: dict[str, Any]) -> None:
        """A take-over relayed from another instance for a call carried here; a request
        with ``reply_to`` (``join``, ``leave``) gets its answer or error back."""
        reply_to = message.get("reply_to")
        try:
            answer: dict[str, Any] = await self._apply(message)
        except TakeoverError as exc:
            answer = {"error": exc.code, "message": str(exc)}
        except Exception:
            log.exception("relayed take-over failed", extra={"op": message.get("op")})
            answer = {"error": "failed", "message": "the instance carrying the call could not do it"}
        if isinstance(reply_to, str) and self.relay is not None:
            await self.relay.reply(reply_to, answer)

    async def _apply(self, message: dict[str, Any]) -> dict[str, Any]:
        call_id, owner_id = str(message.get("call_id")), str(message.get("owner_id"))
        control = self._live(owner_id, call_id)
        if control is None:
            raise TakeoverError("not_live", f"call {call_id} is not carried here any more")
        op, text = message.get("op"), message.get("text")
        if op == "say" and isinstance(text, str):
            await control.owner_say(text)
        elif op == "end":
            await control.owner_end(text if isinstance(text, str) else None)
        elif op == "join":
            sdp, sdp_type = message.get("sdp"), message.get("type")
            if not isinstance(sdp, str) or not isinstance(sdp_type, str):
                raise TakeoverError("bad_sdp", "the SDP offer is malformed or unsupported")
            return await control.owner_join(sdp=sdp, sdp_type=sdp_type, ice_servers=self.ice_servers)
        elif op == "leave":
            await control.owner_leave()
        return {}

    def voice(self, call_id: str) -> LiveControl | None:
        return self._voice.get(call_id)

    def __len__(self) -> int:
        return len(self._voice)

    # --------------------------------------------------------------- say ----

    async def say(self, owner_id: str, call_id: str, text: str) -> str:
        """Speak ``text`` to the caller next; returns the channel it went to."""
        control = self._live(owner_id, call_id)
        if control is not None:
            await control.owner_say(text)
            return control.session.record.channel
        relayed = await self._relay_unless_text(owner_id, call_id, op="say", text=text)
        if relayed is not None:
            return relayed  # relayed to the instance carrying the call
        async with text_call(self.services, owner_id, call_id) as session:
            await self._to_text_caller(session, text, via="say")
        return "text"

    async def end(self, owner_id: str, call_id: str, text: str | None) -> str:
        """Close the call politely (with ``text`` if given), then hang up."""
        control = self._live(owner_id, call_id)
        if control is not None:
            await control.owner_end(text)
            return control.session.record.channel
        relayed = await self._relay_unless_text(owner_id, call_id, op="end", text=text)
        if relayed is not None:
            return relayed
        async with text_call(self.services, owner_id, call_id) as session:
            words = text or OWNER_CLOSE.get(session.state.lang, OWNER_CLOSE["en"])
            await self._to_text_caller(session, words, via="end")
            await session.hangup("owner_ended", outcome="owner_ended")
        return "text"

    async def join(self, owner_id: str, call_id: str, *, sdp: str, sdp_type: str) -> dict[str, str]:
        """The owner's own voice into a live voice call (WebRTC offer -> answer), on
        whichever instance carries the call (relayed there, answer relayed back)."""
        control = self._live(owner_id, call_id)
        if control is not None:
            return await control.owner_join(sdp=sdp, sdp_type=sdp_type, ice_servers=self.ice_servers)
        answer = await self._relay_request(owner_id, call_id, {"op": "join", "sdp": sdp, "type": sdp_type})
        return {str(k): str(v) for k, v in answer.items()}

    async def leave(self, owner_id: str, call_id: str) -> None:
        """The owner hands the call back to the assistant."""
        control = self._live(owner_id, call_id)
        if control is not None:
            await control.owner_leave()
            return
        await self._relay_request(owner_id, call_id, {"op": "leave"})

    def _live(self, owner_id: str, call_id: str) -> LiveControl | None:
        """This owner's live voice call in this process, if it is one."""
        control = self._voice.get(call_id)
        if control is None or control.session.record.owner_id != owner_id:
            return None
        if control.session.ended:
            raise TakeoverError("ended", f"call {call_id} has ended")
        return control

    async def _to_text_caller(self, session: CallSession, words: str, *, via: str) -> None:
        await session.owner_said(words, via=via)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(_outbox_key(session.call_id), words)
            pipe.expire(_outbox_key(session.call_id), 3600)
            await pipe.execute()

    async def _relay_request(self, owner_id: str, call_id: str, message: dict[str, Any]) -> dict[str, Any]:
        """A voice call carried by another instance: ``message`` there, its answer back."""
        record = await self._open_record(owner_id, call_id)
        if record.channel == "text":
            raise TakeoverError("not_voice", f"call {call_id} is a text call: there is no audio to join")
        answer = None
        if self.relay is not None:
            answer = await self.relay.request(call_id, {**message, "owner_id": owner_id})
        if answer is None:
            raise TakeoverError("not_live", f"call {call_id} is a {record.channel} call no instance carries now")
        if "error" in answer:
            raise TakeoverError(str(answer["error"]), str(answer.get("message", "")))
        return answer

    async def take_outbox(self, call_id: str) -> list[str]:
        """The owner's words not yet shown to a text caller (and forget them)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lrange(_outbox_key(call_id), 0, -1)
            pipe.delete(_outbox_key(call_id))
            words, _ = await pipe.execute()
        return [str(w) for w in words]

    async def _relay_unless_text(self, owner_id: str, call_id: str, *, op: str, text: str | None) -> str | None:
        """A voice call carried by another instance: relay ``op`` there and return its
        channel. None for a text call (taken over here)."""
        record = await self._open_record(owner_id, call_id)
        if record.channel == "text":
            return None
        message = {"op": op, "owner_id": owner_id, "text": text}
        if self.relay is not None and await self.relay.send(call_id, message):
            return str(record.channel)
        raise TakeoverError("not_live", f"call {call_id} is a {record.channel} call no instance carries now")

    async def _open_record(self, owner_id: str, call_id: str) -> CallRecord:
        try:
            return await open_record(self.services.calls, owner_id, call_id)
        except TextCallError as exc:
            raise TakeoverError(exc.code, str(exc)) from exc
