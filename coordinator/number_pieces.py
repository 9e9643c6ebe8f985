"""A callback number given in pieces across turns, and "did you get my number?".

Callers read a number out the way they would to a person: "it's five oh three" / "five
five five" / "oh one two three", or 「我手机是一三九」/「一二三四」/「五六七八」. Each
piece is acknowledged with the digits so far ("503 555, got it. Go on."); the pieces are
put together into one number, read back once it is complete (10 digits, 11 for a number
with a leading 1 or a Chinese mobile) or once the caller stops giving digits (7 or more
held). A self-correction inside a piece ("五六七八 哦不对 最后是五六七九") corrects the
digits it names. "Did you get my number?" / 「号码你记下了吗」 reads back the number held,
the digits so far, or asks for it.

Pure (no I/O). The policy calls :func:`take` before the turn's normal decision (a piece
or the question is handled here) and :func:`stop` before :func:`readback.offer` (the
caller moved on: what was held is captured and read back with the normal reply).
"""

from __future__ import annotations

import re
from typing import Any

from .readback import HEARD_MAX, Reply, phrase, private, render, sync_callback
from .spoken_numbers import corrected, digit_runs, digit_text, find_amount, find_time, names_callback, normalize
from .types import Act, CallContext, CallState

_WHOLE_MIN = 7  # digits: a local number, the shortest kept when the caller stops
_MAX = 13  # digits: a number with its country code; more is a new start
# Words a caller says around the digits of a piece; anything else makes it a normal turn.
_FILLER = re.compile(
    r"\b(?:it's|its|it is|that's|thats|my|the|number|phone|cell|mobile|is|and|then|next|last|first|part|rest|"
    r"ok|okay|so|um|uh|er|area|code|got|it|you|that|this|right|yes|yeah|yep|sure|alright|well|now|please|"
    r"here|ready|plus|dash|digits?|ends?|in|with|on|me|at)\b"
    r"|我的?|的|手机号?|电话|号码|是|然后|后面|最后|接着|再|前面|开头|嗯|呃|啊|吧|呢|了|那个|就是|[三四]位|号|好的?|对|行|记一下"
)
# "Did you get my number?" / 「我的号码你记下了吗」: the caller's own number, asked of the
# assistant (not "can you read me the code on your phone", not "do you have the number").
_ASKS_KEPT = re.compile(
    r"\byou\b[^.?!]{0,16}\b(?:got|get|have|take|took|catch|caught|hear|heard|write|wrote)\b[^.?!]{0,12}"
    r"\bmy (?:number|phone number|cell|mobile|digits)\b"
    r"|我的?(?:号码|电话|手机号?)[^。？?]{0,4}(?:你|您)[^。？?]{0,3}(?:记|听)(?:下|到|清|全|住)"
    r"|(?:你|您)[^。？?]{0,3}(?:记|听)(?:下|到|清楚|全|住)了?我的?(?:号码|电话|手机号?)"
)
_CHECK = re.compile(r"\b(?:got (?:it|that)|right|okay|ok)\s*\?|记下了吗|记住了吗|对吗|听清了吗")


def _digits(utt: str) -> str:
    return "".join(digit_runs(digit_text(utt, sounds=True)))


def _is_piece(utt: str) -> bool:
    """Digits and a few words around them ("it's five oh three", 「后面是一二三四」)."""
    norm = normalize(utt)
    if find_time(norm, "en") or find_time(norm, "zh") or find_amount(norm):
        return False
    rest = _FILLER.sub(" ", re.sub(r"\d", " ", digit_text(utt, sounds=True)))
    rest = re.sub(r"不对|哦|说错了|no wait|wait|sorry|i mean|actually", " ", rest)
    words = re.findall(r"[a-z']+", rest)
    han = re.findall(r"[\u4e00-\u9fff]", rest)
    return not words and len(han) <= 1


def _wants_number(state: CallState, norm: str) -> bool:
    """The call has spoken of a callback ("can he call me back?"), or this turn does."""
    if names_callback(norm) or state.awaiting == "callback":
        return True
    return any(caller and names_callback(normalize(caller)) for caller, _ in state.history)


def _complete(d: str, lang: str) -> bool:
    if d.startswith("1"):
        return len(d) >= 11
    return len(d) >= (10 if lang == "en" else 12)


def _spoken(pieces: list[str]) -> str:
    """The digits so far as heard, in the caller's groups; a long run in phone groups
    (206841 -> 206 841, 1382460 -> 138 2460)."""
    out: list[str] = []
    for p in pieces:
        sizes = (3, 4, 4) if p.startswith("1") else (3, 3, 4)
        i = 0
        for size in sizes if len(p) > 4 else ():
            if i < len(p):
                out.append(p[i : i + size])
                i += size
        if i < len(p):
            out.append(p[i:])
    return " ".join(out)


def take(state: CallState, ctx: CallContext, utt: str) -> Reply | None:
    """A piece of a number or "did you get my number?": the reply; else None."""
    if state.hostile or state.sales_count:
        state.pieces = None
        return None
    norm = normalize(utt)
    held: dict[str, Any] = state.pieces or {}
    digits = _digits(utt)
    if not digits and _ASKS_KEPT.search(norm):
        return _kept(state, ctx, held)
    if not digits or not _is_piece(utt):
        return None
    before = held.get("digits", "")
    if not held and (len(digits) < 3 or not _wants_number(state, norm)):
        return None
    if not held and len(digits) >= _WHOLE_MIN and names_callback(norm):
        return None  # "我的手机1595010361": a number in one turn, :func:`readback.offer`'s
    if before and len(digits) > len(before) and digits.startswith(before):
        before = ""  # "503" then "503 555": the caller started again from the top
    now = corrected(before, utt)
    if len(now) > _MAX:
        before, now = "", corrected("", utt)
    runs = digit_runs(digit_text(utt, sounds=True))  # the groups as said: "206, 841"
    kept = held.get("pieces", []) if before else []
    pieces = [*kept, *runs] if now == before + digits else [now]
    heard = (held.get("heard", "") + " | " + utt if held else utt)[-HEARD_MAX:]
    state.pieces = {"digits": now, "pieces": pieces, "heard": heard}
    if _complete(now, state.lang) or (_CHECK.search(norm) and len(now) >= _WHOLE_MIN):
        return _read_back(state, ctx)
    state.closing = False
    return Reply(Act.READ_BACK, render("piece", state, ctx, what=_spoken(pieces)))


def stop(state: CallState, ctx: CallContext) -> list[int]:
    """The caller moved on from giving digits: a number held whole enough is captured
    (its index, to read back with the turn's reply); a few digits are kept as a note."""
    held, state.pieces = state.pieces, None
    if not held:
        return []
    value = held["digits"]
    if len(value) < _WHOLE_MIN or private(value, ctx):
        state.record.notes.append(held["heard"])
        return []
    return [_capture(state, value, held["heard"])]


def _capture(state: CallState, value: str, heard: str) -> int:
    state.record.captured.append(
        {"kind": "callback", "heard": heard, "value": value, "confirmed": False, "readbacks": 1}
    )
    sync_callback(state)
    return len(state.record.captured) - 1


def _read_back(state: CallState, ctx: CallContext) -> Reply:
    held, state.pieces = state.pieces or {}, None
    if private(held["digits"], ctx):
        state.record.notes.append(held["heard"])
        return Reply(Act.ACKNOWLEDGE, render("noted", state, ctx))
    index = _capture(state, held["digits"], held["heard"])
    state.readback = {"items": [index], "count": 1, "asked": False, "close": False}
    state.closing = False
    return Reply(Act.READ_BACK, render("ask", state, ctx, what=phrase([state.record.captured[index]], state.lang)))


def _kept(state: CallState, ctx: CallContext, held: dict[str, Any]) -> Reply:
    """ "You got my number right?": the number held is read back (the caller can still
    correct it), the digits so far with a request for the rest, or a request for it."""
    state.closing = False
    if held.get("digits"):
        return Reply(Act.READ_BACK, render("number_so_far", state, ctx, what=_spoken(held["pieces"])))
    index = next((i for i in range(len(state.record.captured) - 1, -1, -1)
                  if state.record.captured[i]["kind"] == "callback"), None)  # fmt: skip
    if index is None:
        state.readback = {"items": [], "want": "callback", "heard": "", "count": 0, "asked": True}
        return Reply(Act.READ_BACK, render("no_number_yet", state, ctx))
    item = state.record.captured[index]
    item["readbacks"] = item.get("readbacks", 1) + 1
    state.readback = {"items": [index], "count": item["readbacks"], "asked": False, "close": False}
    return Reply(Act.READ_BACK, render("ask", state, ctx, what=phrase([item], state.lang)))
