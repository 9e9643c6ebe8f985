"""One owner of call state (issue 14 item 5), on the session itself: a turn is decided on
a copy of the state and committed in one step; the conversation is stored once (the
record's turns) and rebuilt from them when a call is resumed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from coordinator.types import Act, CallContext, CallerAct, CallState, Decision, PresetRef, Relation
from pipeline.call_turn import CutPoint, DraftTurn
from pipeline.realizers import Realization
from pipeline.records import CallStore
from pipeline.session import CallServices, CallSession, history_of
from presets.owners import OwnerStore
from presets.pool import PresetStore

from .helpers import RedisProcess


class BreakingRealizer:
    """Words the reply's first sentence, then fails (an LLM stream that dies)."""

    name = "breaking"

    async def realize(self, decision: Decision, state: CallState, ctx: CallContext) -> Realization:
        async def chunks() -> AsyncIterator[str]:
            yield "One moment please. "
            raise RuntimeError("stream died")

        return Realization("llm", chunks=chunks())


@pytest.fixture
async def services(clean_redis: RedisProcess) -> AsyncIterator[CallServices]:
    redis = Redis.from_url(clean_redis.url, decode_responses=True)
    yield CallServices(redis=redis, owners=OwnerStore(redis), presets=PresetStore(redis), calls=CallStore(redis, 3600))
    await redis.aclose()


async def _session(services: CallServices) -> CallSession:
    owner, _ = await services.owners.create_owner("Alex Chen", "en")
    await services.presets.put_regular(owner.owner_id, "delivery", "Please leave it with the front desk.")
    return await CallSession.open(services, owner_id=owner.owner_id)


async def test_a_turn_that_fails_midway_leaves_the_state_and_record_untouched(services: CallServices) -> None:
    session = await _session(services)
    before = session.state.to_dict()
    services.realizer = BreakingRealizer()  # type: ignore[assignment]
    with pytest.raises(RuntimeError):
        await session.turn("Hi, this is FedEx, where should I leave the package?")
    assert session.state.to_dict() == before  # decided on a copy: nothing committed
    assert session.record.turns == [] and [e.role for e in session.record.transcript] == ["assistant"]
    assert session.draft is None
    from pipeline.realizers import TemplateRealizer

    services.realizer = TemplateRealizer()
    result = await session.turn("Hi, this is FedEx, where should I leave the package?")
    assert result.preset_conveyed == "regular:delivery" and session.state.turn == 0


async def test_the_conversation_is_stored_once_and_rebuilt_on_resume(services: CallServices) -> None:
    session = await _session(services)
    await session.turn("Hi, this is FedEx, where should I leave the package?")
    await session.turn("Okay. Please tell him the invoice is inside the box.")
    stored = await services.calls.get(session.call_id)
    assert stored is not None and stored.state is not None
    assert "history" not in stored.state  # one copy: the record's turns
    resumed = await CallSession.resume(services, stored)
    assert resumed.state.history[1:] == session.state.history[1:]
    assert history_of(stored)[1:] == [(t.caller_text, t.reply) for t in stored.turns]
    assert resumed.state.conveyed == session.state.conveyed and resumed.state.turn == 1
    await resumed.turn("Thanks, bye.")
    assert resumed.state.turn == 2 and len(resumed.record.turns) == 3


def _preset_draft(sentences: list[str], response: str) -> DraftTurn:
    preset = PresetRef("regular", "regular:delivery", response)
    decision = Decision(
        act=Act.CONVEY_PRESET, caller_act=CallerAct.ARRIVAL, scene="delivery", lang="en",
        relation=Relation.ALIGNED, text=" ".join(sentences), preset=preset,
    )  # fmt: skip
    return DraftTurn(index=0, state=CallState(call_id="c1", lang="en"), caller_text="I'm here", caller_t=0.0, decision=decision,
                     sentences=sentences)  # fmt: skip


def test_a_preset_talked_over_at_its_last_words_was_heard_one_cut_early_was_not() -> None:
    response = "Please leave it with the front desk."
    draft = _preset_draft(["Thanks for calling.", response], response)
    assert draft.preset_heard(None)
    assert draft.preset_heard(CutPoint(1, len(response) - 5))  # "OK, the front desk, got it"
    assert not draft.preset_heard(CutPoint(1, 8))  # cut off at "Please l"
    assert not draft.preset_heard(CutPoint(0, 10))  # before the preset sentence started
