"""Call records: transcript, decisions, owner record, latencies, safety interventions.

Stored in Redis at ``ca:call:{id}`` (JSON, with the configured retention as TTL) and
indexed per owner in the sorted set ``ca:owner:{oid}:calls`` (score = start time);
``ca:callrev:{id}`` holds the stored revision (a save never replaces a newer one).
The coordinator's state rides along (``state``) so a text call can continue on any
worker; it is not part of the API view.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockError
from redis.exceptions import TimeoutError as RedisTimeoutError

from presets.models import utcnow

from . import metrics
from .spool import RecordSpool, SpooledSave

log = logging.getLogger(__name__)

Channel = Literal["text", "twilio", "telnyx", "plivo", "webrtc", "sip"]
PROVEN_AFTER_TURNS = 2
# Owners that answer anonymous text calls to lines nobody registered (pipeline.text_calls):
# no key, no lines. Their calls never prove real (kept for the unproven retention only)
# and stay out of the ops dashboard's index: nobody can read them.
UNLISTED_OWNER_PREFIX = "own_unlisted_"


def is_unlisted_owner(owner_id: str) -> bool:
    return owner_id.startswith(UNLISTED_OWNER_PREFIX)


class TranscriptEntry(BaseModel):
    role: Literal["caller", "assistant", "owner"]  # owner: words the owner had spoken (take-over)
    text: str | None  # None: the caller said nothing (silence turn)
    t: float  # seconds since the call started
    turn: int | None = None


class Intervention(BaseModel):
    """The safety guard replaced a sentence. The original is kept only redacted."""

    turn: int
    constraint: str
    rule: str
    audit: str  # redacted original sentence


class TurnRecord(BaseModel):
    index: int
    caller_text: str | None
    act: str
    caller_act: str
    scene: str | None
    relation: str
    preset_conveyed: str | None
    end_call: bool
    reply: str
    realizer: str
    input_flags: list[str] = Field(default_factory=list)
    timings: dict[str, float | None] = Field(default_factory=dict)
    interventions: list[Intervention] = Field(default_factory=list)
    # A reply the caller cut off (barge-in): what they heard, and where it was cut
    # ({"sentences": played whole, "chars": of the next one}); None when heard whole.
    spoken: str | None = None
    cut: dict[str, int] | None = None


class CallRecord(BaseModel):
    call_id: str
    owner_id: str
    channel: Channel = "text"
    line: str | None = None
    lang: str
    scene_hint: str | None = None
    started_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    end_reason: str | None = None
    greeting: str = ""
    scene: str | None = None
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    turns: list[TurnRecord] = Field(default_factory=list)
    owner_record: dict[str, Any] = Field(default_factory=dict)
    interventions: list[Intervention] = Field(default_factory=list)
    stats: dict[str, Any] = Field(default_factory=dict)  # e.g. dropped frames (voice)
    recording: str | None = None  # WAV path when recording is on
    instance: str | None = None  # the instance holding a live voice call (text calls: none)
    anonymous: bool = False  # opened without the owner's key (a text call by line)
    revision: int = 0  # bumped by every save; a stored record is never replaced by an older one
    caller_number: str | None = None  # from the transport (Twilio From, SIP From, ...)
    screening: dict[str, Any] | None = None  # what screening decided and why (pipeline.screening)
    summary: dict[str, Any] | None = None  # on ended calls, in the owner's language (pipeline.summary)
    state: dict[str, Any] | None = Field(default=None, exclude=True)

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    @property
    def proven(self) -> bool:
        """An anonymous call proves real once the caller has said something in
        :data:`PROVEN_AFTER_TURNS` turns; until then it is kept only briefly."""
        if is_unlisted_owner(self.owner_id):
            return False  # nobody's call: however long, it is kept briefly
        return not self.anonymous or sum(1 for t in self.turns if t.caller_text) >= PROVEN_AFTER_TURNS

    def listing(self) -> dict[str, Any]:
        """The call in a list: no transcript."""
        return {
            "call_id": self.call_id,
            "channel": self.channel,
            "line": self.line,
            "lang": self.lang,
            "scene": self.scene,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "end_reason": self.end_reason,
            "turns": len(self.turns),
            "caller": self.owner_record.get("caller"),
            "caller_number": self.caller_number,
            "urgent": self.owner_record.get("urgency") == "urgent",
            "spam": bool((self.summary or {}).get("spam_label")),
            "screening": (self.screening or {}).get("decision"),
            "has_message": bool(
                self.owner_record.get("messages")
                or self.owner_record.get("exceptions")
                or self.owner_record.get("requests")
            ),
        }


RECENT_CALLS_KEY = "ca:calls:recent"  # every owner's calls, for the ops dashboard


def call_key(call_id: str) -> str:
    return f"ca:call:{call_id}"


def revision_key(call_id: str) -> str:
    return f"ca:callrev:{call_id}"  # not under ca:call:* (tools scan that for records)


def owner_calls_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:calls"


# Write a record only if it is newer than the stored one: a record never goes backwards,
# whatever order retried and fresh saves reach Redis in.
_SAVE_IF_NEWER = """
local rev = tonumber(redis.call('GET', KEYS[2]) or '-1')
if rev >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[3], 0, ARGV[6])
redis.call('EXPIRE', KEYS[3], ARGV[7])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[4], 0, ARGV[6])
redis.call('EXPIRE', KEYS[4], ARGV[7])
return 1
"""


@dataclass(frozen=True)
class RetryOptions:
    """How long a record that could not be saved is retried (the newest version of each
    record is kept; older ones are superseded, so retries stay in order)."""

    first_delay_s: float = 0.2
    max_delay_s: float = 5.0
    give_up_after_s: float = 900.0
    max_pending: int = 10_000


@dataclass
class _Pending:
    revision: int
    args: list[Any]
    since: float


TURN_LOCK_S = 30.0  # a turn never holds its call longer (an instance dying mid-turn)
TURN_WAIT_S = 5.0  # a second writer of the same call waits this long for the first


class CallBusy(Exception):
    """Another request of the same call holds its lock (retry shortly)."""

    def __init__(self, call_id: str) -> None:
        super().__init__(f"another request of call {call_id} is in progress")
        self.call_id = call_id


class CallStore:
    """Call records in Redis. :meth:`save` never raises for a Redis outage: the record is
    queued and retried (bounded) until Redis is back; :meth:`close` makes a last attempt."""

    def __init__(
        self,
        redis: Redis,
        retention_s: int,
        *,
        unproven_retention_s: int | None = None,
        retry: RetryOptions | None = None,
        spool: RecordSpool | None = None,
    ) -> None:
        self._r = redis
        self.spool = spool  # queued saves also on disk (pipeline/spool.py)
        self.retention_s = retention_s
        self.unproven_retention_s = min(retention_s, unproven_retention_s or retention_s)
        self.retry = retry or RetryOptions()
        self._script = redis.register_script(_SAVE_IF_NEWER)
        self._pending: dict[str, _Pending] = {}
        self._retrier: asyncio.Task[None] | None = None
        self.dropped = 0  # records given up on (counted in the metrics too)

    def _args(self, record: CallRecord) -> list[Any]:
        payload = json.dumps(
            {**record.model_dump(mode="json"), "state": record.state},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        ttl = self.retention_s if record.proven else self.unproven_retention_s
        keys = [call_key(record.call_id), revision_key(record.call_id), owner_calls_key(record.owner_id)]
        started = record.started_at.timestamp()
        index_s = self.retention_s
        recent = RECENT_CALLS_KEY
        if is_unlisted_owner(record.owner_id):
            # The same one script call (an unlisted line must not answer slower or faster),
            # but its index lives as briefly as its records and the ops index never sees it.
            index_s, recent = self.unproven_retention_s, keys[2]
        horizon = time.time() - index_s
        return [
            [*keys, recent],
            [payload, record.revision, ttl, started, record.call_id, horizon, index_s],
        ]

    async def save(self, record: CallRecord) -> bool:
        """Save ``record`` (a new revision). False if Redis is unreachable: it is retried."""
        record.revision += 1
        keys, args = self._args(record)
        try:
            await self._script(keys=keys, args=args)
        except (RedisConnectionError, RedisTimeoutError):
            self._queue(record.call_id, record.revision, [keys, args])
            return False
        pending = self._pending.get(record.call_id)
        if pending is not None and pending.revision <= record.revision:
            del self._pending[record.call_id]
            self._spool_done()
        return True

    @property
    def pending(self) -> int:
        return len(self._pending)

    def _queue(self, call_id: str, revision: int, args: list[Any]) -> None:
        old = self._pending.pop(call_id, None)
        if old is not None and old.revision > revision:
            self._pending[call_id] = old
            return
        self._pending[call_id] = _Pending(revision, args, old.since if old else time.monotonic())
        if self.spool is not None:
            self.spool.append(SpooledSave(call_id, revision, args), compact=self._queued)
        while len(self._pending) > self.retry.max_pending:
            self._give_up(next(iter(self._pending)))
        if self._retrier is None or self._retrier.done():
            self._retrier = asyncio.get_running_loop().create_task(self._retry_loop())

    def _give_up(self, call_id: str) -> None:
        self._pending.pop(call_id, None)
        self.dropped += 1
        metrics.ERRORS.labels(component="call_store_dropped").inc()
        log.error("gave up saving a call record", extra={"call_id": call_id})

    async def _flush_once(self) -> bool:
        """One pass over the queue, oldest first; False if Redis is still unreachable."""
        for call_id, item in list(self._pending.items()):
            if time.monotonic() - item.since > self.retry.give_up_after_s:
                self._give_up(call_id)
                continue
            keys, args = item.args
            try:
                await self._script(keys=keys, args=args)
            except (RedisConnectionError, RedisTimeoutError):
                return False
            if self._pending.get(call_id) is item:
                del self._pending[call_id]
        self._spool_done()
        return True

    def _queued(self) -> list[SpooledSave]:
        return [SpooledSave(c, p.revision, p.args) for c, p in self._pending.items()]

    def _spool_done(self) -> None:
        if self.spool is not None and not self._pending:
            self.spool.clear()

    async def recover_spool(self) -> int:
        """Queue again the saves that processes gone before us left in the spool (in the
        order written; the newest revision of each record wins) and retry them."""
        if self.spool is None:
            return 0
        entries, files = self.spool.recover()
        for e in entries:
            self._queue(e.call_id, e.revision, e.args)
        self.spool.forget(files)  # spooled again here (fsync'd) first
        if entries:
            log.warning("replaying call records left in the spool", extra={"saves": len(entries)})
        return len(entries)

    async def _retry_loop(self) -> None:
        delay = self.retry.first_delay_s
        while self._pending:
            await asyncio.sleep(delay)
            if not await self._flush_once():
                delay = min(self.retry.max_delay_s, delay * 2)
        log.info("call records saved after a storage outage")

    async def close(self) -> None:
        """A last attempt at what is still queued, then stop retrying."""
        if self._pending:
            with contextlib.suppress(Exception):
                await self._flush_once()
        if self._retrier is not None:
            self._retrier.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retrier
        if self.spool is not None:
            if self._pending:  # durable: the next start replays them
                log.warning("call records left in the spool for the next start", extra={"saves": len(self._pending)})
            self.spool.close()
            self._pending.clear()
            return
        for call_id in list(self._pending):
            self._give_up(call_id)

    @asynccontextmanager
    async def locked(self, call_id: str) -> AsyncIterator[None]:
        """Hold the call's lock in Redis: text calls are resumed from their record by any
        instance for each request (a turn, the owner's words), so two requests of one call
        on two instances never interleave. Raises :class:`CallBusy` after ``TURN_WAIT_S``."""
        lock = self._r.lock(f"ca:call:{call_id}:lock", timeout=TURN_LOCK_S, blocking_timeout=TURN_WAIT_S)
        if not await lock.acquire():
            raise CallBusy(call_id)
        try:
            yield
        finally:
            with contextlib.suppress(LockError):
                await lock.release()

    async def get(self, call_id: str) -> CallRecord | None:
        raw = await self._r.get(call_key(call_id))
        return None if raw is None else CallRecord.model_validate_json(raw)

    async def list(self, owner_id: str, *, limit: int = 50, before: float | None = None) -> list[CallRecord]:
        hi: float | str = "+inf" if before is None else f"({before}"
        ids = await self._r.zrevrangebyscore(owner_calls_key(owner_id), hi, "-inf", start=0, num=limit)
        if not ids:
            return []
        raws = await self._r.mget([call_key(str(i)) for i in ids])
        return [CallRecord.model_validate_json(r) for r in raws if r is not None]
