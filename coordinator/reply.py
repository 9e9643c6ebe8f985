"""Building a :class:`Decision`: the reply shapes every part of the policy shares.

An act rendered from its templates, a repeat of the last reply, conveying a preset,
closing (with or without confirming a message), and the "ok" that may close a call
once something was exchanged. Pure: state in, Decision out.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from .render import render
from .templates import MESSAGE_NOTED, OTHER_QUESTION_NOTED, URGENT_NEED_NOTED, URGENT_NOTED
from .text import pronouns
from .types import Act, CallContext, CallerAct, CallState, Decision, MatchResult, PresetRef, Relation

if TYPE_CHECKING:
    from .understanding import Understanding

_EXCHANGED = {
    Act.CONVEY_PRESET, Act.CONFIRM_MESSAGE, Act.RELAY_EXCEPTION, Act.DEFER_DECISION,
    Act.OWNER_UNAVAILABLE, Act.ANSWER_UNKNOWN, Act.DEFLECT_PRIVATE, Act.DECLINE_SALES,
    Act.ACKNOWLEDGE, Act.SAFE_REFUSAL, Act.RELAY_ERRAND,
}  # fmt: skip


def decision(
    state: CallState,
    act: Act,
    caller_act: CallerAct,
    rel: Relation,
    text: str,
    *,
    end: bool = False,
    preset: PresetRef | None = None,
    flags: tuple[str, ...] = (),
    match: MatchResult | None = None,
) -> Decision:
    return Decision(
        act=act, caller_act=caller_act, scene=state.scene, lang=state.lang, relation=rel,
        text=text, preset=preset, end_call=end, input_flags=flags, match=match,
    )  # fmt: skip


def reply(
    state: CallState,
    ctx: CallContext,
    act: Act,
    caller_act: CallerAct,
    rel: Relation,
    u: Understanding | None = None,
    flags: tuple[str, ...] = (),
    *,
    repeat: bool = False,
) -> Decision:
    """``act`` in words (or the last reply again, marked as a repeat)."""
    # Restate the kind only in the caller's terms: never "it needs a signature" unheard.
    slots = {"detail_kind": (u.exception or "") if u and u.exception_stated else ""}
    if act == Act.GUIDE:
        slots["scene"] = state.scene or ""
    if repeat and state.last_reply:  # the same words, marked as a repeat (never a bare echo of itself)
        lead = "好的，我再说一遍：" if state.lang == "zh" else "Sure, once more: "
        text = lead + _core(state.last_reply.removeprefix(lead))
        d = decision(state, act, caller_act, rel, text, flags=flags)
        return replace(d, slots={**d.slots, "repeat": "1"})
    text = render(act, state, ctx, slots)
    return decision(state, act, caller_act, rel, text, flags=flags)


# The tail question of a reply ("Anything else?", "还有别的事吗？"): left out of a repeat, which is
# asked for on a bad line and should be shorter than what the caller missed.
_TAIL_QUESTION = re.compile(
    r"\s*((is there )?anything else( i can (do|help with))?( for you)?\??"
    r"|还有(别的|其他|什么)(事|需要)?(吗|么|嘛)?[？?]?)$",
    re.IGNORECASE,
)


def _core(text: str) -> str:
    core = _TAIL_QUESTION.sub("", text).strip()
    return core or text


def close(
    state: CallState, ctx: CallContext, caller_act: CallerAct, rel: Relation, flags: tuple[str, ...], *, confirm: bool
) -> Decision:
    """Goodbye (``confirm``: first confirm the message the caller just left)."""
    state.closing = True
    act = Act.CLOSE_CONFIRM if confirm else Act.CLOSE
    return decision(state, act, caller_act, rel, render(act, state, ctx, {}), end=True, flags=flags)


def exchanged(state: CallState) -> bool:
    """Has the call done something for the caller (so a plain "ok" may close it)?"""
    return bool(state.conveyed) or state.record.has_message or state.last_act in _EXCHANGED


def ack(state: CallState, ctx: CallContext, u: Understanding, flags: tuple[str, ...]) -> Decision:
    """An "ok": goodbye once something was exchanged, else ask what the caller needs."""
    if state.awaiting is None and exchanged(state):
        return close(state, ctx, u.act, Relation.NONE, flags, confirm=False)
    return reply(state, ctx, Act.ASK_PURPOSE, u.act, Relation.NONE, u, flags)


def convey(
    state: CallState,
    ctx: CallContext,
    u: Understanding,
    preset: PresetRef,
    rel: Relation,
    flags: tuple[str, ...],
    match: MatchResult | None = None,
    *,
    repeat: bool = False,
) -> Decision:
    text = render(Act.CONVEY_PRESET, state, ctx, {"preset": preset.response})
    d = decision(state, Act.CONVEY_PRESET, u.act, rel, text, preset=preset, flags=flags, match=match)
    return replace(d, slots={"repeat": "1"}) if repeat else d


def other_question_noted(state: CallState, ctx: CallContext, *, urgent: bool = False) -> str:
    """ "Your other question I'll pass on to her." (after the owner's answer in the same reply);
    ``urgent``: the other part asked for private data beside an urgent need ("I'll tell her it's urgent")."""
    return _noted(URGENT_NEED_NOTED if urgent else OTHER_QUESTION_NOTED, state, ctx)


def message_noted(state: CallState, ctx: CallContext, *, urgent: bool = False) -> str:
    """ "I've noted your message for Sarah." (before a deflection in the same reply); ``urgent``:
    "I'll tell Sarah right away that it's urgent." (the turn's message is only that it is urgent)."""
    return _noted(URGENT_NOTED if urgent else MESSAGE_NOTED, state, ctx)


def _noted(table: dict[str, str], state: CallState, ctx: CallContext) -> str:
    return table[state.lang].format(owner=ctx.owner_name, **pronouns(ctx.owner_name, state.lang, ctx.pronoun))
