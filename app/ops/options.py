"""The ops surface's tunables, one frozen object (tests pass their own)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class OpsOptions:
    """Set ``app.state.ops_options`` before start-up to change them."""

    sample_interval_s: float = 5.0  # how often the dashboard's series is sampled
    window_s: float = 60.0  # percentiles and increases are over this trailing window
    capacity: int = 720  # points kept (an hour at 5 s)
    redis_probe_timeout_s: float = 0.25  # PING deadline for callassist_redis_up
    session_ttl_s: int = 12 * 3600  # lifetime of the dashboard's login cookie
    recent_calls_limit: int = 50
