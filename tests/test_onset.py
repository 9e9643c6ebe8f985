"""The line-energy onset detector (pipeline.onset): resumed speech is heard within a few
frames, in Mandarin- and English-like voiced signals, on a clean line, over line noise
at 20 and 10 dB SNR and through G.711 mu-law; a line that stays at its floor (silence,
stationary noise, the codec's idle pattern, single clicks) is quiet; a noise burst or a
cough is an onset (which only sends the hold back to waiting for the VAD)."""

from __future__ import annotations

import audioop

import numpy as np
import pytest

from pipeline.onset import ONSET_FRAMES, LineOnset

RATE = 16000
FRAME = 320


def _voiced(seconds: float, lang: str, amp: float, rng: np.random.Generator) -> np.ndarray:
    """A speech-like signal: a glottal pulse train (en: 110-130 Hz falling; zh: syllables
    with tone contours around 220 Hz) through two formant resonances, syllables of
    ~200 ms (zh) / ~250 ms (en) each opened by a short fricative noise burst."""
    n = int(RATE * seconds)
    t = np.arange(n) / RATE
    syll = 0.2 if lang == "zh" else 0.25
    pos = (t % syll) / syll
    if lang == "zh":
        tone = np.array([1.0, 1.15, 0.85, 1.1])[((t // syll) % 4).astype(int)]
        f0 = 220 * tone * (1 + 0.1 * (pos - 0.5))
    else:
        f0 = 130 - 20 * t / max(seconds, 1e-9)
    phase = np.cumsum(2 * np.pi * f0 / RATE)
    pulses = np.sign(np.sin(phase)) * (np.sin(phase) ** 2)  # harmonic-rich
    voiced = np.zeros(n)
    for formant, bw in ((700.0, 130.0), (1200.0, 150.0)):
        r = np.exp(-np.pi * bw / RATE)
        a1, a2 = -2 * r * np.cos(2 * np.pi * formant / RATE), r * r
        y = np.zeros(n)
        for i in range(n):  # a two-pole resonator
            y[i] = pulses[i] - a1 * (y[i - 1] if i else 0) - a2 * (y[i - 2] if i > 1 else 0)
        voiced += y
    voiced /= np.max(np.abs(voiced))
    envelope = np.where(pos < 0.15, 0.0, np.sin(np.pi * np.clip((pos - 0.15) / 0.85, 0, 1)) ** 0.5)
    fricative = np.where(pos < 0.15, rng.normal(0, 0.25, n), 0.0)
    return amp * (voiced * envelope + fricative)


def _noise(seconds: float, rms: float, rng: np.random.Generator, *, phone_band: bool = True) -> np.ndarray:
    x = rng.normal(0, 1, int(RATE * seconds))
    if phone_band:  # 300-3400 Hz-ish: a first-order high-pass, then a moving average
        x = np.convolve(np.diff(x, prepend=0.0), np.ones(3) / 3, mode="same")
    return x / np.sqrt(np.mean(x * x)) * rms


def _line(signal: np.ndarray, *, mulaw: bool = False) -> bytes:
    pcm = np.clip(signal, -32768, 32767).astype(np.int16).tobytes()
    if mulaw:  # through the phone line: 8 kHz G.711 and back to 16 kHz
        narrow, _ = audioop.ratecv(pcm, 2, 1, RATE, 8000, None)
        pcm, _ = audioop.ratecv(audioop.ulaw2lin(audioop.lin2ulaw(narrow, 2), 2), 2, 1, 8000, RATE, None)
    return pcm


def _feed(signal: np.ndarray, *, mulaw: bool = False, chunk: int = FRAME, first: bool = False) -> LineOnset:
    """The detector after the line; ``first``: stop at the first onset."""
    pcm = _line(signal, mulaw=mulaw)
    detector = LineOnset()
    for i in range(0, len(pcm), chunk * 2):
        detector.feed(pcm[i : i + chunk * 2], speech=False)
        if first and detector.last_onset is not None:
            break
    return detector


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x * x)))


CASES = [(lang, snr, mulaw) for lang in ("en", "zh") for snr in (None, 20, 10) for mulaw in (False, True)]


@pytest.mark.parametrize(
    ("lang", "snr", "mulaw"), CASES, ids=[f"{c[0]}-snr{c[1]}-{'ulaw' if c[2] else 'pcm'}" for c in CASES]
)
def test_resumed_speech_is_an_onset_within_a_few_frames(lang: str, snr: int | None, mulaw: bool) -> None:
    rng = np.random.default_rng(7)
    pause_s = 0.8
    speech = _voiced(0.6, lang, 5000.0, rng)
    line = np.concatenate([np.zeros(int(RATE * pause_s)), speech])
    if snr is not None:
        line = line + _noise(len(line) / RATE, _rms(speech) / 10 ** (snr / 20), rng)
    detector = _feed(line, mulaw=mulaw)
    resumed = int(pause_s / 0.02)
    first = _feed(line, mulaw=mulaw, first=True).last_onset
    assert first is not None
    # The speech's first frames are its 30 ms fricative: the onset is at most 4 frames late.
    assert resumed <= first <= resumed + 4, (first, resumed)
    assert not detector.quiet_since(resumed)
    # Before the caller resumed, the same line was quiet.
    assert _feed(line[: int(RATE * pause_s)], mulaw=mulaw).quiet_since(0)


@pytest.mark.parametrize("rms", [0.0, 30.0, 300.0, 1500.0])
@pytest.mark.parametrize("mulaw", [False, True])
def test_a_line_at_its_floor_stays_quiet(rms: float, mulaw: bool) -> None:
    """Digital silence, the codec's idle pattern, and stationary line noise at any level
    (the floor is the call's own) are no onset."""
    rng = np.random.default_rng(3)
    line = _noise(3.0, rms, rng) if rms else np.zeros(3 * RATE)
    detector = _feed(line, mulaw=mulaw)
    assert detector.last_onset is None
    assert detector.quiet_since(0)


def test_the_idle_g711_code_is_silence() -> None:
    idle = audioop.ulaw2lin(b"\xff" * 8000, 2)  # one second of the line's idle byte
    pcm, _ = audioop.ratecv(idle, 2, 1, 8000, RATE, None)
    detector = LineOnset()
    detector.feed(pcm, speech=False)
    assert detector.quiet_since(0)


def test_single_clicks_are_not_an_onset() -> None:
    """A click (a one-sample spike, a codec glitch) every half second: each is one loud
    frame, never three in a row."""
    line = np.zeros(3 * RATE)
    line[RATE // 2 :: RATE // 2] = 20000
    detector = _feed(line)
    assert detector.last_onset is None


@pytest.mark.parametrize("burst_s", [0.1, 0.3])
def test_a_noise_burst_or_cough_is_an_onset(burst_s: float) -> None:
    """The detector cannot tell a cough from a syllable: it says something happened, and
    the hold then waits for the VAD (tests/test_turn_end_processors.py)."""
    rng = np.random.default_rng(5)
    line = np.concatenate([_noise(1.0, 100.0, rng), _noise(burst_s, 4000.0, rng), _noise(1.0, 100.0, rng)])
    detector = _feed(line)
    assert detector.last_onset == 50
    assert not detector.quiet_since(40)
    assert detector.quiet_since(50 + int(burst_s / 0.02))  # after the burst, quiet again


def test_speech_frames_do_not_raise_the_floor() -> None:
    """Frames the VAD hears as speech are not the floor: after a long loud turn, the
    pause's quiet frames still set it, and speech resumed is an onset."""
    rng = np.random.default_rng(11)
    detector = LineOnset()
    detector.feed(np.zeros(RATE // 2, np.int16).tobytes(), speech=False)
    detector.feed(_voiced(4.0, "en", 6000.0, rng).astype(np.int16).tobytes(), speech=True)
    stop = detector.frames
    detector.feed(np.zeros(RATE // 2, np.int16).tobytes(), speech=False)
    assert detector.quiet_since(stop)
    detector.feed(_voiced(0.3, "zh", 3000.0, rng).astype(np.int16).tobytes(), speech=False)
    assert not detector.quiet_since(stop)


def test_an_unknown_floor_is_never_quiet() -> None:
    """Before a few frames without speech were heard, the detector cannot vouch for a
    quiet line (an unsure detector never shortens a hold)."""
    detector = LineOnset()
    detector.feed(bytes(FRAME * 2 * 2), speech=False)  # two frames
    assert not detector.quiet_since(0)
    detector.feed(bytes(FRAME * 2 * ONSET_FRAMES * 2), speech=False)
    assert detector.quiet_since(0)


def test_audio_in_odd_chunks_is_framed_the_same() -> None:
    rng = np.random.default_rng(2)
    line = np.concatenate([np.zeros(RATE), _voiced(0.5, "zh", 5000.0, rng)])
    assert _feed(line, chunk=97).last_onset == _feed(line).last_onset


def test_a_voices_soft_tail_is_not_silence() -> None:
    """A sentence that fades out (-45 dBFS for 100 ms after its last loud syllable) is not
    yet a pause by the line's energy: a VAD that counts the tail as silence would make the
    caller's pause look longer than it is (TurnTranscriber.hold_pause takes the shorter)."""
    rng = np.random.default_rng(4)
    detector = LineOnset()
    detector.feed(np.zeros(RATE // 2, np.int16).tobytes(), speech=False)
    detector.feed(_voiced(1.0, "en", 5000.0, rng).astype(np.int16).tobytes(), speech=True)
    detector.feed(_noise(0.1, 180.0, rng, phone_band=False).astype(np.int16).tobytes(), speech=False)
    assert detector.silent_s() < 0.02
    detector.feed(np.zeros(int(RATE * 0.5), np.int16).tobytes(), speech=False)
    assert detector.silent_s() == pytest.approx(0.5, abs=0.021)
