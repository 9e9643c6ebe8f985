"""Errors raised by the stores.

::

    StoreError
     ├── NotFound             the id does not exist for this owner
     ├── Conflict             the resource belongs to someone else (a line)
     ├── PreconditionFailed   If-Match version does not match the pool's
     ├── LimitExceeded        a count limit (e.g. 100 emergent presets) is reached
 ├── Busy                 concurrent writers kept winning; retryable
     └── NotReplicated        written, but not acknowledged by enough replicas; retryable

Redis being unreachable is not wrapped: ``redis.exceptions.ConnectionError`` and
``TimeoutError`` propagate and the API turns them into 503.
"""

from __future__ import annotations


class StoreError(Exception):
    code = "store_error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFound(StoreError):
    code = "not_found"


class Conflict(StoreError):
    code = "conflict"


class PreconditionFailed(StoreError):
    code = "precondition_failed"

    def __init__(self, message: str, *, current_version: int) -> None:
        super().__init__(message)
        self.current_version = current_version


class LimitExceeded(StoreError):
    code = "limit_exceeded"


class Busy(StoreError):
    code = "busy"
    retryable = True


class NotReplicated(StoreError):
    """The write reached the master but not ``wait_replicas`` replicas in time (or the
    master refused it for lack of replicas): it is not acknowledged, and may be lost in
    a failover. The client retries (the pool's version tells whether it landed)."""

    code = "not_replicated"
    retryable = True
