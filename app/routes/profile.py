"""The owner's profile: display name, languages, greeting and private facts."""

from __future__ import annotations

from fastapi import APIRouter

from presets.models import Profile

from ..deps import OwnerId, ResourcesDep

router = APIRouter(prefix="/v1/profile", tags=["profile"])


@router.get("")
async def get_profile(owner: OwnerId, res: ResourcesDep) -> Profile:
    return await res.owners.get_profile(owner)


@router.put("")
async def put_profile(body: Profile, owner: OwnerId, res: ResourcesDep) -> Profile:
    """Replace the profile. ``private_facts`` are what the assistant must never say."""
    return await res.owners.put_profile(owner, body)
