"""Lines: the phone numbers, SIP users and WebRTC links that reach an owner."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Response

from presets.models import Line, LineBody, LineKind, normalize_line

from ..deps import OwnerId, ResourcesDep
from ..errors import ApiError

router = APIRouter(prefix="/v1/lines", tags=["lines"])

LinePath = Annotated[str, Path(max_length=200, description="+14155550100, sip:alice, or a link name")]


def _normalize(raw: str) -> tuple[str, LineKind]:
    try:
        return normalize_line(raw)
    except ValueError as exc:
        raise ApiError(422, "validation_error", f"line: {exc}", field="line") from exc


@router.get("")
async def list_lines(owner: OwnerId, res: ResourcesDep) -> dict[str, list[Line]]:
    return {"lines": await res.owners.list_lines(owner)}


@router.put("/{line}")
async def put_line(
    line: LinePath,
    owner: OwnerId,
    res: ResourcesDep,
    response: Response,
    body: Annotated[LineBody | None, Body()] = None,
) -> Line:
    """Register a line for this owner (409 if another owner has it). Idempotent."""
    value, kind = _normalize(line)
    if body is not None and body.kind is not None and body.kind != kind:
        if not (kind == "webrtc" and body.kind == "sip"):
            raise ApiError(422, "validation_error", f"kind: line {value} is a {kind} line", field="kind")
        kind = body.kind
    record, created = await res.owners.claim_line(owner, value, kind, body.label if body else None)
    response.status_code = 201 if created else 200
    return record


@router.delete("/{line}", status_code=204)
async def delete_line(line: LinePath, owner: OwnerId, res: ResourcesDep) -> Response:
    value, _ = _normalize(line)
    await res.owners.release_line(owner, value)
    return Response(status_code=204)
