"""The learned understander's model: linear heads over :mod:`.features`, loaded once.

Heads (one weight matrix, sliced): multi-label intents (sigmoid), and softmax heads for
the exception kind, the question's focus and form, and the scene. Each head has a
temperature fitted on the dev split (calibration). The trigger-match model is a
logistic regression over pair features (:data:`.features.PAIR_FEATURES`).
Weights: ``coordinator/nlu/weights/nlu.npz`` written by ``callassist train nlu``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .features import featurize, pair_features, rule_vector, span_features

if TYPE_CHECKING:
    from ..acts import Classification

WEIGHTS_PATH = Path(__file__).with_name("weights") / "nlu.npz"

INTENTS = (
    "greeting", "arrival", "en_route", "where_to_leave", "info_question", "exception", "ask_owner",
    "ask_identity", "leave_message", "ask_decision", "ask_private", "sales", "abuse", "threat", "scam",
    "injection", "statement", "own_action", "repeat_request", "follow_up", "ack", "closing", "dismiss", "other",
)  # fmt: skip
EXCEPTIONS = (
    None, "blocked", "spilled", "damaged", "wrong_item", "late", "cant_find", "installation", "signature",
    "payment", "id_needed", "problem",
)  # fmt: skip
FOCI = (None, "location", "time", "person", "contact", "payment", "item", "access", "identity", "plan", "other")
FORMS = ("plain", "either_or", "yes_no", "wh")
SCENES = ("takeout", "delivery", "taxi", "work", "life", "harassment")
HEADS: tuple[tuple[str, tuple[str | None, ...]], ...] = (
    ("intents", INTENTS),
    ("exception", EXCEPTIONS),
    ("focus", FOCI),
    ("form", FORMS),
    ("scene", SCENES),
)


def head_slices() -> dict[str, slice]:
    out: dict[str, slice] = {}
    start = 0
    for name, labels in HEADS:
        out[name] = slice(start, start + len(labels))
        start += len(labels)
    return out


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


@dataclass(frozen=True, slots=True)
class Reading:
    """The model's scored reading of one turn."""

    intents: dict[str, float]
    exception: dict[str | None, float]
    focus: dict[str | None, float]
    form: dict[str, float]
    scene: dict[str, float]


class NLUModel:
    """Weights in memory and the forward pass (a few hundred microseconds per turn)."""

    def __init__(
        self,
        weights: np.ndarray,
        temperatures: dict[str, float],
        pair_w: np.ndarray,
        pair_mu: np.ndarray,
        pair_sd: np.ndarray,
        meta: dict[str, object],
        caller_w: np.ndarray | None = None,
    ) -> None:
        self.W = weights.astype(np.float32)
        self.caller_w = caller_w
        self.temperatures = temperatures
        self.pair_w, self.pair_mu, self.pair_sd = pair_w, pair_mu, pair_sd
        self.meta = meta
        self._slices = head_slices()
        self.intent_threshold = float(meta.get("intent_threshold", 0.5))  # type: ignore[arg-type]
        self.trigger_threshold = float(meta.get("trigger_threshold", 0.5))  # type: ignore[arg-type]

    # ------------------------------------------------------------ files ----

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            np.savez_compressed(
                fh,
                W=self.W.astype(np.float16),
                pair_w=self.pair_w.astype(np.float32),
                pair_mu=self.pair_mu.astype(np.float32),
                pair_sd=self.pair_sd.astype(np.float32),
                caller_w=(self.caller_w if self.caller_w is not None else np.zeros(0)).astype(np.float32),
                meta=np.array(json.dumps({**self.meta, "temperatures": self.temperatures}, sort_keys=True)),
            )

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> NLUModel:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            temps = {str(k): float(v) for k, v in meta.pop("temperatures", {}).items()}
            caller = z["caller_w"] if "caller_w" in z.files and z["caller_w"].size else None
            return cls(z["W"], temps, z["pair_w"], z["pair_mu"], z["pair_sd"], meta, caller)

    # ---------------------------------------------------------- forward ----

    def logits(self, x: np.ndarray) -> np.ndarray:
        return x @ self.W

    def read_logits(self, z: np.ndarray) -> Reading:
        s = self._slices
        t = self.temperatures

        def head(name: str) -> np.ndarray:
            return z[s[name]] / t.get(name, 1.0)

        return Reading(
            intents=dict(zip(INTENTS, _sigmoid(head("intents")).tolist(), strict=True)),
            exception=dict(zip(EXCEPTIONS, _softmax(head("exception")).tolist(), strict=True)),
            focus=dict(zip(FOCI, _softmax(head("focus")).tolist(), strict=True)),
            form=dict(zip(FORMS, _softmax(head("form")).tolist(), strict=True)),
            scene=dict(zip(SCENES, _softmax(head("scene")).tolist(), strict=True)),
        )

    def read(
        self,
        text: str,
        context: str | None,
        embedding: np.ndarray | None,
        *,
        scene: str | None = None,
        rules: Classification | None = None,
    ) -> Reading:
        """``rules``: the rule reading of ``text`` if already computed (it is a feature)."""
        x = featurize(text, context, embedding, rule_vector(text, scene, rules))
        return self.read_logits(self.logits(x))

    def caller_prob(self, span: str) -> float:
        """Probability that an extracted caller span is a name / company / role (1.0: no model)."""
        if self.caller_w is None:
            return 1.0
        return float(_sigmoid(np.array(float(span_features(span) @ self.caller_w))))

    def trigger_prob_from_features(self, f: np.ndarray) -> float:
        z = float(((f - self.pair_mu) / self.pair_sd) @ self.pair_w)
        return float(_sigmoid(np.array(z)))

    def trigger_prob(
        self,
        trigger: str,
        utterance: str,
        cos: float,
        rule_match: bool,
        *,
        pitch: bool,
        asking: bool,
        t_vec: np.ndarray | None = None,
        u_vec: np.ndarray | None = None,
    ) -> float:
        f = pair_features(trigger, utterance, cos, rule_match, pitch=pitch, asking=asking, t_vec=t_vec, u_vec=u_vec)
        return self.trigger_prob_from_features(f)


_lock = threading.Lock()
_cached: NLUModel | None = None


def shared_model() -> NLUModel:
    """The process-wide model, loaded on first use."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = NLUModel.load()
        return _cached
