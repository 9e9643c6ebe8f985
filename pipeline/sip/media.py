"""One call's RTP endpoint: G.711 in (decoded, queued), RFC 4733 events in, and G.711
out on a 20 ms clock (sequence +1, timestamp +160 per packet; silence when there is
nothing to say, so the peer's jitter buffer and NAT bindings stay alive)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import socket
from dataclasses import dataclass, field
from typing import Any

from .. import metrics
from . import rtp
from .sdp import AudioPlan

log = logging.getLogger(__name__)

MAX_QUEUED_PACKETS = 250  # 5 s of caller audio; older packets are dropped past this
HIGH_WATER_S = 0.1  # writers wait while more than this much audio is queued to send


@dataclass
class RtpStats:
    packets_in: int = 0
    packets_out: int = 0
    dropped_in: int = 0  # malformed, from a stranger, or over the queue limit
    late_ticks: int = 0  # sender ticks more than one packet late
    withheld: int = 0  # packets not sent: no RTP yet from the caller to learn its address
    events: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "packets_in": self.packets_in,
            "packets_out": self.packets_out,
            "dropped_in": self.dropped_in,
            "late_ticks": self.late_ticks,
            "withheld": self.withheld,
            "dtmf": "".join(self.events),
        }


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, session: RtpSession) -> None:
        self.session = session

    def datagram_received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        self.session._received(data, addr)

    def error_received(self, exc: Exception) -> None:  # ICMP unreachable etc.: the peer may come back
        log.debug("rtp socket error", extra={"error": repr(exc)})


class RtpSession:
    """Bind with :meth:`open`, agree on media with :meth:`start`, then read ``audio``
    (8 kHz PCM16 chunks) and ``events`` (DTMF keys) and :meth:`write` PCM to send."""

    def __init__(self, host: str, *, port_range: tuple[int, int] | None = None) -> None:
        self.host = host
        self.port_range = port_range
        self.port = 0
        self.plan: AudioPlan | None = None
        self.stats = RtpStats()
        self.audio: asyncio.Queue[bytes] = asyncio.Queue()
        self.events: asyncio.Queue[str] = asyncio.Queue()
        self._transport: asyncio.DatagramTransport | None = None
        self._allowed_hosts: set[str] = set()
        self._signaling_host: str | None = None
        self._target: tuple[str, int] | None = None  # where our RTP goes
        self._out = bytearray()
        self._tick = asyncio.Event()
        self._sender: asyncio.Task[None] | None = None
        self._ssrc = secrets.randbits(32)
        self._seq = secrets.randbits(16)
        self._ts = secrets.randbits(32)
        self._last_event_ts: int | None = None
        self._codecs: dict[int, str] = {}
        self.sending = True

    # ------------------------------------------------------------ set-up ----

    async def open(self) -> int:
        loop = asyncio.get_running_loop()
        for port in self._candidate_ports():
            try:
                transport, _ = await loop.create_datagram_endpoint(
                    lambda: _Protocol(self), local_addr=(self.host, port), family=_family(self.host)
                )
            except OSError:
                continue
            self._transport = transport
            self.port = int(transport.get_extra_info("sockname")[1])
            return self.port
        raise OSError("no free RTP port")

    def _candidate_ports(self) -> list[int]:
        if self.port_range is None:
            return [0]
        lo, hi = self.port_range
        evens = list(range(lo + lo % 2, hi + 1, 2))
        random.shuffle(evens)  # start anywhere; avoid reusing a just-closed port first
        return evens[:64]

    def start(self, plan: AudioPlan, *, signaling_host: str | None = None) -> None:
        """Media agreed: accept packets from the peer and start the 20 ms sender."""
        self.plan = plan
        self._codecs = {plan.payload_type: plan.codec, 0: "PCMU", 8: "PCMA"}
        self._allowed_hosts = {plan.remote_host} | ({signaling_host} if signaling_host else set())
        self._signaling_host = signaling_host
        self._aim(plan)
        self.sending = plan.direction in ("sendrecv", "recvonly")
        if self._sender is None:
            self._sender = asyncio.get_running_loop().create_task(self._send_loop())

    def update(self, plan: AudioPlan) -> None:
        """A re-INVITE moved or paused the media."""
        self.plan = plan
        self._codecs[plan.payload_type] = plan.codec
        self._allowed_hosts.add(plan.remote_host)
        self._aim(plan)
        self.sending = plan.direction in ("sendrecv", "recvonly")

    def _aim(self, plan: AudioPlan) -> None:
        """Send to the SDP's address only when it is the caller's own (the signalling
        source), else wait for the caller's first RTP packet and answer where it came
        from (symmetric RTP): an SDP naming someone else never turns us into a reflector."""
        own = self._signaling_host is None or plan.remote_host == self._signaling_host
        self._target = (plan.remote_host, plan.remote_port) if own else None

    async def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
            self._sender = None
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        self._tick.set()

    # ----------------------------------------------------------- receive ----

    def _received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        plan = self.plan
        if plan is None or addr[0] not in self._allowed_hosts:
            self.stats.dropped_in += 1
            return
        try:
            packet = rtp.parse_packet(data)
        except rtp.RtpError:
            self.stats.dropped_in += 1
            metrics.DROPPED_FRAMES.labels(transport="sip", reason="malformed").inc()
            return
        self.stats.packets_in += 1
        if self._target is None:
            self._target = (str(addr[0]), int(addr[1]))  # latched: the caller's real media address
        if plan.event_pt is not None and packet.payload_type == plan.event_pt:
            self._event(packet)
            return
        codec = self._codecs.get(packet.payload_type)
        if codec is None:
            return  # comfort noise or an unknown format: nothing to hear
        if self.audio.qsize() >= MAX_QUEUED_PACKETS:
            self.stats.dropped_in += 1
            with contextlib.suppress(asyncio.QueueEmpty):
                self.audio.get_nowait()
        self.audio.put_nowait(rtp.decode(codec, packet.payload))

    def _event(self, packet: rtp.RtpPacket) -> None:
        try:
            event = rtp.parse_event(packet.payload)
        except rtp.RtpError:
            self.stats.dropped_in += 1
            return
        # All packets of one key press (and its end retransmissions) share a timestamp.
        if packet.timestamp == self._last_event_ts or not event.key:
            return
        self._last_event_ts = packet.timestamp
        self.stats.events.append(event.key)
        self.events.put_nowait(event.key)

    # -------------------------------------------------------------- send ----

    @property
    def buffered_s(self) -> float:
        return len(self._out) / 2 / 8000

    async def write(self, pcm8k: bytes) -> None:
        """Queue 8 kHz PCM16 to send; waits while more than 100 ms is already queued
        (so the pipeline runs at the line's pace and barge-in can drop what is left)."""
        self._out.extend(pcm8k)
        while self.buffered_s > HIGH_WATER_S and self._sender is not None and self._transport is not None:
            self._tick.clear()
            await self._tick.wait()

    def clear(self) -> None:
        self._out.clear()

    async def drain(self, timeout_s: float) -> None:
        """Until everything queued has been sent (the goodbye, before BYE)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while self._out and self._sender is not None:
                    self._tick.clear()
                    await self._tick.wait()

    async def _send_loop(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        marker = True
        chunk = rtp.SAMPLES_PER_PACKET * 2
        while True:
            plan = self.plan
            assert plan is not None
            if self._out:
                pcm = bytes(self._out[:chunk]).ljust(chunk, b"\x00")
                del self._out[:chunk]
                payload = rtp.encode(plan.codec, pcm)
            else:
                payload = rtp.SILENCE[plan.codec]
            target = self._target
            if self.sending and self._transport is not None and target is None:
                self.stats.withheld += 1
            elif self.sending and self._transport is not None and target is not None:
                packet = rtp.RtpPacket(plan.payload_type, self._seq, self._ts, self._ssrc, payload, marker)
                self._transport.sendto(packet.encode(), target)
                self.stats.packets_out += 1
                marker = False
            self._seq = (self._seq + 1) & 0xFFFF
            self._ts = (self._ts + rtp.SAMPLES_PER_PACKET) & 0xFFFFFFFF
            self._tick.set()
            due += rtp.PACKET_S
            delay = due - loop.time()
            if delay < -rtp.PACKET_S:
                self.stats.late_ticks += 1
                if delay < -0.2:  # stalled: resynchronise rather than burst
                    due = loop.time()
            await asyncio.sleep(max(0.0, delay))


def _family(host: str) -> int:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
