"""Owner-record updates: who called, why, exceptions, messages, requests, callback, urgency."""

from __future__ import annotations

from .acts import Classification
from .types import CallContext, CallerAct, CallState

_REASON_MAX = 120
_CALLBACK_CONTEXT = (
    "电话",
    "号码",
    "回电",
    "打给我",
    "联系我",
    "number",
    "call me",
    "reach me",
    "call back",
    "text me",
)


def update_record(state: CallState, ctx: CallContext, utt: str, c: Classification, flags: tuple[str, ...]) -> None:
    """Fold one caller turn into the call's single owner record."""
    r = state.record
    r.scene = state.scene
    if c.self_id and r.caller is None:
        r.caller = c.self_id
    if r.reason is None and c.act not in (CallerAct.GREETING, CallerAct.ACK, CallerAct.OTHER):
        r.reason = utt[:_REASON_MAX]
    if c.urgent:
        r.urgency = "urgent"
    if c.callback_number and (
        any(k in utt.lower() for k in _CALLBACK_CONTEXT) or state.awaiting in ("callback", "message")
    ):
        r.callback_number = c.callback_number
    for flag in flags:
        tag = f"input:{flag}"
        if tag not in r.flags:
            r.flags.append(tag)
    if c.act == CallerAct.SALES and "sales_or_harassment" not in r.flags:
        r.flags.append("sales_or_harassment")
    if set(flags) & {"injection", "extraction"}:
        return  # nothing an attacker says is relayed as if it were a message
    if c.act == CallerAct.EXCEPTION:
        r.exceptions.append(utt)
    elif c.act == CallerAct.ASK_DECISION:
        r.requests.append(utt)
    elif c.act == CallerAct.LEAVE_MESSAGE and c.message_body:
        r.messages.append(c.message_body)
    elif state.awaiting == "message" and c.act in (
        CallerAct.STATEMENT,
        CallerAct.OTHER,
        CallerAct.INFO_QUESTION,
    ):
        r.messages.append(utt)
    elif c.act == CallerAct.STATEMENT and c.message_body:
        r.messages.append(c.message_body)
    elif c.act == CallerAct.INFO_QUESTION and not c.repeat_request:
        r.requests.append(utt)
    elif c.act == CallerAct.WHERE_TO_LEAVE and not ctx.regular.get(state.scene or ""):
        r.requests.append(utt)  # no instruction from the owner: they must decide
