"""Speech resumed, heard from the line's energy before the VAD reports it.

Silero VAD reports a caller who goes on after a pause 0.3-0.5 s after they do (more on
some synthesized Mandarin voices), so a turn held for "does the caller go on?" had to
wait the pause *plus* that delay. The line audio itself says much sooner whether
anything happened: :class:`LineOnset` keeps the call's noise floor (a low percentile of
the level of its 20 ms frames while the VAD hears no speech: this pause and the call's
silences before it) and reports an *onset* when a few consecutive frames are several dB
above it. It is one-sided evidence, used only one way (``TurnTranscriber.hold_pause``):
a pause in which the line stayed at its floor can end the turn at the pause itself; any
onset (a caller going on, a cough, a noise burst, a click train, a noisy line's
fluctuation) sends the hold back to waiting for the VAD as before, so a false onset
costs latency, never a turn.

Pure numpy, a few microseconds a frame; no state shared beyond one call.
"""

from __future__ import annotations

from collections import deque

import numpy as np

RATE = 16000
FRAME_S = 0.02
#: An onset: this many consecutive 20 ms frames ...
ONSET_FRAMES = 3
#: ... each at least this many dB above the noise floor. Speech at 10 dB SNR is ~10 dB
#: above a stationary floor; a 20 ms frame of stationary line noise varies by ~1 dB.
ONSET_RISE_DB = 6.0
#: The floor is never taken below this (dBFS): a digitally silent line (G.711 idle code,
#: the bench's padding) would otherwise call its quantization steps speech (~-70 dBFS).
MIN_FLOOR_DB = -60.0
#: The floor: this percentile of the frames heard without speech, over the last ...
FLOOR_PERCENTILE = 10.0
FLOOR_WINDOW_S = 3.0
#: ... once at least this many such frames exist (before that the detector is unsure,
#: and an unsure detector never shortens a hold).
MIN_FLOOR_FRAMES = 5


def frame_db(frame: np.ndarray) -> float:
    """Level of int16 samples in dBFS (full scale 32768); -120 for digital silence."""
    x = frame.astype(np.float64)
    power = float(np.mean(x * x)) if x.size else 0.0
    return 10.0 * np.log10(power / (32768.0**2)) if power > 0 else -120.0


class LineOnset:
    """Per-call onset detector fed with the caller's 16 kHz int16 PCM as it arrives."""

    def __init__(self, rate: int = RATE) -> None:
        self._frame = int(rate * FRAME_S)
        self._carry = b""
        self._quiet_db: deque[float] = deque(maxlen=int(FLOOR_WINDOW_S / FRAME_S))
        self._run = 0  # consecutive loud frames so far
        self.frames = 0  # 20 ms frames heard on this call
        self.last_onset: int | None = None  # frame index where the latest onset began
        self._last_loud = -1  # the latest frame above floor + rise (the speech's tail, too)

    def floor_db(self) -> float | None:
        """The call's noise floor in dBFS; None while too little non-speech was heard."""
        if len(self._quiet_db) < MIN_FLOOR_FRAMES:
            return None
        return max(MIN_FLOOR_DB, float(np.percentile(np.fromiter(self._quiet_db, float), FLOOR_PERCENTILE)))

    def feed(self, pcm: bytes, *, speech: bool) -> None:
        """Line audio; ``speech``: whether the VAD currently hears the caller speaking
        (those frames are not the floor)."""
        data = self._carry + pcm
        whole = len(data) // (2 * self._frame) * 2 * self._frame
        self._carry = data[whole:]
        samples = np.frombuffer(data[:whole], dtype=np.int16)
        for frame in samples.reshape(-1, self._frame) if whole else ():
            self._frame_in(frame_db(frame), speech)

    def _frame_in(self, db: float, speech: bool) -> None:
        floor = self.floor_db()
        loud = floor is not None and db >= floor + ONSET_RISE_DB
        self._run = self._run + 1 if loud else 0
        if loud or floor is None:
            self._last_loud = self.frames
        if self._run == ONSET_FRAMES:
            self.last_onset = self.frames - ONSET_FRAMES + 1
        if not speech:
            self._quiet_db.append(db)
        self.frames += 1

    def silent_s(self) -> float:
        """How long the line has been at its floor, by its energy: a voice's soft tail
        (which the VAD may already count as silence) is not silence here."""
        return (self.frames - 1 - self._last_loud) * FRAME_S

    def quiet_since(self, frame: int) -> bool:
        """True when the line has stayed at its floor from frame ``frame`` on: the floor
        is known and no onset began at or after it, nor is one building up now."""
        if self.floor_db() is None:
            return False
        if self.last_onset is not None and self.last_onset + ONSET_FRAMES - 1 >= frame:
            return False
        return self._run == 0
