"""Features for the learned understander: hashed character n-grams (the turn and the
assistant's previous line) beside the e5 sentence embedding. Pure numpy; the same code
builds training matrices and the per-turn vector, so the two cannot drift apart."""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..acts import Classification

TEXT_DIM = 1 << 13  # hashed n-grams of the caller's turn
CONTEXT_DIM = 1 << 10  # hashed n-grams of the assistant's previous line
EMBED_DIM = 384  # multilingual-e5-small
EMBED_SCALE = 2.0  # tuned on dev: 1.0 -> 83.3%, 2.0 -> 88.0% top intent in gold (3.0 no better)
# The rule classifier's reading as evidence (stacking): its act, cues and turn-shape flags.
RULE_ACTS = (
    "greeting", "arrival", "where_to_leave", "info_question", "exception", "ask_owner", "ask_identity",
    "leave_message", "ask_decision", "ask_private", "sales", "injection", "closing", "ack", "statement", "other",
)  # fmt: skip
RULE_CUES = (
    "greeting", "arrival", "where", "ask_owner", "message", "decision", "private", "sales", "closing", "threat",
    "abuse", "scam", "identity", "en_route", "dismiss", "press_yes", "injection",
)  # fmt: skip
RULE_EXCEPTIONS = (
    "blocked", "spilled", "damaged", "wrong_item", "late", "cant_find", "installation", "signature", "payment",
    "id_needed", "problem",
)  # fmt: skip
RULE_FLAGS = (
    "question", "repeat_request", "en_route", "starts_with_ack", "ack_marked", "ends_with_closing", "ends_with_thanks",
    "dismiss", "self_id", "callback_number", "nobody_home", "insists", "urgent",
)  # fmt: skip
RULE_DIM = len(RULE_ACTS) + len(RULE_CUES) + len(RULE_EXCEPTIONS) + len(RULE_FLAGS)
RULE_SCALE = 0.5
FEATURE_DIM = TEXT_DIM + CONTEXT_DIM + EMBED_DIM + RULE_DIM + 2  # + [empty context, bias]

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]")


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return _SPACE.sub(" ", text).strip()


def _hash(token: str, dim: int) -> int:
    return zlib.crc32(token.encode("utf-8")) % dim


def ngram_counts(text: str, dim: int, *, prefix: str = "") -> dict[int, float]:
    """Character 1-3 grams (with word boundaries) and word unigrams/bigrams, hashed."""
    t = normalize(text)
    out: dict[int, float] = {}
    padded = f" {t} "
    for n in (1, 2, 3):
        for i in range(len(padded) - n + 1):
            gram = padded[i : i + n]
            if gram.strip():
                h = _hash(f"{prefix}c{n}:{gram}", dim)
                out[h] = out.get(h, 0.0) + 1.0
    words = _WORD.findall(t)
    for i, w in enumerate(words):
        h = _hash(f"{prefix}w:{w}", dim)
        out[h] = out.get(h, 0.0) + 1.0
        if i:
            h = _hash(f"{prefix}b:{words[i - 1]}|{w}", dim)
            out[h] = out.get(h, 0.0) + 1.0
    # The end of a turn carries its force ("...放哪", "...or the back?"): mark the last grams.
    tail = t[-3:]
    if tail:
        out[_hash(f"{prefix}end:{tail}", dim)] = out.get(_hash(f"{prefix}end:{tail}", dim), 0.0) + 1.0
    out[_hash(f"{prefix}q:{'?' in t or '？' in t}", dim)] = 1.0
    return out


def _dense(counts: dict[int, float], dim: int) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    if counts:
        idx = np.fromiter(counts.keys(), dtype=np.int64)
        v[idx] = np.log1p(np.fromiter(counts.values(), dtype=np.float32))
        norm = float(np.linalg.norm(v))
        if norm:
            v /= norm
    return v


def rule_vector(text: str, scene: str | None, c: Classification | None = None) -> np.ndarray:
    """The rule classifier's reading of the turn as a 0/1 vector (RULE_* above); ``c``: that
    reading when the caller already has it (the call path classifies each turn once)."""
    from ..acts import classify

    c = c if c is not None else classify(text, scene=scene)
    v = np.zeros(RULE_DIM, dtype=np.float32)
    if c.act.value in RULE_ACTS:
        v[RULE_ACTS.index(c.act.value)] = 1.0
    base = len(RULE_ACTS)
    for cue in c.cues:
        if cue in RULE_CUES:
            v[base + RULE_CUES.index(cue)] = 1.0
    base += len(RULE_CUES)
    if c.exception in RULE_EXCEPTIONS:
        v[base + RULE_EXCEPTIONS.index(c.exception)] = 1.0
    base += len(RULE_EXCEPTIONS)
    for i, flag in enumerate(RULE_FLAGS):
        v[base + i] = 1.0 if getattr(c, flag) else 0.0
    return RULE_SCALE * v


def featurize(
    text: str, context: str | None, embedding: np.ndarray | None, rules: np.ndarray | None = None
) -> np.ndarray:
    """One feature row (float32, FEATURE_DIM). ``rules``: :func:`rule_vector` (computed if None)."""
    parts = [
        _dense(ngram_counts(text, TEXT_DIM), TEXT_DIM),
        _dense(ngram_counts(context or "", CONTEXT_DIM, prefix="ctx:"), CONTEXT_DIM),
    ]
    emb = np.zeros(EMBED_DIM, dtype=np.float32) if embedding is None else np.asarray(embedding, np.float32)
    parts.append(EMBED_SCALE * emb.reshape(EMBED_DIM))
    parts.append(rule_vector(text, None) if rules is None else rules)
    parts.append(np.array([0.0 if context else 1.0, 1.0], dtype=np.float32))
    return np.concatenate(parts)


def featurize_many(
    texts: Sequence[str],
    contexts: Sequence[str | None],
    embeddings: np.ndarray | None,
    scenes: Sequence[str | None] | None = None,
) -> np.ndarray:
    scenes = scenes or [None] * len(texts)
    rows = [
        featurize(t, c, None if embeddings is None else embeddings[i], rule_vector(t, scenes[i]))
        for i, (t, c) in enumerate(zip(texts, contexts, strict=True))
    ]
    return np.stack(rows) if rows else np.zeros((0, FEATURE_DIM), dtype=np.float32)


# ------------------------------------------------------------- caller field ----

SPAN_DIM = 1 << 11


def span_features(span: str) -> np.ndarray:
    """Is this extracted "who is calling" span a name, company or role (or a sentence fragment)?"""
    words = span.split()
    extra = np.array(
        [min(len(words), 8) / 8, float(span[:1].isupper()), float(any(ch.isdigit() for ch in span)), 1.0],
        dtype=np.float32,
    )
    return np.concatenate([_dense(ngram_counts(span, SPAN_DIM, prefix="span:"), SPAN_DIM), extra])


# ------------------------------------------------------------ trigger pairs ----

PAIR_FEATURES = (
    "cos",
    "cos_sq",
    "lex",
    "char_jaccard",
    "focus_clash",
    "same_focus",
    "trigger_focus_unasked",
    "question_trigger",
    "sales_trigger",
    "rule_match",
    "sales_not_pitch",
    "question_not_asked",
    "who_trigger",  # the trigger describes who calls ("if the school calls about pick-up")
    "who_same",  # ... and the caller introduces themselves as one of them
    "who_clash",  # ... and the caller is someone else
    "cross_lingual",  # trigger and utterance in different scripts: lexical features are blind
    "cos_cross",  # the cosine again, for cross-lingual pairs only (its own calibration)
    "bias",
)


def _script(text: str) -> str:
    hanzi = sum("\u4e00" <= ch <= "\u9fff" for ch in text)
    return "zh" if hanzi >= max(1, len(re.findall(r"[A-Za-z]+", text)) // 2) else "en"


def char_bigrams(text: str) -> set[str]:
    t = re.sub(r"[\s\W_]+", "", normalize(text))
    return {t[i : i + 2] for i in range(len(t) - 1)}


def pair_interaction(t_vec: np.ndarray | None, u_vec: np.ndarray | None) -> np.ndarray:
    """Which meanings the two sentences share: the elementwise product and distance of the
    trigger's (best variant's) and the utterance's e5 vectors (cosine alone cannot tell a
    near miss from a paraphrase: both score about 0.87)."""
    if t_vec is None or u_vec is None:
        return np.zeros(2 * EMBED_DIM, dtype=np.float32)
    t, u = np.asarray(t_vec, np.float32), np.asarray(u_vec, np.float32)
    return np.concatenate([20.0 * t * u, 5.0 * np.abs(t - u)]).astype(np.float32)


@lru_cache(maxsize=4096)
def _trigger_side(trigger: str) -> tuple[frozenset[str], frozenset[str], bool, bool]:
    """What a pair's features need from the trigger alone, once per trigger text (not per turn):
    its core's character bigrams and focus, and whether it is a question / a kind of sales call."""
    from presets import matching as m

    t_core = m.third_person(m.core(trigger))
    return (
        frozenset(char_bigrams(t_core)),
        frozenset(m.focus(t_core)),
        m.is_question_trigger(trigger),
        m.is_sales_trigger(trigger),
    )


def pair_features(
    trigger: str,
    utterance: str,
    cos: float,
    rule_match: bool,
    *,
    pitch: bool = False,
    asking: bool = True,
    t_vec: np.ndarray | None = None,
    u_vec: np.ndarray | None = None,
) -> np.ndarray:
    """Evidence that ``utterance`` is the situation ``trigger`` describes (see PAIR_FEATURES).

    ``cos``: the best e5 cosine between the trigger's variants and the utterance;
    ``rule_match``: the rule matcher (``presets.matching.match_trigger``) picked this trigger;
    ``pitch`` / ``asking``: the caller is making a sales pitch / asking something this turn."""
    from presets import matching as m
    from presets.callers import who_evidence

    cross = float(_script(trigger) != _script(utterance))
    a, t_focus, question_trigger, sales_trigger = _trigger_side(trigger)
    b = char_bigrams(utterance)
    jac = len(a & b) / len(a | b) if a and b else 0.0
    u_focus = m.focus(utterance)
    clash = bool(t_focus and u_focus and t_focus != u_focus)
    scalars = np.array(
        [
            cos,
            cos * cos,
            m.lexical_overlap(trigger, utterance),
            jac,
            float(clash),
            float(bool(t_focus) and t_focus == u_focus),
            float(bool(t_focus) and not u_focus),
            float(question_trigger),
            float(sales_trigger),
            float(rule_match),
            float(sales_trigger and not pitch),
            float(question_trigger and not asking),
            *who_evidence(trigger, utterance),
            cross,
            cos * cross,
            1.0,
        ],
        dtype=np.float32,
    )
    return np.concatenate([scalars, pair_interaction(t_vec, u_vec)])
