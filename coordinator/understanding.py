"""The seam between reading the caller and deciding: :class:`Understander` and :class:`Understanding`.

The understander is the only place that reads the caller's words. It turns one caller
turn (utterance, ASR confidence, call state, owner context) into a typed
:class:`Understanding`; the policy reads that and the call state, never raw text.

Three implementations share the protocol:

- ``rules`` (:class:`RulesUnderstander`): the hand-written bilingual lexicons, the baseline;
- ``learned`` (:class:`coordinator.nlu.LearnedUnderstander`): trained heads over e5
  embeddings and character n-grams (the default);
- ``llm`` (``pipeline.nlu_llm``): an OpenAI-compatible endpoint under a deadline, falling
  back to ``learned``; it runs asynchronously before the synchronous decision and hands
  its Understanding to :meth:`Coordinator.decide`.

Pure: no I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from presets.callers import claims_trigger
from presets.matching import Candidate, match_trigger

from . import lexicon as lx
from .acts import Classification, classify, message_body
from .news import confirms_echo, informative, instruction_fails, placed_elsewhere, questions
from .text import compact, normalize
from .turns import abusive, asking, said
from .types import CallerAct

if TYPE_CHECKING:
    from .types import CallContext, CallState

UNDERSTANDERS = ("rules", "learned", "llm")


@dataclass(frozen=True, slots=True)
class TriggerReading:
    """Emergent-trigger evidence: a match probability per eligible preset id and the pick."""

    probs: Mapping[str, float] = field(default_factory=dict)
    best: str | None = None  # the matched preset id, if any
    score: float = 0.0
    runner_up: float = 0.0
    reason: str = ""
    relative_claimed: bool = False  # the caller claims to be the relative the matched trigger is for
    foreseen: bool = False  # the matched trigger itself names the problem the caller reports (:func:`foresees`)


@dataclass(frozen=True, slots=True)
class Understanding:
    """What the caller did in one turn, as the policy reads it (typed; every understander fills it).

    ``act`` is the primary caller act; the flags below it are the per-turn details the
    policy's tables consult. The scored view beside them: every intent with its score, the
    question's focus and form, slots, scene evidence, trigger probabilities.
    """

    source: str
    act: CallerAct = CallerAct.OTHER
    intents: tuple[tuple[str, float], ...] = ()
    exception: str | None = None
    exception_detail: str | None = None
    exception_stated: bool = False  # the caller's own words name the kind (see :mod:`.honesty`)
    focus: str | None = None
    form: str = "plain"
    repeat: bool = False
    closing: bool = False
    question: bool = False
    asking: bool = False  # asks or requests something ("能不能...", "where do I...")
    insists: bool = False  # pressing on after a refusal
    follow_up: bool = False  # a further question on the topic just answered
    pitch: bool = False  # a sales pitch (whatever the primary act)
    abusive: bool = False  # insults with nothing else to handle
    en_route: bool = False
    threat: bool = False
    scam: bool = False
    injection: bool = False
    credential_probe: bool = False
    dismiss: bool = False  # "算了" / "Forget it"
    wrong_number: bool = False  # "那我打错了" / "sorry, wrong number": nothing here was meant for the owner
    urgent: bool = False
    ultimatum: bool = False  # threatens consequences or gives up ("后果自负", "you'll regret this")
    resigned: bool = False  # opens with a reluctant "fine" ("行吧行吧，…", "那好吧，…")
    # asks the assistant itself to act at the place: "errand", or "handover" (come down for it)
    errand: str | None = None
    starts_with_ack: bool = False
    ack_marked: bool = False
    ends_with_thanks: bool = False
    ends_with_closing: bool = False
    message_body: str | None = None  # what to pass on, when the turn carries a message
    news: bool = True  # says something the assistant has not already said (not an echo)
    news_size: int = 0  # how much of it is news: words (en) or characters (zh) beyond echoes and plans
    confirms_echo: bool = False  # "南门公交站是吧？" after the owner's answer: checks it (coordinator/news.py)
    echoes_regular: bool = False  # repeats the scene's regular preset back ("ok, at the door then")
    placed_elsewhere: bool = False  # leaves it / waits somewhere the regular preset does not name
    instruction_fails: str | None = None  # "nobody" at the place / "no_such" place (coordinator/news.py)
    slots: Mapping[str, str] = field(default_factory=dict)
    scene_evidence: Mapping[str, float] = field(default_factory=dict)
    trigger: TriggerReading = field(default_factory=TriggerReading)
    regular_prob: float | None = None
    input_flags: tuple[str, ...] = ()
    asr_confidence: float | None = None

    @property
    def caller_name(self) -> str | None:
        return self.slots.get("caller_name")

    @property
    def callback_number(self) -> str | None:
        return self.slots.get("callback_number")

    def has(self, intent: str, threshold: float = 0.5) -> bool:
        return any(name == intent and score >= threshold for name, score in self.intents)


class Understander(Protocol):
    """Turns one caller utterance into an :class:`Understanding` (synchronous, pure)."""

    name: str

    def understand(
        self,
        utterance: str,
        *,
        state: CallState,
        ctx: CallContext,
        vec: object = None,
        asr_confidence: float | None = None,
        flags: tuple[str, ...] = (),
    ) -> Understanding: ...


def emergent_candidates(state: CallState, ctx: CallContext) -> list[Candidate]:
    """The owner's emergent triggers eligible in the call's current scene."""
    return [
        Candidate(tc.preset.id, tc.preset.trigger or "", tc.vectors)
        for tc in ctx.emergent
        if tc.scenes is None or state.scene is None or state.scene in tc.scenes
    ]


def typed_understanding(source: str, c: Classification, utt: str, state: CallState, ctx: CallContext) -> Understanding:
    """The typed per-turn fields of an :class:`Understanding`, from a cue-level reading.

    Shared by every understander (each then adds its scored view with ``dataclasses.replace``),
    so the policy sees the same fields whoever read the turn."""
    regular = ctx.regular.get(state.scene) if state.scene else None
    news = informative(utt, said(state))
    act = CallerAct.ASK_OWNER if c.act == CallerAct.INFO_QUESTION and checks_owner(utt, ctx.owner_name) else c.act
    if act == CallerAct.INFO_QUESTION and _GUESS_WHO.search(compact(utt), normalize(utt)):
        # "你猜猜我是谁？" / "guess who this is!": who is calling is asked back; no question for the owner
        act = CallerAct.GREETING
    if act == CallerAct.INFO_QUESTION and c.question and _HEALTH.search(compact(utt), normalize(utt)):
        act = CallerAct.ASK_PRIVATE  # "请假了？咋了，病了啊？" / "is he sick?": the owner's health is private
    body = c.message_body
    if act in (CallerAct.ASK_OWNER, CallerAct.ASK_IDENTITY) and news_beside_check(utt, c.self_id):
        # "Is this the order for Priya? The restaurant gave me the wrong bag...": the check is answered by
        # the greeting already; what the caller reports beside it is what the owner must hear.
        act = CallerAct.ARRIVAL if "arrival" in c.cues else CallerAct.STATEMENT
        body = body or utt.strip()
    return Understanding(
        source=source,
        act=act,
        intents=((c.act.value, 1.0),),
        exception=c.exception,
        exception_stated=c.exception_stated,
        repeat=c.repeat_request,
        closing=c.act == CallerAct.CLOSING,
        question=c.question,
        asking=asking(c),
        insists=c.insists,
        follow_up="follow_up" in c.cues,
        pitch=c.act == CallerAct.SALES or ("sales" in c.cues and c.act != CallerAct.LEAVE_MESSAGE),
        abusive=abusive(c),
        en_route=c.en_route,
        threat=c.threat,
        scam=c.scam,
        injection=c.injection,
        credential_probe=c.credential_probe,
        dismiss=c.dismiss,
        wrong_number=wrong_number(c),
        urgent=c.urgent,
        errand=c.errand,
        ultimatum=bool(lx.ULTIMATUM.search(compact(utt), normalize(utt))),
        resigned=bool(lx.RESIGNED.search(compact(utt), normalize(utt))),
        starts_with_ack=c.starts_with_ack,
        ack_marked=c.ack_marked,
        ends_with_thanks=c.ends_with_thanks,
        ends_with_closing=c.ends_with_closing,
        message_body=body,
        news=news is not None,
        news_size=_size(news),
        confirms_echo=bool(state.conveyed) and confirms_echo(utt, said(state)) and not asks_beside_echo(utt),
        echoes_regular=bool(regular) and informative(utt, regular or "") is None,
        placed_elsewhere=placed_elsewhere(utt, regular or _given_regular(state, ctx)),
        instruction_fails=instruction_fails(utt),
        slots=slots_of(c),
    )


_CLAUSE = re.compile(r"[.!。！，,;；?？]")
_ASKS_MORE = re.compile(
    r"^\s*(and |so )?(what|where|when|why|how|who|which|can|could|would|will|do|does|did|is|are|should|may)\b",
    re.IGNORECASE,
)
_OWNER_TAG = r"(吗|么|是吧|对吧)?\s*[?？]"


def checks_owner(utt: str, owner: str | None) -> bool:
    """ "喂，赵静吗？", "请问是刘女士吗？", "calling about a delivery order for Mr. Chen?": the question only
    checks that the call reached the owner (nothing to answer or relay)."""
    if not owner:
        return False
    text = utt.strip()
    m = re.search(rf"{re.escape(owner)}{_OWNER_TAG}$", text, re.IGNORECASE)
    if m is None:
        return False
    before = re.sub(r"^(喂|hello|hi)[?？]+", "", text[: m.start()], flags=re.IGNORECASE)
    if re.search(r"[?？]", before):
        return False  # "When will she be back? ... with Sarah?": another question first
    clause = _CLAUSE.split(before)[-1].strip()  # what comes before the name, in its clause
    clause = re.sub(r"^(请问)?(是|这是)?$", "", clause)
    if re.fullmatch(r"(is (this|that)|am i (speaking|talking) (to|with))", clause, re.IGNORECASE):
        return True  # "is this Sarah?"
    if re.search(r"[\u4e00-\u9fff]", clause):
        return False  # "你知道刘女士吗？" asks about her; "喂，赵静吗？" only checks who answered
    return not _ASKS_MORE.search(clause)


_GUESS_WHO = lx.cues(["猜(猜|一下|一猜)?我是谁"], [r"guess who (this is|it is|i am|i'm|is calling)"])
_HEALTH = lx.cues(
    ["(病了|生病|住院|身体不舒服|不舒服|看病|发烧|感冒了|受伤|出(了)?什么事|出事了)"],
    [r"(is|was|are) (he|she|they|\w+) (sick|ill|unwell|hurt|injured|in (the )?hospital)",
     r"what happened to (him|her|them)", r"what's wrong with (him|her|them)", r"(he|she)('s| is) (sick|ill|unwell)"],
)  # fmt: skip
_CHECK = re.compile(
    r"^(?:(?:hi|hello|hey|yeah|um|uh|sorry)[, ]+)*(?:is (?:this|that|it)|am i (?:speaking|talking) (?:to|with))\b"
    r"|^(?:喂|你好|您好|请问|哎)*[，, ]*(?:这是|这里是|是不是|是)?.{1,12}(?:吗|吧|么|是吧|对吧)[?？]?$",
    re.IGNORECASE,
)
_INTRO_CLAUSE = re.compile(
    r"^(this is|it's|it is|my name is|i'm calling from|我是|我叫|我这边是|这边是|这里是)", re.IGNORECASE
)


def news_beside_check(utt: str, self_id: str | None) -> bool:
    """ "Is this Sam's number? Your package came open in the truck" / "喂，这是小孙的号码吗？店里少给了一杯奶茶":
    a yes/no check that the call reached the owner, and beside it news (not the caller's introduction,
    "Is this Tom? This is Dave with Wayfair delivery.", nor a greeting)."""
    asked = questions(utt)
    if len(asked) != 1 or not _CHECK.search(asked[0].strip()):
        return False
    rest = utt.replace(asked[0], " ")
    clauses = [k.strip() for k in _CLAUSE.split(rest) if k.strip()]
    kept = [k for k in clauses if not _INTRO_CLAUSE.match(k) and not (self_id and self_id in k)]
    news = informative("，".join(kept)) if kept else None
    return news is not None and _size(news) >= 4


_ASKS_BESIDE = (CallerAct.ASK_DECISION, CallerAct.EXCEPTION, CallerAct.LEAVE_MESSAGE, CallerAct.ASK_PRIVATE)


def asks_beside_echo(utt: str) -> bool:
    """ "物业办公室是吧？那安装怎么办，我们师傅要进屋装的": beside the answer checked back, the caller asks or
    reports something more (a question without "?", a problem, a message): a yes would drop it."""
    asked = questions(utt)
    rest = utt.replace(asked[0], " ").strip(" ，,。.") if asked else ""
    if not rest:
        return False
    c = classify(rest)
    return c.question or c.act in _ASKS_BESIDE or bool(c.cues & {"decision", "message"})


def wrong_number(c: Classification) -> bool:
    """The caller says they dialled the wrong number (not a message that mentions one)."""
    said_wrong = lx.WRONG_NUMBER.search(compact(c.raw), normalize(c.raw))
    return bool(said_wrong) and "message" not in c.cues and c.act != CallerAct.LEAVE_MESSAGE


def _given_regular(state: CallState, ctx: CallContext) -> str | None:
    """The regular instruction already given in this call (the scene may have drifted since)."""
    given = [pid.split(":", 1)[1] for pid in state.conveyed if pid.startswith("regular:")]
    return ctx.regular.get(given[-1]) if given else None


def _size(text: str | None) -> int:
    if not text:
        return 0
    return len(re.findall(r"[\u4e00-\u9fff]", text)) + len(re.findall(r"[A-Za-z0-9']+", text))


def previous_caller_turn(state: CallState) -> str | None:
    return next((u for u, _ in reversed(state.history) if u), None)


def slots_of(c: Classification) -> dict[str, str]:
    """The rule-based slots; ``message``: a message carried beside the turn's main act."""
    slots: dict[str, str] = {}
    if c.self_id:
        slots["caller_name"] = c.self_id
    if c.callback_number:
        slots["callback_number"] = c.callback_number
    if "message" in c.cues:
        body = _second_message(c.raw)
        if body is None and c.act == CallerAct.ASK_PRIVATE:
            body = message_body(c.raw)  # "跟她说一下房租要涨五百，另外她周六在家吗": both
        if body:
            slots["message"] = body
    question = _second_question(c.raw)
    if question:
        slots["question"] = question
    return slots


_ALSO_ASK = re.compile(
    r"^(?:(?:oh|um|uh|and|so|ok|okay)[, ]+)*"
    r"(?:and|also|plus|by the way|one more thing|还有|另外|顺便问一下|顺便|对了)(?![a-z])",
    re.IGNORECASE,
)


def _second_question(raw: str) -> str | None:
    """ "Will she be able to make it? Oh, and is she still on the same insurance?" -> the second
    question: a question introduced by "and" / "also" / "还有" / "另外" after an earlier question of
    the same turn. A preset that answers the first leaves it for the owner (coordinator/policy.py)."""
    asked = questions(raw)
    if len(asked) < 2:
        return None
    return asked[-1] if _ALSO_ASK.match(asked[-1]) else None


_ALSO = re.compile(r"(还有|另外|顺便|对了|\balso\b|\band\b|\bplus\b|\bby the way\b)", re.IGNORECASE)


def _second_message(raw: str) -> str | None:
    """ "外卖到了，放哪？还有跟他说一声发票在袋子里" -> the part after "还有", if it is a message."""
    parts = _ALSO.split(raw, maxsplit=1)
    if len(parts) < 3:
        return None
    tail = "".join(parts[1:]).strip(" ,，。.")
    return message_body(tail) and tail


class RulesUnderstander:
    """Today's bilingual cue lexicons and the rule matcher, behind the seam (the baseline)."""

    name = "rules"

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
        c = classify(utterance, scene=state.scene)
        return replace(
            typed_understanding(self.name, c, utterance, state, ctx),
            trigger=rule_trigger(utterance, vec, state, ctx, c),
            input_flags=flags,
            asr_confidence=asr_confidence,
        )


@lru_cache(maxsize=512)
def _trigger_exception(trigger: str) -> str | None:
    return classify(trigger).exception


def foresees(trigger: str, exception: str | None) -> bool:
    """Does the owner's trigger itself name the problem the caller reports, so that the problem is
    the trigger's condition, not news that makes the owner's answer stale? "楼下邻居说家里漏水" and "你家
    是不是有水漏下来了" (the same kind, or the generic "problem" on either side); and a trigger about
    callers who claim to be someone ("自称客服说要给我退款的"): their story (a failed quality check, a
    frozen account) is the pretext the owner answered for. "物业问能不能进屋维修" names no problem, so a
    leak still suspends that consent."""
    if exception is None:
        return False
    if claims_trigger(trigger):
        return True
    named = _trigger_exception(trigger)
    return named is not None and (named == exception or "problem" in (named, exception))


def rule_trigger(utt: str, vec: object, state: CallState, ctx: CallContext, c: Classification) -> TriggerReading:
    """The rule matcher (``presets.matching.match_trigger``) as trigger evidence (0/1)."""
    if not ctx.emergent:
        return TriggerReading(reason="no emergent presets")
    m = match_trigger(
        utt,
        vec,  # type: ignore[arg-type]
        emergent_candidates(state, ctx),
        pitch="sales" in c.cues,
        asking=asking(c),
        context=previous_caller_turn(state),
    )
    probs = {m.id: 1.0} if m.id else {}
    trigger_of = {cand.id: cand.trigger for cand in emergent_candidates(state, ctx)}
    seen = m.id is not None and foresees(trigger_of.get(m.id, ""), c.exception)
    return TriggerReading(probs, m.id, m.score, m.runner_up, m.reason, foreseen=seen)
