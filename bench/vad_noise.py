"""Does the caller's turn end over background noise? The voice pipeline's VAD, offline.

``python -m bench.vad_noise --out var/bench/vad-noise`` takes caller sentences of the dev
split (their first turns first: the ones that open with "Hi," / "喂，"), synthesizes
them with ``bench voice``'s caller voices, puts each on a line condition of
``bench/line_audio.py`` with the condition's background filling the line before and
after the words (as ``bench voice`` does between turns), and runs the call path's VAD
over the 16 kHz audio in 20 ms frames, as the pipeline feeds it. Per language, condition
and VAD variant (plain Silero as the pipeline had it; :class:`NoiseGatedVAD` at several
margins) it reports:

- ``ended``: the VAD is quiet 1 s after the caller's last word and stays quiet to the end
  of the background (the turn can end; otherwise the call waits for ever);
- ``stop_lag_ms``: last word -> the VAD's stop;
- ``restarts``: speech started in the background after the turn (a phantom turn);
- ``false_starts``: speech started in the background before the caller spoke;
- ``mid_stops``: VAD stops inside the sentence (each an early end-of-turn check: cut-in risk);
- ``coverage``: share of the caller's voiced 20 ms frames the VAD counted as speech;
- ``start_lag_ms``: first voiced sample -> speech started; the turn recorder keeps a
  pre-roll (``pipeline.turns.PRE_ROLL_S``), so a lag longer than it loses the caller's
  first word ("Hi,") from the transcript.

No timing here depends on the machine (the audio is processed as fast as it goes); the
cost per window is measured and printed, and varies with the machine's load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from .callers import ROSTER, CallerVoices
from .line_audio import CONDITIONS, FRAME, RATE, apply_line, speech_level

LEAD_S, TAIL_S = 2.0, 3.0
VOICED_DB = -40.0
CHUNK = 640  # 20 ms of 16 kHz int16: what the transport hands the VAD


def sentences(lang: str, n: int, suite: str = "builtin:dev") -> list[str]:
    from .suite import load_suite

    scenarios = [s for s in load_suite(suite) if s.lang == lang]
    out: list[str] = []
    for turn in range(4):  # every scenario's first turn, then the second, ...
        for sc in scenarios:
            turns = [t for t in sc.caller.turns if t]
            if turn < len(turns) and turns[turn] not in out:
                out.append(turns[turn])
            if len(out) >= n:
                return out
    return out


def caller_speech(voices: CallerVoices, text: str, lang: str, voice_index: int, cache: Path) -> np.ndarray:
    voice = ROSTER[lang][voice_index % len(ROSTER[lang])]
    key = hashlib.sha256(f"{lang}|{voice.name}|{text}".encode()).hexdigest()[:20]
    path = cache / f"{key}.npy"
    if path.exists():
        return np.load(path)
    pcm = voices._speech8k(text, lang, voice)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, pcm)
    return pcm


def line16k(speech: np.ndarray, cond_name: str, seed: int, talkers: list[np.ndarray]) -> bytes:
    import audioop

    import soxr

    stream = np.concatenate([np.zeros(int(LEAD_S * RATE)), speech, np.zeros(int(TAIL_S * RATE))])
    ulaw, _ = apply_line(
        stream.astype(np.float32),
        CONDITIONS[cond_name],
        random.Random(seed),
        talkers=talkers,
        speech_rms=speech_level(speech),
    )
    pcm8 = np.frombuffer(audioop.ulaw2lin(ulaw, 2), dtype=np.int16).astype(np.float32) / 32768
    pcm16 = soxr.resample(pcm8, RATE, 16000)
    return (np.clip(pcm16, -1, 1) * 32767).astype(np.int16).tobytes()


def _analyzer(variant: str) -> Any:
    from pipecat.audio.vad.silero import SileroVADAnalyzer

    from pipeline.voice.vad import NoiseGatedVAD

    a = SileroVADAnalyzer() if variant == "silero" else NoiseGatedVAD(margin_db=float(variant.removeprefix("gate")))
    a.set_sample_rate(16000)
    return a


def run_vad(audio16: bytes, variant: str) -> tuple[list[tuple[float, str]], float, int]:
    """(state per 20 ms chunk: (end time s, state name)), seconds spent, windows scored)."""
    a = _analyzer(variant)
    states: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    for i in range(0, len(audio16) - CHUNK + 1, CHUNK):
        state = a._run_analyzer(audio16[i : i + CHUNK])
        states.append(((i + CHUNK) / 32000, state.name))
    spent = time.perf_counter() - t0
    a._executor.shutdown(wait=False)
    return states, spent, len(audio16) // (2 * a.num_frames_required())


def judge(states: list[tuple[float, str]], speech: np.ndarray) -> dict[str, Any]:
    onset, end = LEAD_S, LEAD_S + len(speech) / RATE
    frames = [speech[i : i + FRAME] for i in range(0, len(speech) - FRAME + 1, FRAME)]
    voiced = [
        LEAD_S + i * FRAME / RATE
        for i, f in enumerate(frames)
        if 20 * np.log10(np.sqrt(np.mean(f**2)) + 1e-9) > VOICED_DB
    ]
    first_voiced = voiced[0] if voiced else onset

    def active(t: float) -> bool:
        for ts, s in states:
            if ts >= t:
                return s in ("SPEAKING", "STOPPING")
        return False

    speaking = [
        ts
        for (ts, s), (_, prev) in zip(states[1:], states[:-1], strict=True)
        if s == "SPEAKING" and prev in ("QUIET", "STARTING")
    ]
    stops = [
        ts
        for (ts, s), (_, prev) in zip(states[1:], states[:-1], strict=True)
        if s == "QUIET" and prev in ("SPEAKING", "STOPPING")
    ]
    after = [s for ts, s in states if ts >= end + 1.0]
    ended = bool(after) and all(s in ("QUIET", "STARTING") for s in after)
    last_stop = max((t for t in stops if t >= end - 0.5), default=None)
    started = [t for t in speaking if t >= first_voiced - 0.05]
    return {
        "ended": ended,
        "stop_lag_ms": round((last_stop - end) * 1000, 1) if ended and last_stop is not None else None,
        "restarts": sum(1 for t in speaking if t > end + 0.3),
        "false_starts": sum(1 for t in speaking if t < first_voiced - 0.05),
        "mid_stops": sum(1 for t in stops if onset < t < end - 0.1),
        "coverage": round(sum(active(t + 0.02) for t in voiced) / len(voiced), 3) if voiced else None,
        "start_lag_ms": round((started[0] - first_voiced) * 1000, 1) if started else None,
    }


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def pct(vals: list[float], q: float) -> float | None:
        return round(float(np.percentile(vals, q)), 1) if vals else None

    lags = [r["stop_lag_ms"] for r in rows if r["stop_lag_ms"] is not None]
    starts = [r["start_lag_ms"] for r in rows if r["start_lag_ms"] is not None]
    cov = [r["coverage"] for r in rows if r["coverage"] is not None]
    return {
        "n": len(rows),
        "ended": sum(r["ended"] for r in rows),
        "stop_lag_p50_ms": pct(lags, 50),
        "stop_lag_p90_ms": pct(lags, 90),
        "restarts": sum(r["restarts"] for r in rows),
        "false_starts": sum(r["false_starts"] for r in rows),
        "mid_stops_per_turn": round(sum(r["mid_stops"] for r in rows) / len(rows), 2) if rows else None,
        "coverage": round(float(np.mean(cov)), 3) if cov else None,
        "start_lag_p50_ms": pct(starts, 50),
        "start_lag_max_ms": max(starts) if starts else None,
        "first_word_lost_at_0_5s": sum(1 for s in starts if s > 500),
        "first_word_lost_at_1_0s": sum(1 for s in starts if s > 1000),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("var/bench/vad-noise"))
    p.add_argument("--per-lang", type=int, default=8)
    p.add_argument("--suite", default="builtin:dev")
    p.add_argument("--conditions", default="clean,street15,babble12,tv18-clip,street10-alaw,loss3-jitter")
    p.add_argument("--variants", default="silero,gate6,gate8,gate10")
    p.add_argument("--langs", default="en,zh")
    args = p.parse_args(argv)
    voices = CallerVoices()
    cache = args.out / "speech"
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    cost: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for lang in args.langs.split(","):
        texts = sentences(lang, args.per_lang, args.suite)
        speech = [caller_speech(voices, t, lang, i, cache) for i, t in enumerate(texts)]
        for ci, cond in enumerate(args.conditions.split(",")):
            for i, (text, sp) in enumerate(zip(texts, speech, strict=True)):
                talkers = [s for j, s in enumerate(speech) if j != i]
                audio = line16k(sp, cond, 1000 * ci + i, talkers)
                for variant in args.variants.split(","):
                    states, spent, windows = run_vad(audio, variant)
                    cost[variant][0] += spent
                    cost[variant][1] += windows
                    r = judge(states, sp)
                    r.update(text=text, voice=ROSTER[lang][i % len(ROSTER[lang])].name)
                    rows[f"{lang}/{cond}/{variant}"].append(r)
    summary = {k: _summary(v) for k, v in rows.items()}
    per_window = {v: round(c[0] / c[1] * 1000, 3) for v, c in cost.items() if c[1]}
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"summary": summary, "ms_per_window": per_window, "rows": rows}
    (args.out / "vad-noise.json").write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print(
        "| lang/condition/VAD | ended | stop lag p50/p90 ms | restarts | false starts | mid stops/turn | coverage"
        " | start lag p50/max ms | first word lost (0.5 s / 1.0 s pre-roll) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for k, s in summary.items():
        print(
            f"| {k} | {s['ended']}/{s['n']} | {s['stop_lag_p50_ms']} / {s['stop_lag_p90_ms']} | {s['restarts']} | "
            f"{s['false_starts']} | {s['mid_stops_per_turn']} | {s['coverage']} | {s['start_lag_p50_ms']} / "
            f"{s['start_lag_max_ms']} | {s['first_word_lost_at_0_5s']} / {s['first_word_lost_at_1_0s']} |"
        )
    print(f"ms per 32 ms window (Silero + gate; machine shared, load varies): {per_window}")
    return report


if __name__ == "__main__":
    main()
