"""Utterance-level figures: intent, exception, focus, form and trigger-match accuracy per
language, a confusion table of the primary intent, and calibration (ECE), for the learned
model and for the rules baseline on the same rows."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from coordinator.acts import classify
from coordinator.nlu.clauses import best_clause_prob, clause_scorer, clauses
from coordinator.nlu.features import PAIR_FEATURES
from coordinator.nlu.model import EXCEPTIONS, FOCI, FORMS, INTENTS, NLUModel, head_slices
from coordinator.turns import asking
from presets.matching import trigger_variants

from .data import EmbeddingCache, Split, TriggerPair, load_split
from .train import _probs, features, pair_matrix


def ece(conf: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: |accuracy - confidence| per equal-width bin, weighted."""
    if not len(conf):
        return 0.0
    edges = np.linspace(0.0, 1.0, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = (conf > lo) & (conf <= hi) if lo > 0 else (conf >= lo) & (conf <= hi)
        if inside.any():
            total += inside.mean() * abs(float(correct[inside].mean()) - float(conf[inside].mean()))
    return float(total)


def _pct(x: float) -> float:
    return round(100.0 * x, 1)


def evaluate_utterances(model: NLUModel, split: Split, cache: EmbeddingCache) -> dict[str, Any]:
    utts = split.utterances
    if not utts:
        return {}
    z = features(utts, cache) @ model.W
    p = _probs(z, model.temperatures)
    s = head_slices()
    pi = p[:, s["intents"]]
    top = pi.argmax(axis=1)
    out: dict[str, Any] = {}
    confusion: Counter[tuple[str, str]] = Counter()
    for lang in ("zh", "en", "all"):
        idx = [i for i, u in enumerate(utts) if lang in ("all", u.lang)]
        if not idx:
            continue
        ok_top = np.array([INTENTS[top[i]] in utts[i].intents for i in idx], dtype=float)
        prim = np.array([INTENTS[top[i]] == utts[i].intents[0] for i in idx], dtype=float)
        rules_ok = np.array([_rules_act(utts[i]) in utts[i].intents for i in idx], dtype=float)
        pred = pi[idx] >= model.intent_threshold
        gold = np.array([[n in utts[i].intents for n in INTENTS] for i in idx])
        tp = float(np.sum(pred & gold))
        exact = float(np.mean(np.all(pred == gold, axis=1)))
        heads = {}
        for name, labels, attr in (("exception", EXCEPTIONS, "exception"), ("focus", FOCI, "focus"),
                                   ("form", FORMS, "form")):  # fmt: skip
            guess = p[idx][:, s[name]].argmax(axis=1)
            heads[name] = _pct(
                float(np.mean([labels[g] == getattr(utts[i], attr) for g, i in zip(guess, idx, strict=True)]))
            )
        out[lang] = {
            "n": len(idx),
            "top_intent_in_gold": _pct(float(ok_top.mean())),
            "primary_intent": _pct(float(prim.mean())),
            "rules_act_in_gold": _pct(float(rules_ok.mean())),
            "intent_micro_f1": _pct(2 * tp / max(1.0, float(pred.sum() + gold.sum()))),
            "intent_exact_set": _pct(exact),
            **heads,
            "ece_top_intent": round(ece(pi[idx].max(axis=1), ok_top), 3),
        }
    for i, u in enumerate(utts):
        if INTENTS[top[i]] not in u.intents:  # the model's top intent is none of the gold ones
            confusion[(u.intents[0], INTENTS[top[i]])] += 1
    out["confusion"] = {f"{g} -> {q}": n for (g, q), n in sorted(confusion.items()) if g != q}
    return out


_ACT_TO_INTENT = {"silence": "other"}


def _rules_act(u: Any) -> str:
    act = classify(u.text).act.value
    return _ACT_TO_INTENT.get(act, act)


def evaluate_pairs(model: NLUModel, pairs: list[TriggerPair], cache: EmbeddingCache) -> dict[str, Any]:
    if not pairs:
        return {}
    f = pair_matrix(pairs, cache)
    prob = np.array([model.trigger_prob_from_features(row) for row in f])
    whole = prob.copy()
    prob = np.maximum(prob, _clause_probs(model, pairs, cache))  # as LearnedUnderstander.trigger reads a long turn
    y = np.array([p.match for p in pairs], dtype=bool)
    rules = np.array(_rules_pairs(pairs, cache))
    learned = rules | (prob >= model.trigger_threshold)  # as LearnedUnderstander.trigger decides
    out: dict[str, Any] = {}
    for lang in ("zh", "en", "all"):
        idx = np.array([i for i, p in enumerate(pairs) if lang in ("all", p.lang)])
        if not len(idx):
            continue
        conf = np.where(learned[idx], prob[idx], 1 - prob[idx])
        out[lang] = {
            "n": len(idx),
            "learned_accuracy": _pct(float(np.mean(learned[idx] == y[idx]))),
            "model_only_accuracy": _pct(float(np.mean((prob[idx] >= 0.5) == y[idx]))),
            "rules_accuracy": _pct(float(np.mean(rules[idx] == y[idx]))),
            "learned_false_match": int(np.sum(learned[idx] & ~y[idx])),
            "learned_missed": int(np.sum(~learned[idx] & y[idx])),
            "rules_false_match": int(np.sum(rules[idx] & ~y[idx])),
            "rules_missed": int(np.sum(~rules[idx] & y[idx])),
            "ece": round(ece(prob[idx], y[idx].astype(float)), 3),
            "ece_decision": round(ece(conf, (learned[idx] == y[idx]).astype(float)), 3),
        }
    kinds: dict[str, dict[str, float]] = {}
    for kind in sorted({p.kind for p in pairs}):
        idx = np.array([i for i, p in enumerate(pairs) if p.kind == kind])
        kinds[kind] = {
            "n": len(idx),
            "learned": _pct(float(np.mean(learned[idx] == y[idx]))),
            "rules": _pct(float(np.mean(rules[idx] == y[idx]))),
        }
    out["by_kind"] = kinds
    out["clauses_changed"] = {  # pairs the clause scoring turned from no match into a match
        kind: int(np.sum((prob >= model.trigger_threshold) & (whole < model.trigger_threshold) & ~rules & kind_mask))
        for kind, kind_mask in (
            ("match", y),
            ("no_match", ~y),
            *((k, np.array([p.kind == k for p in pairs])) for k in sorted(kinds)),
        )
    }
    return out


def _clause_probs(model: NLUModel, pairs: list[TriggerPair], cache: EmbeddingCache) -> np.ndarray:
    """The best clause's probability per pair (coordinator/nlu/clauses.py), 0 for a short turn."""
    variants = {p.trigger: trigger_variants(p.trigger) for p in pairs}
    out = np.zeros(len(pairs))
    for i, p in enumerate(pairs):
        if not clauses(p.utterance):
            continue
        c = classify(p.utterance, scene=p.scene)
        if not asking(c):
            continue  # as LearnedUnderstander._clause_probs: a turn that asks nothing is read whole
        score = clause_scorer(model, "sales" in c.cues, asking(c))
        tv = cache.embed(variants[p.trigger])
        out[i] = best_clause_prob(p.utterance, [(p.trigger, tv)], lambda t: cache.embed([t])[0], score).get(0, 0.0)
    return out


def _rules_pairs(pairs: list[TriggerPair], cache: EmbeddingCache) -> list[bool]:
    """The rule matcher's verdict per pair, told the rules' pitch / asking reading as in a call."""
    return [bool(row[PAIR_FEATURES.index("rule_match")] > 0.5) for row in pair_matrix(pairs, cache)]


def evaluate(model: NLUModel, folder: Path, cache: EmbeddingCache) -> dict[str, Any]:
    split = load_split(folder)
    pairs, source = split.pairs, str(folder)
    if folder.name == "dev" and not pairs:
        # No dev pair files: the pairs training held out of train for the threshold (same seed).
        from .train import TrainConfig, _splits

        seed = int(model.meta.get("seed", TrainConfig.seed))  # type: ignore[call-overload]
        _, dev, _ = _splits(TrainConfig(data=folder.parent, seed=seed), lambda *_: None)
        pairs, source = dev.pairs, "held out of train (as in training)"
    return {
        "folder": str(folder),
        "utterances": evaluate_utterances(model, split, cache),
        "triggers": {**evaluate_pairs(model, pairs, cache), "pairs_from": source} if pairs else {},
    }
