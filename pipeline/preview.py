""" "Would this sentence trigger it?": one caller sentence through the real coordinator
(scene, regular slot, emergent trigger matching) on a fresh call, nothing stored."""

from __future__ import annotations

import asyncio
from typing import Any

from coordinator.types import CallState, Lang

from .context import ContextLoader
from .session import CallServices


async def preview(
    services: CallServices, owner_id: str, text: str, *, lang: Lang | None = None, scene: str | None = None
) -> dict[str, Any]:
    """What the assistant would do if a caller opened with ``text``."""
    assert services.loader is not None
    snap = await services.loader.snapshot(owner_id)
    ctx = ContextLoader.build(snap, lang=lang, scene_hint=scene)
    state = CallState(call_id="preview", lang=ctx.lang)
    services.coordinator.greet(state, ctx)
    vec = await asyncio.to_thread(services.embedder.embed_one, text) if ctx.emergent else None
    decision = services.coordinator.decide(state, ctx, text, vec)
    match = decision.match
    return {
        "text": text,
        "lang": decision.lang,
        "scene": decision.scene,
        "act": decision.act.value,
        "relation": decision.relation.value,
        "preset": decision.preset.id if decision.preset else None,
        "preset_kind": decision.preset.kind if decision.preset else None,
        "reply": decision.text,
        "match": None
        if match is None
        else {
            "preset": match.preset.id if match.preset else None,
            "score": round(match.score, 3),
            "runner_up": round(match.runner_up, 3),
            "reason": match.reason,
        },
    }
