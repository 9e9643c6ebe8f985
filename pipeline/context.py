"""Loading what a call needs from Redis (profile, presets, trigger vectors), with a
last-known-good cache so a call still starts and runs if Redis blips."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from coordinator.types import CallContext, Lang, PresetRef, TriggerCandidate
from presets.matching import load_candidates
from presets.models import PresetPool, Profile
from presets.owners import OwnerStore
from presets.pool import PresetStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OwnerSnapshot:
    profile: Profile
    pool: PresetPool
    candidates: tuple[TriggerCandidate, ...]
    fetched_at: float


class ContextLoader:
    """Reads an owner's call context; falls back to the last good copy when Redis fails."""

    def __init__(self, redis: Redis, owners: OwnerStore, presets: PresetStore, *, max_stale_s: float = 3600) -> None:
        self._r = redis
        self._owners = owners
        self._presets = presets
        self._cache: dict[str, OwnerSnapshot] = {}
        self.max_stale_s = max_stale_s

    async def snapshot(self, owner_id: str) -> OwnerSnapshot:
        try:
            profile = await self._owners.get_profile(owner_id)
            pool = await self._presets.get_pool(owner_id)
            cands = await load_candidates(self._r, owner_id, pool)
        except (RedisConnectionError, RedisTimeoutError):
            cached = self._cache.get(owner_id)
            if cached is None or time.monotonic() - cached.fetched_at > self.max_stale_s:
                raise
            log.warning(
                "redis unreachable: using cached owner context",
                extra={"age_s": round(time.monotonic() - cached.fetched_at)},
            )
            return cached
        by_id = {p.id: p for p in pool.emergent}
        candidates = tuple(
            TriggerCandidate(
                PresetRef("emergent", c.id, by_id[c.id].response, by_id[c.id].trigger),
                tuple(by_id[c.id].scenes or ()) or None,
                c.vectors,
            )
            for c in cands
        )
        snap = OwnerSnapshot(profile, pool, candidates, time.monotonic())
        self._cache[owner_id] = snap
        return snap

    @staticmethod
    def build(snap: OwnerSnapshot, *, lang: Lang | None, scene_hint: str | None) -> CallContext:
        profile = snap.profile
        call_lang: Lang = lang or profile.languages[0]
        return CallContext(
            owner_name=profile.display_name,
            lang=call_lang,
            languages=tuple(profile.languages),
            greeting=profile.greeting,
            regular={scene: slot.response for scene, slot in snap.pool.regular.items() if slot is not None},
            emergent=snap.candidates,
            private_facts=tuple((f.label, f.value) for f in profile.private_facts),
            scene_hint=scene_hint,
            pronoun=profile.pronoun,
        )
