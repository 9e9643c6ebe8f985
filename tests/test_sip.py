"""SIP callers into the live voice pipeline, with real SIP peers on 127.0.0.1:

- sipp (Debian sip-tester) plays synthesized caller speech over RTP (``rtp_stream``) and
  one RFC 4733 key press (``play_pcap_audio``); the assistant's RTP is captured and
  checked; the assistant closes the call and sends BYE;
- baresip calls with its ``aufile`` source, records what it hears (``sndfile``) and
  hangs up itself;
- Kamailio (dispatcher, round-robin) spreads two sipp calls over two app instances;
- garbage datagrams get 400 and the server keeps answering.

Real Whisper, Silero VAD, Smart Turn and local TTS; every process is started here,
bound to 127.0.0.1, time-bounded and stopped by PID.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
import wave
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import redis

from pipeline.sip import rtp

from .conftest import create_owner
from .helpers import RedisProcess
from .voice_instance import Instance, free_udp_port, start_instance, stop_instance, wait_ready

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("sipp") is None, reason="sipp (Debian sip-tester) is not installed"),
]

ROOT = Path(__file__).resolve().parent.parent
DTMF_PCAP = Path("/usr/share/sip-tester/dtmf_2833_1.pcap")
CALLER_LINE = "Hi, I have a delivery for Alex. Where should I leave the package?"


def free_udp_pair() -> int:
    """An even port whose neighbour is free too (sipp's media socket and its RTCP)."""
    for _ in range(50):
        port = free_udp_port() & ~1
        with contextlib.ExitStack() as stack:
            try:
                for p in (port, port + 1, port + 2, port + 3):
                    s = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
                    s.bind(("127.0.0.1", p))
            except OSError:
                continue
            return port
    raise RuntimeError("no free UDP port pair")


# ------------------------------------------------------------- fixtures ----


@dataclass
class World:
    a: Instance
    redis_url: str
    user: str  # the SIP user that reaches the owner
    tmp: Path
    caller_ulaw: Path  # 8 kHz mu-law, no header (sipp rtp_stream)
    caller_wav: Path  # 8 kHz PCM WAV with a long silent tail (baresip aufile hangs up at the end of the file)
    lead_s: float  # silence before the caller speaks: the greeting, and a breath
    extra: list[Instance] = field(default_factory=list)

    def calls(self) -> list[dict[str, Any]]:
        r = redis.Redis.from_url(self.redis_url, decode_responses=True)
        try:
            out = []
            for key in r.scan_iter("ca:call:*"):
                raw = r.get(key)
                if raw:
                    rec = json.loads(raw)
                    if rec.get("channel") == "sip" and rec.get("line") == self.user:
                        out.append(rec)
            return sorted(out, key=lambda rec: rec["started_at"])
        finally:
            r.close()

    def wait_call(self, known: int, *, ended: bool = True, timeout_s: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            calls = self.calls()
            # Ended, and the SIP bridge has added its RTP figures (after the pipeline stops).
            if len(calls) > known and (not ended or "rtp" in calls[known]["stats"].get("sip", {})):
                return calls[known]
            time.sleep(0.2)
        raise TimeoutError("no call record")


@pytest.fixture(scope="module")
def world(voice_app: Instance, redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("sip")
    a = voice_app
    user = "alex" + secrets.token_hex(3)
    greeting: list[str] = []
    world: World | None = None
    try:

        async def seed() -> None:
            async with httpx.AsyncClient(base_url=a.server.base_url, timeout=30) as client:
                owner = await create_owner(client, redis_server.url, "Alex Chen", "en")
                client.headers["Authorization"] = owner["auth"]
                await client.put("/v1/profile", json={"display_name": "Alex Chen", "languages": ["en"]})
                (await client.put(f"/v1/lines/sip:{user}")).raise_for_status()
                r = await client.put(
                    "/v1/presets/regular/delivery", json={"response": "Please leave it with the front desk."}
                )
                r.raise_for_status()
                r = await client.post("/v1/calls/text", json={"lang": "en"})
                greeting.append(r.json()["greeting"])

        asyncio.run(seed())
        wait_ready(a)
        synth = a.resources.voice.synthesizer
        from pipeline.tts import units

        lead_s = sum(synth.synthesize_unit(u)[0].seconds for u in units(greeting[0])) + 0.8
        # The caller's voice: the app's own English engine, at the phone line's rate.
        audio, _, _ = synth.synthesize_unit(CALLER_LINE)
        import soxr

        x = np.frombuffer(audio.pcm, np.int16).astype(np.float32) / 32768
        speech = (np.clip(soxr.resample(x, audio.rate, 8000), -1, 1) * 32767).astype("<i2").tobytes()
        pcm = bytes(int(8000 * lead_s) * 2) + speech + bytes(8000 * 2)
        ulaw, wav = tmp / "caller.ulaw", tmp / "caller.wav"
        ulaw.write_bytes(rtp.encode("PCMU", pcm))
        with wave.open(str(wav), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(pcm + bytes(8000 * 2 * 60))
        world = World(a, redis_server.url, user, tmp, ulaw, wav, lead_s)
        yield world
    finally:
        for extra in world.extra if world is not None else []:
            stop_instance(extra)


# ---------------------------------------------------------- RTP capture ----


class RtpCapture:
    """A UDP socket standing in for the caller's RTP port: records every packet."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.packets: list[tuple[float, rtp.RtpPacket]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(2048)
            except (TimeoutError, OSError):
                continue
            with contextlib.suppress(rtp.RtpError):
                self.packets.append((time.monotonic(), rtp.parse_packet(data)))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


# -------------------------------------------------------------- sipp ----

INVITE = """
  <send retrans="500">
    <![CDATA[
      INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch];rport
      From: "Caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>
      Call-ID: [call_id]
      CSeq: 1 INVITE
      Contact: <sip:caller@[local_ip]:[local_port]>
      Max-Forwards: 70
      User-Agent: sipp
      Content-Type: application/sdp
      Content-Length: [len]

      v=0
      o=caller 1 1 IN IP4 [local_ip]
      s=-
      c=IN IP4 [media_ip]
      t=0 0
      m=audio MEDIA_PORT RTP/AVP 0 101
      a=rtpmap:0 PCMU/8000
      a=rtpmap:101 telephone-event/8000
      a=fmtp:101 0-15
      a=ptime:20
      a=sendrecv
    ]]>
  </send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rtd="true" rrs="true"/>
  <send>
    <![CDATA[
      ACK [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch];rport
      From: "Caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      [routes]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Contact: <sip:caller@[local_ip]:[local_port]>
      Max-Forwards: 70
      Content-Length: 0
    ]]>
  </send>
"""

SPEAK_THEN_WAIT_FOR_BYE = """
  <nop><action><exec rtp_stream="CALLER_AUDIO,1,0"/></action></nop>
  <pause milliseconds="PAUSE_MS"/>
  <nop><action><exec play_pcap_audio="DTMF_PCAP"/></action></nop>
  <recv request="BYE" timeout="60000"/>
  <send>
    <![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Content-Length: 0
    ]]>
  </send>
"""

LISTEN_THEN_BYE = """
  <pause milliseconds="2500"/>
  <send retrans="500">
    <![CDATA[
      BYE [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch];rport
      From: "Caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      [routes]
      Call-ID: [call_id]
      CSeq: 2 BYE
      Contact: <sip:caller@[local_ip]:[local_port]>
      Max-Forwards: 70
      Content-Length: 0
    ]]>
  </send>
  <recv response="200" crlf="true"/>
"""


def scenario(path: Path, body: str, **subs: str) -> Path:
    text = (
        f'<?xml version="1.0" encoding="ISO-8859-1" ?>\n<scenario name="callassist caller">{INVITE}{body}</scenario>\n'
    )
    for key, value in subs.items():
        text = text.replace(key, value)
    path.write_text(text)
    return path


def run_sipp(
    target: str, scenario_file: Path, service: str, cwd: Path, *, calls: int = 1, timeout_s: float = 60
) -> subprocess.CompletedProcess[str]:
    cmd = [
        "sipp", target, "-sf", str(scenario_file), "-s", service, "-m", str(calls), "-r", "2",
        "-i", "127.0.0.1", "-p", str(free_udp_port()), "-mi", "127.0.0.1", "-mp", str(free_udp_pair()),
        "-timeout", f"{int(timeout_s)}s", "-timeout_error", "-nostdin", "-trace_err", "-trace_msg",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s + 10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


def sipp_log(cwd: Path) -> str:
    return "\n".join(p.read_text(errors="replace")[-6000:] for p in sorted(cwd.glob("*_messages.log")))


# ---------------------------------------------------------------- tests ----


def test_sipp_caller_speaks_presses_a_key_and_the_assistant_hangs_up(world: World) -> None:
    known = len(world.calls())
    work = world.tmp / "sipp-speech"
    work.mkdir()
    capture = RtpCapture()
    try:
        sf = scenario(
            work / "caller.xml",
            SPEAK_THEN_WAIT_FOR_BYE,
            MEDIA_PORT=str(capture.port),
            CALLER_AUDIO=str(world.caller_ulaw),
            PAUSE_MS=str(int((len(world.caller_ulaw.read_bytes()) / 8000) * 1000) + 300),
            DTMF_PCAP=str(DTMF_PCAP),
        )
        t0 = time.monotonic()
        result = run_sipp(f"127.0.0.1:{world.a.sip_port}", sf, world.user, work, timeout_s=75)
        elapsed = time.monotonic() - t0
    finally:
        capture.close()
    assert result.returncode == 0, result.stdout[-2000:] + sipp_log(work)

    # The assistant's RTP: PCMU, 20 ms apart, sequence +1 and timestamp +160 each packet.
    packets = [p for _, p in capture.packets]
    assert len(packets) > 500, len(packets)
    assert {p.payload_type for p in packets} == {0} and {len(p.payload) for p in packets} == {160}
    assert len({p.ssrc for p in packets}) == 1 and packets[0].marker
    seq_steps = [(b.sequence - a.sequence) % 65536 for a, b in itertools.pairwise(packets)]
    ts_steps = [(b.timestamp - a.timestamp) % 2**32 for a, b in itertools.pairwise(packets)]
    assert set(seq_steps) == {1} and set(ts_steps) == {160}
    gaps = np.diff([t for t, _ in capture.packets])
    assert 0.019 < float(np.mean(gaps)) < 0.021, float(np.mean(gaps))
    heard = rtp.decode("PCMU", b"".join(p.payload for p in packets))
    loud = [rtp.rms(heard[i : i + 3200]) for i in range(0, len(heard), 3200)]  # 200 ms windows
    assert sum(level > 500 for level in loud) >= 10, "the assistant said (almost) nothing"

    call = world.wait_call(known)
    assert call["end_reason"] == "assistant_closed", call["end_reason"]
    assert call["caller_number"] == "sip:caller@127.0.0.1"  # the From header, into the record
    assert call["stats"]["sip"]["codec"] == "PCMU" and call["stats"]["sip"]["rtp"]["dtmf"] == "1"
    assert call["stats"]["dtmf"] == ["1"]  # RFC 4733 key -> InputDTMFFrame -> the call record
    spoken = [t for t in call["turns"] if t["caller_text"]]
    assert spoken, call["transcript"]
    assert any(t["preset_conveyed"] == "regular:delivery" for t in call["turns"]), call["turns"]
    print(f"sipp call: {elapsed:.1f} s, {len(packets)} RTP packets, mean gap {np.mean(gaps) * 1000:.2f} ms, "
          f"p99 gap {np.percentile(gaps, 99) * 1000:.1f} ms, asr {spoken[0]['timings'].get('asr_ms')} ms, "
          f"voice-to-voice {spoken[0]['timings'].get('voice_to_voice_ms')} ms")  # fmt: skip


@pytest.mark.skipif(shutil.which("baresip") is None, reason="baresip is not installed")
def test_baresip_caller_hears_the_assistant_and_hangs_up(world: World) -> None:
    known = len(world.calls())
    home = world.tmp / "baresip"
    conf = home / ".baresip"
    snd = home / "snd"
    conf.mkdir(parents=True)
    snd.mkdir()
    sip_port = free_udp_port()
    # baresip would advertise the machine's external address: bind SIP and media to 127.0.0.1.
    (conf / "config").write_text(
        f"poll_method epoll\nsip_listen 127.0.0.1:{sip_port}\nnet_interface 127.0.0.1\n"
        f"audio_player aubridge,nil\naudio_source aufile,{world.caller_wav}\naudio_alert aubridge,nil\n"
        "ausrc_srate 8000\nauplay_srate 8000\nrtp_ports 30000-39998\n"
        "module_path /usr/lib/baresip/modules\nmodule g711.so\nmodule aufile.so\nmodule aubridge.so\n"
        f"module sndfile.so\nmodule_app account.so\nmodule_app menu.so\nsnd_path {snd}\n"
    )
    (conf / "accounts").write_text("<sip:caller@127.0.0.1>;regint=0;audio_codecs=PCMU,PCMA\n")
    (conf / "contacts").write_text("")
    cmd = ["baresip", "-f", str(conf), "-e", f"/dial sip:{world.user}@127.0.0.1:{world.a.sip_port}", "-t", "90"]
    proc = subprocess.Popen(
        cmd,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # Hang up as a person would (SIGINT: baresip sends BYE) as soon as the assistant
        # has taken the caller's turn, while it answers. Not a fixed time later: the line
        # may reach the assistant as two turns ("...for Alex." / "Where should I
        # leave...?"), and the answer to the second may close the call (its record says
        # assistant_closed at once, the BYE follows the goodbye) inside any fixed wait.
        # The greeting and the caller's line were heard by then (the audio checks below).
        deadline = time.monotonic() + 75
        answered = False
        while time.monotonic() < deadline and proc.poll() is None and not answered:
            time.sleep(0.2)
            calls = world.calls()[known:]
            answered = bool(calls) and any(t["caller_text"] for t in calls[0]["turns"])
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert "Call established" in out, out[-3000:]

    call = world.wait_call(known)
    assert any(t["caller_text"] for t in call["turns"]), json.dumps(call["transcript"]) + out[-2000:]
    assert call["end_reason"] == "caller_hangup", call["end_reason"]
    assert call["stats"]["sip"]["rtp"]["packets_in"] > 300

    heard_files = list(snd.glob("*-dec.wav"))
    assert heard_files, out[-2000:]
    with wave.open(str(heard_files[0])) as w:
        heard = w.readframes(w.getnframes())
        rate = w.getframerate()
    loud = [rtp.rms(heard[i : i + rate // 5 * 2]) for i in range(0, len(heard), rate // 5 * 2)]
    assert sum(level > 500 for level in loud) >= 10, "baresip heard (almost) nothing"


def test_malformed_sip_gets_400_and_the_server_keeps_serving(world: World) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.settimeout(3)
        target = ("127.0.0.1", world.a.sip_port)
        for junk in (b"\x00\x01\x02 not sip at all", b"INVITE sip:x SIP/2.0\r\nVia: broken\r\n\r\n", b"\xff" * 3000):
            s.sendto(junk, target)
            assert s.recv(4096).startswith(b"SIP/2.0 400 "), junk[:20]
        port = s.getsockname()[1]
        for user, status in (("nobody" + secrets.token_hex(2), b"404"), (world.user, b"200")):
            method = "OPTIONS" if status == b"200" else "INVITE"
            s.sendto(
                (
                    f"{method} sip:{user}@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bK{secrets.token_hex(4)}\r\n"
                    f"From: <sip:t@127.0.0.1>;tag=1\r\nTo: <sip:{user}@127.0.0.1>\r\nCall-ID: {secrets.token_hex(6)}\r\n"
                    f"CSeq: 1 {method}\r\nContent-Length: 0\r\n\r\n"
                ).encode(),
                target,
            )
            while (data := s.recv(4096)).startswith(b"SIP/2.0 100"):
                pass
            assert data.startswith(b"SIP/2.0 " + status), data[:40]


@pytest.mark.skipif(shutil.which("kamailio") is None, reason="kamailio is not installed")
def test_kamailio_dispatcher_spreads_calls_over_two_instances(world: World) -> None:
    b = start_instance(world.redis_url, world.a.data_dir)  # same data dir: B finds A's cached speech
    world.extra.append(b)
    wait_ready(b)
    known = len(world.calls())
    work = world.tmp / "kamailio"
    work.mkdir()
    dispatcher = work / "dispatcher.list"
    dispatcher.write_text(f"1 sip:127.0.0.1:{world.a.sip_port}\n1 sip:127.0.0.1:{b.sip_port}\n")
    kam_port = free_udp_port()
    cmd = [
        "kamailio", "-f", str(ROOT / "deploy/kamailio/kamailio.cfg"), "-DD", "-E",
        "-A", f"LISTEN=udp:127.0.0.1:{kam_port}", "-A", f'DISPATCHER_LIST="{dispatcher}"',
        "-Y", str(work), "-P", str(work / "kamailio.pid"), "-m", "32", "-M", "4", "-w", str(work),
    ]  # fmt: skip
    kam = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (work / "kamailio.pid").exists():
            time.sleep(0.1)
        assert kam.poll() is None, kam.communicate()[0][-3000:]
        sf = scenario(work / "short.xml", LISTEN_THEN_BYE, MEDIA_PORT="[rtpstream_audio_port]")
        result = run_sipp(f"127.0.0.1:{kam_port}", sf, world.user, work, calls=2, timeout_s=30)
        assert result.returncode == 0, result.stdout[-2000:] + sipp_log(work)
    finally:
        kam.terminate()  # the main process stops its children
        try:
            log = kam.communicate(timeout=10)[0]
        except subprocess.TimeoutExpired:
            kam.kill()
            log = kam.communicate(timeout=5)[0]
    assert "Record-Route: <sip:127.0.0.1:" in sipp_log(work)
    calls = world.calls()[known:]
    deadline = time.monotonic() + 30
    while (
        len(calls) < 2 or not all("rtp" in c["stats"].get("sip", {}) for c in calls)
    ) and time.monotonic() < deadline:
        time.sleep(0.2)
        calls = world.calls()[known:]
    assert len(calls) == 2, log[-3000:]
    instances = {c["stats"]["sip"]["instance"] for c in calls}
    assert instances == {f"127.0.0.1:{world.a.sip_port}", f"127.0.0.1:{b.sip_port}"}, log[-3000:]
    assert all(c["end_reason"] == "caller_hangup" and c["stats"]["sip"]["rtp"]["packets_out"] > 50 for c in calls)
