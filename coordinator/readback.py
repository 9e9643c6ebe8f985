"""Numbers read back: callback numbers, codes, amounts and times, captured as digits and
confirmed with the caller; and the one-time request for a repeat on a low-confidence turn.

Pure (no I/O), like the rest of the coordinator. The policy calls four functions:

- :func:`ask_repeat` (:mod:`coordinator.confidence`) before anything else on a voice turn: below the recognition
  confidence threshold the assistant asks once for a repeat instead of acting on a guess
  (never twice in a row);
- :func:`answer` when a read-back is pending: the caller's yes confirms, a no or a
  correction updates the value and reads it back once more; a number or code the
  caller said no to twice is asked for digit by digit and read back that way (then the
  latest value is kept, unconfirmed); anything else moves on without nagging; a
  callback number the assistant did not get whole is asked for once;
- :func:`offer` after the turn's normal decision: values the caller just gave are
  captured (``OwnerRecord.captured``: kind, heard, value, confirmed, readbacks) and read
  back in the caller's language, in digit groups;
- :func:`low_confidence` to keep an emergent preset from firing on a misheard match.

Finding the numbers in the caller's words is :mod:`coordinator.spoken_numbers`.

A number that is the owner's private data (:func:`safety._same_number.same_number`: the
number, a piece of it, or six digits of it past the start every number of that area
shares) is never captured nor read back: reading it out would confirm it to whoever
recited it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from safety._numerals import numerals_to_digits
from safety._same_number import same_number

from .confidence import LOW_CONFIDENCE as LOW_CONFIDENCE
from .confidence import ask_repeat as ask_repeat
from .confidence import low_confidence as low_confidence
from .lexicon import HUNG_UP
from .readback_yes import answer_to_request
from .spoken_numbers import (
    Value,
    apply_correction,
    correction_runs,
    digit_runs,
    digit_text,
    dropped_digit,
    extract,
    find_amount,
    find_time,
    group,
    normalize,
    self_correction,
)
from .templates import KIND_WORD, READBACK, READBACK_KIND
from .text import pronouns
from .types import Act, CallContext, CallState

# Read-backs of one value at most: the first, one after a correction, and for digits
# (numbers, codes) one more after the caller said no twice and was asked digit by digit.
MAX_READBACKS = 3
HEARD_MAX = 200

_NO_READBACK_ACTS = {
    Act.SAFE_REFUSAL, Act.DEFLECT_PRIVATE, Act.DECLINE_SALES, Act.CONVEY_PRESET, Act.CLARIFY,
    Act.ASK_REPEAT, Act.CHECK_IN, Act.IDENTIFY_SELF,
}  # fmt: skip
_NOTED_ACTS = {Act.CONFIRM_MESSAGE, Act.CLOSE_CONFIRM, Act.ANSWER_UNKNOWN, Act.OWNER_UNAVAILABLE}
_YES = re.compile(
    r"^(?:(?:yes|yeah|yep|yup|correct|right|that's right|that is right|that's correct|exactly|that's it|"
    r"uh huh|sure|ok|okay|perfect|great|spot on)\b|对|是的|是|没错|没问题|嗯|正确|就是|好)"
)
_YES_PIECE = re.compile(
    r"^(?:yes|yeah|yep|yup|correct|right|that's right|that is right|that's correct|exactly|that's it|that's the one|"
    r"uh huh|sure|ok|okay|perfect|spot on|thanks|thank you|great|good)$|"
    r"^(?:对+的?|是的?|没错|没问题|嗯+|正确|就是|就是这个(?:号码?|数)?|是这个(?:号码?)?|对对|好的?|谢谢|行)$"
)
_NO = re.compile(r"^(?:no|nope|nah|not quite|wrong|incorrect|that's wrong|not right)\b|不对|不是|错了|说错|不正确|搞错")
_OWN_NUMBER = re.compile(
    r"我的?(?:电话|手机|号码|号)|打给我|给我打|打我|联系我|回我|回电|回个电话|"
    r"\b(?:my (?:number|cell|phone|mobile)|call (?:me|us)|reach (?:me|us)|text (?:me|us))\b"
)
_THEIR_NUMBER = re.compile(
    r"(?:他|她|您|你)的?(?:电话|手机|号码)|\b(?:his|her|their|your) (?:number|cell|phone|mobile)\b"
)
# "不对" as Whisper base writes it on a phone line, at the start of an answer.
_NO_HEARD = re.compile(r"^(?:部队|不队|步对|布对|不断)")
_AFFIRM = re.compile(r"\b(?:yes|yeah|yep|right|correct|that's|thanks?)\b|对的|没错|是的|谢谢")
_CLOSING = re.compile(r"\b(?:bye|goodbye|that's all)\b|再见|拜拜|就这样|" + HUNG_UP)  # "嗯，挂了": yes, and goodbye
_HURRY = re.compile(
    r"快点|快一点|尽快|赶紧|赶快|抓紧|越快越好|\b(asap|quickly|hurry|as soon as (possible|you can)|right away)\b"
)
_QUESTION_END = re.compile(r"[?？]\s*$")
_PIECES = re.compile(r"[\s]*[,.!?;，。！？；、]+[\s]*")


@dataclass(frozen=True, slots=True)
class Reply:
    """What to say this turn instead of the policy's own decision."""

    act: Act
    text: str
    end: bool = False


# ------------------------------------------------------------- capture ----


def private(value: str, ctx: CallContext) -> bool:
    """Is ``value`` one of the owner's private numbers (:func:`safety._same_number.same_number`:
    the whole of it, a piece of it, its last six digits, or all of it but one digit)? Not any
    six digits in a row: a caller from the owner's town shares the area code and exchange."""
    v = value.lstrip("+")
    for _, fact in ctx.private_facts:
        d = re.sub(r"\D", "", numerals_to_digits(fact.lower()))
        if len(d) >= 4 and same_number(v, d):
            return True
    return False


# ------------------------------------------------------------- reading ----


def phrase(items: list[dict[str, Any]], lang: str, *, spell: bool = False) -> str:
    """The values as read back; ``spell``: digit by digit, group by group (1 3 9，1 2 3 4，…)."""
    words = [READBACK_KIND[lang][it["kind"]].format(v=_spoken(it, lang, spell)) for it in items]
    return ("，" if lang == "zh" else " and ").join(words)


def _spoken(item: dict[str, Any], lang: str, spell: bool) -> str:
    grouped = group(item["value"], item["kind"], lang)
    if not spell or item["kind"] not in ("callback", "code"):
        return grouped
    return ("，" if lang == "zh" else ", ").join(" ".join(g) for g in grouped.split())


def render(key: str, state: CallState, ctx: CallContext, **slots: str) -> str:
    lang = state.lang
    variants = READBACK[key][lang]
    counter = f"readback:{key}"
    start = state.variant_counter.get(counter, 0)
    values = {"owner": ctx.owner_name, **pronouns(ctx.owner_name, lang, ctx.pronoun), **slots}
    for offset in range(len(variants)):
        text = variants[(start + offset) % len(variants)].format(**values)
        if text != state.last_reply:
            state.variant_counter[counter] = start + offset + 1
            return text
    return variants[0].format(**values)


def _assistant_values(state: CallState) -> set[tuple[str, str]]:
    """Values the assistant itself said (an owner's preset, a read-back): a caller who
    echoes them gives nothing new to read back."""
    out: set[tuple[str, str]] = set()
    for _, reply in state.history:
        if reply and re.search(r"\d|[一二两三四五六七八九十]", reply):
            out.update((v.kind, v.value) for v in extract(reply, state.lang, callback_context=True))
    return out


def _pending_items(state: CallState) -> list[dict[str, Any]]:
    pending = state.readback or {}
    return [state.record.captured[i] for i in pending.get("items", []) if i < len(state.record.captured)]


def sync_callback(state: CallState) -> None:
    for it in reversed(state.record.captured):
        if it["kind"] == "callback":
            state.record.callback_number = it["value"]
            state.record.callback_confirmed = bool(it["confirmed"])
            return


def offer(
    state: CallState,
    ctx: CallContext,
    utt: str,
    act: Act,
    said: str,
    *,
    end: bool,
    awaiting: str | None,
    carried: list[int] | None = None,
) -> Reply | None:
    """After the normal decision of a turn: capture the values the caller gave and, if any
    is new, read them back (the decision's own wording gives way; a goodbye waits for the
    caller's answer). ``carried``: items captured earlier this turn to read back too (a
    number given in pieces, :mod:`coordinator.number_pieces`)."""
    if state.hostile or state.sales_count:
        return None
    echoed = _assistant_values(state)
    found = extract(utt, state.lang, callback_context=awaiting in ("message", "callback"))
    values = [v for v in found if not private(v.value, ctx) and (v.kind, v.value) not in echoed]
    if act in _NO_READBACK_ACTS and not (act == Act.DEFLECT_PRIVATE and _own_number(utt, ctx, values)):
        return None
    new: list[int] = list(carried or [])
    for v in values:
        same = next(
            (i for i, it in enumerate(state.record.captured) if it["kind"] == v.kind and it["value"] == v.value), None
        )
        if same is not None:
            state.record.captured[same]["confirmed"] = True  # said again, the same: that is a confirmation
            continue
        state.record.captured.append(
            {"kind": v.kind, "heard": utt[:HEARD_MAX], "value": v.value, "confirmed": False, "readbacks": 1}
        )
        new.append(len(state.record.captured) - 1)
    sync_callback(state)
    if not new:
        return _ask_number(state, ctx, utt, found, said, act)
    items = [state.record.captured[i] for i in new]
    if end and _CLOSING.search(normalize(utt)):
        # "..., thanks, bye": the caller is leaving. The number is read back in the goodbye
        # (they hear it, and can still object), kept unconfirmed.
        return Reply(Act.CLOSE_CONFIRM, render("bye", state, ctx, what=phrase(items, state.lang)), end=True)
    state.readback = {"items": new, "count": 1, "asked": False, "close": end}
    text = render("ask", state, ctx, what=phrase(items, state.lang))
    sep = "" if state.lang == "zh" else " "
    if act in (Act.RELAY_EXCEPTION, Act.DEFER_DECISION, Act.ANSWER_UNKNOWN, Act.RELAY_ERRAND):
        text = said + sep + text  # the relay (or the question's answer) is said too; the number checked
    elif act in _NOTED_ACTS or (said and any(it["kind"] in ("time", "amount") for it in items)):
        # "I'll pass it on. That's 3 pm, right?": a time in a notice ("water is off Thursday
        # at 9, and we need to read your meter") is read back without swallowing the rest
        # of the turn: it is taken down and said so (the message is recorded either way).
        text = (said if not _QUESTION_END.search(said) else render("noted", state, ctx)) + sep + text
    state.closing = False  # the goodbye waits until the caller has answered
    return Reply(Act.READ_BACK, text)


def _own_number(utt: str, ctx: CallContext, values: list[Value]) -> bool:
    """The caller gives their own number ("我是快递员，号码…，到了给我打电话"), which a
    classifier can take for a question about the owner's: read it back, no deflection."""
    norm = normalize(utt)
    theirs = _THEIR_NUMBER.search(norm) or (ctx.owner_name and ctx.owner_name.lower() + "的" in norm)
    return not theirs and bool(_OWN_NUMBER.search(norm)) and any(v.kind == "callback" for v in values)


def _ask_number(state: CallState, ctx: CallContext, utt: str, found: list[Value], said: str, act: Act) -> Reply | None:
    """A callback number said but not heard whole ("call me back on 8148. I know you.
    86144"): ask for it once in the call instead of keeping nothing. ``found``: every value
    in the turn, the owner's and echoed ones too (a number heard whole is never asked for)."""
    norm = normalize(utt)
    heard = sum(len(r) for r in digit_runs(digit_text(utt, sounds=True)))
    if (
        found
        or act in _NO_READBACK_ACTS
        or heard < 5  # a number heard in pieces, not "call me, I'm in room 305"
        or not _OWN_NUMBER.search(norm)
        or any(it["kind"] == "callback" for it in state.record.captured)
        or state.variant_counter.get("readback:ask_number")
    ):
        return None
    state.readback = {"items": [], "want": "callback", "heard": utt[:HEARD_MAX], "count": 0, "asked": True}
    state.closing = False
    text = render("ask_number", state, ctx)
    return Reply(Act.READ_BACK, (said + ("" if state.lang == "zh" else " ") + text) if act in _NOTED_ACTS else text)


def _correction(items: list[dict[str, Any]], utt: str, lang: str) -> tuple[dict[str, Any], str, str] | None:
    """(the item corrected, its new value, what the caller said of it)."""
    norm = normalize(utt)
    time, amount = find_time(norm, lang, loose=True), find_amount(norm)
    for it in items:
        if it["kind"] == "time" and time:
            old_h, new_h = int(it["value"][:2]), int(time[:2])
            if old_h >= 12 > new_h and not re.search(r"\ba\.?m\b|上午|早上|早晨", norm):
                time = f"{new_h + 12:02d}{time[2:]}"  # "no, four": still the afternoon read back
            return it, time, time
        if it["kind"] == "amount" and amount:
            return it, amount, amount
    split = self_correction(utt)  # "五六七八 哦不对 最后是五六七九": the words after the correction
    runs = correction_runs(split[1]) if split else correction_runs(utt)
    if split:
        norm = normalize(split[1])
    digits_items = [it for it in items if it["kind"] in ("callback", "code")]
    if runs and digits_items:
        it, said = digits_items[0], max(runs, key=len)
        return it, apply_correction(it["value"], said, norm), said
    return None


def answer(state: CallState, ctx: CallContext, utt: str) -> Reply | None:
    """The caller's answer to a pending read-back. A Reply when this turn is handled here;
    None to go on with the policy's normal decision (the read-back is then settled)."""
    items = _pending_items(state)
    pending = state.readback or {}
    if not items:
        state.readback = None
        return _wanted(state, ctx, utt, pending) if pending.get("want") else None
    norm = normalize(utt).strip()
    lang = state.lang
    close = bool(pending.get("close"))
    correction = _correction(items, utt, lang)
    no = bool(_NO.search(norm) or _NO_HEARD.search(norm))
    yes = not no and bool(_YES.search(norm))
    # Asked for the number again (once more, digit by digit), or reading back what was spelled: "OK
    # time" is a misheard digit string, not a yes; "okay" agrees to say it (coordinator/readback_yes.py).
    asked, strict = bool(pending.get("asked")), bool(pending.get("asked") or pending.get("digits"))
    to_request = answer_to_request(norm) if strict else None
    if strict:
        yes = yes and (to_request == "yes" or (to_request == "agree" and not asked))
    if correction is not None:
        old, said = correction[0]["value"].lstrip("+"), correction[2].lstrip("+")
        lost = not no and dropped_digit(old, said) and not pending.get("asked") and bool(_AFFIRM.search(norm))
        if said == old or lost:
            # The same value again is a confirmation (unless said with a no); so is one digit
            # lost on the line, but only said as a yes ("that's 720 55 0191, thanks"), never
            # as the answer to "say it again / digit by digit" (bench readback: two numbers
            # confirmed wrong that way).
            yes, correction = not no, None
        elif correction[1] == correction[0]["value"]:
            correction = None  # a few digits that change nothing ("六六" in noise): not a correction
    if yes and correction is None:
        return _confirmed(state, ctx, items, norm, close)
    if (
        correction is None
        and all(it["kind"] in ("time", "amount") for it in items)
        and any(len(r.lstrip("+")) >= 7 for r in correction_runs(utt))
    ):
        state.readback = None  # "不对，是139…": a number where a time was read back: taken as new
        return None
    if correction is None and not no and not yes and to_request in ("agree", "unclear"):
        if pending.get("unclear"):
            return _give_up(state, ctx, close)  # twice without the digits: kept unconfirmed, flagged
        state.readback = {**pending, "unclear": True}
        key = "go_ahead" if to_request == "agree" else "unclear"
        return Reply(Act.READ_BACK, render(key, state, ctx, what=KIND_WORD[lang][items[0]["kind"]]))
    # A no, or a different value right after a read-back (an implicit no); the digits given
    # when asked for them again are the answer to that request, not another no.
    nos = pending.get("nos", 0) + int(no or (correction is not None and not pending.get("asked")))
    spell = items[0]["kind"] in ("callback", "code") and nos >= 2 and not pending.get("digits")
    limit = MAX_READBACKS if items[0]["kind"] in ("callback", "code") else MAX_READBACKS - 1
    if correction is not None:
        it, value, _ = correction
        if private(value, ctx):
            return _give_up(state, ctx, close)  # the owner's number, recited: never read back
        it["value"] = value
        it["heard"] = (it["heard"] + " | " + utt)[-HEARD_MAX:]
        sync_callback(state)
        if _CLOSING.search(norm):  # "对，改到十点，拜拜": read back in the goodbye, kept unconfirmed
            state.readback, state.closing = None, True
            return Reply(Act.CLOSE_CONFIRM, render("bye", state, ctx, what=phrase(items, lang)), end=True)
    if spell:  # no twice: ask for it digit by digit, and read it back that way
        state.readback = {**pending, "nos": nos, "asked": True, "digits": True}
        return Reply(Act.READ_BACK, render("digit_by_digit", state, ctx, what=KIND_WORD[lang][items[0]["kind"]]))
    if correction is not None:
        if pending.get("count", 1) >= limit:
            return _give_up(state, ctx, close)
        it["readbacks"] = it.get("readbacks", 1) + 1
        state.readback = {**pending, "nos": nos, "count": pending.get("count", 1) + 1, "asked": False}
        what = phrase(_pending_items(state), lang, spell=bool(pending.get("digits")))
        return Reply(Act.READ_BACK, render("again", state, ctx, what=what))
    if no:
        if pending.get("asked") or pending.get("digits") or pending.get("count", 1) >= limit:
            return _give_up(state, ctx, close)
        state.readback = {**pending, "nos": nos, "asked": True}
        what = KIND_WORD[lang][items[0]["kind"]]
        return Reply(Act.READ_BACK, render("say_again", state, ctx, what=what))
    state.readback = None  # the caller moved on: no nagging, the value stays unconfirmed
    return None


def _confirmed(state: CallState, ctx: CallContext, items: list[dict[str, Any]], norm: str, close: bool) -> Reply | None:
    for it in items:
        it["confirmed"] = True
    sync_callback(state)
    state.readback = None
    pieces = [p for p in _PIECES.split(norm) if p]
    bye = any(_CLOSING.search(p) for p in pieces)
    rest = _YES.sub("", norm, count=1)
    short = len(re.findall(r"[\u4e00-\u9fff]", rest)) <= 3 and len(re.findall(r"[a-z']+", rest)) <= 2
    if not short and not all(_YES_PIECE.match(p) or _CLOSING.search(p) for p in pieces):
        return None  # "yes, and tell him it's urgent": confirmed; the rest is a normal turn
    thanks = bool(re.search(r"\bthank|谢", norm)) and state.record.has_message
    hurry = bool(_HURRY.search(rest)) and state.record.has_message  # "好，快点": yes, and be quick about it
    if close or bye or thanks or hurry:  # "yes, thanks" with the message down: the caller is done
        state.closing = True
        return Reply(Act.CLOSE_CONFIRM, render("confirmed_bye", state, ctx), end=True)
    return Reply(Act.ACKNOWLEDGE, render("confirmed", state, ctx))


def _wanted(state: CallState, ctx: CallContext, utt: str, pending: dict[str, Any]) -> Reply | None:
    """The answer to "I didn't get the whole number, could you say it again?": the number
    is captured and read back, or (nothing heard again) the call moves on."""
    values = [
        v for v in extract(utt, state.lang, callback_context=True) if v.kind == "callback" and not private(v.value, ctx)
    ]
    if not values:
        return None
    heard = (pending.get("heard", "") + " | " + utt)[-HEARD_MAX:]  # both tries, as heard
    state.record.captured.append(
        {"kind": "callback", "heard": heard, "value": values[0].value, "confirmed": False, "readbacks": 1}
    )
    sync_callback(state)
    index = len(state.record.captured) - 1
    state.readback = {"items": [index], "count": 1, "asked": False, "close": False}
    return Reply(Act.READ_BACK, render("ask", state, ctx, what=phrase([state.record.captured[index]], state.lang)))


def _give_up(state: CallState, ctx: CallContext, close: bool) -> Reply:
    """Still not right after the last read-back: keep the latest value, unconfirmed, move on."""
    state.readback = None
    if close:
        state.closing = True
        return Reply(Act.CLOSE_CONFIRM, render("unconfirmed_bye", state, ctx), end=True)
    return Reply(Act.ACKNOWLEDGE, render("unconfirmed", state, ctx))
