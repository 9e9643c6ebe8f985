"""One caller turn between its decision and its commit.

A turn is decided on a copy of the call state (:class:`DraftTurn`); the session commits
it in one step once its reply has been recorded (text calls) or spoken (voice calls).
A reply the caller cut off (barge-in) is committed as far as it was heard
(:class:`CutPoint`): the record keeps the turn, marked with the cut, and the committed
state remembers only the words the caller heard (a preset response that was never
heard does not count as conveyed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coordinator.types import CallState, Decision

from .realizers import Realization
from .records import CallRecord, Intervention, TurnRecord
from .session_guard import join_sentences


@dataclass
class TurnResult:
    """A text call's answer to one turn (the API's reply)."""

    reply: str
    act: str
    caller_act: str
    scene: str | None
    relation: str
    preset_conveyed: str | None
    ended: bool
    timings: dict[str, float | None]
    interventions: list[Intervention]


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Where the caller cut the reply off: ``sentences`` played whole, then ``chars``
    characters of the next one (estimated from the share of its audio played)."""

    sentences: int
    chars: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"sentences": self.sentences, "chars": self.chars}


@dataclass
class DraftTurn:
    """A caller turn decided on ``state`` (a copy of the committed state)."""

    index: int
    state: CallState
    caller_text: str | None
    caller_t: float
    decision: Decision
    realization: Realization | None = None
    sentences: list[str] = field(default_factory=list)  # the reply as written, guarded
    interventions: list[Intervention] = field(default_factory=list)
    timings: dict[str, float | None] = field(default_factory=dict)
    complete: bool = False  # every sentence of the reply was written
    started: float = 0.0  # perf_counter() when the turn reached the session

    @property
    def reply(self) -> str:
        return join_sentences(self.sentences, self.decision.lang)

    def heard(self, cut: CutPoint | None) -> str:
        """The words of the reply the caller heard."""
        if cut is None:
            return self.reply
        whole = self.sentences[: cut.sentences]
        if cut.sentences < len(self.sentences) and cut.chars > 0:
            whole = [*whole, self.sentences[cut.sentences][: cut.chars]]
        return join_sentences(whole, self.decision.lang)

    def result(self) -> TurnResult:
        decision = self.decision
        return TurnResult(
            reply=self.reply,
            act=decision.act.value,
            caller_act=decision.caller_act.value,
            scene=decision.scene,
            relation=decision.relation.value,
            preset_conveyed=decision.preset.id if decision.preset else None,
            ended=decision.end_call,
            timings=dict(self.timings),
            interventions=self.interventions,
        )

    def turn_record(self, heard: str, cut: CutPoint | None) -> TurnRecord:
        """The record's view of the committed turn."""
        decision, realization = self.decision, self.realization
        return TurnRecord(
            index=self.index, caller_text=self.caller_text, act=decision.act.value,
            caller_act=decision.caller_act.value, scene=decision.scene, relation=decision.relation.value,
            preset_conveyed=decision.preset.id if decision.preset and self.preset_heard(cut) else None,
            end_call=decision.end_call, reply=self.reply,
            realizer=_realizer_label(realization) if realization is not None else "none",
            input_flags=list(decision.input_flags), timings=dict(self.timings), interventions=self.interventions,
            spoken=heard if cut is not None else None, cut=cut.as_dict() if cut is not None else None,
        )  # fmt: skip

    def settle(self, cut: CutPoint | None) -> str:
        """Make the draft state agree with what was heard; returns the heard reply."""
        heard = self.heard(cut)
        state = self.state
        # The coordinator remembered its template; the caller heard the realized reply.
        state.history[-1] = (self.caller_text, heard)
        state.last_reply = heard or None
        preset = self.decision.preset
        if preset is not None and not self.decision.slots.get("repeat") and not self.preset_heard(cut):
            _unconvey(state, preset.id)
        return heard

    def preset_heard(self, cut: CutPoint | None) -> bool:
        """Whether the preset conveyed this turn (if any) reached the caller: a caller who
        talks over its last words ("OK, the door, got it") has it; one cut off before most
        of it has not, and it is still to be conveyed."""
        preset = self.decision.preset
        if preset is None:
            return False
        if cut is None:
            return True
        reply, heard, response = self.reply, self.heard(cut), preset.response.strip()
        start = reply.find(response)
        if start < 0:  # reworded by the realizer: judge by the share of the reply heard
            return len(heard) >= HEARD_SHARE * len(reply)
        return len(heard) - start >= HEARD_SHARE * len(response)


HEARD_SHARE = 2 / 3  # of the preset response's characters sent before the cut


def _unconvey(state: CallState, preset_id: str) -> None:
    """The preset response was cut before the caller heard it: it is still to be conveyed."""
    count = state.conveyed.get(preset_id, 0) - 1
    if count > 0:
        state.conveyed[preset_id] = count
    else:
        state.conveyed.pop(preset_id, None)
        state.conveyed_turn.pop(preset_id, None)
    conveyed = state.record.presets_conveyed
    if preset_id in conveyed:
        del conveyed[len(conveyed) - 1 - conveyed[::-1].index(preset_id)]


def _realizer_label(realization: Realization) -> str:
    """ "llm", "template", or "template:<why>" when the template stood in for the LLM."""
    return realization.source if not realization.fallback else f"{realization.source}:{realization.fallback}"


def history_of(record: CallRecord) -> list[tuple[str | None, str]]:
    """The coordinator's history (caller words, assistant words heard), from the record's
    turns: the greeting, then each committed turn as the caller heard it."""
    said = [(t.caller_text, t.spoken if t.cut is not None else t.reply) for t in record.turns]
    return [(None, record.greeting), *[(c, r or "") for c, r in said]]
