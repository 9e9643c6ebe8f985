"""The realistic phone line of ``bench voice``: seeded, and each impairment does what it says."""

from __future__ import annotations

import audioop
import random

import numpy as np
import pytest

from bench.callers import ROSTER, profile_for
from bench.line_audio import (
    CONDITIONS,
    FRAME,
    LineCondition,
    apply_line,
    gilbert_elliott_losses,
    noise_bed,
    speech_level,
)


def _tone(seconds: float = 4.0) -> np.ndarray:
    t = np.arange(int(seconds * 8000)) / 8000
    # A syllable-like signal: 200 Hz voice modulated at 4 Hz.
    return (0.5 * np.sin(2 * np.pi * 200 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t))).astype(np.float32)


def _decoded(ulaw: bytes) -> np.ndarray:
    return np.frombuffer(audioop.ulaw2lin(ulaw, 2), dtype=np.int16).astype(np.float64) / 32768


def test_same_seed_same_line_other_seed_other_line() -> None:
    cond = CONDITIONS["street10-alaw"]
    a, _ = apply_line(_tone(), cond, random.Random(7))
    b, _ = apply_line(_tone(), cond, random.Random(7))
    c, _ = apply_line(_tone(), cond, random.Random(8))
    assert a == b
    assert a != c


@pytest.mark.parametrize("loss", [1.0, 3.0])
def test_bursty_loss_rate_and_bursts(loss: float) -> None:
    lost = gilbert_elliott_losses(200_000, loss, 3.0, random.Random(1))
    rate = sum(lost) / len(lost) * 100
    assert loss * 0.8 < rate < loss * 1.2
    bursts = sum(1 for i in range(1, len(lost)) if lost[i] and not lost[i - 1])
    assert sum(lost) / bursts > 2.0  # losses come in bursts, not one frame at a time


def test_noise_is_mixed_at_the_asked_snr() -> None:
    speech = _tone()
    for kind in ("street", "babble", "tv"):
        for snr in (10.0, 20.0):
            cond = LineCondition("x", noise=kind, snr_db=snr)
            ulaw, _ = apply_line(speech, cond, random.Random(3), talkers=[_tone(2.0)])
            noise = _decoded(ulaw) - speech.astype(np.float64)
            measured = 20 * np.log10(speech_level(speech) / np.sqrt(np.mean(noise**2)))
            assert abs(measured - snr) < 1.5, (kind, snr, measured)


def test_clipping_and_concealment() -> None:
    ulaw, stats = apply_line(_tone(), LineCondition("hot", clip_gain=3.0), random.Random(0))
    assert stats["clipped"] > 0.1
    assert np.max(np.abs(_decoded(ulaw))) <= 1.0
    ulaw, stats = apply_line(_tone(), LineCondition("lossy", loss_pct=3.0, jitter_ms=30.0), random.Random(0))
    assert stats["lost_frames"] > 0
    frames = _decoded(ulaw).reshape(-1, FRAME)
    # A lost frame is concealed with the previous one, attenuated: never a hole of zeros
    # in the middle of speech.
    assert not any(np.all(f == 0) for f in frames[1:])


def test_noise_beds_are_unit_rms_and_different() -> None:
    rng = random.Random(5)
    beds = {k: noise_bed(k, 16000, rng, [_tone(1.0)]) for k in ("street", "babble", "tv")}
    for bed in beds.values():
        assert abs(np.sqrt(np.mean(bed**2)) - 1.0) < 1e-6
    assert np.corrcoef(beds["street"], beds["tv"])[0, 1] < 0.5


def test_realistic_run_cycles_every_condition_and_voices_in_both_languages() -> None:
    profiles = [profile_for(f"s{i}", ("en", "zh")[i % 2], i, line="realistic") for i in range(28)]
    for lang in ("en", "zh"):
        mine = [p for i, p in enumerate(profiles) if ("en", "zh")[i % 2] == lang]
        assert {p.condition.name for p in mine} == set(CONDITIONS)
        assert len({p.voice.name for p in mine}) == len(ROSTER[lang])
    assert profile_for("s0", "en", 0, line="clean").condition.name == "clean"
