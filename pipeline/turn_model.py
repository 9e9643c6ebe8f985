"""A small text end-of-turn classifier: does this transcript read as the caller's whole
turn, or as its first sentences ("Hi, this is the delivery driver." <pause> ...)?

Hashed features of how the text begins and ends (last words / characters, the final
punctuation, an introduction at the start, how many sentences) and a bag of words and
character pairs, scored by logistic regression. Trained by ``callassist train turn-end``
on the understanding corpus (data/nlu/train): every utterance is a complete turn, and
every utterance cut at a sentence or clause boundary is an unfinished one
(``bench/turn_end_train.py``). Pure numpy, about 0.1 ms a transcript; the weights are a
file in the repo (``data/turn_end/weights.npz``), loaded once per process.
"""

from __future__ import annotations

import functools
import itertools
import re
import zlib
from pathlib import Path

import numpy as np

WEIGHTS_PATH = Path(__file__).resolve().parent.parent / "data" / "turn_end" / "weights.npz"
DIM = 1 << 15

_TOKEN = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]")
_SENT_END = re.compile(r"[.?!。？！]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def features(text: str) -> list[str]:
    """The feature names of a transcript (hashed into :data:`DIM` slots by :func:`vector`)."""
    t = text.strip()
    toks = _tokens(t)
    lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in t) else "en"
    end = t[-1:] if t else ""
    punct = "?" if end in "?？" else "." if end in ".。" else "!" if end in "!！" else "," if end in ",，、" else "_"
    sentences = len([s for s in _SENT_END.split(t) if s.strip()]) + len(re.findall(r"[\s，,]+", t.strip(" .。")))
    feats = [f"bias|{lang}", f"P|{punct}", f"P|{lang}|{punct}", f"S|{min(sentences, 4)}", f"L|{min(len(toks) // 4, 6)}"]
    for n in (1, 2, 3):
        if len(toks) >= n:
            feats.append(f"E{n}|" + " ".join(toks[-n:]))
            feats.append(f"B{n}|" + " ".join(toks[:n]))
    feats.append(f"E1P|{toks[-1] if toks else ''}|{punct}")
    feats += [f"W|{w}" for w in toks]
    feats += [f"W2|{a} {b}" for a, b in itertools.pairwise(toks)]
    return feats


def sparse_vector(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Hashed, L2-normalised feature counts: (slots, values)."""
    slots, counts = np.unique(
        np.array([zlib.crc32(f.encode()) % DIM for f in features(text)], dtype=np.int64), return_counts=True
    )
    values = counts.astype(np.float32)
    return slots, values / float(np.linalg.norm(values))


class TurnTextModel:
    """P(the transcript is the caller's whole turn)."""

    def __init__(self, weights: np.ndarray, bias: float, threshold: float = 0.9) -> None:
        self.weights = weights.astype(np.float32)
        self.bias = float(bias)
        # At or above it a statement is answered without the long hold for a caller who
        # goes on; chosen on the dev split when training (bench/turn_end_train.py).
        self.threshold = float(threshold)

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> TurnTextModel:
        with np.load(path, allow_pickle=False) as z:
            threshold = float(z["threshold"]) if "threshold" in z.files else 0.9
            return cls(z["weights"].astype(np.float32), float(z["bias"]), threshold)

    def p_complete(self, text: str) -> float:
        if not text.strip():
            return 0.0
        slots, values = sparse_vector(text)
        z = float(values @ self.weights[slots]) + self.bias
        return float(1.0 / (1.0 + np.exp(-z)))


@functools.cache
def default_model() -> TurnTextModel | None:
    """The packaged model, or None if its weights file is missing (the turn then falls
    back to the pause rule alone)."""
    try:
        return TurnTextModel.load()
    except (OSError, KeyError, ValueError):
        return None
