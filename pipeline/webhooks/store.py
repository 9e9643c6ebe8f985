"""Webhook registrations and their durable delivery queue, in Redis.

Keys:

- ``ca:owner:{oid}:webhooks`` hash: webhook id -> registration JSON (with its secret);
- ``ca:whd:{did}``: one delivery (the raw body, every attempt, its state);
- ``ca:wh:{wid}:deliveries`` sorted set: the webhook's newest deliveries (by creation);
- ``ca:wh:due`` sorted set: pending delivery id -> when its next attempt is due;
- ``ca:wh:{wid}:dead`` sorted set: the dead-letter list (by when they gave up).

A worker *claims* due deliveries atomically by pushing their due time a lease ahead
(Lua), so several instances share the queue and a worker that dies mid-attempt only
delays a delivery by the lease; nothing is lost across a restart.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field
from redis.asyncio import Redis

DeliveryState = Literal["pending", "delivered", "dead"]

DUE_KEY = "ca:wh:due"
KEEP_DELIVERIES = 200  # per webhook, newest
DONE_TTL_S = 7 * 24 * 3600
MAX_WEBHOOKS = 20  # per owner

_CLAIM = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do redis.call('ZADD', KEYS[1], ARGV[2], id) end
return ids
"""


def webhooks_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:webhooks"


def delivery_key(delivery_id: str) -> str:
    return f"ca:whd:{delivery_id}"


def deliveries_key(webhook_id: str) -> str:
    return f"ca:wh:{webhook_id}:deliveries"


def dead_key(webhook_id: str) -> str:
    return f"ca:wh:{webhook_id}:dead"


class Webhook(BaseModel):
    id: str
    url: str
    events: list[str]
    secret: str = Field(repr=False)
    created_at: float

    def wants(self, event_type: str) -> bool:
        return "*" in self.events or event_type in self.events

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "url": self.url, "events": self.events, "created_at": self.created_at}


class Attempt(BaseModel):
    t: float
    status: int | None = None  # HTTP status; None: no response
    error: str | None = None
    ms: float | None = None


class Delivery(BaseModel):
    id: str
    webhook_id: str
    owner_id: str
    event_id: str
    event_type: str
    body: str  # the exact bytes signed and sent (UTF-8 JSON)
    created_at: float
    state: DeliveryState = "pending"
    next_at: float | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    replays: int = 0

    def public(self) -> dict[str, Any]:
        data = self.model_dump(exclude={"owner_id", "body"})
        data["body"] = json.loads(self.body)
        return data


class WebhookStore:
    def __init__(self, redis: Redis) -> None:
        self._r = redis
        self._claim = redis.register_script(_CLAIM)

    # ------------------------------------------------------ registrations ----

    async def create(self, owner_id: str, *, url: str, events: list[str]) -> Webhook:
        hook = Webhook(
            id="wh_" + uuid.uuid4().hex[:16],
            url=url,
            events=sorted(set(events)),
            secret="whsec_" + secrets.token_urlsafe(24),
            created_at=round(time.time(), 3),
        )
        await self._r.hset(webhooks_key(owner_id), hook.id, hook.model_dump_json())
        return hook

    async def count(self, owner_id: str) -> int:
        return int(await self._r.hlen(webhooks_key(owner_id)))

    async def for_owner(self, owner_id: str) -> list[Webhook]:
        raw = await self._r.hgetall(webhooks_key(owner_id))
        hooks = [Webhook.model_validate_json(v) for v in raw.values()]
        return sorted(hooks, key=lambda h: h.created_at)

    async def get(self, owner_id: str, webhook_id: str) -> Webhook | None:
        raw = await self._r.hget(webhooks_key(owner_id), webhook_id)
        return None if raw is None else Webhook.model_validate_json(raw)

    async def delete(self, owner_id: str, webhook_id: str) -> bool:
        ids = await self._r.zrange(deliveries_key(webhook_id), 0, -1)
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.hdel(webhooks_key(owner_id), webhook_id)
            if ids:
                pipe.zrem(DUE_KEY, *ids)
                pipe.delete(*[delivery_key(str(i)) for i in ids])
            pipe.delete(deliveries_key(webhook_id), dead_key(webhook_id))
            removed, *_ = await pipe.execute()
        return bool(removed)

    # --------------------------------------------------------- deliveries ----

    async def enqueue(self, hook: Webhook, owner_id: str, *, event_id: str, event_type: str, body: str) -> Delivery:
        now = time.time()
        d = Delivery(
            id="whd_" + uuid.uuid4().hex[:20], webhook_id=hook.id, owner_id=owner_id, event_id=event_id,
            event_type=event_type, body=body, created_at=round(now, 3), next_at=round(now, 3),
        )  # fmt: skip
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.set(delivery_key(d.id), d.model_dump_json(), ex=DONE_TTL_S)
            pipe.zadd(deliveries_key(hook.id), {d.id: now})
            pipe.zadd(DUE_KEY, {d.id: now})
            await pipe.execute()
        await self._trim(hook.id)
        return d

    async def _trim(self, webhook_id: str) -> None:
        old = await self._r.zrange(deliveries_key(webhook_id), 0, -KEEP_DELIVERIES - 1)
        if old:
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.zrem(deliveries_key(webhook_id), *old)
                pipe.zrem(dead_key(webhook_id), *old)
                pipe.zrem(DUE_KEY, *old)
                pipe.delete(*[delivery_key(str(i)) for i in old])
                await pipe.execute()

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        raw = await self._r.get(delivery_key(delivery_id))
        return None if raw is None else Delivery.model_validate_json(raw)

    async def deliveries(
        self, webhook_id: str, *, state: DeliveryState | None = None, limit: int = 50
    ) -> list[Delivery]:
        key = dead_key(webhook_id) if state == "dead" else deliveries_key(webhook_id)
        ids = await self._r.zrevrange(key, 0, KEEP_DELIVERIES - 1)
        if not ids:
            return []
        raws = await self._r.mget([delivery_key(str(i)) for i in ids])
        out = [Delivery.model_validate_json(r) for r in raws if r is not None]
        return [d for d in out if state is None or d.state == state][:limit]

    async def claim(self, *, lease_s: float, limit: int = 16) -> list[str]:
        """Ids of due deliveries, now leased to the caller for ``lease_s`` seconds."""
        now = time.time()
        ids = await self._claim(keys=[DUE_KEY], args=[now, now + lease_s, limit])
        return [str(i) for i in ids]

    async def next_due(self) -> float | None:
        rows = await self._r.zrange(DUE_KEY, 0, 0, withscores=True)
        return float(rows[0][1]) if rows else None

    async def finish(self, d: Delivery) -> None:
        """Store ``d`` after an attempt: delivered, dead, or pending until ``d.next_at``."""
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.set(delivery_key(d.id), d.model_dump_json(), ex=DONE_TTL_S)
            if d.state == "pending":
                pipe.zadd(DUE_KEY, {d.id: d.next_at or time.time()})
            else:
                pipe.zrem(DUE_KEY, d.id)
            if d.state == "dead":
                pipe.zadd(dead_key(d.webhook_id), {d.id: time.time()})
            else:
                pipe.zrem(dead_key(d.webhook_id), d.id)
            await pipe.execute()

    async def release(self, delivery_ids: list[str]) -> None:
        """Leased deliveries are due again now (their worker is shutting down)."""
        await self._r.zadd(DUE_KEY, dict.fromkeys(delivery_ids, time.time()), xx=True)

    async def drop(self, delivery_id: str) -> None:
        await self._r.zrem(DUE_KEY, delivery_id)

    async def replay(self, d: Delivery) -> Delivery:
        """A dead delivery goes back in the queue with a fresh retry window."""
        now = time.time()
        d.state = "pending"
        d.created_at = round(now, 3)
        d.next_at = round(now, 3)
        d.replays += 1
        await self.finish(d)
        return d
