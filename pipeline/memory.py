"""Give freed memory back to the OS after calls, and say where the memory is.

Measured (issue 15, item 8): a call's ONNX sessions (Silero VAD, Smart Turn), resamplers
and audio buffers are freed when the call ends, but glibc keeps the pages in its arenas,
so RSS stays at its high-water mark (about 28 MB more after five calls' models, flat
after that; ``malloc_trim`` returns it). That is allocator retention, not a leak.

When to trim: once the instance has no call left was not enough. The last call trimmed
while its own pipeline was still referenced (its objects are freed after), and with calls
overlapping the count rarely reaches zero, so the pages freed by every other call stayed.
:class:`Trimmer` therefore trims after a quiet moment once a call ends (its objects are
gone by then), at most once per ``min_interval_s`` while calls keep ending.

:func:`report` is the evidence: glibc's ``mallinfo2`` (bytes in use vs. bytes free but
kept by the allocator), ``/proc/self/smaps_rollup`` and a count of live Python objects.
Growing ``in_use`` at idle points is a leak; growing ``free_kept`` is retention.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

_libc: ctypes.CDLL | None = None
try:
    _name = ctypes.util.find_library("c")
    if _name:
        _libc = ctypes.CDLL(_name)
        if not hasattr(_libc, "malloc_trim"):  # not glibc (musl, macOS)
            _libc = None
except OSError:
    _libc = None


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def trim() -> bool:
    """Return free heap pages to the OS (glibc only); False where it is not available."""
    if _libc is None:
        return False
    try:
        return bool(_libc.malloc_trim(0))
    except Exception:  # never let housekeeping break a call's end
        log.debug("malloc_trim failed", exc_info=True)
        return False


def mallinfo() -> dict[str, int] | None:
    """glibc's heap figures over all arenas, in bytes (None where not available)."""
    fn = getattr(_libc, "mallinfo2", None) if _libc is not None else None
    if fn is None:
        return None
    fn.restype = _MallInfo2
    info = fn()
    return {
        "heap": int(info.arena),  # from sbrk/arenas (not mmap)
        "mmap": int(info.hblkhd),  # large blocks mmapped on their own (given back on free)
        "in_use": int(info.uordblks),
        "free_kept": int(info.fordblks),  # freed, still held by the allocator
    }


def smaps_rollup() -> dict[str, int]:
    """``/proc/self/smaps_rollup`` in bytes (Linux; empty elsewhere)."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/smaps_rollup", encoding="ascii") as f:
            for line in f:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if len(parts) == 2 and parts[1] == "kB":
                    out[key.strip()] = int(parts[0]) * 1024
    except OSError:
        pass
    return out


def report(*, top: int = 15) -> dict[str, Any]:
    """Where the memory is (for the ops memory endpoint and the soak bench)."""
    gc.collect()
    objects = gc.get_objects()
    types = Counter(type(o).__name__ for o in objects)
    smaps = smaps_rollup()
    return {
        "rss": smaps.get("Rss"),
        "anonymous": smaps.get("Anonymous"),
        "malloc": mallinfo(),
        "gc_objects": len(objects),
        "top_types": dict(types.most_common(top)),
    }


class Trimmer:
    """Trims ``quiet_s`` after a call ends (rescheduled by every later end), and at most
    once per ``min_interval_s`` while calls keep ending: so overlapping calls, which never
    bring the instance to zero, still hand their pages back. One per process."""

    def __init__(
        self, *, quiet_s: float = 2.0, min_interval_s: float = 10.0, trim_fn: Callable[[], bool] = trim
    ) -> None:
        self.quiet_s = quiet_s
        self.trim_fn = trim_fn
        self.min_interval_s = min_interval_s
        self.trims = 0
        self._last = 0.0
        self._task: asyncio.Task[None] | None = None
        self._first_pending: float | None = None

    def call_ended(self) -> None:
        """From the call-end path (inside the event loop); never raises, never blocks."""
        now = time.monotonic()
        if self._first_pending is None:
            self._first_pending = now
        overdue = now - max(self._last, self._first_pending) >= self.min_interval_s
        if self._task is not None and self._task.get_loop() is not asyncio.get_running_loop():
            self._task = None  # left over from an earlier event loop in this process
        if self._task is not None and not self._task.done():
            if not overdue:
                self._task.cancel()  # a later end: wait for the quiet moment after it
            else:
                return  # a trim is due soon anyway
        delay = 0.0 if overdue else self.quiet_s
        self._task = asyncio.get_running_loop().create_task(self._later(delay))

    async def _later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._first_pending = None
        self._last = time.monotonic()
        self.trims += 1
        await asyncio.to_thread(self.trim_fn)

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is None or task.done():
            return
        task.cancel()
        # One trimmer per process, and a process may run several event loops one after
        # another (the CLI's benches, tests): only a task of this loop can be awaited here.
        if task.get_loop() is asyncio.get_running_loop():
            await asyncio.gather(task, return_exceptions=True)


TRIMMER = Trimmer()
