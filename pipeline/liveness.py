"""Which instance holds which live call, and what happens to the calls of an instance that dies.

Every instance keeps a heartbeat key in Redis (``ca:instance:{id}:alive``, a short TTL
renewed every few seconds) and the set of voice calls it holds
(``ca:instance:{id}:calls``). Text calls are held by nobody: their state is in Redis and
any instance serves their next turn. Each instance also reaps: an instance listed in
``ca:instances`` whose heartbeat has expired died without hanging up (``kill -9``, a
node lost), so its calls' records, checkpointed after every turn, are closed as
``interrupted`` and the owner is told. One reaper wins per dead instance (a SET NX lock).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

from presets.models import utcnow

from . import metrics
from .records import CallRecord, CallStore

log = logging.getLogger(__name__)

INSTANCES_KEY = "ca:instances"
OnInterrupted = Callable[[CallRecord], Awaitable[None]]


def alive_key(instance: str) -> str:
    return f"ca:instance:{instance}:alive"


def calls_key(instance: str) -> str:
    return f"ca:instance:{instance}:calls"


def default_instance_id() -> str:
    """Host name, process id and a random suffix: unique even when a pod name is reused."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class InstanceLiveness:
    """This instance's heartbeat, the voice calls it holds, and the reaper of dead instances."""

    def __init__(
        self,
        redis: Redis,
        calls: CallStore,
        instance: str,
        *,
        ttl_s: float = 10.0,
        interval_s: float = 3.0,
        on_interrupted: OnInterrupted | None = None,
    ) -> None:
        self._r = redis
        self._calls = calls
        self.instance = instance
        self.ttl_s = ttl_s
        self.interval_s = interval_s
        self.on_interrupted = on_interrupted
        self._task: asyncio.Task[None] | None = None

    async def hold(self, call_id: str) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.sadd(calls_key(self.instance), call_id)
            pipe.hset(INSTANCES_KEY, self.instance, utcnow().isoformat())
            pipe.set(alive_key(self.instance), "1", px=int(self.ttl_s * 1000))
            await pipe.execute()

    async def release(self, call_id: str) -> None:
        await self._r.srem(calls_key(self.instance), call_id)

    async def beat(self) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.hset(INSTANCES_KEY, self.instance, utcnow().isoformat())
            pipe.set(alive_key(self.instance), "1", px=int(self.ttl_s * 1000))
            await pipe.execute()

    async def reap(self) -> list[str]:
        """Close the calls of every dead instance; returns the call ids it closed."""
        closed: list[str] = []
        for raw in await self._r.hkeys(INSTANCES_KEY):
            other = raw.decode() if isinstance(raw, bytes) else str(raw)
            if other == self.instance or await self._r.exists(alive_key(other)):
                continue
            # One reaper per dead instance; the lock expires if this one dies too.
            if not await self._r.set(f"ca:instance:{other}:reaping", self.instance, nx=True, ex=60):
                continue
            for member in await self._r.smembers(calls_key(other)):
                call_id = member.decode() if isinstance(member, bytes) else str(member)
                record = await self._calls.get(call_id)
                if record is None or record.ended:
                    continue
                record.ended_at = utcnow()
                record.end_reason = "interrupted"
                record.stats["interrupted"] = {"instance": other, "reaped_by": self.instance}
                await self._calls.save(record)
                metrics.CALLS.labels(transport=record.channel, outcome="interrupted").inc()
                closed.append(call_id)
                if self.on_interrupted is not None:
                    try:
                        await self.on_interrupted(record)
                    except Exception:
                        log.exception("interrupted-call notification failed", extra={"call_id": call_id})
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.delete(calls_key(other))
                pipe.hdel(INSTANCES_KEY, other)
                await pipe.execute()
            log.warning("reaped a dead instance", extra={"instance": other, "calls": len(closed)})
        return closed

    async def _loop(self) -> None:
        while True:
            try:
                await self.beat()
                await self.reap()
            except Exception as exc:  # Redis blips: the next round tries again
                log.warning("liveness round failed", extra={"error": type(exc).__name__})
            await asyncio.sleep(self.interval_s)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="instance-liveness")

    async def stop(self) -> None:
        """Stop beating and leave the registry (a clean exit is not a death)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(Exception):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.delete(alive_key(self.instance), calls_key(self.instance))
                pipe.hdel(INSTANCES_KEY, self.instance)
                await pipe.execute()
