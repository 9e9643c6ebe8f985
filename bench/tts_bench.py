"""``callassist bench tts``: how well each voice survives a phone line.

Every template sentence the coordinator can say (``coordinator.render.all_wordings``,
the owner's name filled in) and every preset response of the built-in suites, in the
language asked for, is synthesized unit by unit the way calls speak it, sent through
the 8 kHz mu-law round trip of a phone line, and recognized by the service's Whisper
(with the zh prompt for Chinese). The figure is the round-trip recognition error
(CER for zh, WER for en, on normalised text) per voice, next to first-audio time
(synthesis of the sentence's first unit, which is what a caller waits for when the
sentence is not cached) and the real-time factor.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from .asr_error import error_rate, rate
from .stats import percentile

OWNER = {"zh": "陈先生", "en": "Alex"}
GAP_S = 0.15  # between units, as LocalTTS plays them


def sentences(lang: str, *, suites: tuple[str, ...] = ("builtin:dev", "builtin:test")) -> list[str]:
    """Template wordings and suite preset responses in ``lang``, deduplicated, in order."""
    from coordinator.render import all_wordings

    from .suite import load_suite
    from .textnorm import has_cjk

    texts = list(all_wordings(OWNER[lang], lang))
    for spec in suites:
        for sc in load_suite(spec):
            if sc.lang == lang:
                texts += [r for r in sc.presets.responses().values() if has_cjk(r) == (lang == "zh")]
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


def phone_band(pcm: bytes, rate_hz: int) -> np.ndarray:
    """int16 PCM -> 8 kHz mu-law and back -> float32 at 16 kHz (what Whisper gets)."""
    from .asr_bench import _phone

    return _phone(pcm, rate_hz)


def _speak(engine: Any, text: str) -> tuple[bytes, int, float, float]:
    """(pcm, rate, first-unit seconds, total synthesis seconds) for one sentence."""
    from pipeline.tts import trim_silence, units

    chunks: list[bytes] = []
    first = total = 0.0
    rate_hz = int(getattr(engine, "rate", 0)) or 22050
    for i, unit in enumerate(units(text)):
        t0 = time.perf_counter()
        audio = trim_silence(engine.synthesize(unit))
        dt = time.perf_counter() - t0
        total += dt
        if i == 0:
            first = dt
        rate_hz = audio.rate
        chunks += [audio.pcm, b"\x00\x00" * int(GAP_S * audio.rate)]
    return b"".join(chunks), rate_hz, first, total


def run_tts_bench(*, lang: str, voices: list[str], limit: int | None = None, out: Path | None = None) -> dict[str, Any]:
    from pipeline.asr import SpeechRecognizer
    from pipeline.tts_config import engine_factory

    texts = sentences(lang)[:limit] if limit else sentences(lang)
    asr = SpeechRecognizer()
    asr.load()
    report: dict[str, Any] = {"lang": lang, "sentences": len(texts), "voices": {}}
    for spec in voices:
        engine = engine_factory(spec, lang)()
        engine.synthesize("你好。" if lang == "zh" else "Hello.")  # warm-up: one-off costs
        errors = length = 0
        firsts: list[float] = []
        rtf: list[float] = []
        rows: list[dict[str, Any]] = []
        for text in texts:
            pcm, rate_hz, first, total = _speak(engine, text)
            heard = asr.transcribe_sync(phone_band(pcm, rate_hz), lang)
            e, n = error_rate(text, heard.text, lang)
            errors, length = errors + e, length + n
            firsts.append(first * 1000)
            seconds = len(pcm) / 2 / rate_hz
            rtf.append(total / seconds if seconds else 0.0)
            conf = heard.confidence.as_dict() if heard.confidence else {}
            rows.append({"text": text, "heard": heard.text, "errors": e, "length": n, **conf})
        worst = sorted(rows, key=lambda r: -rate(r["errors"], r["length"]))[:8]
        report["voices"][spec] = {
            "engine": engine.name,
            "error_rate": round(rate(errors, length), 4),
            "sentences_exact": sum(1 for r in rows if r["errors"] == 0),
            "first_audio_ms_p50": round(percentile(firsts, 50), 1),
            "first_audio_ms_p90": round(percentile(firsts, 90), 1),
            "rtf_p50": round(percentile(rtf, 50), 3),
            "worst": [{k: r[k] for k in ("text", "heard", "errors")} for r in worst],
            "rows": rows,
        }
        _print_voice(spec, report["voices"][spec], lang, len(texts))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"tts-{lang}.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return report


def _print_voice(spec: str, v: dict[str, Any], lang: str, n: int) -> None:
    metric = "CER" if lang == "zh" else "WER"
    print(
        f"{spec:40} {metric} {v['error_rate'] * 100:5.1f}%  exact {v['sentences_exact']}/{n}  "
        f"first audio p50 {v['first_audio_ms_p50']:.0f} ms p90 {v['first_audio_ms_p90']:.0f} ms  "
        f"RTF {v['rtf_p50']:.2f}"
    )
    for w in v["worst"][:4]:
        print(f"    {w['text']!r} -> {w['heard']!r}")
