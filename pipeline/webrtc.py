"""Browser callers over WebRTC (pipecat's SmallWebRTC transport, aiortc underneath).

A caller's offer names a line (a WebRTC link name the owner registered); the line
resolves the owner, the peer connection is answered, and once it is connected the call
runs in the same VoiceCall as every other transport (channel ``webrtc``). The page
gets the call's transcript over the WebRTC data channel, so a caller only ever sees
their own call: nothing is addressable by id from outside the connection.

Trickle ICE: candidates arrive by ``add_candidates(pc_id, ...)``; the ``pc_id`` is a
random 128-bit handle returned only to the caller that made the offer.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from presets.models import normalize_line
from presets.owners import OwnerStore

from . import metrics
from .voice import VoiceCall, VoiceResources, open_voice_call

log = logging.getLogger(__name__)

OUT_SAMPLE_RATE = 24000  # TTS rate into the Opus encoder (which runs at 48 kHz)
CONNECT_TIMEOUT_S = 10.0  # an answered offer that never connects frees its slot after this
MAX_CALLS_PER_ADDRESS = 3
_SDP_LINE = re.compile(r"^[a-z]=[^\x00]*$")
_SDP_REQUIRED = ("o=", "s=", "a=ice-ufrag:", "a=ice-pwd:", "a=fingerprint:")
TRANSCRIPT_POLL_S = 0.2
WEBRTC_LINE_KINDS = ("webrtc",)


class WebRTCError(Exception):
    """An offer or candidate the API refuses. ``status``: 400 bad SDP, 404 unknown
    line or connection, 429 too many calls from one address, 503 at capacity (both retryable)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    @property
    def retryable(self) -> bool:
        return self.status in (429, 503)


@dataclass(frozen=True)
class Candidate:
    candidate: str
    sdp_mid: str | None
    sdp_mline_index: int | None


def set_host_addresses(hosts: list[str]) -> None:
    """Limit the ICE host candidates aiortc gathers (process-wide). aioice never offers
    127.0.0.1 by itself; a same-machine try-out or a loopback test needs it."""
    import aioice.ice

    chosen = list(hosts)

    def host_addresses(use_ipv4: bool = True, use_ipv6: bool = False) -> list[str]:
        return list(chosen)

    aioice.ice.get_host_addresses = host_addresses


def check_offer(sdp: str) -> None:
    """Refuse an offer that cannot become a call before it takes a slot: SDP lines
    (``x=value``), version 0, ICE credentials, a DTLS fingerprint, an audio section with Opus."""
    lines = [line for line in sdp.replace("\r\n", "\n").split("\n") if line]
    problem = None
    if not lines or lines[0].strip() != "v=0":
        problem = "an SDP offer starts with v=0"
    elif any(not _SDP_LINE.match(line) for line in lines):
        problem = "every SDP line is <letter>=<value>"
    elif not any(line.startswith("m=audio ") for line in lines):
        problem = "the offer has no audio section"
    elif not any(line.lower().startswith("a=rtpmap:") and "opus/48000" in line.lower() for line in lines):
        problem = "the offer does not offer Opus audio"
    else:
        missing = [key for key in _SDP_REQUIRED if not any(line.startswith(key) for line in lines)]
        if missing:
            problem = f"the offer lacks {missing[0].rstrip(':=')}"
    if problem is not None:
        metrics.CALLS.labels(transport="webrtc", outcome="bad_sdp").inc()
        raise WebRTCError(400, "bad_request", f"sdp: {problem}")


class WebRTCCalls:
    """The process's WebRTC calls: offers, trickle ICE, running calls, shutdown."""

    def __init__(
        self,
        voice: VoiceResources,
        owners: OwnerStore,
        *,
        ice_servers: list[Any] | None = None,
        max_calls: int = 16,
        max_calls_per_address: int = MAX_CALLS_PER_ADDRESS,
    ) -> None:
        self.voice = dataclasses.replace(
            voice, options=dataclasses.replace(voice.options, out_sample_rate=OUT_SAMPLE_RATE)
        )
        self.owners = owners
        self.ice_servers = ice_servers or []
        self.max_calls = max_calls
        self._conns: dict[str, Any] = {}  # pc_id -> SmallWebRTCConnection
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.max_calls_per_address = max_calls_per_address
        self._sources: dict[str, str] = {}  # pc_id -> the caller's address

    @property
    def active(self) -> int:
        return len(self._tasks)

    async def resolve(self, raw_line: str) -> tuple[str, str] | None:
        """(owner_id, line) for a registered WebRTC link name, else None."""
        try:
            line, kind = normalize_line(raw_line)
        except ValueError:
            return None
        if kind not in WEBRTC_LINE_KINDS:
            return None
        owner_id = await self.owners.owner_for_line(line)
        if owner_id is None:
            return None
        for registered in await self.owners.list_lines(owner_id):
            if registered.line == line and registered.kind in WEBRTC_LINE_KINDS:
                return owner_id, line
        return None

    async def offer(
        self,
        *,
        sdp: str,
        sdp_type: str,
        owner_id: str,
        line: str,
        pc_id: str | None = None,
        restart: bool = False,
        source: str = "",
    ) -> dict[str, str]:
        """Answer an offer: a new call, or a renegotiation of the caller's own connection.
        ``source`` is the caller's address: at most ``max_calls_per_address`` calls each."""
        from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection

        if sdp_type != "offer":
            raise WebRTCError(400, "bad_request", "type must be 'offer'")
        if pc_id:
            conn = self._conns.get(pc_id)
            if conn is None:
                raise WebRTCError(404, "not_found", "no such connection")
            check_offer(sdp)
            await self._guard_sdp(conn.renegotiate(sdp=sdp, type=sdp_type, restart_pc=restart))
            return dict(conn.get_answer())
        if self.active >= self.max_calls or self.voice.slots.full:
            metrics.CALLS.labels(transport="webrtc", outcome="busy").inc()
            raise WebRTCError(503, "unavailable", "too many calls in progress")
        check_offer(sdp)  # before a slot is taken
        if Counter(self._sources.values())[source] >= self.max_calls_per_address:
            metrics.CALLS.labels(transport="webrtc", outcome="busy_source").inc()
            raise WebRTCError(429, "rate_limited", "too many calls in progress from this address")
        conn = SmallWebRTCConnection(ice_servers=self.ice_servers, connection_timeout_secs=int(CONNECT_TIMEOUT_S))
        await self._guard_sdp(conn.initialize(sdp=sdp, type=sdp_type))
        answer = conn.get_answer()
        if answer is None:
            raise WebRTCError(400, "bad_request", "the offer could not be answered")
        self._conns[conn.pc_id] = conn
        task = asyncio.get_running_loop().create_task(self._run(conn, owner_id, line))
        self._tasks[conn.pc_id] = task
        pc = str(conn.pc_id)
        self._sources[pc] = source
        task.add_done_callback(lambda _t: (self._tasks.pop(pc, None), self._sources.pop(pc, None)))
        return dict(answer)

    @staticmethod
    async def _guard_sdp(step: Any) -> None:
        try:
            async with asyncio.timeout(10):
                await step
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise WebRTCError(400, "bad_request", "the SDP offer is malformed or unsupported") from exc

    async def add_candidates(self, pc_id: str, candidates: list[Candidate]) -> None:
        from aiortc.sdp import candidate_from_sdp

        conn = self._conns.get(pc_id)
        if conn is None:
            raise WebRTCError(404, "not_found", "no such connection")
        for c in candidates:
            if not c.candidate:
                await conn.add_ice_candidate(None)  # end of candidates
                continue
            try:
                cand = candidate_from_sdp(c.candidate.removeprefix("candidate:"))
            except (ValueError, IndexError) as exc:
                raise WebRTCError(400, "bad_request", "malformed ICE candidate") from exc
            cand.sdpMid = c.sdp_mid
            cand.sdpMLineIndex = c.sdp_mline_index
            await conn.add_ice_candidate(cand)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for conn in list(self._conns.values()):
            with contextlib.suppress(Exception):
                await conn.disconnect()
        self._conns.clear()

    # ----------------------------------------------------------- the call ----

    async def _run(self, conn: Any, owner_id: str, line: str) -> None:
        try:
            if not await _connected(conn, CONNECT_TIMEOUT_S):
                metrics.CALLS.labels(transport="webrtc", outcome="no_connect").inc()
                return
            slot = self.voice.slots.take("webrtc")
            if slot is None:
                return
            try:
                call = await open_voice_call(
                    self.voice, owner_id=owner_id, line=line, channel="webrtc", transport_name="webrtc"
                )
                await self._talk(conn, call, slot.release)
            finally:
                slot.release()
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.ERRORS.labels(component="webrtc").inc()
            log.exception("webrtc call failed")
        finally:
            self._conns.pop(conn.pc_id, None)
            with contextlib.suppress(Exception):
                await conn.disconnect()

    async def _talk(self, conn: Any, call: VoiceCall, media_ended: Callable[[], None]) -> None:
        from pipecat.transports.base_transport import TransportParams
        from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

        transport = SmallWebRTCTransport(
            webrtc_connection=conn,
            params=TransportParams(audio_in_enabled=True, audio_out_enabled=True, audio_out_end_silence_secs=1),
        )
        feed = TranscriptFeed(conn, call)
        task = asyncio.get_running_loop().create_task(feed.run())
        try:
            record = await call.run(transport, on_media_end=media_ended)  # the slot is freed at hang-up
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        feed.flush()
        conn.send_app_message({"type": "ended", "reason": record.end_reason or "ended"})
        await asyncio.sleep(0.2)  # let the data channel carry it before the connection closes


async def _connected(conn: Any, timeout_s: float) -> bool:
    """Until ICE and DTLS are up (the pipeline is built only for callers who got through)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while asyncio.get_running_loop().time() < deadline:
        state = conn.pc.connectionState
        if state == "connected":
            return True
        if state in ("failed", "closed"):
            return False
        await asyncio.sleep(0.05)
    return False


class TranscriptFeed:
    """The live transcript over the data channel, polled from the call's own record
    (greeting first): role, text and turn only, nothing about the owner."""

    def __init__(self, conn: Any, call: VoiceCall) -> None:
        self.conn = conn
        self.call = call
        self.sent = 0

    def flush(self) -> None:
        entries = self.call.session.record.transcript
        for entry in entries[self.sent :]:
            self.conn.send_app_message(
                {"type": "transcript", "role": entry.role, "text": entry.text, "turn": entry.turn}
            )
        self.sent = len(entries)

    async def run(self) -> None:
        self.conn.send_app_message({"type": "call", "state": "connected", "lang": self.call.session.state.lang})
        while True:
            self.flush()
            await asyncio.sleep(TRANSCRIPT_POLL_S)
