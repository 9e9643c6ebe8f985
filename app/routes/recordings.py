"""``GET /v1/calls/{id}/recording``: the call's WAV when recording is on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from ..deps import OwnerId, ResourcesDep
from ..errors import ApiError

router = APIRouter(prefix="/v1/calls", tags=["calls"])


@router.get("/{call_id}/recording", response_class=FileResponse)
async def recording(call_id: str, owner: OwnerId, res: ResourcesDep) -> FileResponse:
    record = await res.calls.get(call_id)
    if record is None or record.owner_id != owner:
        raise ApiError(404, "not_found", f"no call {call_id}")
    path = await asyncio.to_thread(_recording_path, res.settings.data_dir, record.recording)
    if path is None:
        raise ApiError(404, "not_found", f"call {call_id} has no recording")
    return FileResponse(path, media_type="audio/wav", headers={"Cache-Control": "no-store"})


def _recording_path(data_dir: Path, recording: str | None) -> Path | None:
    """The recording's file, if it exists inside the recordings folder."""
    if not recording:
        return None
    folder = (data_dir / "recordings").resolve()
    path = Path(recording).resolve()
    return path if folder in path.parents and path.is_file() else None
