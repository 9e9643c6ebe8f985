"""The reply when no owner preset answers the turn: one auditable table, act per intent and state.

Read top to bottom: the first row whose condition holds decides. A row's outcome is an
:class:`~coordinator.types.Act` rendered as is, or a :class:`Do` for the few replies
that also change the call state (closing, taking an awaited message, a repeat).
The conditions read only the typed :class:`Understanding` and the call state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from .reply import ack, close, exchanged, reply
from .turns import PREMISE_EXCEPTIONS
from .types import Act, CallContext, CallerAct, CallState, Decision, PresetRef, Relation
from .understanding import Understanding

EMERGENT_SUSPENDED = "emergent:*"  # a premise-breaking exception suspended the owner's emergent answers
# (A message that says nothing new once the owner answered, "行，那我过去等她，别让我等太久啊", is an echo too.)
_ECHO_ACTS = (CallerAct.WHERE_TO_LEAVE, CallerAct.ARRIVAL, CallerAct.STATEMENT, CallerAct.LEAVE_MESSAGE)
# Earlier in the call the caller threatened or pried (what the record's flags keep of it).
_PRIED = {"threat", "input:private_probe", "input:pretexting", "input:social_engineering", "pretext_once"}
# The assistant's last reply gave the caller nothing they asked for (a refusal, a deferral, "noted").
_NO_ANSWER = {
    Act.DEFLECT_PRIVATE,
    Act.SAFE_REFUSAL,
    Act.DEFER_DECISION,
    Act.DECLINE_SALES,
    Act.OWNER_UNAVAILABLE,
    Act.ANSWER_UNKNOWN,
    Act.CONFIRM_MESSAGE,
    Act.RELAY_ERRAND,
}
_MESSAGE_ACTS = (CallerAct.STATEMENT, CallerAct.OTHER, CallerAct.INFO_QUESTION)  # what an awaited message reads as


class Do(Enum):
    """Outcomes that are more than rendering one act."""

    CLOSE = "close"  # goodbye, end the call
    CLOSE_CONFIRM = "close_confirm"  # confirm the message, goodbye
    ACK = "ack"  # goodbye once something was exchanged, else ask what they need
    REPEAT = "repeat"  # the last reply again, marked as a repeat
    REFUSE = "refuse"  # a hostile caller: safe refusal; a sales call: decline
    TAKE_MESSAGE = "take_message"  # the message we asked for: confirm it
    INVITE_MESSAGE = "invite_message"  # "I'd like to leave a message": go ahead (and wait for it)


@dataclass(frozen=True, slots=True)
class Turn:
    u: Understanding
    state: CallState

    @property
    def guarded(self) -> bool:
        """A scam, an injection or a sales call: nothing it says becomes a message."""
        return self.state.hostile or self.state.sales_count > 0

    @property
    def dismissed(self) -> bool:
        return self.u.dismiss and not self.u.question

    @property
    def done_thanking(self) -> bool:
        """ "I understand, thank you" with nothing new, after something was exchanged."""
        u = self.u
        quiet = u.act not in (CallerAct.EXCEPTION, CallerAct.ASK_DECISION, CallerAct.ASK_PRIVATE)
        return u.ends_with_thanks and not u.question and quiet and not u.news and exchanged(self.state)

    @property
    def echo(self) -> bool:
        """ "中，那我放门口" after the owner's answer: compliance, not news."""
        u = self.u
        plain = not u.question and not u.callback_number and not u.threat
        return bool(self.state.conveyed) and plain and u.act in _ECHO_ACTS and not u.news and not u.placed_elsewhere

    @property
    def message_then_bye(self) -> bool:
        u = self.u
        return bool(u.message_body) and (u.ends_with_closing or (u.ends_with_thanks and not u.question))


def _is(*acts: CallerAct) -> Callable[[Turn], bool]:
    return lambda t: t.u.act in acts


Row = tuple[str, Callable[[Turn], bool], Act | Do]

TABLE: tuple[Row, ...] = (
    ("insults with nothing else: stay calm, relay nothing", lambda t: t.u.abusive, Act.ASK_PURPOSE),
    ("a third pitch: end politely",
     lambda t: t.u.pitch and t.state.sales_count >= 3 and t.u.act != CallerAct.ASK_DECISION, Do.CLOSE),
    ("a wrong number: goodbye, nothing for the owner", lambda t: t.u.wrong_number, Do.CLOSE),
    # "Hello? Is this the account holder? Sir?" from a scam already refused: nothing left to say to them
    ("hostile: who answers, or the owner, again: goodbye",
     lambda t: t.state.hostile and t.u.act in (CallerAct.ASK_IDENTITY, CallerAct.ASK_OWNER) and not t.u.injection,
     Do.CLOSE),
    ("who are you?", _is(CallerAct.ASK_IDENTITY), Act.IDENTIFY_SELF),
    ("left or waiting somewhere the owner did not say: the owner must hear where",
     lambda t: t.u.placed_elsewhere and not t.u.question and not t.guarded, Act.CONFIRM_MESSAGE),
    ("thanks, nothing new, after an exchange", lambda t: t.done_thanking, Do.CLOSE),
    # A scam, an injection or a sales call: polite and brief, nothing relayed.
    ("guarded: goodbye",
     lambda t: t.guarded and (t.u.ends_with_closing or t.u.act == CallerAct.CLOSING or t.dismissed),
     Do.CLOSE),
    # "你这是妨碍公务，后果自负！" / "You will regret this" once refused: nothing more to say to them
    ("hostile: a parting shot after a refusal: goodbye",
     lambda t: t.state.hostile and t.state.probing and t.u.ultimatum and t.u.act != CallerAct.ASK_PRIVATE,
     Do.CLOSE),
    ("guarded: ok", lambda t: t.guarded and t.u.act == CallerAct.ACK, Do.ACK),
    ("guarded: asks for the owner", lambda t: t.guarded and t.u.act == CallerAct.ASK_OWNER, Act.OWNER_UNAVAILABLE),
    ("guarded: asks for private data", lambda t: t.guarded and t.u.act == CallerAct.ASK_PRIVATE, Act.DEFLECT_PRIVATE),
    ("guarded: hello", lambda t: t.guarded and t.u.act == CallerAct.GREETING, Act.ASK_PURPOSE),
    ("guarded: anything else", lambda t: t.guarded, Do.REFUSE),
    ("the message we asked for",
     lambda t: t.state.awaiting == "message" and t.u.act in _MESSAGE_ACTS,
     Do.TAKE_MESSAGE),
    ("say that again?", lambda t: t.u.repeat and bool(t.state.last_act), Do.REPEAT),
    ("checks back what was said (\"四点以后是吧？\"): yes", lambda t: t.u.confirms_echo, Act.CONFIRM_ECHO),
    # "Can you just check on him?", "帮我把快递拿进去": the assistant has no body (C_phys); say so, relay it
    ("a physical errand: can't do it myself, tell the owner now", lambda t: bool(t.u.errand), Act.RELAY_ERRAND),
    ("an exception: take the details, decide nothing", _is(CallerAct.EXCEPTION), Act.RELAY_EXCEPTION),
    ("private data: deflect", _is(CallerAct.ASK_PRIVATE), Act.DEFLECT_PRIVATE),
    ("a decision for the owner: relay", _is(CallerAct.ASK_DECISION), Act.DEFER_DECISION),
    ("on the way: nothing to decide yet", lambda t: t.u.act == CallerAct.ARRIVAL and t.u.en_route, Act.ACKNOWLEDGE),
    ("an echo of the owner's answer", lambda t: t.echo, Do.ACK),
    # "hey, delivery for Ben" / "I'll leave it on the bench" with no instruction from the owner: nothing
    # was asked, so nothing to decide; what the caller did or is doing is taken down for the owner.
    ("arrived / own action, no question, no instruction: take it down",
     lambda t: t.u.act in (CallerAct.WHERE_TO_LEAVE, CallerAct.ARRIVAL) and not t.u.question, Act.CONFIRM_MESSAGE),
    ("arrived / where to leave, no instruction: relay",
     _is(CallerAct.WHERE_TO_LEAVE, CallerAct.ARRIVAL), Act.DEFER_DECISION),
    ("a message, then goodbye",
     lambda t: t.u.act == CallerAct.LEAVE_MESSAGE and t.message_then_bye, Do.CLOSE_CONFIRM),
    # "你转告她，三天之内不还钱，我们就上门去找她" / "Tell her if she doesn't call me back tonight, I'm coming
    # over", once refused, or after an earlier threat or probe: taken down word for word; nothing more to discuss
    ("a threat to pass on after a refusal or a threat: take it, goodbye",
     lambda t: t.u.act == CallerAct.LEAVE_MESSAGE and t.u.threat and bool(t.u.message_body) and not t.u.question
     and (t.state.probing or bool(set(t.state.record.flags) & _PRIED)),
     Do.CLOSE_CONFIRM),
    # "行吧行吧，你跟他说一声，我姓马" after being told no (or only "noted"): the caller's last word
    ("a reluctant last message after a refusal: take it, goodbye",
     lambda t: t.u.act == CallerAct.LEAVE_MESSAGE and t.u.resigned and bool(t.u.message_body) and not t.u.question
     and t.state.last_act in _NO_ANSWER,
     Do.CLOSE_CONFIRM),
    ("a message", lambda t: t.u.act == CallerAct.LEAVE_MESSAGE and bool(t.u.message_body), Act.CONFIRM_MESSAGE),
    # "好，那麻烦转告一下" / "ok, please let her know" right after the news was taken down: pass *that*
    # on (nothing new to write down), not "go ahead, I'm listening" for a message already given.
    ("pass on what is already down",
     lambda t: t.u.act == CallerAct.LEAVE_MESSAGE and not t.u.message_body and t.state.record.has_message,
     Act.ACKNOWLEDGE),
    ("wants to leave a message", _is(CallerAct.LEAVE_MESSAGE), Do.INVITE_MESSAGE),
    ("asks for the owner", _is(CallerAct.ASK_OWNER), Act.OWNER_UNAVAILABLE),
    ("a pitch", _is(CallerAct.SALES), Act.DECLINE_SALES),
    ("goodbye with news for the owner", lambda t: t.u.act == CallerAct.CLOSING and t.u.news, Do.CLOSE_CONFIRM),
    ("goodbye", _is(CallerAct.CLOSING), Do.CLOSE),
    ("ok", _is(CallerAct.ACK), Do.ACK),
    ("a question nobody told us the answer to", _is(CallerAct.INFO_QUESTION), Act.ANSWER_UNKNOWN),
    ("hello, this is the pharmacy (or hello again)",
     lambda t: t.u.act == CallerAct.GREETING and bool(t.u.caller_name or t.state.turn > 0), Act.LISTEN),
    ("hello", _is(CallerAct.GREETING), Act.ASK_PURPOSE),
    ("a threat: the owner must hear it", lambda t: t.u.act == CallerAct.STATEMENT and t.u.threat, Act.CONFIRM_MESSAGE),
    ("news and thanks, once a message is down",
     lambda t: t.u.act == CallerAct.STATEMENT and bool(t.u.message_body or t.u.callback_number)
     and t.u.ends_with_thanks and not t.u.question and t.state.record.has_message,
     Do.CLOSE_CONFIRM),
    ("news for the owner", lambda t: t.u.act == CallerAct.STATEMENT and bool(t.u.message_body or t.u.callback_number),
     Act.ACKNOWLEDGE),
    ("anything else: ask again", lambda t: True, Act.CLARIFY),
)  # fmt: skip


def outcome(u: Understanding, state: CallState) -> tuple[str, Act | Do]:
    """The first row of :data:`TABLE` that holds (its reason and outcome)."""
    t = Turn(u, state)
    return next((why, then) for why, when, then in TABLE if when(t))


def general(
    state: CallState, ctx: CallContext, u: Understanding, flags: tuple[str, ...], regular: PresetRef | None
) -> Decision:
    """Answer the caller when no preset answers this turn (``regular``: the scene's slot, if any)."""
    rel = Relation.IRRELEVANT if regular is not None else Relation.NONE
    act = u.act
    premise = act == CallerAct.EXCEPTION and u.exception in PREMISE_EXCEPTIONS and ctx.emergent
    if premise and EMERGENT_SUSPENDED not in state.suspended:
        state.suspended.append(EMERGENT_SUSPENDED)  # whatever the owner foresaw no longer fits
    _, then = outcome(u, state)
    if isinstance(then, Act):
        return reply(state, ctx, then, act, rel, u, flags)
    if then in (Do.CLOSE, Do.CLOSE_CONFIRM):
        return close(state, ctx, act, rel, flags, confirm=then == Do.CLOSE_CONFIRM)
    if then == Do.ACK:
        return ack(state, ctx, u, flags)
    if then == Do.REPEAT:
        last = Act(state.last_act) if state.last_act else Act.CLARIFY
        return reply(state, ctx, last, act, rel, u, flags, repeat=True)
    if then == Do.REFUSE:
        return reply(state, ctx, Act.SAFE_REFUSAL if state.hostile else Act.DECLINE_SALES, act, rel, u, flags)
    if then == Do.TAKE_MESSAGE:
        state.awaiting = None
        return reply(state, ctx, Act.CONFIRM_MESSAGE, CallerAct.STATEMENT, rel, u, flags)
    state.awaiting = "message"  # Do.INVITE_MESSAGE
    return reply(state, ctx, Act.INVITE_MESSAGE, act, rel, u, flags)
