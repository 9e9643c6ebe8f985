"""The owner's goal this turn: RETRIEVEPRESET and the relation of the preset to the caller's goal.

In takeout/delivery/taxi the scene's regular slot answers the turns it bears on (arrival,
where to leave it / where to meet, a hand-over problem); on any other turn the emergent
triggers the understander matched against the *current* utterance are checked first, as in
every other scene ("他什么时候回来啊？" from the courier's line; docs/coordinator.md). Each
returns a Decision when the preset decides the turn (convey, suspend, relay, wait), or
None when the preset is irrelevant to what the caller wants (the general table answers).
"""

from __future__ import annotations

import re

from . import readback
from .general import EMERGENT_SUSPENDED
from .reply import ack, convey, reply
from .turns import PREMISE_EXCEPTIONS
from .types import SERVICE_SCENES, Act, CallContext, CallerAct, CallState, Decision, MatchResult, PresetRef, Relation
from .understanding import Understanding

_PRETEXT = {"pretexting", "social_engineering"}
# Exceptions a drop-off / meeting instruction can itself solve, when it names a hand-over
# point the caller can reach without finding the door: "I can't find the building" ->
# "leave it with the guard at the north gate". ("Leave it at the door" solves neither.)
_SOLVABLE = {"cant_find", "blocked"}
_HANDOVER = re.compile(
    r"(门卫|保安|传达室|岗亭|物业|前台|大堂|驿站|快递柜|外卖柜|取餐柜|储物柜|智能柜|丰巢|(东|南|西|北|正|侧|后)门|大门|"
    r"(小区|楼|单元)门口|门岗|路口|站台|停车场|号楼|栋)"
    r"|\b(guard|security|gate|front desk|reception|concierge|lobby|locker|mailroom|mail room|doorman|entrance|"
    r"parking|corner|office|building [a-z0-9]|block [a-z0-9]|parcel box|package room|mailbox(es)?)\b",
    re.IGNORECASE,
)


HANDOVER_P = 0.2  # how much an either/or must read as "where do I leave it" to be one


def solves(exception: str | None, response: str) -> bool:
    """Does the owner's instruction itself answer this exception (so it is conveyed, not suspended)?"""
    return exception in _SOLVABLE and bool(_HANDOVER.search(response))


def asks_again(u: Understanding) -> bool:
    """The caller asks (or asks for a repeat), rather than reporting something new."""
    return u.question or u.repeat


def clarifies(u: Understanding, times_conveyed: int) -> bool:
    """A question about the owner's answer once it was given ("is it twelve or twelve B?", "是三号楼
    还是三号门"), not a request to hear it again: an either/or, or any question once it was given
    twice. Repeating the same words would answer nothing."""
    if not times_conveyed or not u.question or u.act == CallerAct.EXCEPTION:
        return False
    # (An either/or asks which, never to hear it again, even after "sorry,": "sorry, 14 or 14A?")
    return u.form == "either_or" or (times_conveyed >= 2 and not u.repeat)


def handover_choice(u: Understanding) -> bool:
    """An either/or about where or how to hand it over ("放门卫 还是你下来拿")."""
    return u.form == "either_or" and (u.focus == "location" or (u.regular_prob or 0.0) >= HANDOVER_P)


def infer_service_scene(state: CallState, ctx: CallContext, u: Understanding) -> None:
    """A caller who has arrived or asks where to leave it / where to meet, in a call whose
    scene is still unknown ("y'all ordered from Rudy's? I'm pullin' up, where do you want it?"),
    or is a scene whose slot is empty: the owner's regular slots say which service this can be.
    One slot: that one; several: the one the scene evidence (learned head, then the rule scores)
    favours; a known scene gives way only to a slot its evidence favours over it."""
    if u.act not in (CallerAct.ARRIVAL, CallerAct.WHERE_TO_LEAVE) or ctx.regular.get(state.scene or ""):
        return
    slots = [scene for scene in SERVICE_SCENES if ctx.regular.get(scene)]
    if not slots:
        return
    best = max(slots, key=lambda s: (u.scene_evidence.get(s, 0.0), state.scene_scores.get(s, 0.0)))
    if state.scene is None or u.scene_evidence.get(best, 0.0) > u.scene_evidence.get(state.scene, 0.0):
        # A scene the tracker read from a word ("your dinner from wok express is here" -> life, "the
        # driver is five stops away" -> taxi) whose slot the owner left empty, while this hand-over
        # reads as the service whose slot is filled: that one. (A taxi driver calling an owner who set
        # only a takeout instruction reads as taxi and gets no takeout instruction.)
        state.scene = best


def bears_on_regular(u: Understanding) -> bool:
    """The turn is about what the regular slot answers: arrival, where to leave it / where to
    meet, a problem with the hand-over, an either/or about it, a question on the place."""
    if u.act in (CallerAct.ARRIVAL, CallerAct.WHERE_TO_LEAVE, CallerAct.EXCEPTION) or u.errand == "handover":
        return True  # ("could you come down and grab it?": the owner's instruction answers the hand-over)
    return handover_choice(u) or u.focus == "location" or (u.regular_prob or 0.0) >= HANDOVER_P


def regular_preset(state: CallState, ctx: CallContext) -> PresetRef | None:
    if state.scene not in SERVICE_SCENES:
        return None
    response = ctx.regular.get(state.scene)
    if not response:
        return None
    return PresetRef("regular", f"regular:{state.scene}", response)


def with_regular(
    state: CallState, ctx: CallContext, u: Understanding, preset: PresetRef, flags: tuple[str, ...]
) -> Decision | None:
    conveyed = state.conveyed.get(preset.id, 0) > 0
    suspended = preset.id in state.suspended
    if u.act == CallerAct.EXCEPTION:
        if not conveyed and not suspended and solves(u.exception, preset.response):
            # An early exception the owner's instruction answers: convey it (a complementary goal).
            state.solved.append(preset.id)
            return convey(state, ctx, u, preset, Relation.COMPLEMENTARY, flags)
        if preset.id in state.solved and not suspended and asks_again(u):
            # "进不去啊 给你放哪儿" right after that answer: the same problem, asked again.
            return convey(state, ctx, u, preset, Relation.COMPLEMENTARY, flags, repeat=True)
        # Unresolved, or late (after the instruction was given): suspend it, relay, decide nothing.
        if u.exception != "late" and not suspended:
            state.suspended.append(preset.id)
        return reply(state, ctx, Act.RELAY_EXCEPTION, u.act, Relation.CONFLICT, u, flags)
    fails = u.instruction_fails == "no_such" or (conveyed and u.instruction_fails == "nobody")
    if fails and not suspended:
        # "二号口我就在这儿呢，没看见人啊" after "I'm at exit 2"; "there's no 4B in this building": the
        # instruction does not work there, an exception: suspend it and relay, never the preset again.
        state.suspended.append(preset.id)
        return reply(state, ctx, Act.RELAY_EXCEPTION, CallerAct.EXCEPTION, Relation.CONFLICT, u, flags)
    if conveyed and u.confirms_echo and not suspended:
        # "南门公交站是吧？我现在在西门" / "Number fourteen, yeah?": the caller checks the answer; yes.
        return reply(state, ctx, Act.CONFIRM_ECHO, CallerAct.ACK, Relation.ALIGNED, u, flags)
    if clarifies(u, state.conveyed.get(preset.id, 0)):
        # "is it twelve or twelve B?" after the answer: the owner's words say no more; "I'll ask".
        return reply(state, ctx, Act.ANSWER_UNKNOWN, CallerAct.INFO_QUESTION, Relation.ALIGNED, u, flags)
    if conveyed and u.follow_up and not u.repeat:
        return None  # "which door, front or back?": a fresh answer or "I'll ask", not the preset again
    if u.act == CallerAct.ASK_DECISION and not conveyed and not suspended and handover_choice(u):
        # "让他下来拿 还是放门卫那儿" / "come down for it, or leave it with the neighbour?": a choice
        # of where to hand it over, which the owner's instruction answers (not a decision to relay).
        return convey(state, ctx, u, preset, Relation.ALIGNED, flags)
    if u.errand == "handover" and not conveyed and not suspended:
        # "could you come down and grab it?" / "你能下来签收一下吗": nobody can come down, but the owner
        # said what to do with it (an honest "I can't" only when there is no instruction, or after it)
        return convey(state, ctx, u, preset, Relation.ALIGNED, flags)
    if u.act in (CallerAct.ARRIVAL, CallerAct.WHERE_TO_LEAVE):
        if suspended:
            if not u.question:
                # "I'll just leave it on the porch then", "I'm at the east gate": the caller's own action
                # or news, taken down (there is nothing to decide: nothing was asked)
                return reply(state, ctx, Act.CONFIRM_MESSAGE, u.act, Relation.CONFLICT, u, flags)
            # The caller still needs an answer, but the owner's instruction no longer fits.
            return reply(state, ctx, Act.DEFER_DECISION, u.act, Relation.CONFLICT, u, flags)
        if u.act == CallerAct.ARRIVAL:
            if conveyed:
                # "I just arrived, I'm at the front": already told; the driver waits, don't hang up.
                return reply(state, ctx, Act.ACKNOWLEDGE, u.act, Relation.ALIGNED, u, flags)
            if u.en_route:
                # On the way (complementary): the instruction fits once they are there or ask.
                return reply(state, ctx, Act.ACKNOWLEDGE, u.act, Relation.COMPLEMENTARY, u, flags)
        if conveyed and not u.question:
            # "那我就放快递架上了哈" / "Praed Street, lovely. I'm the grey Prius, be there in two." after
            # the instruction: compliance in the caller's words, not a new ask; never the preset again.
            if _carries_message(u):
                return None  # "OK, I'll leave it at 502, tell Mrs Wang": the message is taken, not a goodbye
            if u.placed_elsewhere:
                # "no worries, I'll leave it with your neighbour at number 5": not where the owner said, so
                # the owner must hear where it is; acknowledged and taken down, no goodbye yet.
                return reply(state, ctx, Act.CONFIRM_MESSAGE, u.act, Relation.CONFLICT, u, flags)
            if u.starts_with_ack or u.ack_marked or u.echoes_regular or not u.news:
                return ack(state, ctx, u, flags)
            return reply(state, ctx, Act.ACKNOWLEDGE, u.act, Relation.ALIGNED, u, flags)
        return convey(state, ctx, u, preset, Relation.ALIGNED, flags)
    if u.repeat and state.last_act == Act.CONVEY_PRESET and state.record.presets_conveyed[-1:] == [preset.id]:
        return convey(state, ctx, u, preset, Relation.ALIGNED, flags, repeat=True)
    if u.act in (CallerAct.GREETING, CallerAct.ASK_OWNER) and not conveyed and not suspended:
        # "Hi, is this Dr. Kim?" from a courier: find out what they need.
        return reply(state, ctx, Act.GUIDE, u.act, Relation.COMPLEMENTARY, u, flags)
    return None  # irrelevant to the preset: answer the caller, don't push it


def match_emergent(state: CallState, ctx: CallContext, u: Understanding) -> MatchResult:
    """The understander's pick among the triggers eligible in this scene."""
    t = u.trigger
    eligible = {
        tc.preset.id: tc.preset
        for tc in ctx.emergent
        if tc.scenes is None or state.scene is None or state.scene in tc.scenes
    }
    preset = eligible.get(t.best) if t.best else None
    if preset is not None and readback.low_confidence(u.asr_confidence):
        return MatchResult(None, t.score, t.runner_up, "low recognition confidence")  # never on a guess
    return MatchResult(preset, t.score, t.runner_up, t.reason)


def with_emergent(state: CallState, ctx: CallContext, u: Understanding, flags: tuple[str, ...]) -> Decision | None:
    match = match_emergent(state, ctx, u)
    preset = match.preset
    if preset is None:
        return None
    already = state.conveyed.get(preset.id, 0) > 0
    # (Not when the trigger itself names the problem: "楼下邻居说家里漏水" is met by the leak it names.)
    premise = u.act == CallerAct.EXCEPTION and u.exception in PREMISE_EXCEPTIONS and not u.trigger.foreseen
    if set(flags) & _PRETEXT and u.act == CallerAct.ASK_PRIVATE and not u.trigger.relative_claimed:
        # An identity claim does not unlock anything: deflect. Unless the trigger is for that relative
        # ("家里人问我什么时候回家" and "我是他妈妈"): the owner chose that answer for them.
        return None
    stale = EMERGENT_SUSPENDED in state.suspended and not already
    if premise or stale or preset.id in state.suspended:
        # The caller's news (a fee, damage, a changed offer) breaks the premise the owner
        # answered under: the owner's answer is stale. Relay; decide nothing.
        if premise and EMERGENT_SUSPENDED not in state.suspended:
            state.suspended.append(EMERGENT_SUSPENDED)
        act = Act.RELAY_EXCEPTION if premise or u.act == CallerAct.EXCEPTION else Act.DEFER_DECISION
        return reply(state, ctx, act, u.act, Relation.CONFLICT, u, flags)
    if u.act == CallerAct.EXCEPTION and already and u.exception in _SOLVABLE and asks_again(u):
        # "the door code? I can't get in without it" after the code was given, the trigger met
        # again: the caller did not catch it (a repeat), not news that breaks the answer.
        return convey(state, ctx, u, preset, Relation.ALIGNED, flags, match, repeat=True)
    if u.act == CallerAct.EXCEPTION and already and u.exception != "late":
        # A late exception (after the owner's answer was given) suspends that answer.
        state.suspended.append(preset.id)
        return reply(state, ctx, Act.RELAY_EXCEPTION, u.act, Relation.CONFLICT, u, flags)
    if already and u.confirms_echo:
        return reply(state, ctx, Act.CONFIRM_ECHO, CallerAct.ACK, Relation.ALIGNED, u, flags)  # "四点以后是吧？"
    if already and u.follow_up and not u.repeat:
        return None  # a further question on the same topic: answered by the table, never the preset again
    if already and clarifies(u, state.conveyed.get(preset.id, 0)):
        return reply(state, ctx, Act.ANSWER_UNKNOWN, CallerAct.INFO_QUESTION, Relation.ALIGNED, u, flags)
    if already and not u.question and u.act != CallerAct.ASK_DECISION and not _carries_message(u):
        return ack(state, ctx, u, flags)  # "好嘞，那就放那儿了": said once is enough
    if already and _carries_message(u):
        return None  # "那你跟她说周末回家吃饭": a message after the owner's answer is taken down
    if already and not u.repeat:
        # The owner's answer was given and the caller did not ask to hear it again: a turn the
        # trigger matches once more is about that answer ("请假了？咋了，病了啊？") or another matter
        # on the same subject ("还有个事，明天春游要交三十块", "she's run out of hearing aid
        # batteries, could someone bring some?"). The table answers or relays it; the same words
        # again would answer nothing (a repeat request still gets them, above and in reply.py).
        return None
    # The trigger matched this very turn: the owner foresaw it, even when the caller puts it
    # as a problem ("the guard won't let me in" -> "he said to call his neighbour").
    return convey(state, ctx, u, preset, Relation.ALIGNED, flags, match)


def _carries_message(u: Understanding) -> bool:
    """The turn asks for something to be passed on (a message, not an "ok")."""
    return u.act == CallerAct.LEAVE_MESSAGE or bool(u.message_body)
