"""Probes run at scrape time: is Redis reachable? (a bounded PING)."""

from __future__ import annotations

import asyncio
import logging

from prometheus_client import Gauge
from redis.asyncio import Redis

log = logging.getLogger(__name__)

REDIS_UP = Gauge("callassist_redis_up", "1 if Redis answered PING within the probe timeout (checked per scrape)")


async def probe_redis(redis: Redis, *, timeout_s: float) -> bool:
    """PING with a deadline; sets ``callassist_redis_up`` and returns whether it answered."""
    try:
        ok = bool(await asyncio.wait_for(redis.ping(), timeout=timeout_s))
    except Exception as exc:  # any failure means "not reachable now"
        log.debug("redis probe failed", extra={"error": type(exc).__name__})
        ok = False
    REDIS_UP.set(1 if ok else 0)
    return ok
