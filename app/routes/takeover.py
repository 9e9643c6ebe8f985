"""Take-over of a live call: ``POST /v1/calls/{id}/say`` and ``POST /v1/calls/{id}/end``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from pipeline.takeover import MAX_OWNER_TEXT
from pipeline.text_calls import TextCallError
from presets.models import CleanText

from ..deps import OwnerId, ResourcesDep
from ..errors import ApiError

router = APIRouter(prefix="/v1/calls", tags=["take-over"])


class SayBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: CleanText = Field(max_length=MAX_OWNER_TEXT)


class EndBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: CleanText | None = Field(default=None, max_length=MAX_OWNER_TEXT)


_STATUS = {"not_found": 404, "ended": 409, "not_live": 409, "bad_sdp": 400}  # others: 409


def _error(call_id: str, exc: TextCallError) -> ApiError:
    code = "call_ended" if exc.code == "ended" else exc.code
    return ApiError(_STATUS.get(exc.code, 409), code, str(exc))


@router.post("/{call_id}/say")
async def say(call_id: str, body: SayBody, owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    """The assistant speaks the owner's words next (recorded with role ``owner``)."""
    assert res.live is not None
    try:
        channel = await res.live.say(owner, call_id, body.text)
    except TextCallError as exc:
        raise _error(call_id, exc) from exc
    return {"call_id": call_id, "channel": channel, "text": body.text, "queued": True}


class JoinBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    sdp: str = Field(min_length=10, max_length=20_000)
    type: str = Field(max_length=10)


@router.post("/{call_id}/join")
async def join(call_id: str, body: JoinBody, owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    """The owner's own voice (a WebRTC offer) into a live voice call; the assistant goes
    quiet and keeps transcribing both sides. -> ``{"sdp", "type": "answer", "pc_id"}``."""
    assert res.live is not None
    try:
        return await res.live.join(owner, call_id, sdp=body.sdp, sdp_type=body.type)
    except TextCallError as exc:
        raise _error(call_id, exc) from exc


@router.post("/{call_id}/leave")
async def leave(call_id: str, owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    """The owner hands the call back to the assistant."""
    assert res.live is not None
    try:
        await res.live.leave(owner, call_id)
    except TextCallError as exc:
        raise _error(call_id, exc) from exc
    return {"call_id": call_id, "joined": False}


@router.post("/{call_id}/end")
async def end(call_id: str, owner: OwnerId, res: ResourcesDep, body: EndBody | None = None) -> dict[str, Any]:
    """Close politely (with the owner's words if given), then hang up."""
    assert res.live is not None
    try:
        channel = await res.live.end(owner, call_id, body.text if body else None)
    except TextCallError as exc:
        raise _error(call_id, exc) from exc
    return {"call_id": call_id, "channel": channel, "ending": True}
