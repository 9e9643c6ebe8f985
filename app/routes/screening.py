"""Quick replies (``GET/PUT /v1/quick-replies``) and screening rules (``GET/PUT /v1/screening``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from presets.screening import QuickReplies, ScreeningRules, ScreeningStore

from ..deps import OwnerId, ResourcesDep
from ..resources import Resources

router = APIRouter(prefix="/v1", tags=["screening"])


def _store(res: Resources) -> ScreeningStore:
    assert res.screening is not None
    return res.screening


@router.get("/quick-replies")
async def get_quick_replies(owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    """The owner's one-click replies; the defaults in the owner's language until set."""
    profile = await res.owners.get_profile(owner)
    replies, default = await _store(res).get_quick_replies(owner, profile.languages[0])
    return {"replies": replies, "default": default}


@router.put("/quick-replies")
async def put_quick_replies(body: QuickReplies, owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    replies = await _store(res).put_quick_replies(owner, body)
    if res.precomputer is not None:  # one click should not wait for synthesis
        res.precomputer.submit(replies)
    return {"replies": replies, "default": False}


@router.get("/screening")
async def get_screening(owner: OwnerId, res: ResourcesDep) -> ScreeningRules:
    return await _store(res).get_rules(owner)


@router.put("/screening")
async def put_screening(body: ScreeningRules, owner: OwnerId, res: ResourcesDep) -> ScreeningRules:
    """Block and allow lists (numbers, ``+1900*`` prefixes, ``sip:user``), known contacts,
    and when to alert: ``always``, ``urgent``, ``known`` or ``stated_reason``."""
    return await _store(res).put_rules(owner, body)
