"""The understanding corpus (docs/nlu-corpus.md): loading, hashing, the e5 embedding cache."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DATA_DIR = Path("data/nlu")
TRAINED_SPLITS = ("train", "dev")  # what the weights are fitted and calibrated on (never test)


@dataclass(frozen=True, slots=True)
class Utterance:
    id: str
    lang: str
    scene: str
    context: str | None
    text: str
    intents: tuple[str, ...]
    exception: str | None
    focus: str | None
    form: str
    slots: dict[str, str] = field(default_factory=dict)
    phenomena: tuple[str, ...] = ()
    author: str = ""


@dataclass(frozen=True, slots=True)
class TriggerPair:
    id: str
    lang: str
    scene: str
    trigger: str
    utterance: str
    match: bool
    kind: str
    author: str = ""


@dataclass(slots=True)
class Split:
    utterances: list[Utterance] = field(default_factory=list)
    pairs: list[TriggerPair] = field(default_factory=list)
    skipped: int = 0  # malformed rows (validate.py names them)


def _rows(path: Path) -> Iterable[dict[str, Any]]:
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                yield {}


def load_split(folder: Path) -> Split:
    """Every ``*.jsonl`` under ``folder`` (``triggers-*.jsonl`` are pairs)."""
    split = Split()
    for path in sorted(folder.rglob("*.jsonl")):
        author = path.parent.name
        for o in _rows(path):
            try:
                if "trigger" in o:
                    split.pairs.append(
                        TriggerPair(
                            o["id"], o["lang"], o["scene"], o["trigger"], o["utterance"], bool(o["match"]),
                            o.get("kind", ""), author,
                        )
                    )  # fmt: skip
                else:
                    intents = tuple(o["intents"])
                    if not intents or not isinstance(o["text"], str) or not o["text"].strip():
                        raise ValueError("empty")
                    split.utterances.append(
                        Utterance(
                            o["id"], o["lang"], o["scene"], o.get("context"), o["text"], intents,
                            o.get("exception"), o.get("focus"), o.get("form") or "plain",
                            dict(o.get("slots") or {}), tuple(o.get("phenomena") or ()), author,
                        )
                    )  # fmt: skip
            except (KeyError, TypeError, ValueError):
                split.skipped += 1
    return split


def data_hash(root: Path = DATA_DIR, splits: Sequence[str] = TRAINED_SPLITS) -> str:
    """sha256 over the trained-on files (relative path and bytes), in a stable order."""
    h = hashlib.sha256()
    for split in splits:
        for path in sorted((root / split).rglob("*.jsonl")):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


class EmbeddingCache:
    """e5 vectors by text, kept in ``var/cache`` between runs (deterministic: a cache hit
    and a fresh embedding are the same vector, so reproduction does not depend on it)."""

    def __init__(self, path: Path | None = Path("var/cache/nlu-e5.npz")) -> None:
        self.path = path
        self._vecs: dict[str, np.ndarray] = {}
        if path is not None and path.exists():
            with np.load(path, allow_pickle=False) as z:
                for key, vec in zip(z["keys"].tolist(), z["vecs"], strict=True):
                    self._vecs[str(key)] = vec

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from presets.embeddings import Embedder

        missing = list(dict.fromkeys(t for t in texts if t not in self._vecs))
        if missing:
            embedder = Embedder()
            for i in range(0, len(missing), 64):
                chunk = missing[i : i + 64]
                for t, v in zip(chunk, embedder.embed(chunk), strict=True):
                    self._vecs[t] = v
            self.save()
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._vecs[t] for t in texts]).astype(np.float32)

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._vecs)
        with self.path.open("wb") as fh:
            np.savez(fh, keys=np.array(keys), vecs=np.stack([self._vecs[k] for k in keys]))
