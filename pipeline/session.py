"""One call, whatever the front-end: text API, terminal chat, bench, telephony, WebRTC, SIP.

``CallSession`` runs the coordinator on each caller turn, has the realizer word the
decision, passes every sentence through the safety guard, and keeps the call record.
:meth:`CallSession.respond` yields guarded sentences as soon as each is complete, so a
voice front-end can start speaking the first while the rest is still being written.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
import uuid
from collections.abc import AsyncGenerator
from dataclasses import asdict
from typing import Any

from coordinator.types import CallContext, CallState, Decision, Lang

from . import metrics
from .call_events import CallEvents
from .call_services import CallEnded, CallServices
from .call_turn import CutPoint, DraftTurn, TurnResult, history_of
from .context import ContextLoader
from .records import CallRecord, Channel, TranscriptEntry
from .screening import BLOCKED_CLOSE
from .session_guard import ReplyGuard
from .summary import preset_texts, summarize
from .understanders import EarlyEmbeddings

log = logging.getLogger(__name__)

_OPENED_HERE: set[str] = set()  # calls this process opened and has not ended (the active gauge)


class CallSession:
    """One call's coordinator state, record and owner events. The session is the only
    writer of the call's :class:`CallState` (read it through :attr:`state`) and record:
    a turn is decided on a copy and committed in one step (:meth:`commit_turn`)."""

    def __init__(self, services: CallServices, record: CallRecord, state: CallState, ctx: CallContext) -> None:
        self.services = services
        self.record = record
        self._state = state
        self.ctx = ctx
        self._lock = asyncio.Lock()
        self._t0 = time.monotonic()
        self.last_result: TurnResult | None = None
        self.current_decision: Decision | None = None
        self.last_active = time.monotonic()
        self.events = CallEvents(services.events, record) if services.events is not None else None
        self.guard = ReplyGuard(services.output_guard, ctx, record.greeting)
        self._draft: DraftTurn | None = None
        self._finished = False
        self._early = EarlyEmbeddings(services.embedder.embed_one)
        # Text calls are finished (saved, owner told) the moment they end; a voice call's
        # pipeline finishes it once its audio has stopped (pipeline.voice.call.VoiceCall).
        self.finish_on_end = record.channel == "text"

    @property
    def state(self) -> CallState:
        """The committed state (read-only to everyone but the session)."""
        return self._state

    @property
    def lang(self) -> str:
        return self._state.lang

    @property
    def draft(self) -> DraftTurn | None:
        """The turn decided but not yet committed (a voice reply being spoken)."""
        return self._draft

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
        # One language on a voice call: Whisper is held to it, so Latin text in a Chinese
        # call (or the reverse) is Whisper failing on unclear audio ("喂？喂？" -> "way way
        # sir"), not the caller switching: the reply stays in the call's language.
        locked = channel != "text" and len(ctx.languages) <= 1
        state = CallState(call_id=call_id, lang=ctx.lang, scene=None, lang_locked=locked)
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
        text, interventions = session.guard.all(state, [greeting.text], greeting, turn=-1)
        blocked = (record.screening or {}).get("decision") == "block"
        if blocked:  # a short polite close instead of the greeting, then hang up
            text, interventions = BLOCKED_CLOSE.get(ctx.lang, BLOCKED_CLOSE["en"]), []
        record.greeting = session.guard.greeting = text
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
            await session.end("blocked", outcome="blocked")
        return session

    @classmethod
    async def resume(cls, services: CallServices, record: CallRecord) -> CallSession:
        """Continue a call from its stored record (e.g. on another worker)."""
        assert services.loader is not None and record.state is not None
        snap = await services.loader.snapshot(record.owner_id)
        ctx = ContextLoader.build(snap, lang=record.lang, scene_hint=record.scene_hint)  # type: ignore[arg-type]
        return cls(services, record, CallState.from_dict({**record.state, "history": history_of(record)}), ctx)

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
        # The conversation is stored once, as the record's turns (history_of rebuilds it).
        self.record.state = {k: v for k, v in self._state.to_dict().items() if k != "history"}
        self.record.owner_record = asdict(self._state.record)
        self.record.scene = self._state.scene
        self.record.lang = self._state.lang  # the call's language is the state's (kept once)
        await self.services.calls.save(self.record)

    async def hangup(self, reason: str, *, outcome: str | None = None) -> None:
        """End the call and finish it (idempotent): caller hang-up, assistant close, error."""
        await self.end(reason, outcome=outcome)
        await self.finish()

    async def end(self, reason: str, *, outcome: str | None = None) -> bool:
        """Mark the call ended (the first reason counts; False if it had already ended).
        A text call is finished at once; a voice call when its pipeline stops."""
        if self.record.ended_at is not None:
            return False
        from presets.models import utcnow

        self._state.ended = True
        self.record.ended_at = utcnow()
        self.record.end_reason = reason
        metrics.CALLS.labels(transport=self.record.channel, outcome=outcome or reason).inc()
        if self.finish_on_end:
            await self.finish()
        return True

    async def finish(self) -> None:
        """Once per call, after it ended: commit a turn still in flight, summarize, save the
        record, release the call and tell the owner."""
        if self._finished or self.record.ended_at is None:
            return
        self._finished = True
        if self._draft is not None:
            await self.commit_turn(cut=None if self._draft.complete else CutPoint(len(self._draft.sentences)))
        self.record.summary = summarize(self.record, self.ctx.languages[0], conveyed_texts=preset_texts(self.ctx))
        self.leave_active()
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

    def leave_active(self) -> None:
        """The call is no longer in progress here (idempotent): the active-calls gauge drops
        it. A voice call leaves when its media ends, before its post-call work."""
        if self.call_id in _OPENED_HERE:  # a text call may end on another instance than it began
            _OPENED_HERE.discard(self.call_id)
            metrics.ACTIVE_CALLS.labels(transport=self.record.channel).dec()

    async def caller_heard(self, text: str) -> None:
        """A caller turn the assistant does not answer (the owner is talking): recorded only."""
        self.last_active = time.monotonic()
        self.record.transcript.append(TranscriptEntry(role="caller", text=text, t=self.elapsed(), turn=None))
        if self.events is not None:
            self.events.caller_turn(self._state.turn, text)
        await self.save()

    async def owner_said(self, text: str, *, via: str) -> None:
        """The owner's own words were spoken to the caller (take-over): recorded with role
        ``owner``, as said (they are the owner's decision, not the assistant's)."""
        self.last_active = time.monotonic()
        self.record.transcript.append(TranscriptEntry(role="owner", text=text, t=self.elapsed(), turn=self._state.turn))
        if self.events is not None:
            self.events.owner_turn(text, via=via)
        await self.save()

    def note_stat(self, key: str, value: Any) -> None:
        """A per-call counter or fact for the record's ``stats`` (saved with the next save)."""
        self.record.stats[key] = value

    def note_barge_in(self, count: int) -> None:
        """The caller spoke over the assistant (the ``count``-th time): marked on the turn
        being answered (or the last one)."""
        self.record.stats["barge_ins"] = count
        if self._draft is not None:
            self._draft.timings["barge_in"] = 1.0
        elif self.record.turns:
            self.record.turns[-1].timings["barge_in"] = 1.0

    # -------------------------------------------------------------- turns ----

    def precompute(self, text: str | None) -> asyncio.Future[Any] | None:
        """A speculative transcript of the turn in progress (a voice call's VAD stop): the
        turn's embedding is computed now, so the decision finds it ready if the committed
        text is the same (:class:`~pipeline.understanders.EarlyEmbeddings`). Returns the
        job, or None when this call's decisions need no embedding."""
        if self.ctx.emergent or getattr(self.services.understander, "wants_embedding", False):
            return self._early.offer(text)
        return None

    async def turn(self, text: str | None, *, timings: dict[str, float | None] | None = None) -> TurnResult:
        """Handle one caller turn and return the whole reply."""
        async for _ in self.respond(text, timings=timings):
            pass
        assert self.last_result is not None
        return self.last_result

    async def respond(
        self,
        text: str | None,
        *,
        timings: dict[str, float | None] | None = None,
        lang: str | None = None,
        commit: bool = True,
    ) -> AsyncGenerator[str, None]:
        """Handle one caller turn, yielding each guarded sentence of the reply when ready.

        The turn is decided on a copy of the state. With ``commit`` (text calls) it is
        committed once the reply is written; otherwise (voice) the caller commits it with
        :meth:`commit_turn` once the reply has been spoken, or cut off. ``lang``: the
        language the caller was heard in (a bilingual owner's first voice turn)."""
        if self.ended:
            raise CallEnded(self.call_id)
        async with self._lock:
            if self._draft is not None:  # a reply cut off before its commit: keep it as heard so far
                await self.commit_turn(cut=CutPoint(len(self._draft.sentences)))
            draft = await self._decide(text, timings or {}, lang)
            decision = draft.decision
            try:
                assert draft.realization is not None
                async for sentence in self.guard.stream(
                    draft.state, draft.realization, decision, draft.index, draft.interventions
                ):
                    draft.sentences.append(sentence)
                    yield sentence
            except BaseException:
                if commit:  # a text turn that failed is not recorded (the state is untouched)
                    self._draft = None
                raise
            finally:
                draft.timings["total_ms"] = round((time.perf_counter() - draft.started) * 1000, 3)
            draft.complete = True
            self.last_result = draft.result()
            if commit:
                await self.commit_turn()
        if decision.end_call:
            await self.end("assistant_closed", outcome="completed")

    async def _decide(self, text: str | None, timings: dict[str, float | None], lang: str | None) -> DraftTurn:
        self.last_active = time.monotonic()
        started = time.perf_counter()
        caller_t = self.elapsed()
        text = text.strip() if text and text.strip() else None
        state = copy.deepcopy(self._state)
        if lang in ("zh", "en") and lang != state.lang:
            state.lang = lang  # type: ignore[assignment]
        if self.events is not None:  # before understanding: the owner sees it at once
            self.events.caller_turn(state.turn + 1, text)
        vec, understanding = None, None
        embed: dict[str, float] = {}  # the embedding's share of the decision (voice: precomputed?)
        nlu = self.services.understander
        if text and (self.ctx.emergent or getattr(nlu, "wants_embedding", False)):
            t_embed = time.perf_counter()
            vec, early = await self._early.vector(text)
            embed = {"embed_ms": round((time.perf_counter() - t_embed) * 1000, 3)}
            if early is not None:  # a voice call: was the speculative transcript's vector ready?
                embed["embed_precomputed"] = float(early == "hit")
                self.record.stats["understanding_precomputed"] = dict(self._early.outcomes)
        if text and hasattr(nlu, "prepare"):  # an asynchronous reading (llm), before the decision
            understanding = await nlu.prepare(text, state=state, ctx=self.ctx, vec=vec)
        t_decide = time.perf_counter()
        # A voice turn's Whisper confidence (pipeline.asr.Confidence.score) goes to the
        # understanding layer as an input; text calls have none.
        decision = self.services.coordinator.decide(
            state, self.ctx, text, vec, understanding=understanding, asr_confidence=timings.get("asr_score")
        )
        coordinator_ms = (time.perf_counter() - t_decide) * 1000
        self.current_decision = decision
        decision_ms = (time.perf_counter() - started) * 1000
        metrics.DECISION_SECONDS.observe(decision_ms / 1000)
        for flag in decision.input_flags:
            metrics.INPUT_FLAGS.labels(kind=flag).inc()
        draft = DraftTurn(index=state.turn, state=state, caller_text=text, caller_t=caller_t, decision=decision)
        self._draft = draft
        draft.realization = await self.services.realizer.realize(decision, state, self.ctx)
        first = draft.realization.first_token_ms
        draft.timings = {
            "decision_ms": round(decision_ms, 3),  # utterance embedding + coordinator
            "coordinator_ms": round(coordinator_ms, 3),
            "first_token_ms": None if first is None else round(first, 3),
            **embed,
            **timings,
        }
        draft.started = started
        return draft

    def note_timings(self, values: dict[str, float]) -> bool:
        """Timings measured while the turn's reply is spoken (TTS first audio,
        voice-to-voice): kept on the turn in flight; the first of each counts."""
        draft = self._draft
        if draft is None or any(k in draft.timings for k in values):
            return False
        draft.timings.update(values)
        return True

    async def commit_turn(self, *, cut: CutPoint | None = None) -> bool:
        """Commit the turn in flight in one step: its state becomes the call's, and its
        record (transcript, turn, owner record) is written from it. ``cut``: the caller
        cut the reply off there (barge-in). False if no turn was in flight."""
        draft, self._draft = self._draft, None
        if draft is None:
            return False
        heard = draft.settle(cut)
        self._state = draft.state
        self._record_turn(draft, heard, cut)
        if self.events is not None:
            decision = draft.decision
            preset = decision.preset.id if decision.preset and draft.preset_heard(cut) else None
            self.events.assistant_turn(self.record, draft.index, heard, act=decision.act.value, preset=preset)
        if not self.ended:  # the checkpoint of this turn; an ended call is saved once, by finish()
            await self.save()
        return True

    def _record_turn(self, draft: DraftTurn, heard: str, cut: CutPoint | None) -> None:
        decision = draft.decision
        turn = draft.index
        self.record.owner_record = asdict(self._state.record)
        caller = TranscriptEntry(role="caller", text=draft.caller_text, t=draft.caller_t, turn=turn)
        self.record.transcript.append(caller)
        self.record.transcript.append(TranscriptEntry(role="assistant", text=heard, t=self.elapsed(), turn=turn))
        self.record.turns.append(draft.turn_record(heard, cut))
        self.record.interventions.extend(draft.interventions)
        metrics.TURNS.labels(transport=self.record.channel).inc()
        if decision.preset is not None and draft.preset_heard(cut):
            metrics.PRESETS_CONVEYED.labels(kind=decision.preset.kind).inc()
