"""Callers for ``bench voice``: several synthesized voices per language (engine, speed,
pitch) and the phone line each call goes through (``bench.line_audio``).

No real human speech ships in any package found here (docs/benchmarks.md says what was
searched), so callers are synthesized: piper's joe voice and espeak-ng for English,
Kokoro's packaged voices for Chinese (not ``jf_gongitsune``, which is the assistant's),
varied in speed and pitch so the recognizer does not hear one voice all day.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from .line_audio import CONDITIONS, RATE, LineCondition, apply_line, speech_level, vary_voice


@dataclass(frozen=True, slots=True)
class CallerVoice:
    name: str
    spec: str  # pipeline.tts_config engine spec, speed included
    pitch: float = 1.0


ROSTER: dict[str, tuple[CallerVoice, ...]] = {
    "en": (
        CallerVoice("joe", "piper"),
        CallerVoice("joe-high-slow", "piper?speed=0.8", pitch=1.2),  # 0.96x tempo, higher voice
        CallerVoice("joe-low-fast", "piper?speed=1.25", pitch=0.88),  # 1.1x tempo, lower voice
        CallerVoice("espeak", "espeak"),
    ),
    "zh": (
        CallerVoice("kumo", "kokoro:jm_kumo"),
        CallerVoice("alpha-slow", "kokoro:jf_alpha?speed=0.9"),
        CallerVoice("nezumi-high", "kokoro:jf_nezumi?speed=0.85", pitch=1.1),
        CallerVoice("tebukuro-fast", "kokoro:jf_tebukuro?speed=1.1"),
    ),
}


@dataclass(frozen=True, slots=True)
class CallProfile:
    """Who calls and over what line: fixed per (scenario, attempt) by the seed."""

    voice: CallerVoice
    condition: LineCondition
    seed: int

    def label(self) -> dict[str, str]:
        return {"voice": self.voice.name, "condition": self.condition.name}


def profile_for(scenario_id: str, lang: str, index: int, *, line: str) -> CallProfile:
    """The index-th call of a run: voices and conditions cycle so every condition meets
    both languages; ``line`` is "clean", "realistic" or one condition's name."""
    digest = hashlib.sha256(f"{scenario_id}\x1f{index}".encode()).digest()
    seed = int.from_bytes(digest[:8], "big")
    names = list(CONDITIONS)
    cond = CONDITIONS[names[(index // 2) % len(names)]] if line == "realistic" else CONDITIONS[line]
    roster = ROSTER[lang]
    voice = roster[(index // 2) % len(roster)] if line != "clean" else roster[0]
    return CallProfile(voice, cond, seed)


class CallerVoices:
    """Synthesizes caller turns and puts them on the call's line (engines loaded once)."""

    def __init__(self) -> None:
        self._engines: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        self._talkers: list[np.ndarray] = []
        self.levels: dict[int, float] = {}  # profile seed -> the caller's speech RMS
        self._rendered: dict[tuple[str, str, int, int], tuple[bytes, float, dict[str, float]]] = {}

    def _engine(self, spec: str, lang: str) -> Any:
        from pipeline.tts_config import engine_factory

        key = f"{lang}|{spec}"
        if key not in self._engines:
            self._engines[key] = engine_factory(spec, lang)()
        return self._engines[key]

    def _speech8k(self, text: str, lang: str, voice: CallerVoice) -> np.ndarray:
        import soxr

        from pipeline.tts import trim_silence

        # Engines pad a sentence with silence (Kokoro ~0.35 s before, ~0.6 s after): left
        # in, it would lengthen every pause the benches put between a caller's sentences
        # (a "0.3-0.9 s" pause was 1.2-1.9 s in Chinese) and move the end of speech past
        # the words, shortening the latency measured from it.
        audio = trim_silence(self._engine(voice.spec, lang).synthesize(text), lead_ms=30, tail_ms=60)
        pcm = np.frombuffer(audio.pcm, dtype=np.int16).astype(np.float32) / 32768
        pcm, rate = vary_voice(pcm, audio.rate, pitch=voice.pitch)
        peak = float(np.max(np.abs(pcm))) if pcm.size else 0.0
        if peak > 0:
            pcm = pcm * (0.7 / peak)  # callers speak at a phone's usual level
        return np.asarray(soxr.resample(pcm, rate, RATE), dtype=np.float32)

    def render(self, text: str, lang: str, profile: CallProfile, turn: int) -> tuple[bytes, float, dict[str, float]]:
        speech = self._speech8k(text, lang, profile.voice)
        self.levels[profile.seed] = speech_level(speech)
        if len(self._talkers) < 6:
            self._talkers.append(speech)  # later calls' babble: other callers' voices
        rng = random.Random(profile.seed + turn)
        ulaw, stats = apply_line(speech, profile.condition, rng, talkers=self._talkers)
        return ulaw, len(speech) / RATE, stats

    async def speak(
        self, text: str, lang: str, profile: CallProfile, turn: int = 0
    ) -> tuple[bytes, float, dict[str, float]]:
        """(mu-law bytes, seconds where the speech ends, line stats) for one caller turn
        (rendered once: :meth:`prepare` renders a run's turns ahead)."""
        key = (text, lang, profile.seed, turn)
        async with self._lock:
            if key not in self._rendered:
                self._rendered[key] = await asyncio.to_thread(self.render, text, lang, profile, turn)
            return self._rendered[key]

    async def prepare(self, calls: list[tuple[tuple[str | None, ...], str, CallProfile]]) -> None:
        """Render every caller turn of the run's calls ahead, in call order (the babble of a
        later call is made of earlier callers' voices, as when rendered during the run)."""
        for turns, lang, profile in calls:
            for i, text in enumerate(turns):
                if text:
                    await self.speak(text, lang, profile, i)

    async def idle(self, profile: CallProfile, speech_rms: float, seconds: float = 6.0) -> bytes:
        """The line's background between the caller's words (looped by the caller), at
        the condition's SNR below the caller's speech level ``speech_rms``."""
        if not profile.condition.noise:
            return b""
        async with self._lock:
            silence = np.zeros(int(seconds * RATE), dtype=np.float32)
            bed = LineCondition("idle", noise=profile.condition.noise, snr_db=profile.condition.snr_db)
            ulaw, _ = apply_line(
                silence, bed, random.Random(profile.seed), talkers=self._talkers, speech_rms=speech_rms
            )
            return ulaw
