"""Handing freed memory back (issue 15, item 8): when the trimmer trims, and that the
allocator report tells bytes in use from bytes freed but kept (leak vs. retention)."""

from __future__ import annotations

import asyncio
import ctypes
import sys

import pytest

from pipeline import memory


class Trims:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> bool:
        self.count += 1
        return True


async def test_one_call_end_trims_after_the_quiet_moment() -> None:
    trims = Trims()
    t = memory.Trimmer(quiet_s=0.2, min_interval_s=5, trim_fn=trims)
    t.call_ended()
    await asyncio.sleep(0.05)
    assert trims.count == 0  # the ended call's objects are still being freed
    await asyncio.sleep(0.4)
    assert trims.count == 1
    await t.aclose()


async def test_overlapping_call_ends_still_trim_at_most_once_per_interval() -> None:
    # Calls ending every 0.1 s never leave a quiet moment (nor an instance with no call):
    # the old rule (trim at zero calls) never trimmed here. Bounds from the time it took,
    # not from the sleeps asked for (a loaded machine stretches them).
    trims = Trims()
    t = memory.Trimmer(quiet_s=0.3, min_interval_s=0.5, trim_fn=trims)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(30):
        t.call_ended()
        await asyncio.sleep(0.1)
    elapsed = loop.time() - start
    assert 2 <= t.trims <= elapsed / 0.5 + 1  # trimmed while calls kept ending, but not per call
    during = t.trims
    await asyncio.sleep(0.6)  # and once more after the last end
    await t.aclose()
    assert t.trims == during + 1


async def test_a_quiet_trim_is_rescheduled_by_a_later_end() -> None:
    trims = Trims()
    t = memory.Trimmer(quiet_s=0.3, min_interval_s=10, trim_fn=trims)
    t.call_ended()
    await asyncio.sleep(0.2)
    t.call_ended()
    await asyncio.sleep(0.2)
    assert trims.count == 0
    await asyncio.sleep(0.3)
    assert trims.count == 1
    await t.aclose()


@pytest.mark.skipif(memory.mallinfo() is None, reason="glibc only")
def test_report_tells_freed_but_kept_from_in_use_and_trim_returns_it() -> None:
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    # 4,000 blocks of 64 KiB (below the mmap threshold: they live in the heap), then free
    # all but the last, which pins the top of the heap as a live object would.
    blocks = [libc.malloc(64 * 1024) for _ in range(4000)]
    for b in blocks:
        ctypes.memset(b, 1, 64 * 1024)  # resident, as audio buffers are
    held = memory.mallinfo()
    assert held is not None
    for b in blocks[:-1]:
        libc.free(b)
    kept = memory.mallinfo()
    assert kept is not None
    assert kept["in_use"] < held["in_use"] - 200 * 2**20  # freed...
    assert kept["free_kept"] > 200 * 2**20  # ...but still the allocator's
    rss_before = memory.report()["rss"]
    assert memory.trim()
    rss_after = memory.report()["rss"]
    libc.free(blocks[-1])
    assert rss_before is not None and rss_after is not None
    assert rss_after < rss_before - 150 * 2**20, (rss_before, rss_after)  # trim gives it back


def test_report_counts_live_objects() -> None:
    r = memory.report(top=5)
    assert r["gc_objects"] > 1000 and len(r["top_types"]) == 5
    if sys.platform == "linux":
        assert r["rss"] and r["anonymous"]


def test_the_process_trimmer_survives_successive_event_loops() -> None:
    # One trimmer per process; the CLI and the tests run one loop after another. A task
    # left by an earlier loop must not be awaited from the next one ("attached to a
    # different loop", seen when `bench text` closed its server after a voice test).
    trims = Trims()
    t = memory.Trimmer(quiet_s=10, min_interval_s=10, trim_fn=trims)

    async def end_a_call() -> None:
        t.call_ended()

    asyncio.run(end_a_call())  # leaves a pending task of a loop that is now closed
    asyncio.run(t.aclose())
    asyncio.run(end_a_call())
    asyncio.run(t.aclose())
    assert trims.count == 0
