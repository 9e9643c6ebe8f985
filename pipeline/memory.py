"""Give freed memory back to the OS after calls.

Measured (issue 15, item 8): a call's ONNX sessions (Silero VAD, Smart Turn), resamplers
and audio buffers are freed when the call ends, but glibc keeps the pages in its arenas,
so RSS stays at its high-water mark (about 28 MB more after five calls' models, flat
after that; ``malloc_trim`` returns it). That is allocator retention, not a leak;
trimming once the instance has no call left brings RSS back down.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

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


def trim() -> bool:
    """Return free heap pages to the OS (glibc only); False where it is not available."""
    if _libc is None:
        return False
    try:
        return bool(_libc.malloc_trim(0))
    except Exception:  # never let housekeeping break a call's end
        log.debug("malloc_trim failed", exc_info=True)
        return False
