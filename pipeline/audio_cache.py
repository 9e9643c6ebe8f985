"""Synthesized audio and its cache: (text, voice) -> PCM, in memory (LRU, capped in
bytes) and on disk, so every unit known in advance is synthesized once (pipeline.tts)."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Audio:
    pcm: bytes  # int16 little-endian mono
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.pcm) / 2 / self.rate


DEFAULT_CACHE_BYTES = 64 * 1024 * 1024  # CALLASSIST_TTS_CACHE_MB


class AudioCache:
    """(text, voice) -> audio; in memory (LRU, capped in bytes of PCM) and on disk
    (survives restarts; not capped here).

    The memory cap is in bytes, not clips: a clip is 20 KB (a short "OK.") to a few
    hundred KB (a long preset response at 24 kHz), so a count cap says nothing about
    the footprint. A clip larger than the whole cap is served from disk only."""

    def __init__(self, folder: Path | None, *, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max(0, int(max_bytes))
        self._mem: OrderedDict[str, Audio] = OrderedDict()
        self._bytes = 0  # sum of len(audio.pcm) over _mem, kept under _lock
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.evicted = 0
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)

    # Bumped when the stored audio changes shape (v2: silence trimmed), so older files
    # on disk are not served again.
    VERSION = "v2"

    @staticmethod
    def key(text: str, voice: str) -> str:
        return hashlib.sha256(f"{AudioCache.VERSION}\x00{voice}\x00{text}".encode()).hexdigest()[:32]

    @property
    def nbytes(self) -> int:
        """PCM bytes held in memory now (at most :attr:`max_bytes`)."""
        return self._bytes

    @property
    def items(self) -> int:
        return len(self._mem)

    def stats(self) -> dict[str, int]:
        """What the memory report shows (``/ops/api/memory``)."""
        with self._lock:
            return {
                "bytes": self._bytes,
                "items": len(self._mem),
                "max_bytes": self.max_bytes,
                "hits": self.hits,
                "misses": self.misses,
                "evicted": self.evicted,
            }

    def get(self, text: str, voice: str) -> Audio | None:
        k = self.key(text, voice)
        with self._lock:
            audio = self._mem.get(k)
            if audio is not None:
                self._mem.move_to_end(k)
                self.hits += 1
                return audio
        if self.folder is not None:
            for path in self.folder.glob(f"{k}.*.pcm"):
                audio = Audio(path.read_bytes(), int(path.suffixes[0][1:]))
                self._put_mem(k, audio)
                self.hits += 1
                return audio
        self.misses += 1
        return None

    def put(self, text: str, voice: str, audio: Audio) -> None:
        k = self.key(text, voice)
        self._put_mem(k, audio)
        if self.folder is not None and audio.pcm:
            tmp = self.folder / f"{k}.{audio.rate}.pcm.tmp{os.getpid()}"
            tmp.write_bytes(audio.pcm)
            tmp.replace(self.folder / f"{k}.{audio.rate}.pcm")

    def _put_mem(self, k: str, audio: Audio) -> None:
        size = len(audio.pcm)
        with self._lock:
            old = self._mem.pop(k, None)
            if old is not None:
                self._bytes -= len(old.pcm)
            if size > self.max_bytes:
                return  # would evict everything else and still not fit: disk only
            self._mem[k] = audio
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, dropped = self._mem.popitem(last=False)  # least recently used
                self._bytes -= len(dropped.pcm)
                self.evicted += 1
