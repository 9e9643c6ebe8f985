"""Call records: transcript, decisions, owner record, latencies, safety interventions.

Stored in Redis at ``ca:call:{id}`` (JSON, with the configured retention as TTL) and
indexed per owner in the sorted set ``ca:owner:{oid}:calls`` (score = start time).
The coordinator's state rides along (``state``) so a text call can continue on any
worker; it is not part of the API view.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from presets.models import utcnow

Channel = Literal["text", "twilio", "telnyx", "plivo", "webrtc", "sip"]
PROVEN_AFTER_TURNS = 2


class TranscriptEntry(BaseModel):
    role: Literal["caller", "assistant"]
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
    anonymous: bool = False  # opened without the owner's key (a text call by line)
    state: dict[str, Any] | None = Field(default=None, exclude=True)

    @property
    def ended(self) -> bool:
        return self.ended_at is not None

    @property
    def proven(self) -> bool:
        """An anonymous call proves real once the caller has said something in
        :data:`PROVEN_AFTER_TURNS` turns; until then it is kept only briefly."""
        return not self.anonymous or sum(1 for t in self.turns if t.caller_text) >= PROVEN_AFTER_TURNS

    def summary(self) -> dict[str, Any]:
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
            "has_message": bool(
                self.owner_record.get("messages")
                or self.owner_record.get("exceptions")
                or self.owner_record.get("requests")
            ),
        }


RECENT_CALLS_KEY = "ca:calls:recent"  # every owner's calls, for the ops dashboard


def call_key(call_id: str) -> str:
    return f"ca:call:{call_id}"


def owner_calls_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:calls"


class CallStore:
    def __init__(self, redis: Redis, retention_s: int, *, unproven_retention_s: int | None = None) -> None:
        self._r = redis
        self.retention_s = retention_s
        self.unproven_retention_s = min(retention_s, unproven_retention_s or retention_s)

    async def save(self, record: CallRecord) -> None:
        payload = json.dumps(
            {**record.model_dump(mode="json"), "state": record.state},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        ttl = self.retention_s if record.proven else self.unproven_retention_s
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.set(call_key(record.call_id), payload, ex=ttl)
            pipe.zadd(owner_calls_key(record.owner_id), {record.call_id: record.started_at.timestamp()})
            pipe.zremrangebyscore(owner_calls_key(record.owner_id), 0, time.time() - self.retention_s)
            pipe.expire(owner_calls_key(record.owner_id), self.retention_s)
            pipe.zadd(RECENT_CALLS_KEY, {record.call_id: record.started_at.timestamp()})
            pipe.zremrangebyscore(RECENT_CALLS_KEY, 0, time.time() - self.retention_s)
            pipe.expire(RECENT_CALLS_KEY, self.retention_s)
            await pipe.execute()

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
