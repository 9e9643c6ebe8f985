"""Instance liveness against a real Redis: a live instance keeps its calls; the calls of
an instance that stopped beating (killed) are closed as interrupted, once, by one reaper;
a clean exit leaves nothing to reap."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from pipeline.liveness import INSTANCES_KEY, InstanceLiveness, alive_key
from pipeline.records import CallRecord, CallStore, TurnRecord

from .helpers import RedisProcess


def _turn(i: int) -> TurnRecord:
    return TurnRecord(
        index=i, caller_text=f"line {i}", act="acknowledge", caller_act="statement", scene=None,
        relation="none", preset_conveyed=None, end_call=False, reply="Noted.", realizer="template",
    )  # fmt: skip


async def test_dead_instance_calls_are_interrupted_once(clean_redis: RedisProcess) -> None:
    r = Redis.from_url(clean_redis.url, decode_responses=True)
    store = CallStore(r, 3600)
    notified: list[str] = []

    async def note(record: CallRecord) -> None:
        notified.append(record.call_id)

    dead = InstanceLiveness(r, store, "pod-a", ttl_s=0.3)
    live = InstanceLiveness(r, store, "pod-b", ttl_s=5, on_interrupted=note)
    other = InstanceLiveness(r, store, "pod-c", ttl_s=5, on_interrupted=note)
    try:
        held = CallRecord(call_id="call_a1", owner_id="own_1", channel="twilio", lang="en", instance="pod-a")
        held.turns = [_turn(0), _turn(1)]  # checkpointed after each turn
        done = CallRecord(call_id="call_a2", owner_id="own_1", channel="sip", lang="en", instance="pod-a")
        await store.save(held)
        await store.save(done)
        await dead.hold("call_a1")
        await dead.hold("call_a2")
        done.end_reason, done.ended_at = "caller_hangup", held.started_at
        await store.save(done)
        await live.hold("call_b1")
        assert await live.reap() == []  # pod-a still beats
        await asyncio.sleep(0.4)  # pod-a was killed: its heartbeat expires
        await live.beat()
        reaped = await asyncio.gather(live.reap(), other.reap())
        assert sorted(x for r_ in reaped for x in r_) == ["call_a1"]  # once, by one reaper
        record = await store.get("call_a1")
        assert record is not None and record.end_reason == "interrupted"
        assert [t.caller_text for t in record.turns] == ["line 0", "line 1"]  # up to the last turn
        assert record.stats["interrupted"]["instance"] == "pod-a"
        finished = await store.get("call_a2")
        assert finished is not None and finished.end_reason == "caller_hangup"  # already over: untouched
        assert notified == ["call_a1"]
        # (Other tests' app instances may beat into the same Redis: look at these two only.)
        registered = set(await r.hkeys(INSTANCES_KEY))
        assert "pod-a" not in registered and "pod-b" in registered
        # A clean exit leaves the registry, so nobody reaps a live call of a stopped instance.
        await live.stop()
        assert "pod-b" not in await r.hkeys(INSTANCES_KEY) and not await r.exists(alive_key("pod-b"))
    finally:
        await r.aclose()
