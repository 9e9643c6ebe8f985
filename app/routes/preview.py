"""``POST /v1/presets/preview``: would this caller sentence trigger a preset?"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from pipeline.preview import preview
from presets.models import CleanText, Lang, Scene

from ..deps import OwnerId, ResourcesDep

router = APIRouter(prefix="/v1/presets", tags=["presets"])


class PreviewBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: CleanText = Field(max_length=2000)
    lang: Lang | None = None
    scene: Scene | None = None


@router.post("/preview")
async def preview_sentence(body: PreviewBody, owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    """The real coordinator on one opening sentence: scene, act, the preset it would
    convey (regular or emergent) with the matcher's score and reason, and the reply."""
    return await preview(res.services, owner, body.text, lang=body.lang, scene=body.scene)
