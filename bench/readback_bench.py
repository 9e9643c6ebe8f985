"""``callassist bench readback``: callback numbers exact before and after the read-back.

Each call: a caller gives a callback number in one sentence (seeded formats per language:
digit words, "oh" and "double", pairs, grouped, 幺 and 两, Arabic digits), synthesized
with the bench's caller voices and put on the realistic line (``bench.callers``,
``bench.line_audio``), recognized by the real Whisper model with the call path's
hotwords and re-decoding policy, then handed to the real coordinator with its confidence.
The simulated caller answers like a person: it repeats the sentence when asked to (low
confidence), says yes when the number read back is right, and "no, it's ..." with the
number again (a new utterance over the same line) when it is wrong.

Reported per language: calls, numbers exact *before* read-back (what the record would
keep from the first recognition), exact *after* (the record's final value), confirmed,
read-backs and repeat requests per call, and what re-decoding cost (extra ms per turn).
"""

from __future__ import annotations

import audioop
import json
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .callers import CallerVoices, profile_for

_EN_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_ZH_WORDS = "零一二三四五六七八九"
_EN_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
_EN_FRAMES = [
    "My number is {n}.",
    "You can reach me at {n}.",
    "Please have Alex call me back at {n}.",
    "This is Dana from the clinic, call me back on {n}, thanks.",
    "It's about the invoice. My cell is {n}.",
    "Could you ask him to call me at {n}?",
]
_ZH_FRAMES = [
    "我的电话是{n}。",
    "麻烦让陈先生回电话到{n}。",
    "你记一下我的手机号，{n}。",
    "我是快递员，号码{n}，到了给我打电话。",
    "有事打我手机{n}，谢谢。",
    "我姓王，回电号码是{n}。",
]


@dataclass(frozen=True)
class Case:
    lang: str
    number: str  # the digits
    said: str  # the sentence the caller says
    form: str  # how the digits are spoken


def _en_digits(d: str, *, zero: str = "oh", doubles: bool = False) -> str:
    out: list[str] = []
    i = 0
    while i < len(d):
        if doubles and i + 1 < len(d) and d[i] == d[i + 1]:
            out.append("double " + _EN_WORDS[int(d[i])])
            i += 2
            continue
        out.append(zero if d[i] == "0" else _EN_WORDS[int(d[i])])
        i += 1
    return " ".join(out)


def _en_pair(p: str) -> str:
    a, b = int(p[0]), int(p[1])
    if a < 2:
        return _en_digits(p)
    return _EN_TENS[a] + ("" if b == 0 else "-" + _EN_WORDS[b])


def en_spoken(number: str, form: str) -> str:
    a, b, c = number[:3], number[3:6], number[6:]
    if form == "digits":
        return f"{a} {b} {c}"
    if form == "dashes":
        return f"{a}-{b}-{c}"
    if form == "zero":
        return ", ".join(_en_digits(x, zero="zero") for x in (a, b, c))
    if form == "double":
        return ", ".join(_en_digits(x, doubles=True) for x in (a, b, c))
    if form == "pairs":
        return f"{_en_digits(a)}, {_en_digits(b)}, {_en_pair(c[:2])} {_en_pair(c[2:])}"
    return ", ".join(_en_digits(x) for x in (a, b, c))  # "words": oh for zero


def zh_spoken(number: str, form: str) -> str:
    groups = (number[:3], number[3:7], number[7:])
    if form == "digits":
        return " ".join(groups)
    table = {"yao": {"1": "幺"}, "liang": {"2": "两"}, "ling": {"0": "〇"}}.get(form, {})
    words = ["".join(table.get(ch, _ZH_WORDS[int(ch)]) for ch in g) for g in groups]
    return "".join(words) if form == "run" else "，".join(words)


EN_FORMS = ("words", "digits", "double", "zero", "pairs", "dashes")
ZH_FORMS = ("grouped", "run", "yao", "liang", "ling", "digits")


def cases(per_lang: int, seed: int = 14) -> list[Case]:
    """``per_lang`` callback sentences per language, formats and frames cycling."""
    rng = random.Random(seed)
    out: list[Case] = []
    for i in range(per_lang):
        form = EN_FORMS[i % len(EN_FORMS)]
        number = f"{rng.randint(2, 9)}{rng.randint(0, 99):02d}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"
        if form == "double":
            number = number[:7] + number[6] + number[8:]  # make a pair to say "double"
        frame = _EN_FRAMES[(i // len(EN_FORMS) + i) % len(_EN_FRAMES)]
        out.append(Case("en", number, frame.format(n=en_spoken(number, form)), form))
    for i in range(per_lang):
        form = ZH_FORMS[i % len(ZH_FORMS)]
        number = "1" + rng.choice("3456789") + "".join(rng.choice("0123456789") for _ in range(9))
        if form == "liang" and "2" not in number:
            number = number[:5] + "2" + number[6:]
        if form == "ling" and "0" not in number:
            number = number[:8] + "0" + number[9:]
        frame = _ZH_FRAMES[(i // len(ZH_FORMS) + i) % len(_ZH_FRAMES)]
        out.append(Case("zh", number, frame.format(n=zh_spoken(number, form)), form))
    return out


def _correction(case: Case) -> str:
    if case.lang == "zh":
        return f"不对，是{zh_spoken(case.number, 'grouped')}。"
    return f"No, it's {en_spoken(case.number, 'words')}."


def _confirm(case: Case) -> str:
    return "对，没错。" if case.lang == "zh" else "Yes, that's right."


class _Line:
    """One call's caller on its line: say a sentence, get what Whisper heard."""

    def __init__(self, asr: Any, voices: CallerVoices, case: Case, index: int, hotwords: str) -> None:
        self.asr, self.voices, self.case, self.hotwords = asr, voices, case, hotwords
        self.profile = profile_for(f"readback-{case.lang}-{index}", case.lang, 2 * index, line="realistic")
        self.turn = 0
        self.timing: list[dict[str, Any]] = []

    def say(self, text: str) -> Any:
        import soxr

        from pipeline.asr import RedecodePolicy

        ulaw, _, _ = self.voices.render(text, self.case.lang, self.profile, self.turn)
        self.turn += 1
        pcm = np.frombuffer(audioop.ulaw2lin(ulaw, 2), dtype=np.int16).astype(np.float32) / 32768
        audio = np.asarray(soxr.resample(pcm, 8000, 16000), dtype=np.float32)
        t0 = time.perf_counter()
        plain = self.asr.transcribe_sync(audio, self.case.lang, hotwords=self.hotwords, redecode=None)
        t1 = time.perf_counter()
        heard = self.asr.transcribe_sync(audio, self.case.lang, hotwords=self.hotwords, redecode=RedecodePolicy())
        t2 = time.perf_counter()
        conf = heard.confidence
        ran = plain.confidence is not None and RedecodePolicy().wants(plain.confidence, len(audio) / 16000)
        self.timing.append(
            {
                "plain_ms": round((t1 - t0) * 1000, 1),
                "redecode_ms": round((t2 - t1) * 1000, 1),
                "redecoded": bool(conf and conf.redecoded),
                "ran": ran,
                "plain_text": plain.text,
            }
        )
        return heard


def _value(text: str, lang: str) -> str | None:
    from coordinator.readback import extract

    found = [v.value for v in extract(text, lang, callback_context=True) if v.kind == "callback"]
    return found[0].lstrip("+") if found else None


def run_call(asr: Any, voices: CallerVoices, co: Any, case: Case, index: int) -> dict[str, Any]:
    from coordinator import CallContext, CallState
    from coordinator.types import Act
    from pipeline.asr_bias import call_hotwords

    owner = "陈先生" if case.lang == "zh" else "Alex"
    ctx = CallContext(owner_name=owner, lang=case.lang)  # type: ignore[arg-type]
    state = CallState(call_id=f"rb-{index}", lang=case.lang)  # type: ignore[arg-type]
    co.greet(state, ctx)
    line = _Line(asr, voices, case, index, call_hotwords(lang=case.lang, scene=None, owner_name=owner))
    last = case.said
    heard = line.say(last)
    first = heard.text
    dialogue: list[tuple[str, str, str]] = []
    asks = 0
    for _ in range(6):  # bounded: a read-back flow is a few turns
        score = heard.confidence.score if heard.confidence else None
        d = co.decide(state, ctx, heard.text, asr_confidence=score)
        dialogue.append((heard.text, d.act.value, d.text))
        if d.end_call:
            break
        if d.act == Act.ASK_REPEAT:  # the caller says the same thing again
            asks += 1
        elif d.act == Act.READ_BACK and state.readback is not None:
            items = [state.record.captured[i] for i in state.readback["items"]]
            right = any(it["kind"] == "callback" and it["value"].lstrip("+") == case.number for it in items)
            last = _confirm(case) if right else _correction(case)
        elif d.act == Act.READ_BACK:  # "could you say the number again?"
            last = _correction(case)
        else:
            break
        heard = line.say(last)
    rec = state.record
    final = (rec.callback_number or "").lstrip("+") or None
    return {
        "lang": case.lang,
        "form": case.form,
        "number": case.number,
        "said": case.said,
        "condition": line.profile.condition.name,
        "voice": line.profile.voice.name,
        "heard_first": first,
        "before": _value(first, case.lang),
        "before_plain": _value(line.timing[0]["plain_text"], case.lang),
        "after": final,
        "confirmed": rec.callback_confirmed,
        "readbacks": sum(1 for _, act, _ in dialogue if act == "read_back"),
        "repeat_asks": asks,
        "dialogue": dialogue,
        "timing": line.timing,
    }


def _pct(n: int, d: int) -> float | None:
    return round(100 * n / d, 1) if d else None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang in ("en", "zh"):
        mine = [r for r in rows if r["lang"] == lang]
        n = len(mine)
        turns = [t for r in mine for t in r["timing"]]
        ran = [t for t in turns if t["ran"]]
        out[lang] = {
            "calls": n,
            "exact_before_plain_pct": _pct(sum(r["before_plain"] == r["number"] for r in mine), n),
            "exact_before_pct": _pct(sum(r["before"] == r["number"] for r in mine), n),
            "exact_after_pct": _pct(sum(r["after"] == r["number"] for r in mine), n),
            "confirmed_pct": _pct(sum(bool(r["confirmed"]) for r in mine), n),
            "confirmed_but_wrong": sum(bool(r["confirmed"]) and r["after"] != r["number"] for r in mine),
            "readbacks_per_call": round(statistics.mean(r["readbacks"] for r in mine), 2) if n else None,
            "repeat_asks_per_call": round(statistics.mean(r["repeat_asks"] for r in mine), 2) if n else None,
            "turns": len(turns),
            "redecode_ran_pct": _pct(len(ran), len(turns)),
            "redecode_extra_ms_when_run_p50": round(statistics.median(t["redecode_ms"] - t["plain_ms"] for t in ran), 1)
            if ran
            else None,
            "plain_ms_p50": round(statistics.median(t["plain_ms"] for t in turns), 1) if turns else None,
        }
    return out


def run_readback_bench(*, per_lang: int, out: Path | None) -> dict[str, Any]:
    from coordinator import Coordinator
    from coordinator.nlu import LearnedUnderstander
    from pipeline.asr import SpeechRecognizer
    from presets.matching import Embedder

    asr = SpeechRecognizer()
    asr.load()
    voices = CallerVoices()
    co = Coordinator(understander=LearnedUnderstander(embed=Embedder().embed_one))  # the call path's default
    rows = [run_call(asr, voices, co, case, i) for i, case in enumerate(cases(per_lang))]
    report = {"per_lang": per_lang, "summary": summarize(rows)}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "readback.json").write_text(
            json.dumps({**report, "rows": rows}, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    _print(report["summary"])
    return report


def _print(summary: dict[str, Any]) -> None:
    print("callback numbers over the realistic line (Whisper base, real coordinator, simulated caller)")
    for lang, s in summary.items():
        print(
            f"  {lang}: {s['calls']} calls; exact before read-back {s['exact_before_pct']}% "
            f"(no re-decode {s['exact_before_plain_pct']}%), after {s['exact_after_pct']}%; "
            f"confirmed {s['confirmed_pct']}% ({s['confirmed_but_wrong']} confirmed but wrong); "
            f"read-backs/call {s['readbacks_per_call']}, repeat requests/call {s['repeat_asks_per_call']}"
        )
        print(
            f"      re-decode ran on {s['redecode_ran_pct']}% of {s['turns']} turns, "
            f"+{s['redecode_extra_ms_when_run_p50']} ms p50 when it ran (first decode p50 {s['plain_ms_p50']} ms)"
        )
