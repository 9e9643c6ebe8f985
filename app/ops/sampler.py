"""The background task that fills the dashboard's time series."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from redis.asyncio import Redis

from .options import OpsOptions
from .probes import probe_redis
from .series import Series, take_snapshot

log = logging.getLogger(__name__)


class Sampler:
    """Samples the metrics every ``options.sample_interval_s`` into a :class:`Series`."""

    def __init__(self, redis: Redis, options: OpsOptions) -> None:
        self.redis = redis
        self.options = options
        self.series = Series(
            interval_s=options.sample_interval_s,
            window_s=options.window_s,
            capacity=options.capacity,
        )
        self.redis_up: bool | None = None
        self._task: asyncio.Task[None] | None = None

    async def sample(self) -> dict[str, Any]:
        self.redis_up = await probe_redis(self.redis, timeout_s=self.options.redis_probe_timeout_s)
        return self.series.add(take_snapshot(redis_up=1.0 if self.redis_up else 0.0))

    def current(self) -> dict[str, Any]:
        """The point for right now (Redis as last probed), not kept in the series."""
        up = None if self.redis_up is None else (1.0 if self.redis_up else 0.0)
        return self.series.current(take_snapshot(redis_up=up))

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="ops-sampler")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        interval = self.options.sample_interval_s
        next_at = time.monotonic()
        while True:
            try:
                await self.sample()
            except Exception:
                log.exception("ops sampler failed; retrying next interval")
            next_at += interval
            # After a stall, skip the missed samples rather than bursting to catch up.
            next_at = max(next_at, time.monotonic())
            await asyncio.sleep(next_at - time.monotonic())
