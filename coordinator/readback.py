"""Numbers read back: callback numbers, codes, amounts and times, captured as digits and
confirmed with the caller; and the one-time request for a repeat on a low-confidence turn.

Pure (no I/O), like the rest of the coordinator. The policy calls four functions:

- :func:`ask_repeat` before anything else on a voice turn: below the recognition
  confidence threshold the assistant asks once for a repeat instead of acting on a guess
  (never twice in a row);
- :func:`answer` when a read-back is pending: the caller's yes confirms, a no or a
  correction updates the value and reads it back once more (two read-backs at most,
  then the latest value is kept unconfirmed), anything else moves on without nagging;
- :func:`offer` after the turn's normal decision: values the caller just gave are
  captured (``OwnerRecord.captured``: kind, heard, value, confirmed, readbacks) and read
  back in the caller's language, in digit groups;
- :func:`low_confidence` to keep an emergent preset from firing on a misheard match.

Finding the numbers in the caller's words is :mod:`coordinator.spoken_numbers`.

A number that is the owner's private data (any 6 digits of a private fact) is never
captured nor read back: reading it out would confirm it to whoever recited it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from safety._numerals import numerals_to_digits

from .spoken_numbers import digit_runs, digit_text, extract, find_amount, find_time, normalize
from .templates import KIND_WORD, READBACK, READBACK_KIND
from .text import pronouns
from .types import Act, CallContext, CallState

# Whisper's geometric-mean token probability, exp(avg_logprob), below which a turn is
# asked again: avg log-prob < -0.55, chosen on the dev split (docs/voice.md).
LOW_CONFIDENCE = math.exp(-0.55)
MAX_READBACKS = 2
_HEARD_MAX = 200

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
_END_HINT = re.compile(r"\b(?:at the end|end|last|ending|ends)\b|最后|后面|尾号|后四位|后三位|末尾|结尾")
_START_HINT = re.compile(r"\b(?:first|start|beginning|starts)\b|开头|前面|前三位|前四位")
_CLOSING = re.compile(r"\b(?:bye|goodbye|that's all)\b|再见|拜拜|就这样")
_PIECES = re.compile(r"[\s]*[,.!?;，。！？；、]+[\s]*")


@dataclass(frozen=True, slots=True)
class Reply:
    """What to say this turn instead of the policy's own decision."""

    act: Act
    text: str
    end: bool = False


# ----------------------------------------------------------- confidence ----


def low_confidence(asr_confidence: float | None) -> bool:
    return asr_confidence is not None and asr_confidence < LOW_CONFIDENCE


def ask_repeat(state: CallState, asr_confidence: float | None) -> bool:
    """True: ask the caller to repeat this turn (once in a row; the next one is acted on)."""
    if low_confidence(asr_confidence) and not state.repeat_asked:
        state.repeat_asked = True
        return True
    state.repeat_asked = False
    return False


# ------------------------------------------------------------- capture ----


def _private(value: str, ctx: CallContext) -> bool:
    """Is ``value`` (or six digits of it) one of the owner's private numbers?"""
    v = value.lstrip("+")
    for _, fact in ctx.private_facts:
        d = re.sub(r"\D", "", numerals_to_digits(fact.lower()))
        if len(d) < 4:
            continue
        if v in d or d in v:
            return True
        if any(v[i : i + 6] in d for i in range(len(v) - 5)):
            return True
    return False


# ------------------------------------------------------------- reading ----


def group(value: str, kind: str, lang: str) -> str:
    """How a value is read back: phone numbers in digit groups (415 555 0134, 139 1234 5678)."""
    if kind == "time":
        h, m = (int(x) for x in value.split(":"))
        if lang == "zh":
            part = "下午" if 12 < h < 18 else "晚上" if h >= 18 else ""
            hh = h - 12 if h > 12 else h
            return f"{part}{hh}点" + ("半" if m == 30 else f"{m}分" if m else "")
        suffix = " pm" if h >= 12 else ""
        return f"{h - 12 if h > 12 else h}:{m:02d}{suffix}"
    if kind == "amount":
        return f"{value}元" if lang == "zh" else f"${value}"
    plus = "+" if value.startswith("+") else ""
    d = value.lstrip("+")
    if kind == "code" or len(d) < 7:
        return plus + " ".join(d) if len(d) <= 6 else plus + _groups(d, 4)
    if len(d) == 11 and d.startswith("1") and lang == "zh":
        sizes = [3, 4, 4]
    elif len(d) == 10:
        sizes = [3, 3, 4]
    elif len(d) == 11 and d.startswith("1"):
        sizes = [1, 3, 3, 4]
    else:
        return plus + _groups(d, 4)
    out, i = [], 0
    for s in sizes:
        out.append(d[i : i + s])
        i += s
    return plus + " ".join(out)


def _groups(d: str, size: int) -> str:
    head = len(d) % size or size
    parts = [d[:head]] + [d[i : i + size] for i in range(head, len(d), size)]
    return " ".join(parts)


def _phrase(items: list[dict[str, Any]], lang: str) -> str:
    words = [READBACK_KIND[lang][it["kind"]].format(v=group(it["value"], it["kind"], lang)) for it in items]
    return ("，" if lang == "zh" else " and ").join(words)


def _render(key: str, state: CallState, ctx: CallContext, **slots: str) -> str:
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


def _dropped_digit(old: str, new: str) -> bool:
    """``new`` is ``old`` with one digit lost on the line (720 55 0191 for 720 555 0191)."""
    o, n = old.lstrip("+"), new.lstrip("+")
    return len(n) == len(o) - 1 and any(o[:i] + o[i + 1 :] == n for i in range(len(o)))


def _pending_items(state: CallState) -> list[dict[str, Any]]:
    pending = state.readback or {}
    return [state.record.captured[i] for i in pending.get("items", []) if i < len(state.record.captured)]


def _sync_callback(state: CallState) -> None:
    for it in reversed(state.record.captured):
        if it["kind"] == "callback":
            state.record.callback_number = it["value"]
            state.record.callback_confirmed = bool(it["confirmed"])
            return


def offer(
    state: CallState, ctx: CallContext, utt: str, act: Act, said: str, *, end: bool, awaiting: str | None
) -> Reply | None:
    """After the normal decision of a turn: capture the values the caller gave and, if any
    is new, read them back (the decision's own wording gives way; a goodbye waits for the
    caller's answer)."""
    if act in _NO_READBACK_ACTS or state.hostile or state.sales_count:
        return None
    echoed = _assistant_values(state)
    values = [
        v
        for v in extract(utt, state.lang, callback_context=awaiting in ("message", "callback"))
        if not _private(v.value, ctx) and (v.kind, v.value) not in echoed
    ]
    new: list[int] = []
    for v in values:
        same = next(
            (i for i, it in enumerate(state.record.captured) if it["kind"] == v.kind and it["value"] == v.value), None
        )
        if same is not None:
            state.record.captured[same]["confirmed"] = True  # said again, the same: that is a confirmation
            continue
        state.record.captured.append(
            {"kind": v.kind, "heard": utt[:_HEARD_MAX], "value": v.value, "confirmed": False, "readbacks": 1}
        )
        new.append(len(state.record.captured) - 1)
    _sync_callback(state)
    if not new:
        return None
    items = [state.record.captured[i] for i in new]
    if end and _CLOSING.search(normalize(utt)):
        # "..., thanks, bye": the caller is leaving. The number is read back in the goodbye
        # (they hear it, and can still object), kept unconfirmed.
        return Reply(Act.CLOSE_CONFIRM, _render("bye", state, ctx, what=_phrase(items, state.lang)), end=True)
    state.readback = {"items": new, "count": 1, "asked": False, "close": end}
    text = _render("ask", state, ctx, what=_phrase(items, state.lang))
    sep = "" if state.lang == "zh" else " "
    if act in (Act.RELAY_EXCEPTION, Act.DEFER_DECISION):
        text = said + sep + text  # the relay is said too; the number checked
    elif act in _NOTED_ACTS:
        text = _render("noted", state, ctx) + sep + text  # "I'll pass it on. That's 3 pm, right?"
    state.closing = False  # the goodbye waits until the caller has answered
    return Reply(Act.READ_BACK, text)


def _correct(old: str, new: str, utt_norm: str) -> str:
    """Apply a correction: a whole new value, or a part of it ("0143 at the end")."""
    plus = "+" if old.startswith("+") else ""
    o, n = old.lstrip("+"), new.lstrip("+")
    if len(n) >= min(7, len(o) - 1) or not o:
        return new  # a whole number said again (a part is a few digits: "0143 at the end")
    if _END_HINT.search(utt_norm):
        return plus + o[: len(o) - len(n)] + n
    if _START_HINT.search(utt_norm):
        return plus + n + o[len(n) :]

    # Where the correction differs least from what was read back; ties go to the end.
    def cost(i: int) -> tuple[int, int]:
        return sum(a != b for a, b in zip(o[i : i + len(n)], n, strict=True)), -i

    best = min(range(len(o) - len(n) + 1), key=cost)
    return plus + o[:best] + n + o[best + len(n) :]


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
    runs = [r for r in digit_runs(digit_text(utt), merge=True) if len(r.lstrip("+")) >= 2]
    digits_items = [it for it in items if it["kind"] in ("callback", "code")]
    if runs and digits_items:
        it, said = digits_items[0], max(runs, key=len)
        return it, _correct(it["value"], said, norm), said
    return None


def answer(state: CallState, ctx: CallContext, utt: str) -> Reply | None:
    """The caller's answer to a pending read-back. A Reply when this turn is handled here;
    None to go on with the policy's normal decision (the read-back is then settled)."""
    items = _pending_items(state)
    pending = state.readback or {}
    if not items:
        state.readback = None
        return None
    norm = normalize(utt).strip()
    lang = state.lang
    close = bool(pending.get("close"))
    correction = _correction(items, utt, lang)
    no = bool(_NO.search(norm))
    yes = not no and bool(_YES.search(norm))
    if correction is not None:
        old, said = correction[0]["value"].lstrip("+"), correction[2].lstrip("+")
        if said == old or (not no and _dropped_digit(old, said)):
            yes, correction = not no, None  # the same value again: a confirmation (unless said with a no)
        elif correction[1] == correction[0]["value"]:
            correction = None  # a few digits that change nothing ("六六" in noise): not a correction
    if yes and correction is None:
        for it in items:
            it["confirmed"] = True
        _sync_callback(state)
        state.readback = None
        pieces = [p for p in _PIECES.split(norm) if p]
        bye = any(_CLOSING.search(p) for p in pieces)
        rest = _YES.sub("", norm, count=1)
        short = len(re.findall(r"[\u4e00-\u9fff]", rest)) <= 3 and len(re.findall(r"[a-z']+", rest)) <= 2
        if not short and not all(_YES_PIECE.match(p) or _CLOSING.search(p) for p in pieces):
            return None  # "yes, and tell him it's urgent": confirmed; the rest is a normal turn
        thanks = bool(re.search(r"\bthank|谢", norm)) and state.record.has_message
        if close or bye or thanks:  # "yes, thanks" with the message down: the caller is done
            state.closing = True
            return Reply(Act.CLOSE_CONFIRM, _render("confirmed_bye", state, ctx), end=True)
        return Reply(Act.ACKNOWLEDGE, _render("confirmed", state, ctx))
    if correction is not None:
        it, value, _ = correction
        if _private(value, ctx):
            return _give_up(state, ctx, close)  # the owner's number, recited: never read back
        it["value"] = value
        it["heard"] = (it["heard"] + " | " + utt)[-_HEARD_MAX:]
        _sync_callback(state)
        if _CLOSING.search(norm):  # "对，改到十点，拜拜": read back in the goodbye, kept unconfirmed
            state.readback, state.closing = None, True
            return Reply(Act.CLOSE_CONFIRM, _render("bye", state, ctx, what=_phrase(items, lang)), end=True)
        if pending.get("count", 1) >= MAX_READBACKS:
            return _give_up(state, ctx, close)
        it["readbacks"] = it.get("readbacks", 1) + 1
        state.readback = {**pending, "count": pending.get("count", 1) + 1, "asked": False}
        return Reply(Act.READ_BACK, _render("again", state, ctx, what=_phrase(_pending_items(state), lang)))
    if no:
        if pending.get("asked") or pending.get("count", 1) >= MAX_READBACKS:
            return _give_up(state, ctx, close)
        state.readback = {**pending, "asked": True}
        what = KIND_WORD[lang][items[0]["kind"]]
        return Reply(Act.READ_BACK, _render("say_again", state, ctx, what=what))
    state.readback = None  # the caller moved on: no nagging, the value stays unconfirmed
    return None


def _give_up(state: CallState, ctx: CallContext, close: bool) -> Reply:
    """Two read-backs and still not right: keep the latest value, unconfirmed, move on."""
    state.readback = None
    if close:
        state.closing = True
        return Reply(Act.CLOSE_CONFIRM, _render("unconfirmed_bye", state, ctx), end=True)
    return Reply(Act.ACKNOWLEDGE, _render("unconfirmed", state, ctx))
