"""Take-over of a live voice call: the owner's words enter the call's pipeline.

The control queues an :class:`OwnerSpeech` frame into the call's pipeline; the call's
CallProcessor (:mod:`pipeline.voice`) then cancels the assistant's reply in progress,
drops its sentences not yet started (``DropUnspoken``; the sentence being spoken plays to its end:
the cut falls on a sentence boundary), speaks the owner's words (not interruptible) and
records them with role ``owner``; with ``end`` it hangs up after them.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pipecat.frames.frames import DataFrame

from .session import CallSession
from .takeover import OWNER_CLOSE, TakeoverError

if TYPE_CHECKING:
    from .voice import VoiceCall


@dataclass
class OwnerSpeech(DataFrame):
    """The owner's words, to be spoken next (and the call ended after them if ``end``)."""

    text: str
    end: bool = False
    queued_at: float = 0.0  # perf_counter() when the owner sent them


class VoiceControl:
    """What :class:`pipeline.takeover.LiveCalls` holds for one live voice call."""

    def __init__(self, call: VoiceCall) -> None:
        self.call = call

    @property
    def session(self) -> CallSession:
        return self.call.session

    async def _queue(self, text: str, *, end: bool) -> None:
        worker = self.call.worker
        if worker is None:
            raise TakeoverError("not_live", f"call {self.session.call_id} is not connected yet")
        await worker.queue_frame(OwnerSpeech(text=text, end=end, queued_at=time.perf_counter()))

    async def owner_say(self, text: str) -> None:
        await self._queue(text, end=False)

    async def owner_end(self, text: str | None) -> None:
        lang = self.session.state.lang
        await self._queue(text or OWNER_CLOSE.get(lang, OWNER_CLOSE["en"]), end=True)

    async def owner_join(self, *, sdp: str, sdp_type: str, ice_servers: list[Any]) -> dict[str, str]:
        """Answer the owner's WebRTC offer; once connected the owner talks to the caller."""
        from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection

        from .owner_join import CONNECT_TIMEOUT_S, OwnerJoined, OwnerLeg

        worker = self.call.worker
        if worker is None:
            raise TakeoverError("not_live", f"call {self.session.call_id} is not connected yet")
        if self.call.owner_leg is not None:
            raise TakeoverError("joined", f"the owner is already in call {self.session.call_id}")
        if sdp_type != "offer":
            raise TakeoverError("bad_sdp", "type must be 'offer'")
        conn = SmallWebRTCConnection(ice_servers=ice_servers, connection_timeout_secs=int(CONNECT_TIMEOUT_S))
        try:
            async with asyncio.timeout(10):
                await conn.initialize(sdp=sdp, type=sdp_type)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise TakeoverError("bad_sdp", "the SDP offer is malformed or unsupported") from exc
        answer = conn.get_answer()
        if answer is None:
            raise TakeoverError("bad_sdp", "the offer could not be answered")
        leg = OwnerLeg(self.call, conn)
        self.call.owner_leg = leg
        await worker.queue_frame(OwnerJoined())
        leg.start()
        self.session.note_stat("owner_joins", int(self.session.record.stats.get("owner_joins", 0)) + 1)
        return {**dict(answer), "pc_id": leg.pc_id}

    async def owner_leave(self) -> None:
        leg = self.call.owner_leg
        if leg is None:
            raise TakeoverError("not_joined", f"the owner is not in call {self.session.call_id}")
        self.call.owner_leg = None
        await leg.leave()
