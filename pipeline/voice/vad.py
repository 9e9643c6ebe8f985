"""The caller's voice activity over a noisy line: Silero, gated on the caller's level
above the line's running noise floor.

Silero scores *speech-like* audio, and background talkers (a café's babble, a TV) are
speech: over them Silero never stops hearing the caller, so the caller's turn never
ends and the assistant never answers (docs/benchmarks.md, "A realistic line"). The caller
is close to their microphone and the background is not: the caller's speech stands well
above the line's noise floor, the background sits on it. Once the background is found
speech-like, a window counts as speech only when Silero says so *and* its level is at
least ``margin_db`` above the floor.

The floor is a low percentile of the window levels over the last few seconds (minimum
statistics): a caller's turn has pauses between words where only the background is
heard, so the floor follows the background, not the caller. On a quiet line the floor is
the clamp (``FLOOR_MIN_DB``) and the gate never closes on speech.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams

MARGIN_DB = 12.0  # chosen on `python -m bench.vad_noise` (docs/voice.md); None/0 turns the gate off
WINDOW_S = 4.0  # the floor's memory: longer than a caller's longest run of words without a pause
FLOOR_PERCENTILE = 10.0
FLOOR_MIN_DB = -65.0  # a quiet line's floor (mu-law's quietest steps, dither)
WARM_S = 0.6  # no gating before this much audio: the floor is not known yet
# The gate closes only on a speech-like background (babble, TV: Silero calls the windows at
# the floor's level speech at least this often, a running mean): street noise or a quiet
# line, where Silero already tells the caller from the background, are left to Silero.
SPEECHLIKE_MIN = 0.3
SPEECHLIKE_RATE = 0.03  # per 32 ms window: about a second of background to learn it


def level_db(pcm16: bytes) -> float:
    """RMS level of 16-bit PCM in dBFS (-100 for digital silence)."""
    x = np.frombuffer(pcm16, dtype=np.int16).astype(np.float64)
    if x.size == 0:
        return -100.0
    rms = float(np.sqrt(np.mean(x * x))) / 32768.0
    return 20.0 * np.log10(rms) if rms > 1e-5 else -100.0


class NoiseFloor:
    """The line's running noise floor from window levels (dBFS), one update per window."""

    def __init__(self, *, windows: int, warm_windows: int) -> None:
        self._levels: deque[float] = deque(maxlen=max(1, windows))
        self._warm = warm_windows

    def update(self, level: float) -> float | None:
        """Adds one window's level; the floor, or None while it is not known yet."""
        self._levels.append(level)
        if len(self._levels) < self._warm:
            return None
        return max(FLOOR_MIN_DB, float(np.percentile(self._levels, FLOOR_PERCENTILE)))


class NoiseGatedVAD(SileroVADAnalyzer):
    """Silero VAD whose speech must also stand ``margin_db`` above the line's noise floor.

    ``gated`` counts the windows Silero called speech that the gate refused (a figure
    for the call's stats, and for the tests)."""

    def __init__(
        self,
        *,
        margin_db: float | None = MARGIN_DB,
        window_s: float = WINDOW_S,
        sample_rate: int | None = None,
        params: VADParams | None = None,
    ) -> None:
        super().__init__(sample_rate=sample_rate, params=params)
        self.margin_db = margin_db
        self._window_s = window_s
        self._floor: NoiseFloor | None = None
        self.floor_db: float | None = None
        self.speechlike = 0.0
        self.gated = 0

    def set_sample_rate(self, sample_rate: int) -> None:
        super().set_sample_rate(sample_rate)
        seconds = self.num_frames_required() / self.sample_rate
        self._floor = NoiseFloor(windows=round(self._window_s / seconds), warm_windows=round(WARM_S / seconds))

    def voice_confidence(self, buffer: bytes) -> float:
        confidence = float(np.ravel(super().voice_confidence(buffer))[0])  # Silero returns a 1-element array
        if not self.margin_db or self._floor is None:
            return confidence
        level = level_db(buffer)
        self.floor_db = self._floor.update(level)
        if self.floor_db is None or self.floor_db <= FLOOR_MIN_DB:
            return confidence  # a quiet line: nothing in the background to mistake for the caller
        if level >= self.floor_db + self.margin_db:
            return confidence
        # A window at the background's level: how often is the background speech-like?
        speech = confidence >= self.params.confidence
        self.speechlike += SPEECHLIKE_RATE * (float(speech) - self.speechlike)
        if speech and self.speechlike >= SPEECHLIKE_MIN:
            self.gated += 1
            return 0.0  # talkers or a TV behind the caller, not the caller
        return confidence
