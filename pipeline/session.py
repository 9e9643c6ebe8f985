"""One call, whatever the front-end: text API, terminal chat, bench, telephony, WebRTC, SIP.

``CallSession`` runs the coordinator on each caller turn, has the realizer word the
decision, passes every sentence through the safety guard, and keeps the call record.
:meth:`CallSession.respond` yields guarded sentences as soon as each is complete, so a
voice front-end can start speaking the first while the rest is still being written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from typing import Any

from redis.asyncio import Redis

from coordinator import Coordinator
from coordinator.types import CallContext, CallState, Decision, Lang
from presets.matching import Embedder
from presets.owners import OwnerStore
from presets.pool import PresetStore
from safety import GuardContext, InputGuard, OutputGuard, redact, split_sentences

from . import metrics
from .call_events import CallEvents
from .context import ContextLoader
from .events import EventLog
from .realizers import Realization, Realizer, TemplateRealizer
from .records import CallRecord, CallStore, Channel, Intervention, TranscriptEntry, TurnRecord
from .screening import BLOCKED_CLOSE
from .summary import preset_texts, summarize

log = logging.getLogger(__name__)

_OPENED_HERE: set[str] = set()  # calls this process opened and has not ended (the active gauge)
_CJK_END = "。！？；…\n"
_ASCII_END = ".!?;"


@dataclass
class CallServices:
    """Process-wide objects every call shares."""

    redis: Redis
    owners: OwnerStore
    presets: PresetStore
    calls: CallStore
    realizer: Realizer = field(default_factory=TemplateRealizer)
    embedder: Embedder = field(default_factory=Embedder)
    input_guard: InputGuard = field(default_factory=InputGuard)
    output_guard: OutputGuard | None = field(default_factory=OutputGuard)  # None: guard off (baseline only)
    loader: ContextLoader | None = None
    liveness: Any = None  # pipeline.liveness.InstanceLiveness: which instance holds a voice call
    understander: Any = None  # pipeline.understanders.make_understander(); None: rules
    events: EventLog | None = None  # owner events; None: none are written
    screening: Any = None  # pipeline.screening.Screener: decides on each call's caller

    def __post_init__(self) -> None:
        if self.loader is None:
            self.loader = ContextLoader(self.redis, self.owners, self.presets)
        guard = self.input_guard
        sync = getattr(self.understander, "fallback", self.understander)  # llm: learned inside the decision
        self.coordinator = Coordinator(lambda utt, ctx: guard.classify(utt).kinds, understander=sync)


@dataclass
class TurnResult:
    reply: str
    act: str
    caller_act: str
    scene: str | None
    relation: str
    preset_conveyed: str | None
    ended: bool
    timings: dict[str, float | None]
    interventions: list[Intervention]


class CallSession:
    def __init__(self, services: CallServices, record: CallRecord, state: CallState, ctx: CallContext) -> None:
        self.services = services
        self.record = record
        self.state = state
        self.ctx = ctx
        self._lock = asyncio.Lock()
        self._t0 = time.monotonic()
        self.last_result: TurnResult | None = None
        self.current_decision: Decision | None = None
        self.last_active = time.monotonic()
        self.events = CallEvents(services.events, record) if services.events is not None else None

    # ---------------------------------------------------------- lifecycle ----

    @classmethod
    async def open(
        cls,
        services: CallServices,
        *,
        owner_id: str,
        lang: Lang | None = None,
        scene_hint: str | None = None,
        channel: Channel = "text",
        line: str | None = None,
        call_id: str | None = None,
        anonymous: bool = False,
        caller_number: str | None = None,
    ) -> CallSession:
        assert services.loader is not None
        snap = await services.loader.snapshot(owner_id)
        ctx = ContextLoader.build(snap, lang=lang, scene_hint=scene_hint)
        call_id = call_id or "call_" + uuid.uuid4().hex[:20]
        state = CallState(call_id=call_id, lang=ctx.lang, scene=None)
        record = CallRecord(
            call_id=call_id,
            owner_id=owner_id,
            channel=channel,
            line=line,
            lang=ctx.lang,
            scene_hint=scene_hint,
            anonymous=anonymous,
            caller_number=caller_number,
        )
        if services.screening is not None:
            record.screening = await services.screening.screen(owner_id, record)
        session = cls(services, record, state, ctx)
        greeting = services.coordinator.greet(state, ctx)
        text, interventions = session._guard_all([greeting.text], greeting, turn=-1)
        blocked = (record.screening or {}).get("decision") == "block"
        if blocked:  # a short polite close instead of the greeting, then hang up
            text, interventions = BLOCKED_CLOSE.get(ctx.lang, BLOCKED_CLOSE["en"]), []
        record.greeting = text
        record.interventions.extend(interventions)
        record.transcript.append(TranscriptEntry(role="assistant", text=text, t=0.0, turn=-1))
        metrics.CALLS_STARTED.labels(transport=channel).inc()
        metrics.ACTIVE_CALLS.labels(transport=channel).inc()
        _OPENED_HERE.add(call_id)
        if channel != "text" and services.liveness is not None:
            # A voice call lives in this process: if it dies, another instance closes the
            # record (checkpointed every turn) as interrupted.
            record.instance = services.liveness.instance
            await services.liveness.hold(call_id)
        await session.save()
        if session.events is not None:
            session.events.started(record)
        if blocked:
            await session.hangup("blocked", outcome="blocked")
        return session

    @classmethod
    async def resume(cls, services: CallServices, record: CallRecord) -> CallSession:
        """Continue a call from its stored record (e.g. on another worker)."""
        assert services.loader is not None and record.state is not None
        snap = await services.loader.snapshot(record.owner_id)
        ctx = ContextLoader.build(snap, lang=record.lang, scene_hint=record.scene_hint)  # type: ignore[arg-type]
        return cls(services, record, CallState.from_dict(record.state), ctx)

    @property
    def call_id(self) -> str:
        return self.record.call_id

    @property
    def greeting(self) -> str:
        return self.record.greeting

    @property
    def ended(self) -> bool:
        return self.record.ended

    def elapsed(self) -> float:
        return round(time.monotonic() - self._t0, 3)

    async def save(self) -> None:
        self.record.state = self.state.to_dict()
        self.record.owner_record = asdict(self.state.record)
        self.record.scene = self.state.scene
        await self.services.calls.save(self.record)

    async def hangup(self, reason: str, *, outcome: str | None = None) -> None:
        """End the call (idempotent): caller hang-up, assistant close, error, timeout."""
        if self.record.ended_at is not None:
            return
        from presets.models import utcnow

        self.state.ended = True
        self.record.ended_at = utcnow()
        self.record.end_reason = reason
        self.record.summary = summarize(self.record, self.ctx.languages[0], conveyed_texts=preset_texts(self.ctx))
        metrics.CALLS.labels(transport=self.record.channel, outcome=outcome or reason).inc()
        if self.call_id in _OPENED_HERE:  # a text call may end on another instance than it began
            _OPENED_HERE.discard(self.call_id)
            metrics.ACTIVE_CALLS.labels(transport=self.record.channel).dec()
        try:
            await self.save()
        except Exception:
            metrics.ERRORS.labels(component="call_store").inc()
            log.exception("could not save the ended call", extra={"call_id": self.call_id})
        liveness = self.services.liveness
        if self.record.channel != "text" and liveness is not None:
            with contextlib.suppress(Exception):
                await liveness.release(self.call_id)
        if self.events is not None:
            self.events.ended(self.record)
            await self.events.flush()

    async def caller_heard(self, text: str) -> None:
        """A caller turn the assistant does not answer (the owner is talking): recorded only."""
        self.last_active = time.monotonic()
        self.record.transcript.append(TranscriptEntry(role="caller", text=text, t=self.elapsed(), turn=None))
        if self.events is not None:
            self.events.caller_turn(self.state.turn, text)
        await self.save()

    async def owner_said(self, text: str, *, via: str) -> None:
        """The owner's own words were spoken to the caller (take-over): recorded with role
        ``owner``, as said (they are the owner's decision, not the assistant's)."""
        self.last_active = time.monotonic()
        self.record.transcript.append(TranscriptEntry(role="owner", text=text, t=self.elapsed(), turn=self.state.turn))
        if self.events is not None:
            self.events.owner_turn(text, via=via)
        await self.save()

    # -------------------------------------------------------------- turns ----

    async def turn(self, text: str | None, *, timings: dict[str, float | None] | None = None) -> TurnResult:
        """Handle one caller turn and return the whole reply."""
        async for _ in self.respond(text, timings=timings):
            pass
        assert self.last_result is not None
        return self.last_result

    async def respond(self, text: str | None, *, timings: dict[str, float | None] | None = None) -> AsyncIterator[str]:
        """Handle one caller turn, yielding each guarded sentence of the reply when ready."""
        if self.ended:
            raise CallEnded(self.call_id)
        async with self._lock:
            self.last_active = time.monotonic()
            started = time.perf_counter()
            caller_t = self.elapsed()
            text = text.strip() if text and text.strip() else None
            if self.events is not None:  # before understanding: the owner sees it at once
                self.events.caller_turn(self.state.turn + 1, text)
            vec, understanding = None, None
            nlu = self.services.understander
            if text and (self.ctx.emergent or getattr(nlu, "wants_embedding", False)):
                vec = await asyncio.to_thread(self.services.embedder.embed_one, text)
            if text and hasattr(nlu, "prepare"):  # an asynchronous reading (llm), before the decision
                understanding = await nlu.prepare(text, state=self.state, ctx=self.ctx, vec=vec)
            t_decide = time.perf_counter()
            # A voice turn's Whisper confidence (pipeline.asr.Confidence.score) goes to the
            # understanding layer as an input; text calls have none.
            score = (timings or {}).get("asr_score")
            decision = self.services.coordinator.decide(
                self.state, self.ctx, text, vec, understanding=understanding, asr_confidence=score
            )
            coordinator_ms = (time.perf_counter() - t_decide) * 1000
            self.current_decision = decision
            decision_ms = (time.perf_counter() - started) * 1000
            metrics.DECISION_SECONDS.observe(decision_ms / 1000)
            for flag in decision.input_flags:
                metrics.INPUT_FLAGS.labels(kind=flag).inc()
            realization = await self.services.realizer.realize(decision, self.state, self.ctx)
            turn = self.state.turn
            sentences: list[str] = []
            interventions: list[Intervention] = []
            async for sentence in self._guarded_stream(realization, decision, turn, interventions):
                sentences.append(sentence)
                yield sentence
            reply = _join(sentences, decision.lang)
            all_timings = {
                "decision_ms": round(decision_ms, 3),  # utterance embedding + coordinator
                "coordinator_ms": round(coordinator_ms, 3),
                "first_token_ms": None if realization.first_token_ms is None else round(realization.first_token_ms, 3),
                "total_ms": round((time.perf_counter() - started) * 1000, 3),
                **(timings or {}),
            }
            self._record_turn(text, caller_t, decision, realization, reply, interventions, all_timings)
            self.record.owner_record = asdict(self.state.record)
            if self.events is not None:
                preset = decision.preset.id if decision.preset else None
                self.events.assistant_turn(self.record, turn, reply, act=decision.act.value, preset=preset)
            self.last_result = TurnResult(
                reply=reply,
                act=decision.act.value,
                caller_act=decision.caller_act.value,
                scene=decision.scene,
                relation=decision.relation.value,
                preset_conveyed=decision.preset.id if decision.preset else None,
                ended=decision.end_call,
                timings=all_timings,
                interventions=interventions,
            )
            await self.save()
        if decision.end_call:
            await self.hangup("assistant_closed", outcome="completed")

    def _record_turn(
        self,
        text: str | None,
        caller_t: float,
        decision: Decision,
        realization: Realization,
        reply: str,
        interventions: list[Intervention],
        timings: dict[str, float | None],
    ) -> None:
        turn = self.state.turn
        # The coordinator remembered its template; the caller heard the realized reply.
        self.state.history[-1] = (text, reply)
        self.state.last_reply = reply
        self.record.transcript.append(TranscriptEntry(role="caller", text=text, t=caller_t, turn=turn))
        self.record.transcript.append(TranscriptEntry(role="assistant", text=reply, t=self.elapsed(), turn=turn))
        self.record.turns.append(
            TurnRecord(
                index=turn, caller_text=text, act=decision.act.value, caller_act=decision.caller_act.value,
                scene=decision.scene, relation=decision.relation.value,
                preset_conveyed=decision.preset.id if decision.preset else None, end_call=decision.end_call,
                reply=reply, realizer=_realizer_label(realization),
                input_flags=list(decision.input_flags), timings=timings, interventions=interventions,
            )
        )  # fmt: skip
        self.record.interventions.extend(interventions)
        metrics.TURNS.labels(transport=self.record.channel).inc()
        if decision.preset is not None:
            metrics.PRESETS_CONVEYED.labels(kind=decision.preset.kind).inc()

    # ------------------------------------------------------------- safety ----

    def guard_context(self, decision: Decision | None) -> GuardContext:
        presets = tuple(self.ctx.regular.values()) + tuple(c.preset.response for c in self.ctx.emergent)
        conversation = tuple(c for c, _ in self.state.history if c)
        allowed = (decision.text,) if decision is not None else ()
        return GuardContext(
            lang=self.state.lang,
            owner_name=self.ctx.owner_name,
            private_facts=self.ctx.private_facts,
            preset_texts=presets,
            conversation=conversation,
            allowed_texts=(*allowed, self.record.greeting) if self.record.greeting else allowed,
        )

    def _check(
        self,
        sentence: str,
        decision: Decision,
        turn: int,
        gctx: GuardContext,
        used_template: list[bool],
        interventions: list[Intervention],
    ) -> str | None:
        guard = self.services.output_guard
        if guard is None:
            return sentence
        t0 = time.perf_counter()
        verdict = guard.check(sentence, gctx)
        metrics.GUARD_SECONDS.observe(time.perf_counter() - t0)
        if verdict.ok:
            return sentence
        metrics.SAFETY_INTERVENTIONS.labels(constraint=verdict.constraint or "unknown").inc()
        interventions.append(
            Intervention(
                turn=turn,
                constraint=verdict.constraint or "unknown",
                rule=verdict.rule or "",
                audit=redact(sentence, gctx),
            )
        )
        log.warning(
            "safety guard replaced a sentence",
            extra={"constraint": verdict.constraint, "rule": verdict.rule},
        )
        if used_template[0]:
            return None  # the safe wording was already said; drop the rest
        used_template[0] = True
        return decision.text

    def _guard_all(self, texts: list[str], decision: Decision, turn: int) -> tuple[str, list[Intervention]]:
        gctx = self.guard_context(decision)
        used = [False]
        out: list[str] = []
        interventions: list[Intervention] = []
        for text in texts:
            for sentence in split_sentences(text):
                checked = self._check(sentence, decision, turn, gctx, used, interventions)
                if checked is not None:
                    out.append(checked)
        return _join(out, decision.lang) or decision.text, interventions

    async def _guarded_stream(
        self,
        realization: Realization,
        decision: Decision,
        turn: int,
        interventions: list[Intervention],
    ) -> AsyncIterator[str]:
        gctx = self.guard_context(decision)
        used = [False]
        buffer = ""
        emitted = 0
        assert realization.chunks is not None
        async for chunk in realization.chunks:
            buffer += chunk
            cut = _last_boundary(buffer)
            if cut == 0:
                continue
            # Only finished sentences are checked; the unfinished rest stays raw (spaces and all).
            complete, buffer = split_sentences(buffer[:cut]), buffer[cut:]
            for sentence in complete:
                checked = self._check(sentence, decision, turn, gctx, used, interventions)
                if checked is not None:
                    emitted += 1
                    yield checked
        for sentence in split_sentences(buffer):
            checked = self._check(sentence, decision, turn, gctx, used, interventions)
            if checked is not None:
                emitted += 1
                yield checked
        if emitted == 0:
            yield decision.text


class CallEnded(Exception):
    def __init__(self, call_id: str) -> None:
        super().__init__(f"call {call_id} has ended")
        self.call_id = call_id


def _last_boundary(text: str) -> int:
    """Index just after the last finished sentence in streamed ``text`` (0 if none yet).

    A Chinese terminator ends a sentence at once; an ASCII one only once whitespace
    follows it (so "3." in "3.5" or "Mr." mid-stream waits for the next chunk).
    """
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch in _CJK_END:
            return i + 1
        if ch in _ASCII_END and i + 1 < len(text) and text[i + 1].isspace():
            return i + 1
    return 0


def _realizer_label(realization: Realization) -> str:
    """ "llm", "template", or "template:<why>" when the template stood in for the LLM."""
    return realization.source if not realization.fallback else f"{realization.source}:{realization.fallback}"


def _join(sentences: list[str], lang: str) -> str:
    sep = "" if lang == "zh" else " "
    return sep.join(s.strip() for s in sentences if s.strip())


def session_summary(session: CallSession) -> dict[str, Any]:
    return session.record.listing()
