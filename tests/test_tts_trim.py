"""Engine padding is cut before audio is cached and played (it would be heard as latency)."""

from __future__ import annotations

import hashlib

import numpy as np

from pipeline.tts import Audio, AudioCache, trim_silence

RATE = 24000


def _audio(lead_s: float, speech_s: float, tail_s: float, *, noise: int = 12) -> Audio:
    rng = np.random.default_rng(0)
    pad = lambda s: rng.integers(-noise, noise + 1, int(RATE * s))  # noqa: E731
    t = np.arange(int(RATE * speech_s)) / RATE
    speech = 8000 * np.sin(2 * np.pi * 220 * t)
    pcm = np.concatenate([pad(lead_s), speech, pad(tail_s)]).astype(np.int16)
    return Audio(pcm.tobytes(), RATE)


def test_kokoro_like_padding_is_trimmed_to_short_margins() -> None:
    out = trim_silence(_audio(0.42, 1.0, 0.6))
    assert out.rate == RATE
    assert abs(out.seconds - (1.0 + 0.04 + 0.15)) < 0.02
    pcm = np.frombuffer(out.pcm, np.int16)
    first_loud = int(np.flatnonzero(np.abs(pcm) > 1000)[0])
    assert 0.03 * RATE <= first_loud <= 0.06 * RATE


def test_short_padding_and_silence_are_left_alone() -> None:
    tight = _audio(0.01, 0.5, 0.05)
    assert trim_silence(tight) == tight
    silent = Audio(np.zeros(RATE, np.int16).tobytes(), RATE)
    assert trim_silence(silent) == silent
    assert trim_silence(Audio(b"", RATE)) == Audio(b"", RATE)


def test_cache_key_is_versioned(tmp_path) -> None:
    cache = AudioCache(tmp_path)
    a = _audio(0.0, 0.2, 0.0)
    cache.put("hello", "piper:x", a)
    assert AudioCache(tmp_path).get("hello", "piper:x") == a
    # A file written under the old (untrimmed) key scheme is not served again.
    old = hashlib.sha256(b"piper:x\x00stale").hexdigest()[:32]
    (tmp_path / f"{old}.{RATE}.pcm").write_bytes(_audio(0.4, 0.2, 0.6).pcm)
    assert AudioCache(tmp_path).get("stale", "piper:x") is None
