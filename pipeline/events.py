"""Owner events: what happens on an owner's calls, durable in one Redis Stream per owner.

Stream ``ca:owner:{oid}:events``; each entry's Redis id (``<ms>-<seq>``) is the event id,
so ``Last-Event-ID`` resumes exactly where a reader stopped. The stream is trimmed on
every write to ``max_count`` entries and to ``max_age_s`` seconds (approximate trim).

Types: ``call.started``, ``turn.caller``, ``turn.assistant``, ``turn.owner``,
``call.ended``, ``message.left``, ``call.urgent``. Every entry holds one field, ``e``:
the event as JSON ``{"type", "call_id", "t", "data"}``.

:class:`EventLog` is the only writer and reader of these streams. Sinks (the webhook
queue) are called after each write; a sink failing never fails the call.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from redis.asyncio import Redis

from . import metrics

log = logging.getLogger(__name__)

EventType = Literal[
    "call.started", "turn.caller", "turn.assistant", "turn.owner", "call.ended", "message.left", "call.urgent"
]
EVENT_TYPES: tuple[str, ...] = (
    "call.started",
    "turn.caller",
    "turn.assistant",
    "turn.owner",
    "call.ended",
    "message.left",
    "call.urgent",
)
_ID = re.compile(r"^\d{1,20}-\d{1,20}$")


def events_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:events"


def valid_event_id(value: str) -> bool:
    return bool(_ID.match(value))


@dataclass(frozen=True, slots=True)
class OwnerEvent:
    id: str
    owner_id: str
    type: str
    call_id: str | None
    t: float  # Unix time of the event
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "call_id": self.call_id, "t": self.t, "data": self.data}


Sink = Callable[[OwnerEvent], Awaitable[None]]


class EventLog:
    """Append and read owners' event streams."""

    def __init__(self, redis: Redis, *, max_count: int = 10_000, max_age_s: int = 7 * 24 * 3600) -> None:
        self._r = redis
        self.max_count = max_count
        self.max_age_s = max_age_s
        self.sinks: list[Sink] = []

    async def emit(
        self, owner_id: str, type_: EventType, *, call_id: str | None = None, data: dict[str, Any] | None = None
    ) -> OwnerEvent:
        now = time.time()
        body = {"type": type_, "call_id": call_id, "t": round(now, 3), "data": data or {}}
        payload = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
        key = events_key(owner_id)
        min_id = f"{int((now - self.max_age_s) * 1000)}-0"
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.xadd(key, {"e": payload}, maxlen=self.max_count, approximate=True)
            pipe.xtrim(key, minid=min_id, approximate=True)
            pipe.expire(key, self.max_age_s)
            event_id, *_ = await pipe.execute()
        event = OwnerEvent(str(event_id), owner_id, type_, call_id, body["t"], body["data"])  # type: ignore[arg-type]
        metrics.OWNER_EVENTS.labels(kind=type_).inc()
        for sink in self.sinks:
            try:
                await sink(event)
            except Exception:
                metrics.ERRORS.labels(component="event_sink").inc()
                log.exception("event sink failed", extra={"event_type": type_})
        return event

    async def latest_id(self, owner_id: str) -> str:
        """The id of the newest event ("0-0" when there is none)."""
        rows = await self._r.xrevrange(events_key(owner_id), count=1)
        return str(rows[0][0]) if rows else "0-0"

    async def read(
        self, owner_id: str, after: str, *, count: int = 100, block_ms: int | None = None
    ) -> list[OwnerEvent]:
        """Events after ``after`` (oldest first); with ``block_ms``, wait that long for one."""
        key = events_key(owner_id)
        reply: Any = await self._r.xread({key: after}, count=count, block=block_ms)
        out: list[OwnerEvent] = []
        for _stream, rows in reply or []:
            for event_id, fields in rows:
                out.append(_parse(owner_id, str(event_id), fields))
        return out

    async def history(self, owner_id: str, *, call_id: str | None = None, count: int = 200) -> list[OwnerEvent]:
        """The newest ``count`` events (oldest first), optionally of one call."""
        rows: Any = await self._r.xrevrange(events_key(owner_id), count=count)
        events = [_parse(owner_id, str(i), f) for i, f in reversed(rows)]
        return [e for e in events if call_id is None or e.call_id == call_id]


def _parse(owner_id: str, event_id: str, fields: Any) -> OwnerEvent:
    try:
        body = json.loads(fields.get("e") or "{}")
    except ValueError:
        body = {}
    return OwnerEvent(
        event_id, owner_id, str(body.get("type", "unknown")), body.get("call_id"), float(body.get("t", 0.0)),
        body.get("data") or {},
    )  # fmt: skip
