"""``GET /v1/events``: the owner's live events as Server-Sent Events.

Each event is ``id: <stream id>``, ``event: <type>``, ``data: <JSON>``. A reconnecting
client sends ``Last-Event-ID`` (browsers do it themselves) and gets every event after
it that is still kept; without it the stream starts with the next event
(``?since=0`` replays everything kept). A comment line every 15 s keeps proxies open.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from pipeline.events import EventLog, OwnerEvent, valid_event_id

from ..deps import OwnerId, ResourcesDep
from ..errors import ApiError
from ..resources import EVENTS_BLOCK_S

router = APIRouter(tags=["events"])

KEEPALIVE_S = 15.0


def _frame(event: OwnerEvent) -> bytes:
    data = json.dumps(event.to_json(), ensure_ascii=False, separators=(",", ":"), default=str)
    return f"id: {event.id}\nevent: {event.type}\ndata: {data}\n\n".encode()


@router.get(
    "/v1/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events, never ending"}},
)
async def events(
    request: Request,
    owner: OwnerId,
    res: ResourcesDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    since: Annotated[str | None, Query(description="An event id to start after; 0 = everything kept")] = None,
) -> StreamingResponse:
    """This owner's events only, live; resumes after ``Last-Event-ID``."""
    cursor = last_event_id if last_event_id is not None else since
    field = "Last-Event-ID" if last_event_id is not None else "since"
    if cursor is not None:
        cursor = cursor.strip()
        if cursor == "0":
            cursor = "0-0"
        if not valid_event_id(cursor):
            raise ApiError(
                422, "validation_error", f"{field}: must be an event id such as 1733050000000-0", field=field
            )
    log, reader = res.events, res.events_reader
    assert log is not None and reader is not None
    if cursor is None:
        cursor = await log.latest_id(owner)
    stream_log = EventLog(reader, max_count=log.max_count, max_age_s=log.max_age_s)
    return StreamingResponse(
        _stream(request, stream_log, owner, cursor),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _stream(request: Request, log: EventLog, owner: str, cursor: str) -> AsyncIterator[bytes]:
    yield b"retry: 1000\n\n"
    quiet_since = time.monotonic()
    while not await request.is_disconnected():
        batch = await log.read(owner, cursor, count=100, block_ms=int(EVENTS_BLOCK_S * 1000))
        for event in batch:
            cursor = event.id
            yield _frame(event)
        if batch:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= KEEPALIVE_S:
            quiet_since = time.monotonic()
            yield b": keepalive\n\n"
