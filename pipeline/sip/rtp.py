"""RTP (RFC 3550) packets, G.711 mu-law/A-law (numpy tables, no audioop) and
RFC 4733 telephone events."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

HEADER = struct.Struct("!BBHII")
SAMPLES_PER_PACKET = 160  # 20 ms at 8 kHz
PACKET_S = 0.02
DTMF_KEYS = "0123456789*#ABCD"


class RtpError(ValueError):
    pass


@dataclass
class RtpPacket:
    payload_type: int
    sequence: int
    timestamp: int
    ssrc: int
    payload: bytes
    marker: bool = False

    def encode(self) -> bytes:
        b1 = (0x80 if self.marker else 0) | (self.payload_type & 0x7F)
        return HEADER.pack(0x80, b1, self.sequence & 0xFFFF, self.timestamp & 0xFFFFFFFF, self.ssrc) + self.payload


def parse_packet(data: bytes) -> RtpPacket:
    """Parse an RTP packet (CSRCs, extension and padding skipped); raises RtpError."""
    if len(data) < HEADER.size:
        raise RtpError("short packet")
    b0, b1, seq, ts, ssrc = HEADER.unpack_from(data)
    if b0 >> 6 != 2:
        raise RtpError("not RTP version 2")
    offset = HEADER.size + 4 * (b0 & 0x0F)
    if b0 & 0x10:  # header extension
        if len(data) < offset + 4:
            raise RtpError("truncated extension")
        (words,) = struct.unpack_from("!H", data, offset + 2)
        offset += 4 + 4 * words
    end = len(data)
    if b0 & 0x20:  # padding
        if end == 0 or data[-1] == 0 or data[-1] > end - offset:
            raise RtpError("bad padding")
        end -= data[-1]
    if offset > end:
        raise RtpError("truncated packet")
    pt = b1 & 0x7F
    if 72 <= pt <= 76:
        raise RtpError("RTCP on the RTP port")
    return RtpPacket(pt, seq, ts, ssrc, bytes(data[offset:end]), bool(b1 & 0x80))


# ------------------------------------------------------------------ G.711 ----


def _ulaw_decode_table() -> np.ndarray:
    u = ~np.arange(256, dtype=np.int32) & 0xFF
    sign = u & 0x80
    exponent = (u >> 4) & 0x07
    mantissa = u & 0x0F
    magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84
    return np.where(sign != 0, -magnitude, magnitude).astype(np.int16)


def _alaw_decode_table() -> np.ndarray:
    a = np.arange(256, dtype=np.int32) ^ 0x55
    sign = a & 0x80
    exponent = (a >> 4) & 0x07
    mantissa = a & 0x0F
    magnitude = np.where(exponent == 0, (mantissa << 4) + 8, ((mantissa << 4) + 0x108) << np.maximum(exponent - 1, 0))
    return np.where(sign != 0, magnitude, -magnitude).astype(np.int16)


def _encode_table(decode: np.ndarray) -> np.ndarray:
    """int16 sample (offset by 32768) -> the code whose decoded value is nearest."""
    order = np.argsort(decode, kind="stable")
    values = decode[order].astype(np.int32)
    samples = np.arange(-32768, 32768, dtype=np.int32)
    idx = np.clip(np.searchsorted(values, samples), 1, len(values) - 1)
    nearer_left = (samples - values[idx - 1]) <= (values[idx] - samples)
    best = np.where(nearer_left, idx - 1, idx)
    return order[best].astype(np.uint8)


_ULAW_DEC = _ulaw_decode_table()
_ALAW_DEC = _alaw_decode_table()
_ULAW_ENC = _encode_table(_ULAW_DEC)
_ALAW_ENC = _encode_table(_ALAW_DEC)
SILENCE = {"PCMU": b"\xff" * SAMPLES_PER_PACKET, "PCMA": b"\xd5" * SAMPLES_PER_PACKET}


def decode(codec: str, payload: bytes) -> bytes:
    """G.711 -> int16 little-endian PCM (8 kHz)."""
    table = _ULAW_DEC if codec == "PCMU" else _ALAW_DEC
    return table[np.frombuffer(payload, dtype=np.uint8)].astype("<i2").tobytes()


def encode(codec: str, pcm: bytes) -> bytes:
    """int16 little-endian PCM (8 kHz) -> G.711."""
    table = _ULAW_ENC if codec == "PCMU" else _ALAW_ENC
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.int32) + 32768
    return table[samples].tobytes()


# ----------------------------------------------------------------- events ----


@dataclass(frozen=True)
class TelephoneEvent:
    key: str  # "0".."9", "*", "#", "A".."D"; "" for events we do not map
    end: bool
    duration: int  # in timestamp units (8 kHz)
    volume: int


def parse_event(payload: bytes) -> TelephoneEvent:
    if len(payload) < 4:
        raise RtpError("short telephone-event payload")
    event, flags, duration = struct.unpack_from("!BBH", payload)
    key = DTMF_KEYS[event] if event < len(DTMF_KEYS) else ""
    return TelephoneEvent(key, bool(flags & 0x80), duration, flags & 0x3F)


def event_payload(key: str, *, end: bool, duration: int, volume: int = 10) -> bytes:
    return struct.pack("!BBH", DTMF_KEYS.index(key), (0x80 if end else 0) | (volume & 0x3F), duration)


def rms(pcm: bytes) -> float:
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float32)
    return float(np.sqrt(np.mean(samples**2))) if samples.size else 0.0
