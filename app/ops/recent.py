"""Recent calls across all owners, for the ops dashboard.

Calls are indexed per owner (``ca:owner:{oid}:calls``, score = start time). If the
global index ``ca:calls:recent`` exists (same scores) it is read directly; otherwise the
owners in ``ca:owners`` are walked and their newest calls merged, which costs one
sorted-set read per owner (pipelined) and suits deployments of up to some thousands of
owners.
"""

from __future__ import annotations

import heapq
import statistics
from typing import Any

from redis.asyncio import Redis

from pipeline.records import CallRecord, call_key, owner_calls_key

GLOBAL_INDEX = "ca:calls:recent"
_BATCH = 256


async def recent_call_ids(redis: Redis, *, limit: int) -> list[str]:
    if await redis.exists(GLOBAL_INDEX):
        return [str(i) for i in await redis.zrevrange(GLOBAL_INDEX, 0, limit - 1)]
    owners = [str(o) async for o in redis.sscan_iter("ca:owners", count=1000)]
    newest: list[tuple[float, str]] = []
    for start in range(0, len(owners), _BATCH):
        async with redis.pipeline(transaction=False) as pipe:
            for owner in owners[start : start + _BATCH]:
                pipe.zrevrange(owner_calls_key(owner), 0, limit - 1, withscores=True)
            results = await pipe.execute()
        for rows in results:
            newest.extend((float(score), str(call_id)) for call_id, score in rows)
        newest = heapq.nlargest(limit, newest)
    return [call_id for _, call_id in sorted(newest, reverse=True)]


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def ops_summary(record: CallRecord) -> dict[str, Any]:
    """The owner's summary plus what ops looks at: who, interventions, latency."""
    ttfts = [t for turn in record.turns if (t := turn.timings.get("first_token_ms")) is not None]
    decisions = [t for turn in record.turns if (t := turn.timings.get("decision_ms")) is not None]
    return {
        **record.listing(),
        "owner_id": record.owner_id,
        "interventions": len(record.interventions),
        # "template:deadline" etc.; "template:preset" is by design, not a guard fallback.
        "fallbacks": sum(1 for turn in record.turns if turn.realizer.partition(":")[2] not in ("", "preset")),
        "median_ttft_ms": _median(ttfts),
        "median_decision_ms": _median(decisions),
    }


async def recent_calls(redis: Redis, *, limit: int) -> list[dict[str, Any]]:
    ids = await recent_call_ids(redis, limit=limit)
    if not ids:
        return []
    raws = await redis.mget([call_key(i) for i in ids])
    out = []
    for raw in raws:
        if raw is not None:  # expired between the index read and now
            out.append(ops_summary(CallRecord.model_validate_json(raw)))
    return out
