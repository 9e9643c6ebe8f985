"""``learned``: the trained heads read the turn; the policy's table maps intents to acts.

What is learned: the intents (multi-label), the exception kind, the question's focus and
form, the scene evidence and the emergent-trigger match probability. What stays rule-based
(learning was not better on this data, or there is nothing to learn): the slots (caller
name, callback digits, message body), the turn-shape details the policy reads (starts
with "ok", ends with thanks / goodbye, insists after a refusal), and the safety flags,
which the learned reading can add to but never clear.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from presets.callers import denies_the_kind, impersonator_match, pitch_only, relative_claimed, who_calls_match
from presets.topics import urgent_breaks_routine
from presets.when import day_clash

from .. import lexicon as lx
from ..acts import Classification, classify, message_body
from ..text import compact, normalize
from ..turns import asking
from ..types import SERVICE_SCENES, CallerAct
from ..understanding import (
    TriggerReading,
    Understanding,
    emergent_candidates,
    foresees,
    rule_trigger,
    typed_understanding,
)
from .ask_owner import intro_and_ask_only
from .clauses import best_clause_prob, clause_scorer
from .model import NLUModel, Reading, shared_model
from .repeat import about_last_line, terse

if TYPE_CHECKING:
    from ..types import CallContext, CallState

# The auditable table: the first active intent (in this order) is the caller's primary act.
# It mirrors the rules' priority: what the assistant must handle (an exception, a probe,
# a decision) before what it may simply answer.
ACT_TABLE: tuple[tuple[str, CallerAct], ...] = (
    ("injection", CallerAct.INJECTION),
    ("exception", CallerAct.EXCEPTION),  # "late" is moved below where_to_leave (see _primary)
    ("ask_identity", CallerAct.ASK_IDENTITY),
    ("dismiss", CallerAct.CLOSING),
    ("threat", CallerAct.STATEMENT),
    ("closing", CallerAct.CLOSING),
    ("ask_private", CallerAct.ASK_PRIVATE),
    ("where_to_leave", CallerAct.WHERE_TO_LEAVE),
    ("leave_message", CallerAct.LEAVE_MESSAGE),
    ("ask_decision", CallerAct.ASK_DECISION),
    ("arrival", CallerAct.ARRIVAL),
    ("en_route", CallerAct.ARRIVAL),
    ("sales", CallerAct.SALES),
    ("scam", CallerAct.STATEMENT),
    ("ask_owner", CallerAct.ASK_OWNER),
    ("repeat_request", CallerAct.INFO_QUESTION),
    ("follow_up", CallerAct.INFO_QUESTION),
    ("info_question", CallerAct.INFO_QUESTION),
    ("own_action", CallerAct.STATEMENT),
    ("statement", CallerAct.STATEMENT),
    ("ack", CallerAct.ACK),
    ("greeting", CallerAct.GREETING),
    ("abuse", CallerAct.STATEMENT),
    ("other", CallerAct.OTHER),
)
# Intent -> the cue names the policy reads (``c.cues``).
CUES = {
    "sales": "sales", "abuse": "abuse", "where_to_leave": "where", "ask_private": "private",
    "closing": "closing", "leave_message": "message", "ask_decision": "decision", "ask_identity": "identity",
    "arrival": "arrival", "greeting": "greeting", "en_route": "en_route", "dismiss": "dismiss",
    "threat": "threat", "scam": "scam", "own_action": "own_action", "follow_up": "follow_up",
    "repeat_request": "repeat",
}  # fmt: skip
_LEARNED_CUES = set(CUES.values()) | {"ask_owner"}
# What an announced arrival is not, whatever the model reads in part of it ("is anyone home?").
_NOT_AN_ARRIVAL = (CallerAct.ASK_OWNER, CallerAct.GREETING, CallerAct.ACK, CallerAct.STATEMENT, CallerAct.OTHER)
# What a request for the owner is not, whatever the model reads in the introduction before it.
_NOT_AN_ASK_OWNER = (CallerAct.GREETING, CallerAct.ACK, CallerAct.STATEMENT, CallerAct.OTHER)
# A trigger that says who calls, met by who the caller says they are (presets/callers.py): the
# trained pair model reads these pairs at p=0.47-0.59 (stop 12), under its cut.
WHO_CALLS_P = 0.95
SAFETY_MIN = 0.7  # a learned injection / scam flag needs this much (it can refuse a caller)
AGREE = 0.2  # the model's score for the rules' act at which the rules' reading stands
CONFIDENT = 0.5  # the model overrides the rules only when this sure of its own top intent
EXC_OVERRIDE = 0.8  # the model's exception replaces the rules' act only this sure
PREFERS = 0.5  # ... and its top intent outscores the rules' act by this much (or the act is below AGREE)
_RULE_INTENT = {CallerAct.SILENCE: "other"}
_ENDING = (CallerAct.ACK, CallerAct.CLOSING)  # acts after which the policy may hang up
# Intents that end the call or change how the caller is treated need more than the tuned
# threshold: a wrong "closing" hangs up on a caller who still needs something.
STRICT = {"closing": 0.5, "dismiss": 0.5, "threat": 0.5, "abuse": 0.5, "injection": SAFETY_MIN, "scam": SAFETY_MIN}


def official_alert(utterance: str, rules: Classification, flags: tuple[str, ...]) -> bool:
    """A real institution's alert: it sends the owner to the institution's own channel (the number
    on the back of the card, the official app) and asks for nothing (no code, no card number, no
    transfer), so the model's scam reading of "suspicious charge on your card" is not trusted alone.
    What a scam asks for is still caught by the rules and the input guard."""
    if rules.scam or rules.credential_probe or rules.act == CallerAct.ASK_PRIVATE:
        return False
    if set(flags) & {"injection", "extraction", "pretexting", "social_engineering", "private_probe"}:
        return False
    return bool(lx.OFFICIAL_CHANNEL.search(compact(utterance), normalize(utterance)))


def _primary(active: list[str], exception: str | None, question: bool) -> CallerAct:
    act_of = dict(ACT_TABLE)
    for name, act in ACT_TABLE:
        if name not in active:
            continue
        if name == "exception" and exception == "late":
            continue  # late is news, not a conflict: a drop-off question outranks it
        if name in ("dismiss", "closing") and question:
            continue  # "ok bye, wait, which door?": the question first
        return act
    if "exception" in active:
        return CallerAct.EXCEPTION
    return act_of["other"]


class LearnedUnderstander:
    """The trained heads (coordinator/nlu/weights/nlu.npz) behind the seam."""

    name = "learned"
    wants_embedding = True

    def __init__(
        self,
        model: NLUModel | None = None,
        *,
        embed: Callable[[str], np.ndarray] | None = None,
    ) -> None:
        self.model = model or shared_model()
        self._embed = embed

    def read(
        self,
        utterance: str,
        context: str | None,
        vec: object,
        scene: str | None = None,
        rules: Classification | None = None,
    ) -> Reading:
        emb = vec if vec is not None else (self._embed(utterance) if self._embed else None)
        return self.model.read(utterance, context, None if emb is None else np.asarray(emb), scene=scene, rules=rules)

    def understand(
        self,
        utterance: str,
        *,
        state: CallState,
        ctx: CallContext,
        vec: object = None,
        asr_confidence: float | None = None,
        flags: tuple[str, ...] = (),
    ) -> Understanding:
        if vec is None and self._embed is not None:
            vec = self._embed(utterance)
        c = classify(utterance, scene=state.scene)  # once per turn: a feature and the details' source
        r = self.read(utterance, state.last_reply, vec, state.scene, rules=c)
        return self.from_reading(utterance, r, c, state=state, ctx=ctx, vec=vec, flags=flags, conf=asr_confidence)

    def from_reading(
        self,
        utterance: str,
        r: Reading,
        c: Classification,
        *,
        state: CallState,
        ctx: CallContext,
        vec: object,
        flags: tuple[str, ...],
        conf: float | None,
    ) -> Understanding:
        thr = self.model.intent_threshold
        intents = r.intents
        if not c.repeat_request and not about_last_line(utterance, state.last_reply):
            # "他什么时候回来啊？" after the owner's answer asks anew, whatever its "啊？" reads as (nlu/repeat.py)
            intents = {**intents, "repeat_request": 0.0}
        ranked = sorted(intents.items(), key=lambda kv: -kv[1])
        active = [name for name, p in ranked if p >= max(thr, STRICT.get(name, 0.0))]
        # What only the model reads is added to the rules' reading when it clears the threshold: the
        # best guess below it names the act when nothing does, never a repeat ("他什么时候回来啊？", 0.29).
        adds = {i for i in active if i in ("own_action", "follow_up", "repeat_request")}
        if not active:
            active = [next((n for n, _ in ranked if n not in STRICT), "other")]
        if "own_action" in active and "ack" in active and state.conveyed:
            active.remove("own_action")  # "好嘞，那就放那儿了" after the owner's answer: compliance, not news
        if official_alert(utterance, c, flags):
            # "...an unusual payment on the card ending 2290, please have the cardholder call the number on
            # the back of the card": a message for the owner, neither a scam nor a fee asked of them
            if "scam" in active:
                active.remove("scam")
            if "exception" in active and c.exception is None:
                active.remove("exception")
            active = active or ["leave_message"]
        exc = max(r.exception, key=lambda k: r.exception[k]) if "exception" in active else None
        if "exception" in active and exc is None:
            exc = max((k for k in r.exception if k), key=lambda k: r.exception[k])
        form = max(r.form, key=lambda k: r.form[k])
        focus = max(r.focus, key=lambda k: r.focus[k])
        # A question by its form (or the rules' "?" and question words), not by its intent: "Praed
        # Street, lovely. I'm the grey Prius, be there in two." reads where_to_leave yet asks nothing.
        question = form != "plain" or c.question
        learned = self._reading(utterance, c, active, exc, question, intents, adds)
        service = state.scene in SERVICE_SCENES or (state.scene is None and any(ctx.regular.values()))
        arriving = max(r.intents["arrival"], r.intents["where_to_leave"]) >= AGREE and "ask_private" not in active
        if learned.act == CallerAct.INFO_QUESTION and focus == "location" and service and arriving:
            # "I'm pulling into the building now. Where will she be?": in takeout / delivery / taxi a
            # question about where is the regular trigger (where to leave it, where to meet).
            learned.act = CallerAct.WHERE_TO_LEAVE
        if learned.self_id and self.model.caller_prob(learned.self_id) < 0.5:
            learned.self_id = None  # "it's a bit awkward" is no caller: the record's field stays empty
        return replace(
            typed_understanding(self.name, learned, utterance, state, ctx),
            intents=tuple((n, round(p, 4)) for n, p in ranked if p >= 0.05),
            focus=focus,
            form=form,
            scene_evidence=r.scene,
            trigger=self.trigger(utterance, vec, state, ctx, learned),
            regular_prob=max(r.intents["arrival"], r.intents["where_to_leave"]),
            input_flags=flags,
            asr_confidence=conf,
        )

    def _reading(
        self,
        utterance: str,
        rules: Classification,
        active: list[str],
        exc: str | None,
        question: bool,
        intents: dict[str, float],
        adds: set[str],
    ) -> Classification:
        rules_intent = _RULE_INTENT.get(rules.act, rules.act.value)
        bare_closing = "closing" in active and terse(utterance)  # "nope" / "没了" after "anything else?"
        # The model's own top intent is one it reads (active): a safety intent below its strict bar
        # (scam 0.58 for a credit-line robocall) is no reading to override the rules' pitch with.
        top, rules_p = max((intents.get(i, 0.0) for i in active), default=0.0), intents.get(rules_intent, 0.0)
        model_prefers = top >= CONFIDENT and (rules_p < AGREE or top - rules_p >= PREFERS)
        prim = _primary(active, exc, question)
        if prim == CallerAct.EXCEPTION and rules.act != CallerAct.EXCEPTION and intents["exception"] < EXC_OVERRIDE:
            model_prefers = False  # an exception suspends the owner's answer: the model must be sure
        if rules.act == CallerAct.LEAVE_MESSAGE and rules.message_body and prim != CallerAct.EXCEPTION:
            model_prefers = False  # "Just tell Elena dinner moved to Sunday, okay? Bye": a message, not a question
        if rules.nobody_home:
            model_prefers = False  # nobody answers the door: where to leave it (no exception)
        if rules.act == CallerAct.ARRIVAL and prim in _NOT_AN_ARRIVAL:
            # "中通的 你有个件 家里现在有人吗": a courier announcing the parcel asks for no one, whatever
            # the words "有人吗" read as alone: the arrival (the regular trigger) stands.
            model_prefers = False
        if rules.act == CallerAct.ASK_OWNER and prim in _NOT_AN_ASK_OWNER and intro_and_ask_only(utterance):
            # "Hi, this is Priya from Zendesk. Is Alex around?": the model reads the introduction (a
            # greeting; unpunctuated, a statement: "Okay, noted."); the caller asks for the owner (nlu/ask_owner.py)
            model_prefers = False
        if "press_yes" in rules.cues:
            model_prefers = False  # "just say yes to authorize the refund": a decision, never an "ok, noted"
        if not bare_closing and not model_prefers:
            # The model agrees with the rules' act (or is not sure of another): keep the rules'
            # reading and add what only the model reads (follow-ups, own actions, repeats).
            rules.cues |= {CUES[i] for i in adds}
            rules.repeat_request = rules.repeat_request or "repeat_request" in adds
            return rules
        if _primary(active, exc, question) in _ENDING and not bare_closing:
            return rules  # the model alone never ends a call ("I just need a verbal okay" is no ack)
        c = rules  # rule-based details (slots, turn shape) kept; the act and intents are learned
        c.cues = {cue for cue in c.cues if cue not in _LEARNED_CUES} | {CUES[i] for i in active if i in CUES}
        c.exception = exc
        c.question = question or rules.question
        c.repeat_request = "repeat_request" in adds
        c.en_route = "en_route" in active and "arrival" not in active
        c.threat = "threat" in active or rules.threat
        c.scam = "scam" in active or rules.scam
        c.injection = "injection" in active or rules.injection
        c.dismiss = "dismiss" in active
        c.act = _primary(active, exc, question)
        if c.act == CallerAct.LEAVE_MESSAGE and "closing" in active and message_body(utterance) is None:
            c.act = CallerAct.CLOSING
        c.message_body = None
        if c.act in (CallerAct.LEAVE_MESSAGE, CallerAct.STATEMENT):
            c.message_body = message_body(utterance)
            if c.message_body is None and "own_action" in active:
                c.message_body = utterance.strip()  # "I'll leave it with the guard, tell him": relay it
        return c

    def trigger(self, utt: str, vec: object, state: CallState, ctx: CallContext, c: Classification) -> TriggerReading:
        """A calibrated match probability for every eligible emergent trigger."""
        if not ctx.emergent:
            return TriggerReading(reason="no emergent presets")
        u = None if vec is None else np.asarray(vec, dtype=np.float32)
        rule = rule_trigger(utt, vec, state, ctx, c).best
        trigger_of = {cand.id: cand.trigger for cand in emergent_candidates(state, ctx)}
        if rule is not None and denies_the_kind(trigger_of.get(rule, ""), utt):
            rule = None  # "保险代理人小王，不是推销啊" against "推销保险": not the call the owner refused
        probs: dict[str, float] = {}
        who = self._who_calls(utt, state, ctx, c)
        pitching = "sales" in c.cues and not c.scam and not state.hostile
        cands = list(emergent_candidates(state, ctx))
        per_clause = self._clause_probs(utt, cands, c) if rule is None else {}
        for i, cand in enumerate(cands):
            cos, t_vec = 0.0, None
            if cand.vectors is not None and u is not None:
                sims = cand.vectors @ u
                cos, t_vec = float(np.max(sims)), cand.vectors[int(np.argmax(sims))]
            p = self.model.trigger_prob(
                cand.trigger, utt, cos, rule == cand.id, pitch="sales" in c.cues, asking=asking(c),
                t_vec=t_vec, u_vec=u,
            )  # fmt: skip
            p = max(p, per_clause.get(i, 0.0))  # "…你跟他说，他什么时候回家吃饭啊，…": the clause that asks
            if who(cand.id, cand.trigger) or (pitching and pitch_only(cand.trigger)):
                # "如果是孩子学校打来的" and "我是阳光小学的班主任"; "推销电话" and any pitch: met
                p = max(p, WHO_CALLS_P)
            if day_clash(cand.trigger, utt) or denies_the_kind(cand.trigger, utt):
                p = 0.0  # "明天能不能来上班" vs "今天下午还回公司吗": another day, a near miss
            probs[cand.id] = round(p, 4)
        if not probs:
            return TriggerReading(reason="no trigger eligible in this scene")
        ranked = sorted(probs.items(), key=lambda kv: -kv[1])
        best, p = ranked[0]
        runner = ranked[1][1] if len(ranked) > 1 else 0.0
        thr = self.model.trigger_threshold
        if rule is not None:  # the rules' pick stands; the model adds matches the rules miss
            kin = relative_claimed(trigger_of.get(rule, ""), utt)
            seen = foresees(trigger_of.get(rule, ""), c.exception)
            return TriggerReading(
                probs, rule, probs.get(rule, p), runner, f"rule match, p={probs.get(rule, p):.2f}", kin, seen
            )
        if p < thr:
            return TriggerReading(probs, None, p, runner, f"p={p:.2f} < {thr:.2f}")
        why = "who calls" if p == WHO_CALLS_P else f"p={p:.2f} >= {thr:.2f}"
        kin, seen = relative_claimed(trigger_of[best], utt), foresees(trigger_of[best], c.exception)
        return TriggerReading(probs, best, p, runner, why, kin, seen)

    def _clause_probs(self, utt: str, cands: list, c: Classification) -> dict[int, float]:
        """The best clause's match probability per candidate, for a long turn (coordinator/nlu/clauses.py)."""
        if self._embed is None or not cands or not asking(c):
            return {}  # a turn that asks nothing is read whole ("..., just calling with a reminder")
        score = clause_scorer(self.model, "sales" in c.cues, asking(c))
        return best_clause_prob(utt, [(cand.trigger, cand.vectors) for cand in cands], self._embed, score)

    @staticmethod
    def _who_calls(utt: str, state: CallState, ctx: CallContext, c: Classification) -> Callable[[str, str], bool]:
        """Is a "who calls (about what)" trigger met by this turn, given who the caller said they
        are (this turn or earlier)? Never for a pitch or a scam, nor once that answer was given
        (a later turn must match on its own words), nor when the caller's news makes a routine
        answer stale (a feverish child against "grandpa picks him up at five")."""

        def impersonator(pid: str, trigger: str) -> bool:
            return not state.conveyed.get(pid) and impersonator_match(trigger, utt, scam=c.scam or state.hostile)

        if state.hostile or state.sales_count or "sales" in c.cues or c.scam:
            return impersonator  # "自称公安的人打来" and "我是公安局的民警，你涉嫌洗钱": the owner's answer for them
        earlier = tuple(u for u, _ in state.history if u)
        ask = asking(c) or c.question
        response = {tc.preset.id: tc.preset.response for tc in ctx.emergent}

        def met(pid: str, trigger: str) -> bool:
            if state.conveyed.get(pid) or urgent_breaks_routine(response.get(pid, ""), (*earlier, utt)):
                return False
            return who_calls_match(trigger, utt, earlier, asking=ask) or impersonator(pid, trigger)

        return met
