"""Shared resources of one process: Redis (embedded or external) and the stores."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from presets.owners import OwnerStore
from presets.pool import PresetHook, PresetStore

from .embedded_redis import EmbeddedRedis
from .settings import Settings

log = logging.getLogger(__name__)


def make_redis(url: str, settings: Settings) -> Redis:
    """A client tuned for the call path: short timeouts, one quick retry, no long stalls."""
    return Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=settings.redis_socket_timeout_s,
        socket_connect_timeout=settings.redis_connect_timeout_s,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=15,
        max_connections=256,
    )


@dataclass
class Resources:
    settings: Settings
    redis: Redis
    owners: OwnerStore
    presets: PresetStore
    embedded: EmbeddedRedis | None = None
    extras: dict[str, object] = field(default_factory=dict)

    @classmethod
    def open(cls, settings: Settings, hooks: list[PresetHook] | None = None) -> Resources:
        embedded: EmbeddedRedis | None = None
        url = settings.redis_url
        if not url:
            embedded = EmbeddedRedis(settings.redis_dir)
            url = embedded.start()
        redis = make_redis(url, settings)
        return cls(
            settings=settings,
            redis=redis,
            owners=OwnerStore(redis),
            presets=PresetStore(redis, hooks),
            embedded=embedded,
        )

    async def close(self) -> None:
        await self.redis.aclose()
        if self.embedded is not None:
            self.embedded.stop()
