"""The ops surface: ``/metrics`` for Prometheus and the ``/ops`` live dashboard.

- :mod:`.auth`: the ops token (configured or generated) and the dashboard's session cookie;
- :mod:`.series`: percentiles and counters sampled into an in-process ring buffer;
- :mod:`.sampler`: the background task that samples it;
- :mod:`.probes`: the Redis reachability gauge, updated per scrape;
- :mod:`.recent`: recent calls across owners;
- ``static/``: the dashboard's page, script and styles (hand-written, no CDN).
"""

from .auth import OpsToken, resolve_ops_token
from .options import OpsOptions
from .sampler import Sampler

__all__ = ["OpsOptions", "OpsToken", "Sampler", "resolve_ops_token"]
