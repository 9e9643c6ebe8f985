"""Take-over across instances: ``say`` / ``end`` / ``join`` / ``leave`` for a voice call
whose audio another instance carries, over Redis pub/sub.

While a voice call runs, its instance keeps ``ca:live:{call_id}`` = its instance id (TTL
refreshed at each registration, removed at the end) and listens on
``ca:takeover:{instance id}``. Another instance that gets ``say``/``end`` for that call
publishes ``{"op", "call_id", "owner_id", "text"}`` there; the owner check is made
again on the receiving side. Delivery is at most once: if no instance is listening the
sender gets ``not_live``.

``join`` needs an answer (the owner's WebRTC offer -> the holding instance's SDP answer):
the request carries ``reply_to``; the holding instance pushes its answer (or
``{"error", "message"}``) to the list ``ca:takeover:reply:{reply_to}`` (60 s TTL) and the
asking instance waits for it with ``BLPOP`` for :data:`REPLY_WAIT_S`. The owner's media
then flows straight to the holding instance (its ICE candidates are in the answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from . import metrics

log = logging.getLogger(__name__)

LIVE_TTL_S = 6 * 3600
REPLY_WAIT_S = 8.0  # under the listener client's socket timeout (EVENTS_BLOCK_S + 5)


def live_key(call_id: str) -> str:
    return f"ca:live:{call_id}"


def channel(instance_id: str) -> str:
    return f"ca:takeover:{instance_id}"


def reply_key(request_id: str) -> str:
    return f"ca:takeover:reply:{request_id}"


Deliver = Callable[[dict[str, Any]], Awaitable[None]]


class TakeoverRelay:
    def __init__(self, redis: Redis, listener: Redis, deliver: Deliver, *, instance_id: str | None = None) -> None:
        self._r = redis
        self._listener = listener  # its own client: a subscription holds a connection
        self._deliver = deliver
        self.instance_id = instance_id or uuid.uuid4().hex[:16]
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    async def announce(self, call_id: str) -> None:
        await self._r.set(live_key(call_id), self.instance_id, ex=LIVE_TTL_S)

    async def forget(self, call_id: str) -> None:
        if await self._r.get(live_key(call_id)) == self.instance_id:
            await self._r.delete(live_key(call_id))

    async def send(self, call_id: str, message: dict[str, Any]) -> bool:
        """Hand ``message`` to the instance carrying ``call_id``; False if none listens."""
        instance = await self._r.get(live_key(call_id))
        if not instance or instance == self.instance_id:
            return False
        receivers = await self._r.publish(channel(str(instance)), json.dumps({**message, "call_id": call_id}))
        return int(receivers) > 0

    async def request(
        self, call_id: str, message: dict[str, Any], *, wait_s: float = REPLY_WAIT_S
    ) -> dict[str, Any] | None:
        """``message`` to the instance carrying ``call_id``, and its answer; None if no
        instance listens or none answers within ``wait_s``."""
        request_id = uuid.uuid4().hex
        if not await self.send(call_id, {**message, "reply_to": request_id}):
            return None
        got = await self._listener.blpop([reply_key(request_id)], timeout=wait_s)
        if got is None:
            return None
        answer = json.loads(got[1])
        return answer if isinstance(answer, dict) else None

    async def reply(self, request_id: str, answer: dict[str, Any]) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.rpush(reply_key(request_id), json.dumps(answer))
            pipe.expire(reply_key(request_id), 60)
            await pipe.execute()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="takeover-relay")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                async with self._listener.pubsub() as pubsub:
                    await pubsub.subscribe(channel(self.instance_id))
                    self.ready.set()
                    while True:
                        msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                        if msg is not None:
                            await self._handle(msg.get("data"))
            except asyncio.CancelledError:
                raise
            except Exception:
                metrics.ERRORS.labels(component="takeover_relay").inc()
                log.warning("take-over relay lost its subscription; resubscribing")
                await asyncio.sleep(1.0)

    async def _handle(self, data: Any) -> None:
        try:
            message = json.loads(data)
        except (TypeError, ValueError):
            return
        if isinstance(message, dict):
            with contextlib.suppress(Exception):
                await self._deliver(message)
