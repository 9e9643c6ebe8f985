"""Owner-record updates: who called, why, exceptions, messages, requests, callback, urgency.

Two steps per caller turn. :func:`note_caller` records facts about the caller before
the decision (identity, callback number, urgency, input-guard flags). After the
decision, :func:`record_outcome` records what the assistant promised to relay: an
exception it took down, a message it confirmed, a question or decision it deferred to
the owner. So the record holds exactly what the owner must act on, and nothing an
attacker said is relayed as if it were a message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .types import Act, CallContext, CallerAct, CallState, OwnerRecord

if TYPE_CHECKING:
    from .understanding import Understanding

_REASON_MAX = 120
_CALLBACK_CONTEXT = (
    "电话", "号码", "回电", "打给我", "联系我", "手机",
    "number", "call me", "reach me", "call back", "callback", "text me",
)  # fmt: skip
_BLOCKING = {"injection", "extraction"}


def note_caller(state: CallState, ctx: CallContext, utt: str, c: Understanding, flags: tuple[str, ...]) -> None:
    """Facts about the caller, before the decision."""
    r = state.record
    r.scene = state.scene
    if c.caller_name and r.caller is None and not set(flags) & _BLOCKING:
        r.caller = c.caller_name
    if c.urgent:
        r.urgency = "urgent"
    if c.callback_number and (any(k in utt.lower() for k in _CALLBACK_CONTEXT) or state.awaiting == "message"):
        r.callback_number = c.callback_number
    for flag in flags:
        tag = f"input:{flag}"
        if tag not in r.flags:
            r.flags.append(tag)
    if (c.act == CallerAct.SALES or c.pitch) and "sales_or_harassment" not in r.flags:
        r.flags.append("sales_or_harassment")


def record_outcome(
    state: CallState, utt: str, c: Understanding, act: Act, flags: tuple[str, ...], *, relay: bool = True
) -> None:
    """What the assistant just promised to relay to the owner (``relay=False``: the turn
    carries nothing for the owner, e.g. an echo of the preset or a pitch)."""
    r = state.record
    if set(flags) & _BLOCKING:
        return
    if c.wrong_number:
        misdialled(r)
        return
    quiet_acts = (Act.ASK_PURPOSE, Act.CLARIFY, Act.CHECK_IN, Act.SAFE_REFUSAL)
    quiet_callers = (CallerAct.GREETING, CallerAct.ACK, CallerAct.OTHER, CallerAct.SILENCE)
    if r.reason is None and act not in quiet_acts and c.act not in quiet_callers:
        r.reason = utt[:_REASON_MAX]
    if c.threat and "threat" not in r.flags:
        r.flags.append("threat")
        r.urgency = "urgent"
    if not relay:
        if act == Act.ACKNOWLEDGE and c.act == CallerAct.STATEMENT:
            r.notes.append(utt)
        return
    if act == Act.RELAY_EXCEPTION:
        r.exceptions.append(utt)
    elif act in (Act.DEFER_DECISION, Act.ANSWER_UNKNOWN):
        r.requests.append(utt)
    elif act == Act.RELAY_ERRAND:
        # "Can you just check on him?": the owner gets the request as a message, in the caller's words
        # (with the problem it reports, if any, as an exception: "门关着进不去，你能下来开一下门吗")
        (r.exceptions if c.exception else r.messages).append(utt)
    elif act in (Act.CONFIRM_MESSAGE, Act.CLOSE_CONFIRM):
        r.messages.append(c.message_body or utt)
        if _announces_handover(c):
            # "Hi this is Leo with Deliveroo, I've got your order": the build-up to the hand-over; once the
            # owner's answer settles the hand-over it is context (settle_context), not a message to act on.
            state.context_messages.append(c.message_body or utt)
    elif act == Act.ACKNOWLEDGE and c.act == CallerAct.STATEMENT:
        # "I'll let him know": what the caller told us is news for the owner.
        r.messages.append(utt)
        state.context_messages.append(utt)


def _announces_handover(c: Understanding) -> bool:
    """An arrival or an ETA and nothing else: no problem, no question, no number, not left elsewhere."""
    plain = not (c.exception or c.question or c.callback_number or c.placed_elsewhere or c.threat or c.urgent)
    return plain and c.act in (CallerAct.ARRIVAL, CallerAct.WHERE_TO_LEAVE) and not c.slots.get("message")


def settle_context(state: CallState) -> None:
    """An owner's preset answered the question the caller's statements led up to: keep
    those statements as notes, not as messages to act on."""
    r = state.record
    for text in state.context_messages:
        if text in r.messages:
            r.messages.remove(text)
            r.notes.append(text)
    state.context_messages.clear()


def misdialled(r: OwnerRecord) -> None:
    """The caller dialled the wrong number: what they asked or said was meant for someone else,
    kept as context (notes), nothing for the owner to act on."""
    _keep_as_notes(r, "wrong_number")


def disown_messages(r: OwnerRecord) -> None:
    """The caller turned out to be an attacker: nothing they said is relayed as a message."""
    _keep_as_notes(r, "hostile_caller")


def _keep_as_notes(r: OwnerRecord, flag: str) -> None:
    """Everything the caller left becomes context (notes), nothing to act on; ``flag`` says why."""
    r.notes.extend([*r.messages, *r.requests, *r.exceptions])
    r.messages.clear()
    r.requests.clear()
    r.exceptions.clear()
    if flag not in r.flags:
        r.flags.append(flag)
