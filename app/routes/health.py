"""Liveness and readiness."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from ..deps import ResourcesDep
from ..errors import REDIS_RETRY_AFTER_S, error_body

router = APIRouter(tags=["ops"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", response_model=None)
async def readyz(res: ResourcesDep) -> dict[str, object] | JSONResponse:
    """Redis is reachable (answers within one second) and the models are loaded."""
    try:
        async with asyncio.timeout(1.0):
            await res.redis.ping()
    except Exception:
        err = error_body("unavailable", "redis is unreachable")
        return JSONResponse(err, 503, headers={"Retry-After": str(REDIS_RETRY_AFTER_S)})
    body: dict[str, object] = {"status": "ready", "redis": "ok", "models_loaded": res.models_loaded}
    if not res.models_loaded:  # the first call would load them inside the event loop
        body["status"] = "starting"
        return JSONResponse(body, 503, headers={"Retry-After": "5"})
    if res.voice is not None:
        slots = res.voice.slots
        body["voice"] = {
            "asr_loaded": res.voice.recognizer.loaded,
            "warm": res.voice_warm,
            "tts_pending": res.precomputer.pending if res.precomputer is not None else 0,
            "calls": slots.in_use,
            "finishing": slots.finishing,  # media over, post-call work running: not a call in progress
            "capacity": slots.limit,
            "admission": slots.state,
        }
    if res.draining or (res.voice is not None and res.voice.slots.full):
        # Not ready for *new* calls (full, or draining after SIGTERM): load balancers and
        # Kubernetes send new work elsewhere; calls in progress carry on here.
        body["status"] = "draining" if res.draining else "full"
        return JSONResponse(body, 503, headers={"Retry-After": "5"})
    return body
