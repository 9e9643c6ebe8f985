"""Request dependencies as typed ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from presets.owners import hash_api_key

from .errors import ApiError
from .limits import count_hit, too_many
from .resources import Resources


def get_resources(request: Request) -> Resources:
    res: Resources = request.app.state.resources
    return res


ResourcesDep = Annotated[Resources, Depends(get_resources)]


async def authenticate(
    res: ResourcesDep,
    authorization: Annotated[str | None, Header()] = None,
) -> str:
    """Resolve the owner from ``Authorization: Bearer <api_key>``; rate-limit per key."""
    if not authorization:
        raise ApiError(
            401,
            "unauthorized",
            "missing Authorization header (Bearer <api_key>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError(
            401,
            "unauthorized",
            "Authorization must be 'Bearer <api_key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    key_hash = hash_api_key(token)
    owner_id = await res.redis.get(f"ca:apikey:{key_hash}")
    if await count_hit(res.redis, key_hash[:32]) > res.settings.rate_limit_per_minute:
        raise too_many(res.settings.rate_limit_per_minute, "requests with this key")
    if owner_id is None:
        raise ApiError(401, "unauthorized", "unknown API key", headers={"WWW-Authenticate": "Bearer"})
    return str(owner_id)


async def authenticate_owner(
    request: Request,
    res: ResourcesDep,
    authorization: Annotated[str | None, Header()] = None,
) -> str:
    """The owner from the API key, else from the console's session cookie (see
    :mod:`app.console.auth`: a write with the cookie must carry the console header)."""
    from .console.auth import COOKIE_NAME, CSRF_HEADER

    cookie = request.cookies.get(COOKIE_NAME)
    if authorization or not cookie:
        return await authenticate(res, authorization)
    owner_id = await res.console.owner(cookie) if res.console is not None else None
    if owner_id is None:
        raise ApiError(401, "unauthorized", "the console session has ended: sign in again")
    if request.method not in ("GET", "HEAD", "OPTIONS") and request.headers.get(CSRF_HEADER) != "1":
        raise ApiError(403, "forbidden", f"a console write must carry {CSRF_HEADER}: 1", field=CSRF_HEADER)
    return owner_id


OwnerId = Annotated[str, Depends(authenticate_owner)]


def parse_if_match(if_match: Annotated[str | None, Header()] = None) -> int | None:
    """``If-Match: 7`` / ``"7"`` / ``W/"7"`` -> 7; ``*`` or absent -> None."""
    if if_match is None:
        return None
    value = if_match.strip()
    if value == "*":
        return None
    value = value.removeprefix("W/").strip().strip('"')
    # isascii: "²" is a digit to isdigit(); 18 digits: int() refuses 4,300 and more.
    if not (value.isascii() and value.isdigit() and len(value) <= 18):
        raise ApiError(400, "bad_request", 'If-Match must be a preset pool version, e.g. "3"', field="If-Match")
    return int(value)


IfMatch = Annotated[int | None, Depends(parse_if_match)]
