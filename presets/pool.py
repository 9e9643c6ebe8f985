"""The owner's preset pool in Redis: versioned, optimistic concurrency, save-time hooks.

The whole pool is one JSON document at ``ca:owner:{oid}:presets``. A write reads
it under ``WATCH``, applies a change in Python and commits with ``MULTI``; a
concurrent writer makes the commit fail and the change is retried on the fresh
pool, so every successful write bumps the version by exactly one.

After each write the registered :class:`PresetHook` s run: they precompute what
the call path will need (trigger embeddings, synthesized audio of responses), so
nothing of the kind is computed during a call.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
import weakref
from collections.abc import Callable
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import WatchError

from .errors import Busy, LimitExceeded, NotFound, PreconditionFailed
from .models import (
    MAX_EMERGENT_PRESETS,
    EmergentBody,
    EmergentPreset,
    PresetPool,
    RegularScene,
    RegularSlot,
    utcnow,
)

log = logging.getLogger(__name__)

_WRITE_BUDGET_S = 3.0


class PresetHook(Protocol):
    """Called after every successful write with the owner's new pool."""

    async def __call__(self, owner_id: str, pool: PresetPool) -> None: ...


Change = Callable[[PresetPool], None]


def pool_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:presets"


class PresetStore:
    def __init__(self, redis: Redis, hooks: list[PresetHook] | None = None) -> None:
        self._r = redis
        self.hooks: list[PresetHook] = list(hooks or [])
        # Writers of one owner queue up in-process; WATCH still guards across processes.
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def _lock(self, owner_id: str) -> asyncio.Lock:
        lock = self._locks.get(owner_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[owner_id] = lock
        return lock

    async def get_pool(self, owner_id: str) -> PresetPool:
        raw = await self._r.get(pool_key(owner_id))
        return PresetPool() if raw is None else PresetPool.model_validate_json(raw)

    async def _write(self, owner_id: str, change: Change, if_match: int | None) -> PresetPool:
        lock = self._lock(owner_id)
        async with lock:
            pool = await self._commit(owner_id, change, if_match)
        await self._run_hooks(owner_id, pool)
        return pool

    async def _commit(self, owner_id: str, change: Change, if_match: int | None) -> PresetPool:
        key = pool_key(owner_id)
        deadline = time.monotonic() + _WRITE_BUDGET_S
        while True:
            async with self._r.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    pool = PresetPool() if raw is None else PresetPool.model_validate_json(raw)
                    if if_match is not None and if_match != pool.version:
                        raise PreconditionFailed(
                            f"pool is at version {pool.version}, not {if_match}",
                            current_version=pool.version,
                        )
                    change(pool)
                    pool.version += 1
                    pipe.multi()
                    pipe.set(key, pool.model_dump_json())
                    await pipe.execute()
                    return pool
                except WatchError:
                    pass
            if time.monotonic() > deadline:
                raise Busy("the preset pool is being written by others; retry")
            await asyncio.sleep(random.uniform(0.001, 0.01))

    async def _run_hooks(self, owner_id: str, pool: PresetPool) -> None:
        for hook in self.hooks:
            try:
                await hook(owner_id, pool)
            except Exception:  # a hook must never lose the owner's write
                log.exception("preset save hook failed", extra={"hook": repr(hook)})

    # ------------------------------------------------------------ regular ----

    async def put_regular(
        self, owner_id: str, scene: RegularScene, response: str, *, if_match: int | None = None
    ) -> PresetPool:
        def change(pool: PresetPool) -> None:
            pool.regular[scene] = RegularSlot(response=response)

        return await self._write(owner_id, change, if_match)

    async def delete_regular(self, owner_id: str, scene: RegularScene, *, if_match: int | None = None) -> PresetPool:
        def change(pool: PresetPool) -> None:
            if pool.regular.get(scene) is None:
                raise NotFound(f"the {scene} slot is empty", field="scene")
            pool.regular[scene] = None

        return await self._write(owner_id, change, if_match)

    # ----------------------------------------------------------- emergent ----

    async def add_emergent(
        self, owner_id: str, body: EmergentBody, *, if_match: int | None = None
    ) -> tuple[EmergentPreset, PresetPool]:
        preset = EmergentPreset(id="pre_" + uuid.uuid4().hex[:12], **body.model_dump())

        def change(pool: PresetPool) -> None:
            if len(pool.emergent) >= MAX_EMERGENT_PRESETS:
                raise LimitExceeded(
                    f"at most {MAX_EMERGENT_PRESETS} emergent presets per owner",
                    field="emergent",
                )
            pool.emergent.append(preset)

        pool = await self._write(owner_id, change, if_match)
        return preset, pool

    async def replace_emergent(
        self, owner_id: str, preset_id: str, body: EmergentBody, *, if_match: int | None = None
    ) -> tuple[EmergentPreset, PresetPool]:
        updated: list[EmergentPreset] = []

        def change(pool: PresetPool) -> None:
            updated.clear()
            for i, p in enumerate(pool.emergent):
                if p.id == preset_id:
                    new = EmergentPreset(id=p.id, created_at=p.created_at, updated_at=utcnow(), **body.model_dump())
                    pool.emergent[i] = new
                    updated.append(new)
                    return
            raise NotFound(f"no emergent preset {preset_id}", field="id")

        pool = await self._write(owner_id, change, if_match)
        return updated[0], pool

    async def delete_emergent(self, owner_id: str, preset_id: str, *, if_match: int | None = None) -> PresetPool:
        def change(pool: PresetPool) -> None:
            before = len(pool.emergent)
            pool.emergent = [p for p in pool.emergent if p.id != preset_id]
            if len(pool.emergent) == before:
                raise NotFound(f"no emergent preset {preset_id}", field="id")

        return await self._write(owner_id, change, if_match)
