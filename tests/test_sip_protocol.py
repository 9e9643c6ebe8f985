"""The SIP user agent server on its own (no voice models): messages, SDP, G.711, RTP
timing, RFC 4733 events, and the server's answers to a scripted UAC over real UDP on
127.0.0.1. The voice pipeline behind SIP is tested in test_sip.py."""

from __future__ import annotations

import asyncio
import itertools
import math
import socket
import struct
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from pipeline.sip import SipCall, SipConfig, SipServer, message, rtp, sdp

# ------------------------------------------------------------ pure parts ----


def test_parse_compact_folded_and_multi_via() -> None:
    raw = (
        b"INVITE sip:alex@127.0.0.1 SIP/2.0\r\n"
        b"v: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKa, SIP/2.0/UDP 10.0.0.2;branch=z9hG4bKb\r\n"
        b"f: <sip:c@x>;tag=1\r\nt: <sip:alex@127.0.0.1>\r\ni: abc\r\nCSeq: 7 INVITE\r\n"
        b"Subject: a long\r\n  folded subject\r\nl: 4\r\n\r\nbodyEXTRA"
    )
    msg = message.parse(raw)
    assert msg.method == "INVITE" and msg.call_id == "abc" and msg.cseq == (7, "INVITE")
    assert msg.get_all("Via")[1].endswith("branch=z9hG4bKb") and msg.branch == "z9hG4bKa"
    assert msg.get("Subject") == "a long folded subject" and msg.body == b"body"
    assert msg.from_tag == "1" and msg.to_tag is None


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"\x00\xffgarbage", 400),
        (b"INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n\r\n", 400),  # no From/To/...
        (b"OPTIONS sip:a@b SIP/3.0\r\n\r\n", 505),
        (b"INVITE sip:a@b SIP/2.0\r\nbad header line\r\n\r\n", 400),
        (b"BYE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:x@y>;tag=1\r\n"
         b"To: <sip:a@b>\r\nCall-ID: 1\r\nCSeq: 1 INVITE\r\n\r\n", 400),  # CSeq method mismatch
        (b"OPTIONS sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:x@y>;tag=1\r\n"
         b"To: <sip:a@b>\r\nCall-ID: 1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 99\r\n\r\nshort", 400),
    ],
)  # fmt: skip
def test_malformed_messages_raise_with_the_status_to_answer(raw: bytes, status: int) -> None:
    with pytest.raises(message.SipParseError) as err:
        message.parse(raw)
    assert err.value.status == status


def test_uri_parsing() -> None:
    uri = message.parse_uri("sip:+14155550100@pbx.example.com:5080;transport=udp")
    assert (uri.user, uri.host, uri.port, uri.params["transport"]) == ("+14155550100", "pbx.example.com", 5080, "udp")
    assert message.parse_uri("sip:[::1]:5060").host == "[::1]"
    with pytest.raises(message.SipParseError) as err:
        message.parse_uri("http://example.com")
    assert err.value.status == 416


OFFER = """v=0
o=- 1 1 IN IP4 10.0.0.5
s=-
c=IN IP4 10.0.0.5
t=0 0
m=audio 4000 RTP/AVP 8 0 96 101
a=rtpmap:96 opus/48000/2
a=rtpmap:101 telephone-event/8000
a=fmtp:101 0-15
m=video 4002 RTP/AVP 96
"""


def test_sdp_answer_keeps_offer_order_and_declines_video() -> None:
    offer = sdp.parse(OFFER)
    plan = sdp.negotiate(offer, "127.0.0.1")
    assert (plan.codec, plan.payload_type, plan.event_pt) == ("PCMA", 8, 101)
    assert (plan.remote_host, plan.remote_port) == ("10.0.0.5", 4000)
    answer = sdp.LocalDescription("127.0.0.1", 20000).answer(offer, plan)
    assert "m=audio 20000 RTP/AVP 8 101\r\n" in answer and "a=rtpmap:101 telephone-event/8000" in answer
    assert "m=video 0 RTP/AVP 96" in answer and "a=ptime:20" in answer
    with pytest.raises(sdp.SdpError):
        sdp.negotiate(sdp.parse(OFFER.replace("8 0 96 101", "96")), "127.0.0.1")
    with pytest.raises(sdp.SdpError):
        sdp.negotiate(sdp.parse(OFFER.replace("RTP/AVP 8", "RTP/SAVP 8")), "127.0.0.1")


def test_g711_known_values_and_round_trip() -> None:
    assert rtp.decode("PCMU", b"\xff\x7f\x00\x80") == struct.pack("<4h", 0, 0, -32124, 32124)
    assert rtp.decode("PCMA", b"\xd5\x55\x2a\xaa") == struct.pack("<4h", 8, -8, -32256, 32256)
    tone = (np.sin(np.arange(800) / 8000 * 2 * math.pi * 440) * 12000).astype("<i2").tobytes()
    for codec in ("PCMU", "PCMA"):
        back = np.frombuffer(rtp.decode(codec, rtp.encode(codec, tone)), "<i2").astype(float)
        err = np.abs(back - np.frombuffer(tone, "<i2")).mean()
        assert err < 200, (codec, err)  # G.711 keeps ~12 bits near this level


def test_rtp_packet_with_csrc_extension_and_padding() -> None:
    payload = b"\x01\x02\x03"
    data = (
        struct.pack("!BBHII", 0x80 | 0x20 | 0x10 | 1, 0x80 | 8, 7, 160, 42)
        + b"\x00\x00\x00\x09"  # one CSRC
        + struct.pack("!HH", 0xBEDE, 1) + b"\x00" * 4  # one-word extension
        + payload + b"\x00\x02"  # two bytes of padding
    )  # fmt: skip
    packet = rtp.parse_packet(data)
    assert (packet.payload_type, packet.sequence, packet.timestamp, packet.marker) == (8, 7, 160, True)
    assert packet.payload == payload
    with pytest.raises(rtp.RtpError):
        rtp.parse_packet(b"\x40" + data[1:])
    event = rtp.parse_event(rtp.event_payload("#", end=True, duration=800))
    assert (event.key, event.end, event.duration) == ("#", True, 800)


# ------------------------------------------------------- the server, live ----


@dataclass
class StubHandler:
    """Answers 'alice' and 'slow' (after 2 s); speaks a 440 Hz tone for ``talk_s``,
    then hangs up (unless the caller does first)."""

    talk_s: float = 1.0
    admitted: list[SipCall] = field(default_factory=list)
    dtmf: list[str] = field(default_factory=list)
    ended: list[str | None] = field(default_factory=list)
    received_pcm: bytearray = field(default_factory=bytearray)
    open_for_calls: bool = True  # False: full or draining

    def accepting(self) -> bool:
        return self.open_for_calls

    async def admit(self, call: SipCall) -> int | None:
        if call.user == "slow":
            await asyncio.sleep(2.0)
        if call.user not in ("alice", "slow"):
            return 404
        self.admitted.append(call)
        return None

    async def run(self, call: SipCall) -> None:
        assert call.media is not None
        media = call.media
        t = np.arange(int(8000 * self.talk_s)) / 8000

        async def speak() -> None:  # paced: write() waits while 100 ms is queued
            await media.write((np.sin(2 * math.pi * 440 * t) * 8000).astype("<i2").tobytes())

        async def collect() -> None:
            while True:
                self.received_pcm.extend(await media.audio.get())

        async def keys() -> None:
            while True:
                self.dtmf.append(await media.events.get())

        tasks = [asyncio.ensure_future(f()) for f in (speak, collect, keys)]
        try:
            async with asyncio.timeout(self.talk_s + 0.5):
                await call.hangup.wait()
        except TimeoutError:
            pass
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.ended.append(call.end_reason)


class LoopThread:
    """An asyncio loop in a thread, so the tests can use plain blocking sockets."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float = 10.0) -> Any:
        fut: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def sip() -> Iterator[tuple[SipServer, StubHandler]]:
    loop = LoopThread()
    handler = StubHandler()
    server = SipServer(SipConfig(host="127.0.0.1", port=0, max_calls=2), handler)
    loop.run(server.start())
    try:
        yield server, handler
    finally:
        loop.run(server.close())
        loop.stop()


class Uac:
    """A scripted SIP caller on 127.0.0.1 with its own RTP socket."""

    def __init__(self, server_port: int, user: str = "alice") -> None:
        self.server = ("127.0.0.1", server_port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(3)
        self.port = self.sock.getsockname()[1]
        self.rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rtp.bind(("127.0.0.1", 0))
        self.rtp.settimeout(2)
        self.rtp_port = self.rtp.getsockname()[1]
        self.user = user
        self.call_id = f"test-{time.monotonic_ns()}"
        self.tag = "uac1"
        self.branch = message.new_branch()
        self.to_tag: str | None = None

    def close(self) -> None:
        self.sock.close()
        self.rtp.close()

    def headers(self, method: str, cseq: int, branch: str | None = None, *, to_tag: bool = False) -> str:
        to = f"<sip:{self.user}@127.0.0.1>" + (f";tag={self.to_tag}" if to_tag and self.to_tag else "")
        return (
            f"Via: SIP/2.0/UDP 127.0.0.1:{self.port};branch={branch or self.branch};rport\r\n"
            f"From: <sip:caller@127.0.0.1:{self.port}>;tag={self.tag}\r\nTo: {to}\r\n"
            f"Call-ID: {self.call_id}\r\nCSeq: {cseq} {method}\r\nMax-Forwards: 70\r\n"
            f"Contact: <sip:caller@127.0.0.1:{self.port}>\r\n"
        )

    def send(self, data: bytes | str) -> None:
        self.sock.sendto(data.encode() if isinstance(data, str) else data, self.server)

    def recv(self, timeout: float = 3.0) -> message.SipMessage:
        self.sock.settimeout(timeout)
        data, _ = self.sock.recvfrom(65535)
        return message.parse(data)

    def expect(self, status: int, timeout: float = 3.0) -> message.SipMessage:
        while True:
            msg = self.recv(timeout)
            if msg.status == status:
                return msg
            assert msg.status is not None and msg.status < 200, f"wanted {status}, got {msg.status}"

    def invite(self, *, offer: str | None = None) -> None:
        body = offer if offer is not None else self.offer()
        ctype = "Content-Type: application/sdp\r\n" if body else ""
        self.send(
            f"INVITE sip:{self.user}@127.0.0.1:{self.server[1]} SIP/2.0\r\n{self.headers('INVITE', 1)}"
            f"{ctype}Content-Length: {len(body)}\r\n\r\n{body}"
        )

    def offer(self) -> str:
        return (
            "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {self.rtp_port} RTP/AVP 8 0 101\r\na=rtpmap:101 telephone-event/8000\r\n"
        )

    def ack(self, body: str = "", cseq: int = 1) -> None:
        ctype = "Content-Type: application/sdp\r\n" if body else ""
        self.send(
            f"ACK sip:{self.user}@127.0.0.1:{self.server[1]} SIP/2.0\r\n"
            f"{self.headers('ACK', cseq, message.new_branch(), to_tag=True)}{ctype}Content-Length: {len(body)}\r\n\r\n{body}"
        )

    def answered(self) -> tuple[message.SipMessage, sdp.AudioPlan]:
        ok = self.expect(200)
        self.to_tag = ok.to_tag
        plan = sdp.negotiate(sdp.parse(ok.body.decode()), "127.0.0.1")
        return ok, plan

    def request(self, method: str, cseq: int, body: str = "", ctype: str = "") -> None:
        extra = f"Content-Type: {ctype}\r\n" if ctype else ""
        self.send(
            f"{method} sip:{self.user}@127.0.0.1:{self.server[1]} SIP/2.0\r\n"
            f"{self.headers(method, cseq, message.new_branch(), to_tag=True)}{extra}Content-Length: {len(body)}\r\n\r\n{body}"
        )

    def answer_bye(self, timeout: float = 5.0) -> message.SipMessage:
        bye = self.recv(timeout)
        assert bye.method == "BYE", bye
        res = message.response_to(bye, 200)
        self.send(res.encode())
        return bye


def _options(port: int) -> message.SipMessage:
    uac = Uac(port)
    try:
        uac.send(f"OPTIONS sip:alice@127.0.0.1 SIP/2.0\r\n{uac.headers('OPTIONS', 1)}Content-Length: 0\r\n\r\n")
        return uac.recv()
    finally:
        uac.close()


def test_options_answer_503_while_full_or_draining(sip: tuple[SipServer, StubHandler]) -> None:
    """Kamailio's dispatcher probes with OPTIONS: 503 marks this instance inactive."""
    server, handler = sip
    handler.open_for_calls = False
    try:
        busy = _options(server.port)
        assert busy.status == 503 and busy.get("Retry-After") == "30"
    finally:
        handler.open_for_calls = True
    assert _options(server.port).status == 200


def test_options_register_unknown_method_and_garbage(sip: tuple[SipServer, StubHandler]) -> None:
    server, _ = sip
    ok = _options(server.port)
    assert ok.status == 200 and "INVITE" in (ok.get("Allow") or "") and ok.get("Accept") == "application/sdp"
    assert "received=127.0.0.1;rport=" in ok.top_via  # RFC 3581
    uac = Uac(server.port)
    try:
        uac.send(f"REGISTER sip:127.0.0.1 SIP/2.0\r\n{uac.headers('REGISTER', 1)}Content-Length: 0\r\n\r\n")
        assert uac.recv().status == 405
        uac.send(f"FROBNICATE sip:a@127.0.0.1 SIP/2.0\r\n{uac.headers('FROBNICATE', 1, 'z9hG4bKf')}\r\n")
        assert uac.recv().status == 501
        for junk in (b"\x16\x03\x01\x02\x00garbage", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"INVITE\r\n\r\n"):
            uac.send(junk)
            res = uac.recv()
            assert res.status == 400, junk
        uac.send(
            b"INVITE sip:alice@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1;branch=z9hG4bKq\r\nCSeq: 1 INVITE\r\n\r\n"
        )
        res = uac.recv()
        assert res.status == 400 and "missing" in (res.get("Warning") or "") and res.branch == "z9hG4bKq"
        uac.send(b"\r\n\r\n")  # RFC 5626 keep-alive
        assert uac.sock.recvfrom(100)[0] == b"\r\n"
    finally:
        uac.close()
    assert server.counters["malformed"] >= 4
    assert _options(server.port).status == 200  # still serving


def test_unknown_user_gets_404_until_ack(sip: tuple[SipServer, StubHandler]) -> None:
    server, handler = sip
    uac = Uac(server.port, user="nobody")
    try:
        uac.invite()
        res = uac.expect(404)
        assert res.to_tag  # a final answer carries our tag
        again = uac.recv(timeout=1.5)  # retransmitted (timer G) until ACK
        assert again.status == 404
        uac.send(
            f"ACK sip:nobody@127.0.0.1 SIP/2.0\r\n{uac.headers('ACK', 1)}".replace(
                "To: <sip:nobody@127.0.0.1>", f"To: <sip:nobody@127.0.0.1>;tag={res.to_tag}"
            )
            + "Content-Length: 0\r\n\r\n"
        )
        with pytest.raises(TimeoutError):
            uac.recv(timeout=1.2)
    finally:
        uac.close()
    assert not handler.admitted and not server.calls


def test_call_media_timing_dtmf_and_assistant_bye(sip: tuple[SipServer, StubHandler]) -> None:
    server, handler = sip
    uac = Uac(server.port)
    try:
        uac.invite()
        trying = uac.recv()
        assert trying.status == 100
        ok, plan = uac.answered()
        assert (plan.codec, plan.payload_type, plan.event_pt) == ("PCMA", 8, 101)  # our preference, PCMA first
        assert ok.get("Contact") == f"<sip:callassist@127.0.0.1:{server.port}>"
        answered_at = time.monotonic()
        uac.ack()

        # Caller audio (a 300 Hz tone) and one key press, as a phone sends it: 20 ms
        # packets, then the event repeated with the end bit set three times.
        seq, ts, ssrc = 100, 1000, 7
        tone = (np.sin(np.arange(160 * 10) / 8000 * 2 * math.pi * 300) * 9000).astype("<i2").tobytes()
        for i in range(10):
            pcm = tone[i * 320 : (i + 1) * 320]
            uac.rtp.sendto(
                rtp.RtpPacket(8, seq, ts, ssrc, rtp.encode("PCMA", pcm)).encode(), (plan.remote_host, plan.remote_port)
            )
            seq, ts = seq + 1, ts + 160
        for i, end in enumerate([False, False, True, True, True]):
            payload = rtp.event_payload("5", end=end, duration=160 * (i + 1))
            uac.rtp.sendto(
                rtp.RtpPacket(101, seq, ts, ssrc, payload, marker=i == 0).encode(), (plan.remote_host, plan.remote_port)
            )
            seq += 1

        # The server's RTP: 20 ms apart, sequence +1, timestamp +160, payload 8.
        arrivals: list[tuple[float, rtp.RtpPacket]] = []
        deadline = time.monotonic() + 1.2
        while time.monotonic() < deadline:
            data = uac.rtp.recv(2048)
            arrivals.append((time.monotonic(), rtp.parse_packet(data)))
        packets = [p for _, p in arrivals]
        assert len(packets) >= 50
        assert all(p.payload_type == 8 and len(p.payload) == 160 for p in packets)
        assert all((b.sequence - a.sequence) % 65536 == 1 for a, b in itertools.pairwise(packets))
        assert all((b.timestamp - a.timestamp) % 2**32 == 160 for a, b in itertools.pairwise(packets))
        # Paced by the line's clock, never faster than real time: at most one packet per
        # 20 ms since the answer, plus the 0.2 s the sender may catch up after a stall.
        # How evenly they are spaced depends on the machine's load: `callassist bench rtp`.
        assert len(packets) <= (deadline - answered_at) / rtp.PACKET_S + 0.2 / rtp.PACKET_S + 1
        heard = rtp.decode("PCMA", b"".join(p.payload for p in packets[5:40]))
        assert rtp.rms(heard) > 2000  # the stub's tone, not silence

        bye = uac.answer_bye(timeout=3.0)  # the stub ends after 1 s: the server hangs up
        assert bye.get("Reason") and bye.cseq[1] == "BYE" and bye.to_tag == uac.tag
    finally:
        uac.close()
    time.sleep(0.2)
    assert handler.dtmf == ["5"]  # once, despite the repeated end packets
    assert rtp.rms(bytes(handler.received_pcm)) > 1000
    assert handler.ended == [None] and not server.calls


def test_caller_bye_cancel_and_retransmitted_200(sip: tuple[SipServer, StubHandler]) -> None:
    server, handler = sip
    handler.talk_s = 10.0
    uac = Uac(server.port)
    try:
        uac.invite()
        uac.answered()
        again = uac.expect(200, timeout=1.5)  # no ACK yet: the 200 comes again (timer G)
        assert again.to_tag == uac.to_tag
        uac.ack()
        # re-INVITE: put the caller on hold (sendonly); the answer is recvonly, a new SDP version.
        uac.request("INVITE", 2, uac.offer() + "a=sendonly\r\n", "application/sdp")
        held = uac.expect(200)
        assert held.cseq == (2, "INVITE") and "a=recvonly" in held.body.decode() and " 2 IN IP4" in held.body.decode()
        uac.ack(cseq=2)
        uac.request("INFO", 3, "Signal=7\r\nDuration=160\r\n", "application/dtmf-relay")
        assert uac.expect(200).cseq == (3, "INFO")  # (not the 200 to the re-INVITE again: it was ACKed)
        uac.request("BYE", 4)
        assert uac.expect(200).cseq == (4, "BYE")
        uac.request("BYE", 5)
        assert uac.expect(481).status == 481  # the dialog is gone
    finally:
        uac.close()

    slow = Uac(server.port, user="slow")
    try:
        slow.invite()
        assert slow.recv().status == 100
        slow.send(
            f"CANCEL sip:slow@127.0.0.1:{server.port} SIP/2.0\r\n{slow.headers('CANCEL', 1)}Content-Length: 0\r\n\r\n"
        )
        answers = {slow.recv().status, slow.recv().status}
        assert answers == {200, 487}
    finally:
        slow.close()
    time.sleep(2.3)  # the cancelled admission must not answer late
    assert [c.user for c in handler.admitted] == ["alice"]
    assert handler.dtmf == ["7"] and handler.ended == ["caller_hangup"]


def test_late_offer_and_busy(sip: tuple[SipServer, StubHandler]) -> None:
    server, handler = sip
    handler.talk_s = 3.0
    first, second, third = Uac(server.port), Uac(server.port), Uac(server.port)
    try:
        first.invite(offer="")  # no SDP: our offer comes in the 200, the answer in the ACK
        ok = first.expect(200)
        first.to_tag = ok.to_tag
        offer = sdp.parse(ok.body.decode())
        assert offer.media[0].formats == ["0", "8", "101"]
        first.ack(body=first.offer().replace("RTP/AVP 8 0 101", "RTP/AVP 0 101"))
        assert rtp.parse_packet(first.rtp.recv(2048)).payload_type == 0
        second.invite()
        second.answered()
        second.ack()
        third.invite()
        busy = third.expect(503)  # max_calls=2: the instance is full, try later
        assert busy.get("Retry-After") == "30"
    finally:
        for uac in (first, second, third):
            uac.close()
