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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from presets.matching import Candidate, match_trigger

from .acts import Classification, classify, message_body
from .turns import asking

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


@dataclass(frozen=True, slots=True)
class Understanding:
    """What the caller did in one turn, as the policy reads it.

    ``reading`` carries the primary caller act and the per-turn details the policy's
    table consults (question, repeat request, exception kind, message body, callback
    number, ...). The other fields are the typed, scored view: every intent with its
    score, the question's focus and form, slots, scene evidence, trigger probabilities.
    """

    source: str
    reading: Classification
    intents: tuple[tuple[str, float], ...] = ()
    exception: str | None = None
    exception_detail: str | None = None
    focus: str | None = None
    form: str = "plain"
    repeat: bool = False
    closing: bool = False
    slots: Mapping[str, str] = field(default_factory=dict)
    scene_evidence: Mapping[str, float] = field(default_factory=dict)
    trigger: TriggerReading = field(default_factory=TriggerReading)
    regular_prob: float | None = None
    input_flags: tuple[str, ...] = ()
    asr_confidence: float | None = None

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
        if body:
            slots["message"] = body
    return slots


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
        return Understanding(
            source=self.name,
            reading=c,
            intents=((c.act.value, 1.0),),
            exception=c.exception,
            form="plain",
            repeat=c.repeat_request,
            closing=c.act.value == "closing",
            slots=slots_of(c),
            trigger=rule_trigger(utterance, vec, state, ctx, c),
            input_flags=flags,
            asr_confidence=asr_confidence,
        )


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
    return TriggerReading(probs, m.id, m.score, m.runner_up, m.reason)
