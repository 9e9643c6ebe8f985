"""Request dependencies as typed ``Annotated`` aliases."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import Depends, Header, Request

from presets.owners import hash_api_key

from .errors import ApiError
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
    window = int(time.time() // 60)
    rl_key = f"ca:rl:{key_hash[:32]}:{window}"
    async with res.redis.pipeline(transaction=False) as pipe:
        pipe.get(f"ca:apikey:{key_hash}")
        pipe.incr(rl_key)
        pipe.expire(rl_key, 61)
        owner_id, count, _ = await pipe.execute()
    if count > res.settings.rate_limit_per_minute:
        retry_after = max(1, 60 - int(time.time()) % 60)
        raise ApiError(
            429,
            "rate_limited",
            f"more than {res.settings.rate_limit_per_minute} requests a minute with this key",
            headers={"Retry-After": str(retry_after)},
        )
    if owner_id is None:
        raise ApiError(401, "unauthorized", "unknown API key", headers={"WWW-Authenticate": "Bearer"})
    return str(owner_id)


OwnerId = Annotated[str, Depends(authenticate)]


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
