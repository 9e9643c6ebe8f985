"""Is a number a caller said one of the owner's private numbers?

One rule for the output guard (``safety._priv``) and the coordinator's read-back
(``coordinator.readback.private``). A number is the owner's when it is the private number
or a piece of it, contains it whole (with a country code, an extension), or shares six
digits in a row with it anywhere but at the start of both: numbers of one area share
their start (415 555 01xx: area code, exchange and the 555-01 block; 139 1234 xxxx: a
mobile carrier's prefix and region) and are different numbers. Digits said in the same
place after that start are still not the owner's (415 555 0134 vs 415 555 0199); six
shared digits elsewhere are no coincidence (312 555 0199 vs 415 555 0199).
"""

from __future__ import annotations

_LEAD = 3  # a country code of up to three digits may lead either number (1, 44, 86)
_SHARED = 6  # shared digits in a row that make it the owner's number
_WHOLE = 6  # a private number at least this long found inside another: it is there whole


def _common(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _shared_start(a: str, b: str) -> tuple[int, int, int]:
    """(offset in a, offset in b, length) of the longest common start, either number
    allowed a leading country code."""
    best = (0, 0, 0)
    for i, j in [(k, 0) for k in range(_LEAD + 1)] + [(0, k) for k in range(1, _LEAD + 1)]:
        n = _common(a[i:], b[j:])
        if n > best[2]:
            best = (i, j, n)
    return best


def same_number(run: str, fact: str) -> bool:
    """``run``: the digits said; ``fact``: the digits of one private value."""
    if run in fact or (len(fact) >= _WHOLE and fact in run):
        return True
    i0, j0, n = _shared_start(run, fact)
    for i in range(len(run) - _SHARED + 1):
        window, at_start = run[i : i + _SHARED], i0 <= i and i + _SHARED <= i0 + n
        j = fact.find(window)
        while j != -1:
            if not (at_start and j - j0 == i - i0):
                return True
            j = fact.find(window, j + 1)
    return False
