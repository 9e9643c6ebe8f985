"""The dual-goal coordinator: one Decision per caller turn (CallBench's a_t = f(H_t, u_t, s, g_o, g_c; C)).

Pure and deterministic: given the call state, the owner's context and one caller
turn (text or silence, plus its precomputed embedding) it updates the state and
returns a :class:`Decision`. No I/O; milliseconds.

Order of reasoning each turn:
1. rhythm: silence -> check in, second silence -> close;
2. input guard: injection / extraction -> safe refusal (no caller text changes the rules);
3. caller act and scene;
4. RETRIEVEPRESET (design.md): in takeout/delivery/taxi the scene's regular slot,
   else emergent triggers matched against the *current* utterance;
5. relation of the owner goal to the caller goal -> act (convey, guide, relay, ...);
6. owner record; template wording that never repeats the previous reply.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from . import readback
from .acts import Classification
from .news import informative
from .record import disown_messages, note_caller, record_outcome, settle_context
from .render import render
from .scene import update_scene
from .text import detect_lang, is_substantive
from .turns import PREMISE_EXCEPTIONS, abusive, said, with_disclosure
from .types import (
    SERVICE_SCENES,
    Act,
    CallContext,
    CallerAct,
    CallState,
    Decision,
    MatchResult,
    PresetRef,
    Relation,
)
from .understanding import RulesUnderstander, Understander, Understanding

_BLOCKING_INPUT = {"injection", "extraction"}
_ECHO_ACTS = (CallerAct.WHERE_TO_LEAVE, CallerAct.ARRIVAL, CallerAct.STATEMENT)
_EMERGENT_SUSPENDED = "emergent:*"  # a premise-breaking exception suspended the owner's emergent answers
_PROBES = {"pretexting", "social_engineering", "private_probe"}
_PRETEXT = {"pretexting", "social_engineering"}
_PRETEXT_FLAG = "pretext_once"


class InputClassifier(Protocol):
    def __call__(self, utterance: str, ctx: CallContext) -> tuple[str, ...]: ...


def _no_input_guard(utterance: str, ctx: CallContext) -> tuple[str, ...]:
    return ()


class Coordinator:
    """Decides what the assistant does at each caller turn."""

    def __init__(self, input_guard: InputClassifier | None = None, understander: Understander | None = None) -> None:
        self._input_guard = input_guard or _no_input_guard
        self.understander: Understander = understander or RulesUnderstander()

    def greet(self, state: CallState, ctx: CallContext) -> Decision:
        text = render(Act.GREET, state, ctx, {})
        if ctx.greeting:
            text = with_disclosure(ctx.greeting, state, ctx)
        state.last_reply, state.last_act = text, Act.GREET
        state.history.append((None, text))
        return Decision(Act.GREET, CallerAct.OTHER, state.scene, state.lang, Relation.NONE, text)

    def decide(
        self,
        state: CallState,
        ctx: CallContext,
        utterance: str | None,
        utterance_vec: object = None,
        *,
        understanding: Understanding | None = None,
        asr_confidence: float | None = None,
    ) -> Decision:
        """Handle one caller turn (``None`` = the caller said nothing).

        ``understanding``: the turn already read (e.g. by an asynchronous LLM understander);
        otherwise this coordinator's understander reads it."""
        if state.ended:
            raise ValueError("the call has ended")
        state.turn += 1
        if utterance is None or not utterance.strip():
            decision = self._silence(state, ctx)
        else:
            decision = self._speech(state, ctx, utterance.strip(), utterance_vec, understanding, asr_confidence)
        if decision.preset is not None and not decision.slots.get("repeat"):
            # (A repeat the caller asked for is the same conveyance, not a second one.)
            # The owner's answer settles what the build-up was leading to ("we're short-staffed
            # this week..." then "can Alex cover Friday?"): that context is no longer a message.
            settle_context(state)
            pid = decision.preset.id
            state.conveyed[pid] = state.conveyed.get(pid, 0) + 1
            state.conveyed_turn.setdefault(pid, state.turn)
            state.record.presets_conveyed.append(pid)
        state.last_reply, state.last_act = decision.text, decision.act
        state.history.append((utterance, decision.text))
        state.ended = decision.end_call
        return decision

    # ----------------------------------------------------------- silence ----

    def _silence(self, state: CallState, ctx: CallContext) -> Decision:
        state.silence_streak += 1
        if state.silence_streak >= 2 or state.closing:
            text = render(Act.CLOSE, state, ctx, {}, silent=True)
            return self._decision(state, Act.CLOSE, CallerAct.SILENCE, Relation.NONE, text, end=True)
        text = render(Act.CHECK_IN, state, ctx, {})
        return self._decision(state, Act.CHECK_IN, CallerAct.SILENCE, Relation.NONE, text)

    # ------------------------------------------------------------ speech ----

    def _speech(
        self,
        state: CallState,
        ctx: CallContext,
        utt: str,
        vec: object,
        understanding: Understanding | None,
        asr_confidence: float | None,
    ) -> Decision:
        state.silence_streak = 0
        lang = detect_lang(utt)
        if lang and lang != state.lang and is_substantive(utt, lang):
            if state.lang_locked:
                # Words in the other script from a recognizer held to ``state.lang``: it
                # misheard ("喂？喂？" -> "way way sir"). Ask again; relay and record nothing.
                return self._act(state, ctx, Act.CLARIFY, CallerAct.OTHER, Relation.NONE)
            state.lang = lang
        if readback.ask_repeat(state, asr_confidence):  # unsure what was said: ask once, act on nothing
            return self._act(state, ctx, Act.ASK_REPEAT, CallerAct.OTHER, Relation.NONE)
        awaiting = state.awaiting
        state.scene_scores, state.scene = update_scene(state.scene_scores, utt, ctx.scene_hint, state.scene)
        flags = self._input_guard(utt, ctx)
        if state.readback is not None:  # the caller's answer to a number read back
            ans = readback.answer(state, ctx, utt) if not set(flags) & _BLOCKING_INPUT else None
            if ans is not None:
                return self._decision(state, ans.act, CallerAct.STATEMENT, Relation.NONE, ans.text, end=ans.end)
            state.readback = None
        u = understanding or self.understander.understand(
            utt, state=state, ctx=ctx, vec=vec, asr_confidence=asr_confidence, flags=flags
        )
        c = u.reading
        # A claim of closeness ("I'm his sister, where is he?") once is deflected, not an attack:
        # family and colleagues call too. A second pretext, or one with a scam, a card number
        # or an injection, is.
        pretext = bool(set(flags) & _PRETEXT)
        repeated_pretext = pretext and _PRETEXT_FLAG in state.record.flags
        if pretext and _PRETEXT_FLAG not in state.record.flags:
            state.record.flags.append(_PRETEXT_FLAG)
        attack = c.scam or c.injection or c.credential_probe or repeated_pretext or bool(set(flags) & _BLOCKING_INPUT)
        if attack and not state.hostile:
            state.hostile = True  # nothing this caller says is relayed as a message,
            disown_messages(state.record)  # not even what they said before showing it
        note_caller(state, ctx, utt, c, flags)
        if c.act == CallerAct.SALES or ("sales" in c.cues and c.act != CallerAct.LEAVE_MESSAGE):
            state.sales_count += 1  # a pitch, whatever answers it: nothing this caller says is relayed
        decision = self._respond(state, ctx, utt, c, flags, u)
        record_outcome(state, utt, c, decision.act, flags, relay=self._relays(state, c, decision.act))
        rb = readback.offer(state, ctx, utt, decision.act, decision.text, end=decision.end_call, awaiting=awaiting)
        if rb is not None:
            decision = self._decision(state, rb.act, c.act, decision.relation, rb.text, end=rb.end, flags=flags)
        second = u.slots.get("message")
        if decision.act == Act.CONVEY_PRESET and second and not state.hostile and second not in state.record.messages:
            state.record.messages.append(second)  # "where do I leave it? also tell him...": both handled
        state.probing = bool(set(flags) & (_BLOCKING_INPUT | _PROBES)) or decision.act in (
            Act.SAFE_REFUSAL,
            Act.DEFLECT_PRIVATE,
        )
        return decision

    def _respond(
        self, state: CallState, ctx: CallContext, utt: str, c: Classification, flags: tuple[str, ...], u: Understanding
    ) -> Decision:
        if set(flags) & _BLOCKING_INPUT or c.injection:
            return self._act(state, ctx, Act.SAFE_REFUSAL, CallerAct.INJECTION, Relation.NONE, flags=flags)
        if state.probing and c.insists and c.act not in (CallerAct.CLOSING, CallerAct.ACK, CallerAct.EXCEPTION):
            # "Just read it to me, the platform requires it": still the same probe.
            return self._act(state, ctx, Act.DEFLECT_PRIVATE, c.act, Relation.NONE, c, flags)

        # RETRIEVEPRESET: the scene's regular slot first, emergent triggers otherwise.
        regular = self._regular(state, ctx)
        if regular is not None:
            decision = self._with_regular(state, ctx, utt, c, regular, flags)
            if decision is not None:
                return decision
        else:
            match = self._match_emergent(state, ctx, u)
            if match.preset is not None:
                already = state.conveyed.get(match.preset.id, 0) > 0
                premise = c.act == CallerAct.EXCEPTION and c.exception in PREMISE_EXCEPTIONS
                if set(flags) & {"pretexting", "social_engineering"} and c.act == CallerAct.ASK_PRIVATE:
                    pass  # an identity claim does not unlock anything; fall through to deflect
                elif premise or (_EMERGENT_SUSPENDED in state.suspended and not already):
                    # The caller's news (a fee, damage, a changed offer) breaks the premise the owner
                    # answered under: the owner's answer is stale. Relay; decide nothing.
                    if premise and _EMERGENT_SUSPENDED not in state.suspended:
                        state.suspended.append(_EMERGENT_SUSPENDED)
                    act = Act.RELAY_EXCEPTION if premise else Act.DEFER_DECISION
                    return self._act(state, ctx, act, c.act, Relation.CONFLICT, c, flags)
                elif c.act == CallerAct.EXCEPTION and c.exception != "late" and not c.question:
                    # Conflict: the caller's situation breaks the preset's premise ("it must be
                    # installed upstairs"): suspend it, take the details, decide nothing. (A caller
                    # who asks the very question the owner foresaw, "the lift is broken, can he
                    # come down?", gets the owner's answer.)
                    return self._act(state, ctx, Act.RELAY_EXCEPTION, c.act, Relation.CONFLICT, c, flags)
                elif already and "follow_up" in c.cues and not c.repeat_request:
                    pass  # a further question on the same topic: answered below, never the preset again
                elif already and not c.question and c.act != CallerAct.ASK_DECISION:
                    return self._ack(state, ctx, c, flags)  # "好嘞，那就放那儿了": said once is enough
                else:
                    return self._convey(state, ctx, c, match.preset, Relation.ALIGNED, flags, match)
        return self._general(state, ctx, utt, c, flags, regular)

    def _regular(self, state: CallState, ctx: CallContext) -> PresetRef | None:
        if state.scene not in SERVICE_SCENES:
            return None
        response = ctx.regular.get(state.scene)
        if not response:
            return None
        return PresetRef("regular", f"regular:{state.scene}", response)

    def _match_emergent(self, state: CallState, ctx: CallContext, u: Understanding) -> MatchResult:
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

    def _with_regular(
        self,
        state: CallState,
        ctx: CallContext,
        utt: str,
        c: Classification,
        preset: PresetRef,
        flags: tuple[str, ...],
    ) -> Decision | None:
        conveyed = state.conveyed.get(preset.id, 0) > 0
        suspended = preset.id in state.suspended
        if c.act == CallerAct.EXCEPTION:
            if c.exception != "late" and preset.id not in state.suspended:
                state.suspended.append(preset.id)
            return self._act(state, ctx, Act.RELAY_EXCEPTION, c.act, Relation.CONFLICT, c, flags)
        if conveyed and "follow_up" in c.cues and not c.repeat_request:
            return None  # "which door, front or back?": a fresh answer or "I'll ask", not the preset again
        if c.act in (CallerAct.ARRIVAL, CallerAct.WHERE_TO_LEAVE):
            if suspended:
                # The caller still needs an answer, but the owner's instruction no longer fits.
                return self._act(state, ctx, Act.DEFER_DECISION, c.act, Relation.CONFLICT, c, flags)
            if c.act == CallerAct.ARRIVAL:
                if conveyed:
                    # "I just arrived, I'm at the front": already told; the driver waits, don't hang up.
                    return self._act(state, ctx, Act.ACKNOWLEDGE, c.act, Relation.ALIGNED, c, flags)
                if c.en_route:
                    # On the way (complementary): the instruction fits once they are there or ask.
                    return self._act(state, ctx, Act.ACKNOWLEDGE, c.act, Relation.COMPLEMENTARY, c, flags)
            # "那我就放快递架上了哈" after the instruction: compliance in the caller's words, not a new ask.
            echo = informative(utt, preset.response) is None
            compliance = conveyed and (c.starts_with_ack or c.ack_marked or echo) and not c.question
            if compliance:
                return self._ack(state, ctx, c, flags)
            return self._convey(state, ctx, c, preset, Relation.ALIGNED, flags)
        if c.repeat_request and state.last_act == Act.CONVEY_PRESET:
            return self._convey(state, ctx, c, preset, Relation.ALIGNED, flags, repeat=True)
        if c.act in (CallerAct.GREETING, CallerAct.ASK_OWNER) and not conveyed and not suspended:
            # "Hi, is this Dr. Kim?" from a courier: find out what they need.
            return self._act(state, ctx, Act.GUIDE, c.act, Relation.COMPLEMENTARY, c, flags)
        return None  # irrelevant to the preset: answer the caller, don't push it

    def _general(
        self,
        state: CallState,
        ctx: CallContext,
        utt: str,
        c: Classification,
        flags: tuple[str, ...],
        regular: PresetRef | None,
    ) -> Decision:
        rel = Relation.IRRELEVANT if regular is not None else Relation.NONE
        act = c.act
        premise = act == CallerAct.EXCEPTION and c.exception in PREMISE_EXCEPTIONS and ctx.emergent
        if premise and _EMERGENT_SUSPENDED not in state.suspended:
            state.suspended.append(_EMERGENT_SUSPENDED)  # whatever the owner foresaw no longer fits
        if abusive(c):
            return self._act(state, ctx, Act.ASK_PURPOSE, act, rel, c, flags)  # stay calm; nothing to relay
        pitch = act == CallerAct.SALES or ("sales" in c.cues and act != CallerAct.LEAVE_MESSAGE)
        if pitch and state.sales_count >= 3 and act != CallerAct.ASK_DECISION:
            return self._close(state, ctx, act, rel, flags)  # a third pitch: end politely
        if act == CallerAct.ASK_IDENTITY:
            return self._act(state, ctx, Act.IDENTIFY_SELF, act, rel, c, flags)
        if (
            c.ends_with_thanks
            and not c.question
            and act not in (CallerAct.EXCEPTION, CallerAct.ASK_DECISION, CallerAct.ASK_PRIVATE)
            and informative(utt, said(state)) is None
            and self._exchanged(state)
        ):
            return self._close(state, ctx, act, rel, flags)  # "I understand, thank you": done
        if state.hostile or state.sales_count:
            # A scam, an injection or a sales call: nothing it says becomes a message or a
            # request for the owner (the record keeps the flags); stay polite and brief.
            if c.ends_with_closing or act == CallerAct.CLOSING or (c.dismiss and not c.question):
                return self._close(state, ctx, act, rel, flags)
            if act == CallerAct.ACK:
                return self._ack(state, ctx, c, flags)
            if act == CallerAct.ASK_OWNER:
                return self._act(state, ctx, Act.OWNER_UNAVAILABLE, act, rel, c, flags)
            if act == CallerAct.ASK_PRIVATE:
                return self._act(state, ctx, Act.DEFLECT_PRIVATE, act, rel, c, flags)
            if act == CallerAct.GREETING:
                return self._act(state, ctx, Act.ASK_PURPOSE, act, rel, c, flags)
            refusal = Act.SAFE_REFUSAL if state.hostile else Act.DECLINE_SALES
            return self._act(state, ctx, refusal, act, rel, c, flags)
        if state.awaiting == "message" and act in (
            CallerAct.STATEMENT,
            CallerAct.OTHER,
            CallerAct.INFO_QUESTION,
        ):
            state.awaiting = None
            return self._act(state, ctx, Act.CONFIRM_MESSAGE, CallerAct.STATEMENT, rel, c, flags)
        if c.repeat_request and state.last_act:
            return self._act(state, ctx, Act(state.last_act), act, rel, c, flags, repeat=True)
        if act == CallerAct.EXCEPTION:
            return self._act(state, ctx, Act.RELAY_EXCEPTION, act, rel, c, flags)
        if act == CallerAct.ASK_PRIVATE:
            return self._act(state, ctx, Act.DEFLECT_PRIVATE, act, rel, c, flags)
        if act == CallerAct.ASK_DECISION:
            return self._act(state, ctx, Act.DEFER_DECISION, act, rel, c, flags)
        if act == CallerAct.ARRIVAL and c.en_route:
            return self._act(state, ctx, Act.ACKNOWLEDGE, act, rel, c, flags)  # on the way: nothing to decide yet
        echo = state.conveyed and not c.question and not c.callback_number and not c.threat
        if echo and act in _ECHO_ACTS and informative(utt, said(state)) is None:
            return self._ack(state, ctx, c, flags)  # "中，那我放门口" after the owner's answer: compliance
        if act in (CallerAct.WHERE_TO_LEAVE, CallerAct.ARRIVAL):
            # No instruction from the owner: relay, decide nothing.
            return self._act(state, ctx, Act.DEFER_DECISION, act, rel, c, flags)
        if act == CallerAct.LEAVE_MESSAGE:
            if c.message_body and (c.ends_with_closing or (c.ends_with_thanks and not c.question)):
                return self._close_confirm(state, ctx, act, rel, flags)
            if c.message_body:
                return self._act(state, ctx, Act.CONFIRM_MESSAGE, act, rel, c, flags)
            state.awaiting = "message"
            return self._act(state, ctx, Act.INVITE_MESSAGE, act, rel, c, flags)
        if act == CallerAct.ASK_OWNER:
            return self._act(state, ctx, Act.OWNER_UNAVAILABLE, act, rel, c, flags)
        if act == CallerAct.SALES:
            return self._act(state, ctx, Act.DECLINE_SALES, act, rel, c, flags)
        if act == CallerAct.CLOSING:
            if informative(utt, said(state)):
                # "Great, we'll get started. Pickup's at four. Bye.": news for the owner, then goodbye.
                return self._close_confirm(state, ctx, act, rel, flags)
            return self._close(state, ctx, act, rel, flags)
        if act == CallerAct.ACK:
            return self._ack(state, ctx, c, flags)
        if act == CallerAct.INFO_QUESTION:
            return self._act(state, ctx, Act.ANSWER_UNKNOWN, act, rel, c, flags)
        if act == CallerAct.GREETING:
            if c.self_id or state.turn > 0:
                return self._act(
                    state, ctx, Act.LISTEN, act, rel, c, flags
                )  # "This is the pharmacy, calling for Marcus."
            return self._act(state, ctx, Act.ASK_PURPOSE, act, rel, c, flags)
        if act == CallerAct.STATEMENT and c.threat:
            return self._act(state, ctx, Act.CONFIRM_MESSAGE, act, rel, c, flags)  # the owner must hear about a threat
        if act == CallerAct.STATEMENT and (c.message_body or c.callback_number):
            if self._thanks_close(state, c):
                return self._close_confirm(state, ctx, act, rel, flags)
            return self._act(state, ctx, Act.ACKNOWLEDGE, act, rel, c, flags)
        return self._act(state, ctx, Act.CLARIFY, act, rel, c, flags)

    def _thanks_close(self, state: CallState, c: Classification) -> bool:
        """ "That's 720 555 0191. Thanks." once a message is down: the caller is done."""
        return c.ends_with_thanks and not c.question and state.record.has_message

    def _relays(self, state: CallState, c: Classification, act: Act) -> bool:
        """Does this turn's statement carry news for the owner (not an echo, a plan, or a pitch)?"""
        if state.hostile or state.sales_count or abusive(c):
            return False
        if act in (Act.ACKNOWLEDGE, Act.CLOSE_CONFIRM) and c.act in (CallerAct.STATEMENT, CallerAct.CLOSING):
            return c.threat or bool(c.callback_number) or informative(c.raw, said(state)) is not None
        return True

    def _close_confirm(
        self, state: CallState, ctx: CallContext, caller_act: CallerAct, rel: Relation, flags: tuple[str, ...]
    ) -> Decision:
        state.closing = True
        text = render(Act.CLOSE_CONFIRM, state, ctx, {})
        return self._decision(state, Act.CLOSE_CONFIRM, caller_act, rel, text, end=True, flags=flags)

    # ----------------------------------------------------------- helpers ----

    def _exchanged(self, state: CallState) -> bool:
        """Has the call done something for the caller (so a plain "ok" may close it)?"""
        r = state.record
        informative = {
            Act.CONVEY_PRESET, Act.CONFIRM_MESSAGE, Act.RELAY_EXCEPTION, Act.DEFER_DECISION,
            Act.OWNER_UNAVAILABLE, Act.ANSWER_UNKNOWN, Act.DEFLECT_PRIVATE, Act.DECLINE_SALES,
            Act.ACKNOWLEDGE, Act.SAFE_REFUSAL,
        }  # fmt: skip
        return bool(state.conveyed) or r.has_message or state.last_act in informative

    def _ack(self, state: CallState, ctx: CallContext, c: Classification, flags: tuple[str, ...]) -> Decision:
        if state.awaiting is None and self._exchanged(state):
            return self._close(state, ctx, c.act, Relation.NONE, flags)
        return self._act(state, ctx, Act.ASK_PURPOSE, c.act, Relation.NONE, c, flags)

    def _close(
        self,
        state: CallState,
        ctx: CallContext,
        caller_act: CallerAct,
        rel: Relation,
        flags: tuple[str, ...],
    ) -> Decision:
        state.closing = True
        text = render(Act.CLOSE, state, ctx, {})
        return self._decision(state, Act.CLOSE, caller_act, rel, text, end=True, flags=flags)

    def _convey(
        self,
        state: CallState,
        ctx: CallContext,
        c: Classification,
        preset: PresetRef,
        rel: Relation,
        flags: tuple[str, ...],
        match: MatchResult | None = None,
        *,
        repeat: bool = False,
    ) -> Decision:
        text = render(Act.CONVEY_PRESET, state, ctx, {"preset": preset.response})
        d = self._decision(state, Act.CONVEY_PRESET, c.act, rel, text, preset=preset, flags=flags, match=match)
        return replace(d, slots={"repeat": "1"}) if repeat else d

    def _act(
        self,
        state: CallState,
        ctx: CallContext,
        act: Act,
        caller_act: CallerAct,
        rel: Relation,
        c: Classification | None = None,
        flags: tuple[str, ...] = (),
        *,
        repeat: bool = False,
    ) -> Decision:
        # Restate the kind only in the caller's terms: never "it needs a signature" unheard.
        slots = {"detail_kind": (c.exception or "") if c and c.exception_stated else ""}
        if act == Act.GUIDE:
            slots["scene"] = state.scene or ""
        if repeat and state.last_reply:  # the same words, marked as a repeat (never a bare echo of itself)
            lead = "好的，我再说一遍：" if state.lang == "zh" else "Sure, once more: "
            text = lead + state.last_reply.removeprefix(lead)
        else:
            text = render(act, state, ctx, slots)
        return self._decision(state, act, caller_act, rel, text, flags=flags)

    def _decision(
        self,
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
