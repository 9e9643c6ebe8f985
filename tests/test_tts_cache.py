"""The in-memory TTS cache is capped in bytes of PCM (CALLASSIST_TTS_CACHE_MB), least
recently used first out; the disk cache keeps everything."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings
from pipeline.audio_cache import DEFAULT_CACHE_BYTES, Audio, AudioCache

RATE = 8000
KB = 1024


def _clip(kb: int, fill: int = 1) -> Audio:
    return Audio(bytes([fill]) * (kb * KB), RATE)


def test_memory_is_capped_in_bytes_not_clips(tmp_path: Path) -> None:
    cache = AudioCache(tmp_path, max_bytes=100 * KB)
    for i in range(10):  # 10 x 30 KB = 300 KB offered; 3 clips fit in 100 KB
        cache.put(f"sentence {i}", "piper:x", _clip(30, i))
        assert cache.nbytes <= 100 * KB
    assert cache.items == 3 and cache.nbytes == 90 * KB
    # Many small clips: the count is not what bounds it.
    for i in range(200):
        cache.put(f"ok {i}", "piper:x", _clip(1, 7))
    assert cache.nbytes <= 100 * KB and cache.items == 100
    stats = cache.stats()
    assert stats["bytes"] == cache.nbytes and stats["items"] == cache.items
    assert stats["max_bytes"] == 100 * KB and stats["evicted"] == 10 + 200 - 100


def test_least_recently_used_goes_first(tmp_path: Path) -> None:
    cache = AudioCache(None, max_bytes=90 * KB)
    for name in ("a", "b", "c"):
        cache.put(name, "v", _clip(30))
    assert cache.get("a", "v") is not None  # a is now the most recent
    cache.put("d", "v", _clip(30))  # evicts b, the least recently used
    assert cache.get("b", "v") is None
    assert all(cache.get(name, "v") is not None for name in ("a", "c", "d"))
    assert cache.nbytes == 90 * KB


def test_replacing_a_clip_is_not_counted_twice(tmp_path: Path) -> None:
    cache = AudioCache(None, max_bytes=100 * KB)
    cache.put("same", "v", _clip(40))
    cache.put("same", "v", _clip(10))
    assert cache.items == 1 and cache.nbytes == 10 * KB


def test_a_clip_larger_than_the_cap_is_served_from_disk_only(tmp_path: Path) -> None:
    cache = AudioCache(tmp_path, max_bytes=50 * KB)
    cache.put("small", "v", _clip(20))
    big = _clip(80, 3)
    cache.put("long preset response", "v", big)
    assert cache.nbytes == 20 * KB and cache.items == 1  # the small clip was not evicted for it
    assert cache.get("long preset response", "v") == big  # read back from disk
    assert cache.nbytes == 20 * KB


def test_disk_keeps_what_memory_dropped(tmp_path: Path) -> None:
    cache = AudioCache(tmp_path, max_bytes=60 * KB)
    clips = {f"unit {i}": _clip(30, i) for i in range(6)}
    for text, audio in clips.items():
        cache.put(text, "kokoro:jf", audio)
    assert cache.items == 2
    assert len(list(tmp_path.glob("*.pcm"))) == 6
    for text, audio in clips.items():  # every clip still served (from disk when evicted)
        assert cache.get(text, "kokoro:jf") == audio
        assert cache.nbytes <= 60 * KB
    assert AudioCache(tmp_path).get("unit 0", "kokoro:jf") == clips["unit 0"]  # survives a restart


def test_zero_keeps_nothing_in_memory(tmp_path: Path) -> None:
    cache = AudioCache(tmp_path, max_bytes=0)
    cache.put("hello", "v", _clip(1))
    assert cache.items == 0 and cache.get("hello", "v") == _clip(1)


def test_setting_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().tts_cache_mb == 64 and DEFAULT_CACHE_BYTES == 64 * 1024 * 1024
    monkeypatch.setenv("CALLASSIST_TTS_CACHE_MB", "8.5")
    assert Settings().tts_cache_mb == 8.5
    monkeypatch.setenv("CALLASSIST_TTS_CACHE_MB", "-1")
    with pytest.raises(ValueError, match="tts_cache_mb"):
        Settings()
