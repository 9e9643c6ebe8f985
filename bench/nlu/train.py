"""``callassist train nlu``: fit the learned understander's heads and trigger model.

Seeded and deterministic: the same data gives the same weights. Linear heads over
hashed character n-grams + e5 embeddings (coordinator/nlu/features.py), minibatch Adam
with L2, then one temperature per head fitted on dev (calibration) and the intent and
trigger thresholds picked on dev. The test split is never read here.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from coordinator.acts import classify
from coordinator.nlu.features import EMBED_DIM, PAIR_FEATURES, featurize_many, pair_features, span_features
from coordinator.nlu.model import HEADS, WEIGHTS_PATH, NLUModel, head_slices
from coordinator.turns import asking
from presets.matching import Candidate, match_trigger, trigger_variants

from .data import DATA_DIR, EmbeddingCache, Split, TriggerPair, Utterance, data_hash, load_split


@dataclass(frozen=True)
class TrainConfig:
    data: Path = DATA_DIR
    out: Path = WEIGHTS_PATH
    seed: int = 20261201
    epochs: int = 40
    batch: int = 256
    lr: float = 0.05
    l2: float = 1e-5
    cache: Path | None = Path("var/cache/nlu-e5.npz")


def targets(utts: list[Utterance]) -> np.ndarray:
    """One row per utterance: multi-hot intents, then one-hot exception / focus / form / scene."""
    s = head_slices()
    y = np.zeros((len(utts), s["scene"].stop), dtype=np.float32)
    labels = dict(HEADS)
    for i, u in enumerate(utts):
        for intent in u.intents:
            if intent in labels["intents"]:
                y[i, s["intents"].start + labels["intents"].index(intent)] = 1.0
        for name, value in (("exception", u.exception), ("focus", u.focus), ("form", u.form), ("scene", u.scene)):
            opts = labels[name]
            j = opts.index(value) if value in opts else (opts.index(None) if None in opts else 0)
            y[i, s[name].start + j] = 1.0
    return y


def features(utts: list[Utterance], cache: EmbeddingCache) -> np.ndarray:
    emb = cache.embed([u.text for u in utts])
    return featurize_many([u.text for u in utts], [u.context for u in utts], emb, [u.scene for u in utts])


def _probs(z: np.ndarray, temps: dict[str, float] | None = None) -> np.ndarray:
    """Per-head probabilities of a logit matrix (sigmoid for intents, softmax otherwise)."""
    p = np.empty_like(z)
    for name, sl in head_slices().items():
        zz = z[:, sl] / (temps or {}).get(name, 1.0)
        if name == "intents":
            p[:, sl] = 1.0 / (1.0 + np.exp(-np.clip(zz, -30, 30)))
        else:
            zz = zz - zz.max(axis=1, keepdims=True)
            e = np.exp(zz)
            p[:, sl] = e / e.sum(axis=1, keepdims=True)
    return p


def fit_heads(x: np.ndarray, y: np.ndarray, cfg: TrainConfig) -> np.ndarray:
    rng = np.random.default_rng(cfg.seed)
    n, d = x.shape
    k = y.shape[1]
    w = np.zeros((d, k), dtype=np.float32)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    b1, b2, eps = 0.9, 0.999, 1e-8
    step = 0
    for _ in range(cfg.epochs):
        order = rng.permutation(n)
        for start in range(0, n, cfg.batch):
            idx = order[start : start + cfg.batch]
            xb = x[idx]
            g = (_probs(xb @ w) - y[idx]) / len(idx)  # d(loss)/d(logits) for BCE and CE alike
            grad = xb.T @ g + cfg.l2 * w
            step += 1
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad * grad
            w -= cfg.lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + eps)
    return w


def _nll(p: np.ndarray, y: np.ndarray, binary: bool) -> float:
    p = np.clip(p, 1e-7, 1 - 1e-7)
    if binary:
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return float(-np.mean(np.sum(y * np.log(p), axis=1)))


def fit_temperatures(z: np.ndarray, y: np.ndarray) -> dict[str, float]:
    grid = np.round(np.arange(0.4, 3.01, 0.05), 2)
    temps: dict[str, float] = {}
    for name, sl in head_slices().items():
        best = min(grid, key=lambda t: _nll(_probs(z, {name: float(t)})[:, sl], y[:, sl], name == "intents"))
        temps[name] = float(best)
    return temps


def pick_intent_threshold(p: np.ndarray, y: np.ndarray) -> float:
    sl = head_slices()["intents"]
    best_t, best_f = 0.5, -1.0
    for t in np.round(np.arange(0.2, 0.71, 0.05), 2):
        pred = p[:, sl] >= t
        gold = y[:, sl] > 0.5
        tp = float(np.sum(pred & gold))
        f1 = 2 * tp / max(1.0, float(pred.sum() + gold.sum()))
        if f1 > best_f:
            best_t, best_f = float(t), f1
    return best_t


# ---------------------------------------------------------------- triggers ----


def pair_matrix(pairs: list[TriggerPair], cache: EmbeddingCache) -> np.ndarray:
    variants = {p.trigger: trigger_variants(p.trigger) for p in pairs}
    all_texts = sorted({t for vs in variants.values() for t in vs} | {p.utterance for p in pairs})
    vecs = dict(zip(all_texts, cache.embed(all_texts), strict=True))
    rows = []
    for p in pairs:
        u = vecs[p.utterance]
        tv = np.stack([vecs[t] for t in variants[p.trigger]])
        sims = tv @ u
        cos, t_vec = float(np.max(sims)), tv[int(np.argmax(sims))]
        c = classify(p.utterance, scene=p.scene)
        pitch, ask = "sales" in c.cues, asking(c)
        rule = match_trigger(p.utterance, u, [Candidate("t", p.trigger, tv)], pitch=pitch, asking=ask)
        rows.append(
            pair_features(
                p.trigger, p.utterance, cos, rule.id is not None, pitch=pitch, asking=ask, t_vec=t_vec, u_vec=u
            )
        )
    return np.stack(rows) if rows else np.zeros((0, len(PAIR_FEATURES) + 2 * EMBED_DIM), dtype=np.float32)


def fit_pairs(f: np.ndarray, y: np.ndarray, *, l2: float = 1e-3, steps: int = 5000) -> tuple[np.ndarray, ...]:
    mu = f.mean(axis=0)
    sd = f.std(axis=0) + 1e-6
    bias = PAIR_FEATURES.index("bias")
    mu[bias], sd[bias] = 0.0, 1.0
    n = len(PAIR_FEATURES)
    mu[n:], sd[n:] = 0.0, 1.0  # the embedding interaction block is already scaled
    xs = (f - mu) / sd
    w = np.zeros(f.shape[1], dtype=np.float64)
    for _ in range(steps):  # Newton would do; plain gradient descent is enough for 11 weights
        p = 1.0 / (1.0 + np.exp(-(xs @ w)))
        w -= 0.5 * (xs.T @ (p - y) / len(y) + l2 * w)
    return w.astype(np.float32), mu.astype(np.float32), sd.astype(np.float32)


FALSE_MATCH_COST = 3.0  # conveying an owner's answer to the wrong caller vs missing one


def pick_trigger_threshold(p: np.ndarray, y: np.ndarray, rule: np.ndarray) -> float:
    """A match is the rule matcher's pick or a probability at least this cut: the cut that
    maximises matches found minus ``FALSE_MATCH_COST`` per false match (conveying an owner's
    answer to the wrong caller costs more than missing one); ties go to the higher cut.
    (Until stop 12 the cut had to add no false match at all over the rules': on paraphrased,
    who-calls and cross-lingual triggers that left most matches to the rules, which miss them.)"""
    gold = y > 0.5
    cuts = np.round(np.arange(0.3, 0.96, 0.025), 3)
    gain = {}
    for c in cuts:
        said = rule | (p >= c)
        gain[float(c)] = float(np.sum(said & gold)) - FALSE_MATCH_COST * float(np.sum(said & ~gold))
    best = max(gain.values())
    return max(c for c, g in gain.items() if g >= best - 1e-9)


# ------------------------------------------------------------ caller field ----


def caller_spans(utts: list[Utterance]) -> tuple[np.ndarray, np.ndarray]:
    """Spans the rule extractor offers as "who is calling", labelled by whether they are
    (part of) a labelled caller_name / company / role of that turn."""
    from coordinator.acts import _self_id

    rows, ys = [], []
    for u in utts:
        who = _self_id(u.text)
        if who is None:
            continue
        ids = [v for k, v in u.slots.items() if k in ("caller_name", "company", "role")]
        rows.append(span_features(who))
        ys.append(float(any(v in who or who in v for v in ids)))
    dim = len(span_features("x"))
    return (np.stack(rows) if rows else np.zeros((0, dim), np.float32)), np.array(ys)


def fit_caller(train_utts: list[Utterance], dev_utts: list[Utterance]) -> tuple[np.ndarray | None, dict[str, Any]]:
    x, y = caller_spans(train_utts)
    if len(y) < 20 or not 0 < y.sum() < len(y):
        return None, {"spans": len(y)}
    w = np.zeros(x.shape[1])
    for _ in range(1500):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        w -= 1.0 * (x.T @ (p - y) / len(y) + 1e-4 * w)
    xd, yd = caller_spans(dev_utts)
    pd = 1.0 / (1.0 + np.exp(-(xd @ w))) >= 0.5 if len(yd) else np.zeros(0, bool)
    report = {
        "train_spans": len(y),
        "dev_spans": len(yd),
        "dev_fragments_kept_rules": int(np.sum(yd < 0.5)),
        "dev_fragments_kept_learned": int(np.sum(pd & (yd < 0.5))),
        "dev_identities_kept_rules": int(np.sum(yd > 0.5)),
        "dev_identities_kept_learned": int(np.sum(pd & (yd > 0.5))),
    }
    return w.astype(np.float32), report


# -------------------------------------------------------------------- run ----


def _holdout(split: Split, seed: int) -> tuple[Split, Split]:
    """No dev files yet: every tenth row (by a seeded permutation) is dev."""
    rng = np.random.default_rng(seed)
    tr, dv = Split(), Split()
    for j, i in enumerate(rng.permutation(len(split.utterances))):
        (dv if j % 10 == 0 else tr).utterances.append(split.utterances[i])
    for j, i in enumerate(rng.permutation(len(split.pairs))):
        (dv if j % 10 == 0 else tr).pairs.append(split.pairs[i])
    return tr, dv


def utterance_hash(root: Path) -> str:
    """sha256 over the labelled utterances the heads are fitted on (train and dev, in load order)."""
    h = hashlib.sha256()
    for split in ("train", "dev"):
        for u in load_split(root / split).utterances:
            h.update(repr(u).encode())
            h.update(b"\0")
    return h.hexdigest()


def _splits(cfg: TrainConfig, log: Any) -> tuple[Split, Split, dict[str, str]]:
    train_split = load_split(cfg.data / "train")
    dev_split = load_split(cfg.data / "dev")
    dev_source = {"utterances": "dev", "pairs": "dev"}
    if not dev_split.utterances or not dev_split.pairs:
        held_train, held_dev = _holdout(train_split, cfg.seed)
        if not dev_split.utterances:
            train_split.utterances, dev_split.utterances = held_train.utterances, held_dev.utterances
            dev_source["utterances"] = "held out of train (no dev files)"
        if not dev_split.pairs:
            train_split.pairs, dev_split.pairs = held_train.pairs, held_dev.pairs
            dev_source["pairs"] = "held out of train (no dev files)"
    if not train_split.utterances:
        raise SystemExit(f"no training utterances under {cfg.data / 'train'}")
    log(
        f"train: {len(train_split.utterances)} utterances, {len(train_split.pairs)} trigger pairs; "
        f"dev ({dev_source}): {len(dev_split.utterances)} / {len(dev_split.pairs)}"
    )
    return train_split, dev_split, dev_source


def fit_trigger_model(
    train_split: Split, dev_split: Split, cache: EmbeddingCache, log: Any
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], float, dict[str, float]]:
    """The trigger-pair model ((weights, mean, sd), threshold, dev figures)."""
    f_tr = pair_matrix(train_split.pairs, cache)
    y_ptr = np.array([p.match for p in train_split.pairs], dtype=np.float64)
    if len(train_split.pairs) and 0 < y_ptr.sum() < len(y_ptr):
        pw, pmu, psd = fit_pairs(f_tr, y_ptr)
    else:  # no pairs yet: the rule matcher's vote alone
        pw = np.zeros(len(PAIR_FEATURES) + 2 * EMBED_DIM, np.float32)
        pw[PAIR_FEATURES.index("rule_match")] = 4.0
        pw[PAIR_FEATURES.index("bias")] = -2.0
        pmu, psd = np.zeros_like(pw), np.ones_like(pw)
    threshold, report = 0.5, {}
    if dev_split.pairs:
        f_dv = pair_matrix(dev_split.pairs, cache)
        z = ((f_dv - pmu) / psd) @ pw
        p_dv = 1.0 / (1.0 + np.exp(-z))
        y_pdv = np.array([p.match for p in dev_split.pairs], dtype=np.float64)
        rule_col = f_dv[:, PAIR_FEATURES.index("rule_match")] > 0.5
        threshold = pick_trigger_threshold(p_dv, y_pdv, rule_col)
        report = {
            "learned_accuracy": round(float(np.mean((rule_col | (p_dv >= threshold)) == (y_pdv > 0.5))), 3),
            "rules_accuracy": round(float(np.mean(rule_col == (y_pdv > 0.5))), 3),
        }
        log(f"trigger pairs on dev: {report} at threshold {threshold}")
    return (pw, pmu, psd), threshold, report


def refit_triggers(cfg: TrainConfig, *, log: Any = print) -> tuple[NLUModel, dict[str, Any]]:
    """Refit only the trigger-pair model on top of the heads in ``cfg.out``.

    For new trigger pairs alone (no utterance changed): the heads depend only on the
    utterances, so a full :func:`train` gives the same heads; this skips their minutes of
    fitting. Refuses when the utterance files differ from those the heads were fitted on."""
    t0 = time.perf_counter()
    base = NLUModel.load(cfg.out)
    now = utterance_hash(cfg.data)
    if base.meta.get("utterances_sha256") not in (None, now):
        raise SystemExit("the utterances changed since the heads were fitted: run a full `callassist train nlu`")
    train_split, dev_split, dev_source = _splits(cfg, log)
    cache = EmbeddingCache(cfg.cache)
    (pw, pmu, psd), threshold, report = fit_trigger_model(train_split, dev_split, cache, log)
    meta = dict(base.meta)
    meta.update(
        data_sha256=data_hash(cfg.data),
        utterances_sha256=now,
        dev_source=dev_source,
        trigger_threshold=threshold,
        dev_pairs=report,
        heads_from=base.meta.get("heads_from", base.meta.get("data_sha256")),
    )
    meta["counts"] = {
        **meta.get("counts", {}),
        "train_pairs": len(train_split.pairs),
        "dev_pairs": len(dev_split.pairs),
    }
    model = NLUModel(base.W, base.temperatures, pw, pmu, psd, meta, base.caller_w)
    model.trigger_threshold = threshold
    model.save(cfg.out)
    meta["seconds"] = round(time.perf_counter() - t0, 1)
    log(f"wrote {cfg.out} (trigger model refit) in {meta['seconds']} s")
    return model, meta


def train(cfg: TrainConfig, *, log: Any = print) -> tuple[NLUModel, dict[str, Any]]:
    t0 = time.perf_counter()
    train_split, dev_split, dev_source = _splits(cfg, log)
    cache = EmbeddingCache(cfg.cache)
    x_tr, y_tr = features(train_split.utterances, cache), targets(train_split.utterances)
    x_dv, y_dv = features(dev_split.utterances, cache), targets(dev_split.utterances)
    log(f"features: {x_tr.shape[1]} per turn ({time.perf_counter() - t0:.1f} s)")
    w = fit_heads(x_tr, y_tr, cfg)
    z_dv = x_dv @ w
    temps = fit_temperatures(z_dv, y_dv)
    threshold = pick_intent_threshold(_probs(z_dv, temps), y_dv)
    log(f"heads fitted ({time.perf_counter() - t0:.1f} s); temperatures {temps}; intent threshold {threshold}")

    (pw, pmu, psd), trigger_threshold, report = fit_trigger_model(train_split, dev_split, cache, log)
    meta: dict[str, Any] = {
        "data_sha256": data_hash(cfg.data),
        "utterances_sha256": utterance_hash(cfg.data),
        "seed": cfg.seed,
        "epochs": cfg.epochs,
        "intent_threshold": threshold,
        "dev_source": dev_source,
        "counts": {
            "train_utterances": len(train_split.utterances),
            "train_pairs": len(train_split.pairs),
            "dev_utterances": len(dev_split.utterances),
            "dev_pairs": len(dev_split.pairs),
        },
    }
    caller_w, caller_report = fit_caller(train_split.utterances, dev_split.utterances)
    meta["caller_field"] = caller_report
    log(f"caller field: {caller_report}")
    model = NLUModel(w, temps, pw, pmu, psd, meta, caller_w)
    model.trigger_threshold = trigger_threshold
    if report:
        meta["dev_pairs"] = report
    meta["trigger_threshold"] = model.trigger_threshold
    model.meta = meta
    model.save(cfg.out)
    meta["seconds"] = round(time.perf_counter() - t0, 1)
    log(f"wrote {cfg.out} ({cfg.out.stat().st_size / 1e6:.2f} MB) in {meta['seconds']} s")
    return model, meta
