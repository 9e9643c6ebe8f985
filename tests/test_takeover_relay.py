"""The take-over relay between instances, without audio: two LiveCalls registries (two
"instances") on one real Redis; the call's control on instance A is a scripted stand-in
for the voice call (the WebRTC leg itself is proven in tests/test_scale_loopback.py).
join and leave sent to instance B reach A and their answers, or errors, come back."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from app.resources import make_redis
from pipeline.records import CallStore
from pipeline.session import CallServices, CallSession
from pipeline.takeover import LiveCalls, TakeoverError
from pipeline.takeover_relay import TakeoverRelay
from presets.owners import OwnerStore
from presets.pool import PresetStore

from .conftest import make_settings
from .helpers import RedisProcess


class ScriptedControl:
    """Stands in for a live voice call: records what it was asked to do."""

    def __init__(self, session: CallSession) -> None:
        self.session = session
        self.done: list[tuple[str, Any]] = []
        self.joined = False

    async def owner_say(self, text: str) -> None:
        self.done.append(("say", text))

    async def owner_end(self, text: str | None) -> None:
        self.done.append(("end", text))

    async def owner_join(self, *, sdp: str, sdp_type: str, ice_servers: list[Any]) -> dict[str, str]:
        if self.joined:
            raise TakeoverError("joined", "the owner is already in the call")
        self.joined = True
        self.done.append(("join", sdp))
        return {"sdp": "v=0 answer-for:" + sdp, "type": "answer", "pc_id": "pc-1"}

    async def owner_leave(self) -> None:
        if not self.joined:
            raise TakeoverError("not_joined", "the owner is not in the call")
        self.joined = False
        self.done.append(("leave", None))


async def _instance(url: str, tmp: Path, name: str) -> tuple[LiveCalls, Redis, Redis]:
    settings = make_settings(url, tmp)
    redis, listener = make_redis(url, settings), make_redis(url, settings, socket_timeout_s=10)
    owners = OwnerStore(redis)
    services = CallServices(redis=redis, owners=owners, presets=PresetStore(redis), calls=CallStore(redis, 3600))
    live = LiveCalls(services)
    live.relay = TakeoverRelay(redis, listener, live.relayed, instance_id=name)
    live.relay.start()
    await asyncio.wait_for(live.relay.ready.wait(), 5)
    return live, redis, listener


async def test_join_and_leave_are_relayed_with_their_answers(clean_redis: RedisProcess, tmp_path: Path) -> None:
    a, ra, la = await _instance(clean_redis.url, tmp_path, "pod-a")
    b, rb, lb = await _instance(clean_redis.url, tmp_path, "pod-b")
    try:
        owner, _ = await a.services.owners.create_owner("Alex", "en")
        other, _ = await a.services.owners.create_owner("Mallory", "en")
        session = await CallSession.open(a.services, owner_id=owner.owner_id, channel="twilio", line="+15550100")
        control = ScriptedControl(session)
        await a.register(control)  # the call's audio is on pod-a

        answer = await b.join(owner.owner_id, session.call_id, sdp="v=0 offer", sdp_type="offer")
        assert answer == {"sdp": "v=0 answer-for:v=0 offer", "type": "answer", "pc_id": "pc-1"}
        with pytest.raises(TakeoverError) as again:
            await b.join(owner.owner_id, session.call_id, sdp="v=0 offer", sdp_type="offer")
        assert again.value.code == "joined"  # the carrier's own error, relayed back
        await b.leave(owner.owner_id, session.call_id)
        with pytest.raises(TakeoverError) as twice:
            await b.leave(owner.owner_id, session.call_id)
        assert twice.value.code == "not_joined"
        assert [op for op, _ in control.done] == ["join", "leave"]

        # Another owner's request is refused before anything is relayed; the carrier checks again.
        with pytest.raises(TakeoverError) as foreign:
            await b.join(other.owner_id, session.call_id, sdp="v=0 offer", sdp_type="offer")
        assert foreign.value.code == "not_found"
        assert len(control.done) == 2

        # The carrier has gone: nobody answers.
        await a.unregister(session.call_id)
        with pytest.raises(TakeoverError) as gone:
            await b.join(owner.owner_id, session.call_id, sdp="v=0 offer", sdp_type="offer")
        assert gone.value.code == "not_live"
    finally:
        for live in (a, b):
            assert live.relay is not None
            await live.relay.aclose()
        for r in (ra, la, rb, lb):
            await r.aclose()
