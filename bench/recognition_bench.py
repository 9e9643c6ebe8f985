"""``callassist bench recognition``: Whisper on the realistic line, before and after
context biasing and re-decoding, and the confidence threshold chosen on data.

Caller turns of the built-in suites are synthesized with the bench's caller voices and
put through its line conditions (``bench.callers``, ``bench.line_audio``; the same
seeds as ``bench voice --line realistic``), then recognized three ways:

- ``scene``: today's hotwords (the scene's vocabulary and the owner's triggers);
- ``biased``: ``pipeline.asr_bias.call_hotwords`` (owner name, preset key terms, scene);
- ``biased+redecode``: the same, with beam re-decoding of low-confidence short turns.

Calibration: on the dev split, a turn is *misheard* when its error rate exceeds 25%
(enough to change what the coordinator reads); the avg-log-prob threshold that
maximises F1 of "ask for a repeat" against misheard is chosen there and reported on the
test split (precision: asks that were needed; recall: misheard turns caught).
"""

from __future__ import annotations

import audioop
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from .asr_error import error_rate
from .callers import CallerVoices, profile_for
from .scenario import Scenario

MISHEARD = 0.25
VARIANTS = ("scene", "biased", "biased+redecode")
GRID = [round(-1.4 + 0.05 * i, 2) for i in range(25)]  # -1.40 .. -0.20


def _pick(scenarios: list[Scenario], per_lang: int) -> list[Scenario]:
    out: list[Scenario] = []
    for lang in ("en", "zh"):
        out += [s for s in scenarios if s.lang == lang and s.caller.adaptive is None][:per_lang]
    return out


def _rows(asr: Any, voices: CallerVoices, scenarios: list[Scenario]) -> list[dict[str, Any]]:
    import soxr

    from pipeline.asr import RedecodePolicy, hotwords_for
    from pipeline.asr_bias import call_hotwords

    rows: list[dict[str, Any]] = []
    seen = {"en": 0, "zh": 0}
    for sc in scenarios:
        # Conditions and voices cycle per language (profile_for steps every second index).
        profile = profile_for(sc.id, sc.lang, 2 * seen[sc.lang], line="realistic")
        seen[sc.lang] += 1
        triggers = [p.trigger for p in sc.presets.emergent]
        texts = triggers + list(sc.presets.responses().values())
        regular_scenes = [sc.scene] if sc.presets.regular else []
        scene_hw = hotwords_for(sc.scene, sc.lang, triggers, scenes=regular_scenes)
        bias_hw = call_hotwords(lang=sc.lang, scene=sc.scene, owner_name=sc.owner.display_name, preset_texts=texts)
        for t, said in enumerate(sc.caller.turns):
            if not said:
                continue
            ulaw, _, _ = voices.render(said, sc.lang, profile, t)
            pcm = np.frombuffer(audioop.ulaw2lin(ulaw, 2), dtype=np.int16).astype(np.float32) / 32768
            audio = np.asarray(soxr.resample(pcm, 8000, 16000), dtype=np.float32)
            row: dict[str, Any] = {"lang": sc.lang, "condition": profile.condition.name, "said": said}
            for name, hw, redecode in (
                ("scene", scene_hw, None),
                ("biased", bias_hw, None),
                ("biased+redecode", bias_hw, RedecodePolicy()),
            ):
                t0 = time.perf_counter()
                heard = asr.transcribe_sync(audio, sc.lang, hotwords=hw, redecode=redecode)
                e, n = error_rate(said, heard.text, sc.lang)
                conf = heard.confidence
                row[name] = {
                    "heard": heard.text,
                    "errors": e,
                    "length": n,
                    "ms": round((time.perf_counter() - t0) * 1000, 1),
                    **(conf.as_dict() if conf else {}),
                }
            rows.append(row)
    return rows


def _error(rows: list[dict[str, Any]], variant: str, lang: str) -> float | None:
    mine = [r[variant] for r in rows if r["lang"] == lang]
    length = sum(r["length"] for r in mine)
    return round(sum(r["errors"] for r in mine) / length, 4) if length else None


def _flags(rows: list[dict[str, Any]], threshold: float) -> tuple[int, int, int]:
    """(true positives, flagged, misheard) for 'avg_logprob < threshold'."""
    tp = flagged = bad = 0
    for r in rows:
        b = r["biased"]
        is_bad = b["length"] > 0 and b["errors"] / b["length"] > MISHEARD
        ask = b["avg_logprob"] < threshold
        tp += int(is_bad and ask)
        flagged += int(ask)
        bad += int(is_bad)
    return tp, flagged, bad


def choose_threshold(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """(threshold, F1) maximising F1 on ``rows``; ties go to the lower threshold (fewer asks)."""
    best = (GRID[0], -1.0)
    for th in GRID:
        tp, flagged, bad = _flags(rows, th)
        p = tp / flagged if flagged else 0.0
        r = tp / bad if bad else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        if f1 > best[1] + 1e-9:
            best = (th, f1)
    return best


def run_recognition_bench(*, per_lang: int, out: Path | None) -> dict[str, Any]:
    from pipeline.asr import SpeechRecognizer

    from .suite import load_suite

    asr = SpeechRecognizer()
    asr.load()
    voices = CallerVoices()
    report: dict[str, Any] = {"misheard_above": MISHEARD, "splits": {}}
    split_rows: dict[str, list[dict[str, Any]]] = {}
    for split in ("dev", "test"):
        rows = _rows(asr, voices, _pick(load_suite(f"builtin:{split}"), per_lang))
        split_rows[split] = rows
        report["splits"][split] = {
            "turns": len(rows),
            "error": {
                v: {lang: _error(rows, v, lang) for lang in ("en", "zh")}
                for v in ("scene", "biased", "biased+redecode")
            },
        }
    threshold, f1 = choose_threshold(split_rows["dev"])
    tp, flagged, bad = _flags(split_rows["test"], threshold)
    report["threshold"] = {
        "avg_logprob_below": threshold,
        "dev_f1": round(f1, 3),
        "test_precision": round(tp / flagged, 3) if flagged else None,
        "test_recall": round(tp / bad, 3) if bad else None,
        "test_ask_rate": round(flagged / len(split_rows["test"]), 3) if split_rows["test"] else None,
    }
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "recognition.json").write_text(
            json.dumps({**report, "rows": split_rows}, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    _print(report)
    return report


def _print(report: dict[str, Any]) -> None:
    for split, s in report["splits"].items():
        print(f"{split}: {s['turns']} caller turns over the realistic line (CER zh / WER en)")
        for variant, by_lang in s["error"].items():
            cells = "  ".join(
                f"{lang} {v * 100:5.1f}%" if v is not None else f"{lang}   -" for lang, v in by_lang.items()
            )
            print(f"  {variant:16} {cells}")
    th = report["threshold"]
    print(
        f"ask-for-repeat threshold (chosen on dev): avg_logprob < {th['avg_logprob_below']} "
        f"(dev F1 {th['dev_f1']}); on test: precision {th['test_precision']}, recall {th['test_recall']}, "
        f"asks on {th['test_ask_rate']} of turns"
    )
