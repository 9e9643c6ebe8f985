"""Ops routes: ``/metrics`` for Prometheus, the ``/ops`` dashboard and its JSON API.

See :mod:`app.ops.auth` for the token rules; ``docs/ops.md`` for the panels.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from fastapi.responses import RedirectResponse
from prometheus_client import REGISTRY
from prometheus_client.exposition import choose_encoder

from pipeline.records import is_unlisted_owner

from ..deps import ResourcesDep
from ..errors import ApiError
from ..limits import WINDOW_S, count_hit, hits_so_far
from ..ops import OpsOptions, OpsToken, Sampler, resolve_ops_token
from ..ops.auth import COOKIE_NAME
from ..ops.probes import probe_redis
from ..ops.recent import ops_summary, recent_calls
from ..pages import SECURITY_HEADERS, StaticPages

# CALLM's rule and the voice-to-voice budget; the dashboard draws them, alerts use them.
THRESHOLDS = {"ttft_median_ms": 1000.0, "voice_to_voice_p90_ms": 1500.0}

_ASSETS = {
    "ops.js": "text/javascript; charset=utf-8",
    "login.js": "text/javascript; charset=utf-8",
    "charts.js": "text/javascript; charset=utf-8",
    "ops.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
_SECURITY_HEADERS = SECURITY_HEADERS


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    options: OpsOptions = getattr(app.state, "ops_options", None) or OpsOptions()
    app.state.ops_options = options
    res = app.state.resources
    app.state.ops_token = resolve_ops_token(res.settings)
    sampler = Sampler(res.redis, options)
    app.state.ops_sampler = sampler
    sampler.start()
    try:
        yield
    finally:
        await sampler.aclose()


router = APIRouter(lifespan=_lifespan, tags=["ops"])


_PAGES = StaticPages("app.ops.static", _ASSETS)


def _ops_token(request: Request) -> OpsToken:
    token: OpsToken = request.app.state.ops_token
    return token


def _bearer_ok(request: Request) -> bool:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and _ops_token(request).matches(value)


def _authorized(request: Request) -> bool:
    return _bearer_ok(request) or _ops_token(request).session_valid(request.cookies.get(COOKIE_NAME))


def _unauthorized(what: str) -> ApiError:
    return ApiError(
        401,
        "unauthorized",
        f"{what} needs the ops token: Authorization: Bearer <ops token>",
        headers={"WWW-Authenticate": "Bearer"},
    )


def require_ops(request: Request, response: Response) -> None:
    """Ops token as Bearer, or the dashboard's session cookie."""
    if not _authorized(request):
        raise _unauthorized("/ops/api")
    response.headers.update(_SECURITY_HEADERS)
    response.headers["Cache-Control"] = "no-store"


OpsAuth = Annotated[None, Depends(require_ops)]


WRONG_TOKEN = "Wrong token."
TOO_MANY_WRONG = "Too many wrong tokens from this address; wait a minute."
OPS_LOGIN_FAILURES_PER_MINUTE = 10
TOKEN_IN_QUERY = (
    "Not in the query string: access logs keep it. Use this form, or /ops#token=..., which stays in the browser."
)


def _html(name: str, *, status: int = 200, error: str | None = None) -> Response:
    return _PAGES.html(name, status=status, error=error)


def _logged_in(request: Request) -> Response:
    """Set the session cookie and go to the dashboard."""
    options: OpsOptions = request.app.state.ops_options
    response = RedirectResponse("/ops", status_code=303, headers=_SECURITY_HEADERS)
    https = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(
        COOKIE_NAME,
        _ops_token(request).session_cookie(ttl_s=options.session_ttl_s),
        max_age=options.session_ttl_s,
        path="/ops",
        httponly=True,
        samesite="strict",
        secure=https,
    )
    return response


# --------------------------------------------------------------- metrics ----


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request, res: ResourcesDep) -> Response:
    """Prometheus exposition (text or OpenMetrics, by Accept)."""
    if _ops_token(request).guards_metrics and not _bearer_ok(request):
        raise _unauthorized("/metrics")
    options: OpsOptions = request.app.state.ops_options
    await probe_redis(res.redis, timeout_s=options.redis_probe_timeout_s)
    encoder, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encoder(REGISTRY), media_type=content_type)


# ------------------------------------------------------------- dashboard ----


@router.get("/ops", include_in_schema=False)
async def dashboard(request: Request) -> Response:
    """The dashboard; without a session, the login page. ``/ops#token=<ops token>`` logs in
    from a link: the fragment never reaches the server (nor its access log); the login
    page's script posts it."""
    if "token" in request.query_params:
        return _html("login.html", status=400, error=TOKEN_IN_QUERY)
    if not _authorized(request):
        return RedirectResponse("/ops/login", status_code=303)
    return _html("index.html")


@router.get("/ops/login", include_in_schema=False)
async def login_page(request: Request) -> Response:
    if _authorized(request):
        return RedirectResponse("/ops", status_code=303)
    return _html("login.html")


@router.post("/ops/login", include_in_schema=False)
async def login(request: Request) -> Response:
    redis = request.app.state.resources.redis
    key = f"opsfail:{request.client.host if request.client else 'unknown'}"
    if await hits_so_far(redis, key) >= OPS_LOGIN_FAILURES_PER_MINUTE:
        response = _html("login.html", status=429, error=TOO_MANY_WRONG)
        response.headers["Retry-After"] = str(WINDOW_S)
        return response
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    if _ops_token(request).matches((form.get("token") or [""])[0]):
        return _logged_in(request)
    await count_hit(redis, key)
    return _html("login.html", status=401, error=WRONG_TOKEN)


@router.post("/ops/logout", include_in_schema=False)
async def logout() -> Response:
    response = RedirectResponse("/ops/login", status_code=303, headers=_SECURITY_HEADERS)
    response.delete_cookie(COOKIE_NAME, path="/ops", httponly=True, samesite="strict")
    return response


@router.get("/ops/static/{name}", include_in_schema=False)
async def asset(name: str) -> Response:
    return _PAGES.asset(name)


# -------------------------------------------------------------- JSON API ----


@router.get("/ops/api/summary")
async def summary(
    request: Request,
    _: OpsAuth,
    since: Annotated[float | None, Query(description="Only points after this Unix time", allow_inf_nan=False)] = None,
) -> dict[str, Any]:
    """The current point and the sampled series (percentiles in ms over the window)."""
    sampler: Sampler = request.app.state.ops_sampler
    res = request.app.state.resources
    return {
        "now": time.time(),
        "interval_s": sampler.options.sample_interval_s,
        "window_s": sampler.options.window_s,
        "capacity": sampler.options.capacity,
        "thresholds": THRESHOLDS,
        "realizer": res.settings.realizer,
        "current": sampler.current(),
        "series": sampler.series.since(since),
    }


@router.get("/ops/api/calls")
async def calls(res: ResourcesDep, _: OpsAuth, limit: Annotated[int, Query(ge=1, le=200)] = 50) -> dict[str, Any]:
    """The newest calls of every owner."""
    return {"calls": await recent_calls(res.redis, limit=limit), "now": time.time()}


@router.get("/ops/api/calls/{call_id}")
async def call(call_id: str, res: ResourcesDep, _: OpsAuth) -> dict[str, Any]:
    """One call record: transcript, turns with timings, interventions, owner record."""
    record = await res.calls.get(call_id)
    if record is None or is_unlisted_owner(record.owner_id):  # nobody's call: not readable, even here
        raise ApiError(404, "not_found", f"no call {call_id}")
    return {**record.model_dump(mode="json"), "summary": ops_summary(record)}


@router.get("/ops/api/memory")
async def memory_report(res: ResourcesDep, _: OpsAuth) -> dict[str, Any]:
    """Where the memory is: allocator bytes in use vs. freed but kept, RSS, live objects,
    and the in-memory TTS cache (bytes of PCM, clips; capped by ``TTS_CACHE_MB``)."""
    from pipeline import memory

    out = await asyncio.to_thread(memory.report)
    out["tts_cache"] = res.voice.synthesizer.cache.stats() if res.voice is not None else None
    return out


@router.post("/ops/api/memory/trim")
async def memory_trim(_: OpsAuth) -> dict[str, Any]:
    """``malloc_trim`` now; the report before and after (leak or allocator retention?)."""
    from pipeline import memory

    before = await asyncio.to_thread(memory.report)
    trimmed = await asyncio.to_thread(memory.trim)
    return {"trimmed": trimmed, "before": before, "after": await asyncio.to_thread(memory.report)}
