"""SIP slots and reflection (issue 15, items 6 and 10): INVITEs never acknowledged give
their slot back within seconds, one source address holds a bounded number of calls, a
full instance answers 503 with Retry-After, and RTP goes only to the caller's own
address (an SDP naming someone else gets nothing until the caller's RTP arrives)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from pipeline.sip import SipConfig, SipServer, rtp
from pipeline.sip.invite import ACK_WAIT_S

from .test_sip_protocol import LoopThread, StubHandler, Uac


@pytest.fixture
def sip_server() -> Iterator[tuple[SipServer, StubHandler]]:
    loop = LoopThread()
    handler = StubHandler()
    server = SipServer(SipConfig(host="127.0.0.1", port=0, max_calls=3, max_calls_per_source=2), handler)
    loop.run(server.start())
    try:
        yield server, handler
    finally:
        loop.run(server.close())
        loop.stop()


def _drain(uac: Uac, seconds: float) -> tuple[int, int]:
    """(packets, bytes) the server sent this UAC's signalling socket within ``seconds``."""
    packets = size = 0
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        uac.sock.settimeout(left)
        try:
            data, _ = uac.sock.recvfrom(65535)
        except (TimeoutError, OSError):
            break
        packets += 1
        size += len(data)
    return packets, size


def test_unacknowledged_invites_free_their_slots_fast(sip_server: tuple[SipServer, StubHandler]) -> None:
    server, _ = sip_server
    junk = [Uac(server.port), Uac(server.port)]
    try:
        sent = 0
        for uac in junk:
            uac.invite()  # ... and never an ACK
            sent += len(uac.offer()) + 400
        received = [_drain(uac, ACK_WAIT_S + 2.0) for uac in junk]
        assert len(server.calls) == 0  # both dialogs expired, their RTP ports closed
        packets = max(p for p, _ in received)
        assert packets <= 7, received  # 100, 200, 3 resends, one BYE: no long retransmission tail
    finally:
        for uac in junk:
            uac.close()
    real = Uac(server.port)
    try:
        real.invite()
        real.answered()
        real.ack()
    finally:
        real.close()


def test_calls_per_source_and_instance_capacity(sip_server: tuple[SipServer, StubHandler]) -> None:
    server, handler = sip_server
    handler.talk_s = 4.0
    uacs = [Uac(server.port) for _ in range(3)]
    try:
        for uac in uacs[:2]:
            uac.invite()
            uac.answered()
            uac.ack()
        uacs[2].invite()
        assert uacs[2].expect(486).status == 486  # this address already has two calls
        assert server.counters["busy_source"] == 1
    finally:
        for uac in uacs:
            uac.close()


def test_rtp_is_not_reflected_to_an_address_the_caller_names(sip_server: tuple[SipServer, StubHandler]) -> None:
    server, handler = sip_server
    handler.talk_s = 3.0
    victim = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    victim.bind(("127.0.0.2", 0))  # another loopback address: "someone else"
    victim.settimeout(1.5)
    uac = Uac(server.port)
    try:
        offer = (
            uac.offer()
            .replace("c=IN IP4 127.0.0.1", "c=IN IP4 127.0.0.2")
            .replace(f"m=audio {uac.rtp_port}", f"m=audio {victim.getsockname()[1]}")
        )
        uac.invite(offer=offer)
        _, plan = uac.answered()
        uac.ack()
        with pytest.raises(TimeoutError):
            victim.recvfrom(2048)  # nothing for the address the SDP named
        # The caller's own RTP (from its signalling address) shows where it listens.
        packet = rtp.RtpPacket(0, 1, 160, 1234, rtp.SILENCE["PCMU"], True)
        uac.rtp.sendto(packet.encode(), (plan.remote_host, plan.remote_port))
        got = rtp.parse_packet(uac.rtp.recv(2048))
        assert got.payload_type in (0, 8)
    finally:
        uac.close()
        victim.close()


def test_voice_budget_full_is_503_with_retry_after(sip_server: tuple[SipServer, StubHandler]) -> None:
    """The handler says the instance's voice-call budget is spent: 503 + Retry-After."""
    server, handler = sip_server
    original = handler.admit

    async def full(call: object) -> int | None:
        return 503

    handler.admit = full  # type: ignore[method-assign]
    uac = Uac(server.port)
    try:
        uac.invite()
        busy = uac.expect(503)
        assert busy.get("Retry-After") == "30"
    finally:
        handler.admit = original  # type: ignore[method-assign]
        uac.close()
