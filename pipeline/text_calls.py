"""A text call resumed from its record, for one request.

Text calls keep no state in any process: every request that touches one (a caller turn,
a hang-up, the owner's ``say`` / ``end``) loads the call from Redis and saves it, under
the call's lock in Redis, so any instance serves any request and two requests of one
call (on two instances) never interleave.

Exceptions::

    TextCallError (code: not_found | not_a_text_call | ended | busy)
     └── pipeline.takeover.TakeoverError (the take-over's own codes too)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from presets.models import Lang

from .records import UNLISTED_OWNER_PREFIX, CallBusy, CallRecord, CallStore
from .session import CallServices, CallSession

# Who answers an anonymous text call to a line nobody registered: an owner with no key,
# no lines and no presets, so the call starts, greets and takes turns like any other
# (same status, same body, the same Redis round trips); only nobody reads its record:
# it is kept for UNPROVEN_CALL_RETENTION_S however many turns it has, its index as
# briefly, and it is in no owner's list and not on /ops (pipeline.records).
UNLISTED_OWNERS: dict[Lang, tuple[str, str]] = {
    "en": (UNLISTED_OWNER_PREFIX + "en", "the owner"),
    "zh": (UNLISTED_OWNER_PREFIX + "zh", "机主"),
}


async def unlisted_owner(services: CallServices, lang: Lang | None) -> str:
    """The owner id that answers anonymous calls to unregistered lines in ``lang``."""
    chosen: Lang = lang or "en"
    owner_id, name = UNLISTED_OWNERS[chosen]
    await services.owners.ensure_unlisted_owner(owner_id, name, chosen)
    return owner_id


class TextCallError(Exception):
    """The call cannot be served; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


async def open_record(calls: CallStore, owner_id: str, call_id: str) -> CallRecord:
    """This owner's call record, if the call has not ended (the same ``not_found`` for
    another owner's call and an unknown id)."""
    record = await calls.get(call_id)
    if record is None or record.owner_id != owner_id:
        raise TextCallError("not_found", f"no call {call_id}")
    if record.ended:
        raise TextCallError("ended", f"call {call_id} has ended")
    return record


@asynccontextmanager
async def text_call(services: CallServices, owner_id: str, call_id: str) -> AsyncIterator[CallSession]:
    """The live text call ``call_id`` of ``owner_id``, resumed under its lock."""
    try:
        async with services.calls.locked(call_id):
            record = await open_record(services.calls, owner_id, call_id)
            if record.channel != "text":
                raise TextCallError("not_a_text_call", f"call {call_id} is a {record.channel} call")
            yield await CallSession.resume(services, record)
    except CallBusy as exc:
        raise TextCallError("busy", str(exc)) from exc
