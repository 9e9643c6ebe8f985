"""``callassist bench asr``: Whisper on phone turns, 30 s window vs. CallAssist's short window.

Synthesized caller turns (piper for English, Kokoro for Chinese) go through the 8 kHz
mu-law round trip a phone line does, then through both decoding paths of
``pipeline.asr.SpeechRecognizer``; times are the best of ``repeats`` runs."""

from __future__ import annotations

import audioop
import time

import numpy as np

from .stats import percentile

TURNS = {
    "en": [
        "Hi, this is Priya from Zendesk. Is Alex around?",
        "Do you know where he is right now?",
        "Okay. Please tell him the contract is ready to sign. My number is 415 555 0134.",
        "Great, thanks. Bye!",
        "Hello, I'm outside with your food, nobody is answering the door.",
    ],
    "zh": [
        "喂，你好，你的外卖到了。",
        "他什么时候回来啊？",
        "好的，那我放门口了，再见。",
        "不好意思，路上汤洒了一点，你看怎么办？",
        "麻烦你跟他说一声，明天的会改到下午三点。",
    ],
}


def _phone(pcm: bytes, rate: int) -> np.ndarray:
    import soxr

    audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768
    x8 = soxr.resample(audio, rate, 8000)
    ulaw = audioop.lin2ulaw((np.clip(x8, -1, 1) * 32767).astype(np.int16).tobytes(), 2)
    back = np.frombuffer(audioop.ulaw2lin(ulaw, 2), dtype=np.int16).astype(np.float32) / 32768
    return np.asarray(soxr.resample(back, 8000, 16000), dtype=np.float32)


def run_asr_bench(*, repeats: int = 3) -> dict[str, object]:
    from pipeline.asr import SpeechRecognizer
    from pipeline.tts import KokoroZhEngine, PiperEngine

    engines = {"en": PiperEngine(), "zh": KokoroZhEngine(voice="jm_kumo")}
    asr = SpeechRecognizer()
    asr.load()
    rows = []
    short: list[float] = []
    full: list[float] = []
    for lang, texts in TURNS.items():
        for text in texts:
            a = engines[lang].synthesize(text)
            audio = _phone(a.pcm, a.rate)
            results = {}
            for name, fn in (("short", asr._decode), ("full", asr._decode_long)):
                best, out = 1e9, ""
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    out, _ = fn(audio, lang, None)
                    best = min(best, time.perf_counter() - t0)
                results[name] = (best, out)
            short.append(results["short"][0])
            full.append(results["full"][0])
            rows.append((lang, len(audio) / 16000, text, *results["short"], *results["full"]))
    for lang, secs, text, ts, s_out, tf, f_out in rows:
        print(
            f"{lang} {secs:4.1f}s  short {ts * 1000:5.0f} ms {s_out!r}\n"
            f"{'':9}full  {tf * 1000:5.0f} ms {f_out!r}  ({text})"
        )
    summary = {
        "short_p50_ms": round(percentile([x * 1000 for x in short], 50), 1),
        "full_p50_ms": round(percentile([x * 1000 for x in full], 50), 1),
        "turns": len(rows),
    }
    print(f"median per turn: short window {summary['short_p50_ms']} ms, 30 s window {summary['full_p50_ms']} ms")
    return summary
