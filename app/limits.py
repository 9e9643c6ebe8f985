"""Fixed-window request limits kept in Redis (one counter per key and minute), shared
by every worker: per API key, and for anonymous text calls per address, per line and
per call token."""

from __future__ import annotations

import time

from redis.asyncio import Redis

from .errors import ApiError

WINDOW_S = 60


async def count_hit(redis: Redis, key: str) -> int:
    """Count one request against ``key`` in the current minute; the count so far."""
    window = int(time.time() // WINDOW_S)
    rl_key = f"ca:rl:{key}:{window}"
    async with redis.pipeline(transaction=False) as pipe:
        pipe.incr(rl_key)
        pipe.expire(rl_key, WINDOW_S + 1)
        count, _ = await pipe.execute()
    return int(count)


def too_many(limit: int, what: str) -> ApiError:
    retry_after = max(1, WINDOW_S - int(time.time()) % WINDOW_S)
    return ApiError(
        429, "rate_limited", f"more than {limit} {what} a minute", headers={"Retry-After": str(retry_after)}
    )


async def enforce(redis: Redis, key: str, limit: int, what: str) -> None:
    """429 with Retry-After once ``key`` passes ``limit`` requests this minute."""
    if await count_hit(redis, key) > limit:
        raise too_many(limit, what)


async def hits_so_far(redis: Redis, key: str) -> int:
    """This minute's count for ``key`` without counting (e.g. failed logins so far)."""
    value = await redis.get(f"ca:rl:{key}:{int(time.time() // WINDOW_S)}")
    return int(value or 0)
