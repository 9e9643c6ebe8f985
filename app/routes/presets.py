"""The preset pool: regular slots (takeout, delivery, taxi) and emergent presets."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from presets.models import REGULAR_SCENES, EmergentBody, EmergentPreset, PresetPool, RegularBody

from ..deps import IfMatch, OwnerId, ResourcesDep
from ..errors import ApiError

router = APIRouter(prefix="/v1/presets", tags=["presets"])

PresetId = Annotated[str, Path(max_length=64)]


def _etag(response: Response, version: int) -> None:
    response.headers["ETag"] = f'"{version}"'


def _regular_scene(scene: str) -> Any:
    if scene not in REGULAR_SCENES:
        raise ApiError(
            422,
            "validation_error",
            f"scene: regular slots exist only for takeout, delivery and taxi, not {scene!r}; "
            "use an emergent preset for other scenes",
            field="scene",
        )
    return scene


@router.get("")
async def get_pool(owner: OwnerId, res: ResourcesDep, response: Response) -> PresetPool:
    pool = await res.presets.get_pool(owner)
    _etag(response, pool.version)
    return pool


@router.put("/regular/{scene}")
async def put_regular(
    scene: str,
    body: RegularBody,
    owner: OwnerId,
    res: ResourcesDep,
    if_match: IfMatch,
    response: Response,
) -> PresetPool:
    """Set the scene's regular response (the trigger is fixed by the system)."""
    pool = await res.presets.put_regular(owner, _regular_scene(scene), body.response, if_match=if_match)
    _etag(response, pool.version)
    return pool


@router.delete("/regular/{scene}", status_code=204)
async def delete_regular(scene: str, owner: OwnerId, res: ResourcesDep, if_match: IfMatch) -> Response:
    pool = await res.presets.delete_regular(owner, _regular_scene(scene), if_match=if_match)
    response = Response(status_code=204)
    _etag(response, pool.version)
    return response


@router.post("/emergent", status_code=201)
async def add_emergent(
    body: EmergentBody, owner: OwnerId, res: ResourcesDep, if_match: IfMatch, response: Response
) -> dict[str, Any]:
    preset, pool = await res.presets.add_emergent(owner, body, if_match=if_match)
    _etag(response, pool.version)
    response.headers["Location"] = f"/v1/presets/emergent/{preset.id}"
    return {"id": preset.id, "version": pool.version, "preset": preset.model_dump(mode="json")}


@router.get("/emergent/{preset_id}")
async def get_emergent(preset_id: PresetId, owner: OwnerId, res: ResourcesDep, response: Response) -> EmergentPreset:
    pool = await res.presets.get_pool(owner)
    preset = pool.find_emergent(preset_id)
    if preset is None:
        raise ApiError(404, "not_found", f"no emergent preset {preset_id}", field="id")
    _etag(response, pool.version)
    return preset


@router.put("/emergent/{preset_id}")
async def put_emergent(
    preset_id: PresetId,
    body: EmergentBody,
    owner: OwnerId,
    res: ResourcesDep,
    if_match: IfMatch,
    response: Response,
) -> EmergentPreset:
    """Replace an emergent preset's trigger, response, scenes and enabled flag."""
    preset, pool = await res.presets.replace_emergent(owner, preset_id, body, if_match=if_match)
    _etag(response, pool.version)
    return preset


@router.delete("/emergent/{preset_id}", status_code=204)
async def delete_emergent(preset_id: PresetId, owner: OwnerId, res: ResourcesDep, if_match: IfMatch) -> Response:
    pool = await res.presets.delete_emergent(owner, preset_id, if_match=if_match)
    response = Response(status_code=204)
    _etag(response, pool.version)
    return response
