"""SDP offer/answer (RFC 4566, RFC 3264) for one audio stream: G.711 and RFC 4733 events.

Only the first ``m=audio`` line is used; any other media line is declined in the
answer (port 0), as RFC 3264 requires the answer to keep every line of the offer.
"""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass, field

PCMU = "PCMU"
PCMA = "PCMA"
_STATIC = {0: (PCMU, 8000), 8: (PCMA, 8000), 13: ("CN", 8000)}
SUPPORTED = (PCMU, PCMA)
EVENT = "telephone-event"
DEFAULT_EVENT_PT = 101


class SdpError(ValueError):
    """The offer cannot be answered (no usable audio): the server answers 488."""


@dataclass
class MediaLine:
    kind: str
    port: int
    proto: str
    formats: list[str]
    address: str | None = None
    rtpmap: dict[int, tuple[str, int]] = field(default_factory=dict)
    direction: str = "sendrecv"
    ptime: int | None = None


@dataclass
class SessionDescription:
    address: str | None
    media: list[MediaLine]


@dataclass(frozen=True)
class AudioPlan:
    """What was agreed for the call's audio: where to send, in which codec."""

    remote_host: str
    remote_port: int
    codec: str  # PCMU or PCMA
    payload_type: int
    event_pt: int | None  # telephone-event payload type, when the peer offered it
    direction: str = "sendrecv"


def parse(text: str) -> SessionDescription:
    address: str | None = None
    media: list[MediaLine] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if len(line) < 2 or line[1] != "=":
            continue
        kind, value = line[0], line[2:].strip()
        if kind == "c":
            parts = value.split()
            if len(parts) >= 3 and parts[0] == "IN" and parts[1] in ("IP4", "IP6"):
                host = parts[2].split("/", 1)[0]
                if media:
                    media[-1].address = host
                else:
                    address = host
        elif kind == "m":
            parts = value.split()
            if len(parts) < 4:
                raise SdpError("bad m= line")
            port_text = parts[1].split("/", 1)[0]
            if not port_text.isdigit() or int(port_text) > 65535:
                raise SdpError("bad media port")
            media.append(MediaLine(parts[0], int(port_text), parts[2], parts[3:]))
        elif kind == "a" and media:
            _attribute(media[-1], value)
    return SessionDescription(address, media)


def _attribute(m: MediaLine, value: str) -> None:
    name, _, arg = value.partition(":")
    if name == "rtpmap":
        pt_text, _, enc = arg.partition(" ")
        parts = enc.strip().split("/")
        if pt_text.isdigit() and len(parts) >= 2 and parts[1].isdigit():
            m.rtpmap[int(pt_text)] = (parts[0], int(parts[1]))
    elif name in ("sendrecv", "sendonly", "recvonly", "inactive"):
        m.direction = name
    elif name == "ptime" and arg.strip().isdigit():
        m.ptime = int(arg.strip())


def _encoding(m: MediaLine, pt: int) -> tuple[str, int] | None:
    if pt in m.rtpmap:
        name, rate = m.rtpmap[pt]
        return name.upper() if name.upper() in SUPPORTED else name, rate
    return _STATIC.get(pt)


def negotiate(sd: SessionDescription, fallback_host: str) -> AudioPlan:
    """Pick the first G.711 codec of the offer (the offerer's preference order)."""
    audio = next((m for m in sd.media if m.kind == "audio" and m.port != 0), None)
    if audio is None:
        raise SdpError("no audio stream offered")
    if audio.proto.upper() not in ("RTP/AVP", "RTP/AVPF"):
        raise SdpError(f"unsupported media profile {audio.proto}")
    codec: tuple[str, int] | None = None
    event_pt: int | None = None
    for fmt in audio.formats:
        if not fmt.isdigit():
            continue
        pt = int(fmt)
        enc = _encoding(audio, pt)
        if enc is None:
            continue
        if codec is None and enc[0] in SUPPORTED and enc[1] == 8000:
            codec = (enc[0], pt)
        elif enc[0].lower() == EVENT and enc[1] == 8000 and event_pt is None:
            event_pt = pt
    if codec is None:
        raise SdpError("no common codec (PCMU or PCMA at 8 kHz)")
    host = audio.address or sd.address or fallback_host
    _check_host(host)
    return AudioPlan(host, audio.port, codec[0], codec[1], event_pt, audio.direction)


def _check_host(host: str) -> None:
    try:
        ipaddress.ip_address(host)
    except ValueError as exc:
        raise SdpError("the media address must be an IP address") from exc


def _answer_direction(offered: str) -> str:
    return {"sendonly": "recvonly", "recvonly": "sendonly", "inactive": "inactive"}.get(offered, "sendrecv")


class LocalDescription:
    """Our side of the session: one audio line, versioned for re-INVITEs."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.session_id = int(time.time() * 1000) % 10**12
        self.version = 1

    def _header(self) -> list[str]:
        ip = "IP6" if ":" in self.host else "IP4"
        return [
            "v=0",
            f"o=callassist {self.session_id} {self.version} IN {ip} {self.host}",
            "s=CallAssist",
            f"c=IN {ip} {self.host}",
            "t=0 0",
        ]

    def answer(self, offer: SessionDescription, plan: AudioPlan) -> str:
        lines = self._header()
        used = False
        for m in offer.media:
            if m.kind == "audio" and m.port != 0 and not used:
                used = True
                lines += self._audio(plan.payload_type, plan.codec, plan.event_pt, _answer_direction(plan.direction))
            else:
                lines.append(f"m={m.kind} 0 {m.proto} {' '.join(m.formats)}")
        return "\r\n".join(lines) + "\r\n"

    def offer(self) -> str:
        lines = self._header()
        lines += self._audio(0, PCMU, DEFAULT_EVENT_PT, "sendrecv", extra=[(8, PCMA)])
        return "\r\n".join(lines) + "\r\n"

    def _audio(
        self, pt: int, codec: str, event_pt: int | None, direction: str, extra: list[tuple[int, str]] | None = None
    ) -> list[str]:
        pts = [pt, *(p for p, _ in extra or [])] + ([event_pt] if event_pt is not None else [])
        lines = [f"m=audio {self.port} RTP/AVP {' '.join(str(p) for p in pts)}", f"a=rtpmap:{pt} {codec}/8000"]
        lines += [f"a=rtpmap:{p} {c}/8000" for p, c in extra or []]
        if event_pt is not None:
            lines += [f"a=rtpmap:{event_pt} {EVENT}/8000", f"a=fmtp:{event_pt} 0-16"]
        lines += ["a=ptime:20", f"a={direction}"]
        return lines
