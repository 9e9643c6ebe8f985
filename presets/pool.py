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
from redis.exceptions import ResponseError, WatchError

from .errors import Busy, LimitExceeded, NotFound, NotReplicated, PreconditionFailed
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
    def __init__(
        self,
        redis: Redis,
        hooks: list[PresetHook] | None = None,
        *,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 500,
    ) -> None:
        self._r = redis
        self.hooks: list[PresetHook] = list(hooks or [])
        # With replicas (Sentinel), a write is acknowledged only once this many replicas
        # have it (WAIT), so a failover right after a 200 cannot lose it.
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
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
        attempt = self._attempt_replicated if self.wait_replicas > 0 else self._attempt
        while True:
            pool = await attempt(key, change, if_match)
            if pool is not None:
                return pool
            if time.monotonic() > deadline:
                raise Busy("the preset pool is being written by others; retry")
            await asyncio.sleep(random.uniform(0.001, 0.01))

    @staticmethod
    def _changed(raw: str | bytes | None, change: Change, if_match: int | None) -> PresetPool:
        pool = PresetPool() if raw is None else PresetPool.model_validate_json(raw)
        if if_match is not None and if_match != pool.version:
            raise PreconditionFailed(f"pool is at version {pool.version}, not {if_match}", current_version=pool.version)
        change(pool)
        pool.version += 1
        return pool

    async def _attempt(self, key: str, change: Change, if_match: int | None) -> PresetPool | None:
        """One optimistic WATCH/MULTI round; None when another writer won it."""
        async with self._r.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(key)
                pool = self._changed(await pipe.get(key), change, if_match)
                pipe.multi()
                pipe.set(key, pool.model_dump_json())
                await pipe.execute()
            except WatchError:
                return None
            return pool

    async def _attempt_replicated(self, key: str, change: Change, if_match: int | None) -> PresetPool | None:
        """The same round on one connection, then WAIT on it: WAIT counts the replicas that
        have this connection's writes, so it must follow EXEC on the same connection."""
        async with self._r.client() as conn:
            try:
                await conn.execute_command("WATCH", key)
                pool = self._changed(await conn.get(key), change, if_match)
                await conn.execute_command("MULTI")
                await conn.execute_command("SET", key, pool.model_dump_json())
                if await conn.execute_command("EXEC") is None:
                    return None  # WATCH fired: another writer won
            except BaseException as exc:
                # Never hand a connection in WATCH/MULTI state back to the pool.
                if conn.connection is not None:
                    await conn.connection.disconnect()
                if isinstance(exc, ResponseError) and ("NOREPLICAS" in str(exc) or "EXECABORT" in str(exc)):
                    # min-replicas-to-write: the master has too few replicas to take writes.
                    raise NotReplicated("not enough replicas to accept the write; retry") from exc
                raise
            acked = int(await conn.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms))
        if acked < self.wait_replicas:
            raise NotReplicated(f"the write reached {acked} of {self.wait_replicas} replicas in time; retry")
        return pool

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
