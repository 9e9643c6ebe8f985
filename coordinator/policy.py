"""The dual-goal coordinator: one Decision per caller turn (CallBench's a_t = f(H_t, u_t, s, g_o, g_c; C)).

Pure and deterministic: given the call state, the owner's context and one caller
turn (text or silence, plus its precomputed embedding) it updates the state and
returns a :class:`Decision`. No I/O; milliseconds.

Order of reasoning each turn:
1. rhythm: silence -> check in, second silence -> close;
2. input guard: injection / extraction -> safe refusal (no caller text changes the rules);
3. caller act and scene;
4. RETRIEVEPRESET (design.md, docs/coordinator.md): in takeout/delivery/taxi the scene's
   regular slot for the turns it bears on; emergent triggers matched against the *current*
   utterance on any other turn;
5. relation of the owner goal to the caller goal -> act (convey, guide, relay, ...);
6. owner record; template wording that never repeats the previous reply.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from . import number_pieces, readback
from .general import general
from .owner_goal import bears_on_regular, infer_service_scene, regular_preset, with_emergent, with_regular
from .record import disown_messages, note_caller, record_outcome, settle_context
from .render import render
from .reply import decision, message_noted, other_question_noted, reply
from .scene import update_scene
from .text import detect_lang, is_substantive
from .turns import with_disclosure
from .types import Act, CallContext, CallerAct, CallState, Decision, Relation
from .understanding import RulesUnderstander, Understander, Understanding

_BLOCKING_INPUT = {"injection", "extraction"}
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
            d = self._silence(state, ctx)
        else:
            d = self._speech(state, ctx, utterance.strip(), utterance_vec, understanding, asr_confidence)
        if d.preset is not None and not d.slots.get("repeat"):
            # (A repeat the caller asked for is the same conveyance, not a second one.)
            # The owner's answer settles what the build-up was leading to ("we're short-staffed
            # this week..." then "can Alex cover Friday?"): that context is no longer a message.
            settle_context(state)
            pid = d.preset.id
            state.conveyed[pid] = state.conveyed.get(pid, 0) + 1
            state.conveyed_turn.setdefault(pid, state.turn)
            state.record.presets_conveyed.append(pid)
        state.last_reply, state.last_act = d.text, d.act
        state.history.append((utterance, d.text))
        state.ended = d.end_call
        return d

    # ----------------------------------------------------------- silence ----

    def _silence(self, state: CallState, ctx: CallContext) -> Decision:
        state.silence_streak += 1
        if state.silence_streak >= 2 or state.closing:
            text = render(Act.CLOSE, state, ctx, {}, silent=True)
            return decision(state, Act.CLOSE, CallerAct.SILENCE, Relation.NONE, text, end=True)
        text = render(Act.CHECK_IN, state, ctx, {})
        return decision(state, Act.CHECK_IN, CallerAct.SILENCE, Relation.NONE, text)

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
                return reply(state, ctx, Act.CLARIFY, CallerAct.OTHER, Relation.NONE)
            state.lang = lang
        if readback.ask_repeat(state, asr_confidence, utt):  # unsure what was said: ask once, act on nothing
            return reply(state, ctx, Act.ASK_REPEAT, CallerAct.OTHER, Relation.NONE)
        awaiting = state.awaiting
        state.scene_scores, state.scene = update_scene(state.scene_scores, utt, ctx.scene_hint, state.scene)
        flags = self._input_guard(utt, ctx)
        if state.readback is not None:  # the caller's answer to a number read back
            ans = readback.answer(state, ctx, utt) if not set(flags) & _BLOCKING_INPUT else None
            if ans is not None:
                return decision(state, ans.act, CallerAct.STATEMENT, Relation.NONE, ans.text, end=ans.end)
            state.readback = None
        piece = number_pieces.take(state, ctx, utt) if not set(flags) & _BLOCKING_INPUT else None
        if piece is not None:  # a number given in pieces, or "did you get my number?"
            return decision(state, piece.act, CallerAct.STATEMENT, Relation.NONE, piece.text, end=piece.end)
        u = understanding or self.understander.understand(
            utt, state=state, ctx=ctx, vec=vec, asr_confidence=asr_confidence, flags=flags
        )
        # A claim of closeness ("I'm his sister, where is he?") or a request for a card or account
        # number ("I need her bank account number to fix the payroll") once is deflected, not an
        # attack: family and colleagues call too, and a colleague refused once still leaves a
        # normal message. A second one, or one with a scam or an injection, is.
        pretext = bool(set(flags) & _PRETEXT) or u.credential_probe
        repeated_pretext = pretext and _PRETEXT_FLAG in state.record.flags
        if pretext and _PRETEXT_FLAG not in state.record.flags:
            state.record.flags.append(_PRETEXT_FLAG)
        attack = u.scam or u.injection or repeated_pretext or bool(set(flags) & _BLOCKING_INPUT)
        if attack and not state.hostile:
            state.hostile = True  # nothing this caller says is relayed as a message,
            disown_messages(state.record)  # not even what they said before showing it
        infer_service_scene(state, ctx, u)
        note_caller(state, ctx, utt, u, flags)
        if u.pitch:
            state.sales_count += 1  # a pitch, whatever answers it: nothing this caller says is relayed
            settle_context(state)  # and the introduction before it was the pitch's preamble, not news
        d = self._respond(state, ctx, u, flags)
        # (A repeat request, "你说啥 信号不好", is the same reply again: nothing new to record.)
        relay = self._relays(state, u, d.act) and not d.slots.get("repeat")
        record_outcome(state, utt, u, d.act, flags, relay=relay)
        carried = number_pieces.stop(state, ctx)
        rb = readback.offer(state, ctx, utt, d.act, d.text, end=d.end_call, awaiting=awaiting, carried=carried)
        if rb is not None:
            d = decision(state, rb.act, u.act, d.relation, rb.text, end=rb.end, flags=flags)
        second = u.slots.get("message")
        if d.act == Act.CONVEY_PRESET and second and not state.hostile and second not in state.record.messages:
            state.record.messages.append(second)  # "where do I leave it? also tell him...": both handled
        urgent_need = u.urgent and not (pretext or u.credential_probe or u.pitch or state.sales_count)
        other = u.slots.get("question")
        private_need = urgent_need and u.act == CallerAct.ASK_PRIVATE
        if d.act == Act.CONVEY_PRESET and (other or private_need) and not state.hostile and not u.pitch:
            # "Will she make it? Oh, and is she still on the same insurance?": the owner's answer
            # covers the first; the second is taken down for the owner and said so. "他啥时候回来？还有他
            # 手机号多少，有个bug急着要他看": the number is not given, the urgent need is kept.
            kept, note = (state.record.messages, utt) if private_need else (state.record.requests, other or utt)
            if note not in kept:
                kept.append(note)
                said = d.text.rstrip()
                end = "" if said[-1:] in "。！？.!?" else ("。" if state.lang == "zh" else ".")
                d = replace(d, text=said + end + other_question_noted(state, ctx, urgent=private_need))
        urgent_only = d.act == Act.DEFLECT_PRIVATE and urgent_need and not second
        if urgent_only:
            second = utt  # "他手机号多少？有个bug急着要他看": the owner must hear someone needs them urgently
        if d.act == Act.DEFLECT_PRIVATE and second and not state.hostile and second not in state.record.messages:
            # "跟她说一下房租要涨五百，另外她周六在家吗": the message is taken, the question deflected
            state.record.messages.append(second)
            d = replace(d, text=message_noted(state, ctx, urgent=urgent_only) + d.text)
        state.probing = bool(set(flags) & (_BLOCKING_INPUT | _PROBES)) or d.act in (
            Act.SAFE_REFUSAL,
            Act.DEFLECT_PRIVATE,
        )
        if d.act in (Act.DEFER_DECISION, Act.RELAY_EXCEPTION) and u.asking and _asks_the_way_in(u):
            state.probing = True  # "what's the gate code?" relayed: "come on, I just need the code" is refused

        return d

    def _respond(self, state: CallState, ctx: CallContext, u: Understanding, flags: tuple[str, ...]) -> Decision:
        if set(flags) & _BLOCKING_INPUT or u.injection:
            return reply(state, ctx, Act.SAFE_REFUSAL, CallerAct.INJECTION, Relation.NONE, flags=flags)
        if state.probing and (self._still_probing(u) or _presses_for_the_way_in(u)):
            # "Just read it to me, the platform requires it": still the same probe.
            return reply(state, ctx, Act.DEFLECT_PRIVATE, u.act, Relation.NONE, u, flags)
        # RETRIEVEPRESET: the scene's regular slot for the turns it bears on; on any other turn
        # an emergent trigger matched by the current words first, then the regular slot.
        regular = regular_preset(state, ctx)
        if u.wrong_number:
            return general(state, ctx, u, flags, regular)  # "那我打错了": no preset was meant for them
        if regular is not None and bears_on_regular(u):
            d = with_regular(state, ctx, u, regular, flags)
        else:
            d = with_emergent(state, ctx, u, flags)
            if d is None and regular is not None:
                d = with_regular(state, ctx, u, regular, flags)
        return d if d is not None else general(state, ctx, u, flags, regular)

    @staticmethod
    def _still_probing(u: Understanding) -> bool:
        """Pressing on after a refusal ("just read it to me"), as opposed to a message or a
        goodbye that happens to start with "just" ("Just tell him I've got it. Bye.")."""
        if not u.insists or u.act in (CallerAct.CLOSING, CallerAct.ACK, CallerAct.EXCEPTION, CallerAct.ASK_DECISION):
            # (a demand to agree, "just say yes", is refused as a decision, not as a data request)
            return False
        message = u.act in (CallerAct.LEAVE_MESSAGE, CallerAct.STATEMENT) and bool(u.message_body) and not u.asking
        return not message and not (u.ends_with_closing and not u.question)

    def _relays(self, state: CallState, u: Understanding, act: Act) -> bool:
        """Does this turn's statement carry news for the owner (not an echo, a plan, or a pitch)?"""
        if state.hostile or state.sales_count or u.abusive or _answers_the_preset(state, u):
            return False
        if act in (Act.ACKNOWLEDGE, Act.CLOSE_CONFIRM) and u.act in (CallerAct.STATEMENT, CallerAct.CLOSING):
            return u.threat or bool(u.callback_number) or u.news
        return True


def _asks_the_way_in(u: Understanding) -> bool:
    """A code or the address to get in ("what's the gate code?", "进不去啊，你这是几栋几号?")."""
    return u.focus == "access" or (u.act == CallerAct.EXCEPTION and u.focus == "location")


def _presses_for_the_way_in(u: Understanding) -> bool:
    """ "Come on, I just need the code" / "那你就直接告诉我几栋嘛": the code or address again, pressed."""
    return u.insists and u.focus in ("access", "location") and u.act not in (CallerAct.CLOSING, CallerAct.ACK)


ASIDE_EN, ASIDE_ZH = 5, 8  # at most this much news beside an echo of the owner's answer ("and two bags")
_COMPLYING = (CallerAct.STATEMENT, CallerAct.ACK, CallerAct.ARRIVAL, CallerAct.WHERE_TO_LEAVE, CallerAct.CLOSING)


def _answers_the_preset(state: CallState, u: Understanding) -> bool:
    """The caller's reply to the owner's answer ("Door four, got it, and two bags, no problem",
    "哦驿站是吧，行，那我给你放驿站了啊"): compliance and chat, kept as a note, not a message for
    the owner. Unless it asks for something to be passed on, gives a number, reports a problem
    or threatens; and not while the owner's answer is suspended (then what the caller does
    instead is news: "I'll just leave it on the porch then")."""
    plain = not u.question and not u.callback_number and not u.threat and u.exception is None
    plain = plain and u.news_size <= (ASIDE_ZH if state.lang == "zh" else ASIDE_EN) and not u.placed_elsewhere
    passes_on = u.act == CallerAct.LEAVE_MESSAGE or bool(u.slots.get("message"))
    return bool(state.conveyed) and not state.suspended and u.act in _COMPLYING and plain and not passes_on
