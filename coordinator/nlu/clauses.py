"""An emergent trigger inside a long turn: the turn's clauses scored as well as the whole turn.

The e5 vector of a long run-on ("那个，我是他妈妈，你跟他说，他什么时候回家吃饭啊，我给他包了饺子")
is an average of everything said, so a trigger that one clause states plainly ("他什么时候回家")
scores far below the cut on the whole turn. Each clause is scored on its own by the same pair
model, with its own lexical and focus evidence, and the best clause counts. A turn of one clause
is never re-scored (its reading is the whole turn's), so short near misses read as before.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from presets.callers import trigger_who
from presets.matching import core, is_sales_trigger, third_person

from ..acts import classify
from ..turns import asking
from .features import char_bigrams

if TYPE_CHECKING:
    from .model import NLUModel

Score = Callable[[str, str, float, np.ndarray | None, np.ndarray], float]

# Clause breaks: sentence ends, commas, and the pauses Whisper writes as "..." / "……".
_BREAK = re.compile(r"[。！？!?；;，,、]+|\.{2,}|…+|(?<=[a-z])\.(?=\s)|\s+-\s+")
MAX_CLAUSES = 4  # embeddings per turn at most (each ~16 ms on a quiet core)
CLAUSE_PENALTY = 0.01  # the best of several more draws is a little optimistic (dev: a 0.779 near miss)
SHARE = 0.75  # a span longer than this share of the turn is the turn again
_QUESTION = re.compile(r"[?？]|[吗呢嘛]$")


def _size(text: str) -> tuple[int, int]:
    return sum("\u4e00" <= ch <= "\u9fff" for ch in text), len(re.findall(r"[A-Za-z']+", text))


def clauses(utterance: str) -> list[str]:
    """The clauses of a long turn worth scoring alone (empty for a turn of one clause): each
    clause, and each clause with the one after it (a question often runs over a comma:
    "are you coming or should I just cancel"), each with its own question or sentence mark. A span
    that is most of the turn (the turn without its "hey") is not scored again: it says what the
    whole turn says."""
    pieces = _BREAK.split(utterance)
    marks = [m.group(0) for m in _BREAK.finditer(utterance)] + [""]
    parts = [(p.strip(" '\""), mk.strip()) for p, mk in zip(pieces, marks, strict=False) if p.strip(" '\"")]
    if len(parts) < 2:
        return []
    spans = [p + _end(mk) for p, mk in parts]
    for (a, ma), (b, mb) in itertools.pairwise(parts):
        sep = (ma or "，") if _size(a)[0] else (ma or ",") + " "
        spans.append(f"{a}{sep}{b}{_end(mb)}")
    whole = len(utterance.strip())
    keep = [s for s in spans if (_size(s)[0] >= 5 or _size(s)[1] >= 4) and len(s) <= SHARE * whole]
    return list(dict.fromkeys(keep))


def _end(mark: str) -> str:
    """A clause keeps a question or sentence mark (its form is evidence), not a comma."""
    return mark[:1] if mark[:1] in "?？!！。." else ""


def best_clause_prob(
    utterance: str,
    candidates: Sequence[tuple[str, np.ndarray | None]],
    embed: Callable[[str], np.ndarray],
    score: Score,
) -> dict[int, float]:
    """For each candidate (trigger text, its variants' vectors), the best pair probability over the
    turn's clauses: ``score(trigger, clause, cos, trigger_vec, clause_vec)``. Empty for a short turn."""
    spans = clauses(utterance)
    if not spans or not any(v is not None for _, v in candidates):
        return {}
    # the spans that share the most with a trigger, then the questions: what the caller asks
    cores = [char_bigrams(third_person(core(t))) for t, _ in candidates]
    spans.sort(key=lambda s: (-max(len(char_bigrams(s) & c) for c in cores), not _QUESTION.search(s), -len(s)))
    spans = spans[:MAX_CLAUSES]
    vecs = [np.asarray(embed(s), dtype=np.float32) for s in spans]
    best: dict[int, float] = {}
    for i, (trigger, tv) in enumerate(candidates):
        if tv is None or trigger_who(trigger) or is_sales_trigger(trigger):
            # who calls (about what) and sales triggers are read on the whole turn (presets/callers.py):
            # "Hi, this is Carol with the Red Cross blood drive" alone is who, not what they want
            continue
        for span, u in zip(spans, vecs, strict=True):
            sims = tv @ u
            k = int(np.argmax(sims))
            best[i] = max(best.get(i, 0.0), score(trigger, span, float(sims[k]), tv[k], u) - CLAUSE_PENALTY)
    return best


def clause_scorer(model: NLUModel, pitch: bool, ask: bool) -> Score:
    """The pair model on one clause: asking only when the clause itself asks ("I'm at the corner now"
    in "I'm at the corner now, where is she?" is no question about waiting at the corner)."""

    def score(trigger: str, span: str, cos: float, t_vec: np.ndarray | None, u_vec: np.ndarray) -> float:
        asks = ask and asking(classify(span))
        return model.trigger_prob(trigger, span, cos, False, pitch=pitch, asking=asks, t_vec=t_vec, u_vec=u_vec)

    return score
