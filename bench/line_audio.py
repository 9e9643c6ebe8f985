"""A realistic phone line for caller audio: codec, bursty packet loss, jitter, clipping
and background noise, all seeded.

``bench/line.py`` perturbs *text* (what a recognizer would have heard); this module
perturbs *audio* before it is sent over the Twilio WebSocket, so the service's own
VAD, end-of-turn and Whisper meet it. Per caller turn, in order:

1. background noise mixed at the condition's SNR (street: brown-ish rumble and passing
   cars; babble: several other talkers from the caller voices, time-reversed so no
   words can be picked up; TV: a far talker plus music-like tones), synthesized here
   and seeded, so nothing has to be downloaded;
2. clipping: a hot microphone (gain, then hard clipping at full scale);
3. the codec leg: G.711 A-law (a carrier leg transcoded to mu-law at the gateway, as
   Twilio carries mu-law) or mu-law;
4. packet loss over 20 ms frames from a two-state Gilbert-Elliott model (bursts), and
   jitter: frames whose network delay exceeds a 60 ms jitter buffer arrive too late and
   are lost as well; a lost frame is concealed by repeating the previous one, attenuated
   (what a gateway's PLC does), never by silence alone.

Every draw comes from ``random.Random(seed)``: one seed, one line.
"""

from __future__ import annotations

import audioop
import random
from dataclasses import dataclass

import numpy as np

RATE = 8000
FRAME = 160  # 20 ms at 8 kHz
JITTER_BUFFER_MS = 60.0


@dataclass(frozen=True, slots=True)
class LineCondition:
    name: str
    codec: str = "ulaw"  # "ulaw" or "alaw"
    loss_pct: float = 0.0  # mean packet loss, bursty
    burst_frames: float = 2.0  # mean length of a loss burst, frames
    jitter_ms: float = 0.0  # standard deviation of network delay around 20 ms
    clip_gain: float = 1.0  # > 1: the talker overloads the microphone
    noise: str | None = None  # "street", "babble", "tv"
    snr_db: float = 20.0


#: The conditions ``bench voice --line`` cycles through (seeded per call).
CONDITIONS: dict[str, LineCondition] = {
    c.name: c
    for c in (
        LineCondition("clean"),
        LineCondition("alaw-loss1", codec="alaw", loss_pct=1.0),
        LineCondition("loss3-jitter", loss_pct=3.0, burst_frames=3.0, jitter_ms=25.0),
        LineCondition("street15", noise="street", snr_db=15.0, loss_pct=1.0),
        LineCondition("babble12", noise="babble", snr_db=12.0),
        LineCondition("tv18-clip", noise="tv", snr_db=18.0, clip_gain=3.0),
        LineCondition("street10-alaw", noise="street", snr_db=10.0, codec="alaw", loss_pct=2.0),
    )
}


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) if x.size else 0.0


def _street(n: int, rng: random.Random) -> np.ndarray:
    g = np.random.default_rng(rng.getrandbits(32))
    white = g.standard_normal(n)
    # Brown-ish rumble: integrated white noise, high-passed to stay bounded.
    brown = np.cumsum(white)
    brown -= np.convolve(brown, np.ones(400) / 400, mode="same")
    bed = brown / (np.std(brown) + 1e-9)
    t = np.arange(n) / RATE
    for _ in range(max(1, n // (RATE * 3))):  # a passing car every ~3 s
        centre, width = g.uniform(0, n / RATE), g.uniform(0.8, 2.0)
        env = np.exp(-(((t - centre) / width) ** 2))
        bed += 2.0 * env * np.sin(2 * np.pi * g.uniform(60, 140) * t) * (1 + 0.3 * white)
    return bed


def _babble(n: int, rng: random.Random, talkers: list[np.ndarray]) -> np.ndarray:
    if not talkers:
        return _street(n, rng)
    bed = np.zeros(n)
    for _ in range(4):
        voice = talkers[rng.randrange(len(talkers))][::-1]  # reversed: speech-like, no words
        start = rng.randrange(len(voice))
        looped = np.resize(np.roll(voice, -start), n)
        bed += looped / (_rms(looped) + 1e-9)
    return bed


def _tv(n: int, rng: random.Random, talkers: list[np.ndarray]) -> np.ndarray:
    g = np.random.default_rng(rng.getrandbits(32))
    t = np.arange(n) / RATE
    music = sum(np.sin(2 * np.pi * f * t) * (0.5 + 0.5 * np.sin(2 * np.pi * g.uniform(0.2, 1.0) * t)) for f in
                g.choice([220.0, 277.2, 329.6, 392.0, 440.0], size=3))  # fmt: skip
    far = _babble(n, rng, talkers[:1]) if talkers else np.zeros(n)
    room = np.convolve(far, np.exp(-np.arange(200) / 40.0), mode="same")  # a room's echo
    return np.asarray(music, dtype=np.float64) / 2 + room / (_rms(room) + 1e-9)


def noise_bed(kind: str, n: int, rng: random.Random, talkers: list[np.ndarray] | None = None) -> np.ndarray:
    """``n`` samples of unit-RMS background at 8 kHz."""
    talkers = talkers or []
    bed = {"street": lambda: _street(n, rng), "babble": lambda: _babble(n, rng, talkers)}.get(
        kind, lambda: _tv(n, rng, talkers)
    )()
    return bed / (_rms(bed) + 1e-9)


def gilbert_elliott_losses(frames: int, loss_pct: float, burst_frames: float, rng: random.Random) -> list[bool]:
    """Which frames are lost: a good/bad two-state chain with mean loss ``loss_pct`` and
    mean burst length ``burst_frames`` (every frame of the bad state is lost)."""
    if loss_pct <= 0 or frames == 0:
        return [False] * frames
    p_bad_to_good = 1.0 / max(1.0, burst_frames)
    loss = loss_pct / 100
    p_good_to_bad = p_bad_to_good * loss / (1 - loss)
    lost, bad = [], rng.random() < loss
    for _ in range(frames):
        lost.append(bad)
        bad = rng.random() >= p_bad_to_good if bad else rng.random() < p_good_to_bad
    return lost


def late_frames(frames: int, jitter_ms: float, rng: random.Random) -> list[bool]:
    """Frames whose delay variation exceeds the jitter buffer (arrive too late to play)."""
    if jitter_ms <= 0:
        return [False] * frames
    return [abs(rng.gauss(0.0, jitter_ms)) > JITTER_BUFFER_MS for _ in range(frames)]


def speech_level(x: np.ndarray) -> float:
    """RMS of the voiced part (samples above -40 dBFS), the reference of the SNR."""
    voiced = x[np.abs(x) > 0.01]
    return _rms(voiced) if voiced.size else _rms(x)


def apply_line(
    pcm8: np.ndarray,
    cond: LineCondition,
    rng: random.Random,
    *,
    talkers: list[np.ndarray] | None = None,
    speech_rms: float | None = None,
) -> tuple[bytes, dict[str, float]]:
    """float32 speech at 8 kHz in [-1, 1] -> the mu-law bytes the far end receives, and
    what happened on the line (frames lost, samples clipped). ``speech_rms`` sets the
    noise level when ``pcm8`` holds no speech (the line between the caller's words)."""
    x = np.asarray(pcm8, dtype=np.float64)
    stats = {"lost_frames": 0.0, "frames": float(len(x) // FRAME), "clipped": 0.0}
    if cond.noise:
        level = speech_level(x) if speech_rms is None else speech_rms
        bed = noise_bed(cond.noise, len(x), rng, talkers)
        x = x + bed * level / (10 ** (cond.snr_db / 20))
    if cond.clip_gain != 1.0:
        x = x * cond.clip_gain
        stats["clipped"] = float(np.mean(np.abs(x) > 1.0))
    pcm16 = (np.clip(x, -1, 1) * 32767).astype(np.int16).tobytes()
    if cond.codec == "alaw":
        pcm16 = audioop.alaw2lin(audioop.lin2alaw(pcm16, 2), 2)
    frames = [pcm16[i : i + 2 * FRAME] for i in range(0, len(pcm16), 2 * FRAME)]
    lost = gilbert_elliott_losses(len(frames), cond.loss_pct, cond.burst_frames, rng)
    late = late_frames(len(frames), cond.jitter_ms, rng)
    out: list[bytes] = []
    previous = b"\x00\x00" * FRAME
    run = 0
    for frame, a, b in zip(frames, lost, late, strict=True):
        if a or b:
            run += 1
            stats["lost_frames"] += 1
            # Repeat the last good frame, fading with each further loss (PLC).
            frame = audioop.mul(previous[: len(frame)], 2, 0.5**run)
        else:
            run = 0
            previous = frame
        out.append(frame)
    return audioop.lin2ulaw(b"".join(out), 2), stats


def vary_voice(pcm: np.ndarray, rate: int, *, pitch: float) -> tuple[np.ndarray, int]:
    """Shift the pitch by ``pitch`` (and the tempo with it; synthesize at speed/pitch to
    keep the tempo): the samples are played as if recorded at rate/pitch."""
    import soxr

    if pitch == 1.0:
        return pcm, rate
    return np.asarray(soxr.resample(pcm, rate, int(rate / pitch)), dtype=np.float32), rate
