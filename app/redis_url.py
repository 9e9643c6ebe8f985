"""Redis connections from a URL: plain ``redis://`` / ``rediss://`` / ``unix://``, or Redis
Sentinel as ``redis+sentinel://[:password@]host:port[,host:port...]/<master>[/<db>]``
(also ``rediss+sentinel://`` for TLS to the data nodes).

With Sentinel the client asks the sentinels for the current master on every new
connection, and a connection that meets a demoted master (``READONLY``) is dropped, so
after a failover writes go to the new master as soon as the sentinels have promoted it.
Redis Cluster is not supported: several keys are written together in one MULTI
(a call record, its owner index and the recent-calls index) and the preset pool's
WATCH/MULTI spans keys that do not share a hash slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from redis.asyncio import Redis
from redis.asyncio.sentinel import Sentinel

SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")


@dataclass(frozen=True, slots=True)
class SentinelURL:
    hosts: tuple[tuple[str, int], ...]
    master: str
    db: int = 0
    password: str | None = None
    username: str | None = None
    ssl: bool = False


def parse_sentinel_url(url: str) -> SentinelURL:
    """Parse a ``redis+sentinel://`` URL; ValueError naming what is wrong."""
    parts = urlsplit(url)
    if parts.scheme not in SENTINEL_SCHEMES:
        raise ValueError(f"not a sentinel URL: scheme {parts.scheme!r}")
    auth, _, hostlist = parts.netloc.rpartition("@")
    user, _, password = auth.partition(":") if auth else ("", "", "")
    hosts: list[tuple[str, int]] = []
    for item in hostlist.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("["):  # [::1]:26379
            host, _, port = item[1:].partition("]:")
        else:
            host, _, port = item.rpartition(":") if ":" in item else (item, "", "26379")
        try:
            hosts.append((host, int(port or 26379)))
        except ValueError as exc:
            raise ValueError(f"sentinel address {item!r}: bad port") from exc
    if not hosts:
        raise ValueError("a sentinel URL needs at least one host:port")
    path = [p for p in parts.path.split("/") if p]
    if not path:
        raise ValueError("a sentinel URL needs the master's name: redis+sentinel://host:port/<master>[/<db>]")
    try:
        db = int(path[1]) if len(path) > 1 else 0
    except ValueError as exc:
        raise ValueError(f"sentinel URL database {path[1]!r} is not a number") from exc
    return SentinelURL(
        hosts=tuple(hosts),
        master=unquote(path[0]),
        db=db,
        password=unquote(password) if password else None,
        username=unquote(user) if user else None,
        ssl=parts.scheme.startswith("rediss"),
    )


def connect(url: str, **options: Any) -> Redis:
    """A client for ``url``; ``options`` are the client's (timeouts, retry, pool size)."""
    if urlsplit(url).scheme not in SENTINEL_SCHEMES:
        return Redis.from_url(url, **options)
    s = parse_sentinel_url(url)
    timeouts = {k: options[k] for k in ("socket_timeout", "socket_connect_timeout") if k in options}
    sentinel = Sentinel(
        list(s.hosts),
        sentinel_kwargs={**timeouts, "decode_responses": True},
        **timeouts,
    )
    node = {k: v for k, v in options.items() if k not in ("socket_timeout", "socket_connect_timeout")}
    return sentinel.master_for(
        s.master,
        redis_class=Redis,
        db=s.db,
        password=s.password,
        username=s.username,
        ssl=s.ssl,
        **timeouts,
        **node,
    )
