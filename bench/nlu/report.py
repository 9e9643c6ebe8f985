"""``callassist bench nlu``: print (and optionally write) the utterance-level figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from coordinator.nlu.model import NLUModel

from .data import EmbeddingCache
from .evaluate import evaluate


def run_nlu_bench(folder: Path, *, out: Path | None = None, console: Console | None = None) -> dict[str, Any] | None:
    console = console or Console()
    if not any(folder.rglob("*.jsonl")):
        console.print(f"[red]no corpus files under {folder}[/red]")
        return None
    model = NLUModel.load()
    report = evaluate(model, folder, EmbeddingCache())
    report["weights"] = {k: model.meta.get(k) for k in ("data_sha256", "seed", "counts", "dev_source")}
    utt = report["utterances"]
    if utt:
        t = Table(title=f"utterances: {folder}")
        cols = ("n", "top_intent_in_gold", "rules_act_in_gold", "intent_micro_f1", "exception", "focus", "form",
                "ece_top_intent")  # fmt: skip
        t.add_column("lang")
        for c in cols:
            t.add_column(c, justify="right")
        for lang in ("zh", "en", "all"):
            if lang in utt:
                t.add_row(lang, *(str(utt[lang][c]) for c in cols))
        console.print(t)
        conf = sorted(utt.get("confusion", {}).items(), key=lambda kv: -kv[1])[:15]
        if conf:
            ct = Table(title="most frequent primary-intent confusions (gold -> predicted)")
            ct.add_column("gold -> predicted")
            ct.add_column("n", justify="right")
            for k, n in conf:
                ct.add_row(k, str(n))
            console.print(ct)
    trg = report["triggers"]
    if trg:
        t = Table(title=f"trigger pairs: {folder}")
        cols = ("n", "learned_accuracy", "rules_accuracy", "model_only_accuracy", "learned_false_match",
                "learned_missed", "rules_false_match", "rules_missed", "ece")  # fmt: skip
        t.add_column("lang")
        for c in cols:
            t.add_column(c, justify="right")
        for lang in ("zh", "en", "all"):
            if lang in trg:
                t.add_row(lang, *(str(trg[lang][c]) for c in cols))
        console.print(t)
        kinds = trg.get("by_kind", {})
        if kinds:
            kt = Table(title=f"trigger pairs by kind ({trg.get('pairs_from', folder)})")
            names = sorted({c for row in kinds.values() for c in row})
            kt.add_column("kind")
            for c in names:
                kt.add_column(c, justify="right")
            for kind, row in kinds.items():
                kt.add_row(kind, *(str(row.get(c, "")) for c in names))
            console.print(kt)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1, ensure_ascii=False), "utf-8")
        console.print(f"wrote {out}")
    return report
