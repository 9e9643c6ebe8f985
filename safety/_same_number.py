"""Is a number a caller said one of the owner's private numbers?

One rule for the output guard (``safety._priv``) and the coordinator's read-back
(``coordinator.readback.private``). A number is the owner's when it is the private number
or a piece of it, contains it whole (with a country code, an extension), contains its last
six digits (the line's own part: 312 555 0199 vs 415 555 0199), or is all of it but one
digit changed, dropped or added (a recital with a slip: 217 555 0112 vs 217 555 0111).
Not any six digits in a row: numbers of one area share their start (415 555 01xx: area
code, exchange and the 555-01 block; 139 1234 xxxx: a mobile carrier's prefix and region)
and are different numbers (415 555 0134 vs 415 555 0199; 555 555 0100 shares "555501").
"""

from __future__ import annotations

_WHOLE = 6  # a private number at least this long found inside another: it is there whole
_LINE = 6  # the last digits of a number that are the line's own
_SLIP = 7  # numbers this long may be recited with one digit wrong


def _one_slip(a: str, b: str) -> bool:
    """``a`` and ``b`` (7 digits or more) differ by one digit changed, dropped or added."""
    if min(len(a), len(b)) < _SLIP or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def same_number(run: str, fact: str) -> bool:
    """``run``: the digits said; ``fact``: the digits of one private value."""
    if run in fact or (len(fact) >= _WHOLE and fact in run):
        return True
    if len(fact) >= _LINE and fact[-_LINE:] in run:
        return True
    return _one_slip(run[-len(fact) :], fact) or _one_slip(run[-len(fact) - 1 :], fact)
