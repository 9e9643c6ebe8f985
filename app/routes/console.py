"""The owner console: ``GET /app`` (the page, or the sign-in form), ``POST /app/login``
(API key -> HttpOnly session cookie), ``POST /app/logout``, its static files.

Same rules as ``/ops``: no CDN (every asset is served from here), a strict CSP, the
key is posted once and never kept in page storage; see :mod:`app.console.auth`.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from presets.owners import hash_api_key

from ..console.auth import COOKIE_NAME
from ..deps import ResourcesDep
from ..pages import SECURITY_HEADERS as _SECURITY_HEADERS
from ..pages import StaticPages

router = APIRouter(tags=["console"])

_ASSETS = {
    "console.js": "text/javascript; charset=utf-8",
    "i18n.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
}
WRONG_KEY = "Unknown API key. / API 密钥无效。"


_PAGES = StaticPages("app.console.static", _ASSETS)
_html = _PAGES.html


async def _signed_in(request: Request, res: ResourcesDep) -> bool:
    assert res.console is not None
    return await res.console.owner(request.cookies.get(COOKIE_NAME)) is not None


@router.get("/app", include_in_schema=False)
async def console_page(request: Request, res: ResourcesDep) -> Response:
    if "key" in request.query_params or "api_key" in request.query_params:
        return _html("login.html", status=400, error="Not in the URL: access logs keep it. / 请勿把密钥放在网址里。")
    if not await _signed_in(request, res):
        return _html("login.html")
    return _html("index.html")


@router.post("/app/login", include_in_schema=False)
async def console_login(request: Request, res: ResourcesDep) -> Response:
    """The sign-in form posts ``api_key``; a good key gets the session cookie."""
    assert res.console is not None
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    key = (form.get("api_key") or [""])[0].strip()
    key_hash = hash_api_key(key) if key else ""
    owner_id = await res.redis.get(f"ca:apikey:{key_hash}") if key else None
    if owner_id is None:
        return _html("login.html", status=401, error=WRONG_KEY)
    token = await res.console.create(str(owner_id), key_hash)
    https = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response = RedirectResponse("/app", status_code=303, headers=_SECURITY_HEADERS)
    response.set_cookie(
        COOKIE_NAME, token, max_age=res.console.ttl_s, path="/", httponly=True, samesite="strict", secure=https
    )
    return response


@router.post("/app/logout", include_in_schema=False)
async def console_logout(request: Request, res: ResourcesDep) -> Response:
    assert res.console is not None
    await res.console.end(request.cookies.get(COOKIE_NAME))
    response = RedirectResponse("/app", status_code=303, headers=_SECURITY_HEADERS)
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")
    return response


@router.get("/app/static/{name}", include_in_schema=False)
async def console_asset(name: str) -> Response:
    return _PAGES.asset(name)
