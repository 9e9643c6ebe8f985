"""Console sessions: ``POST /app/login`` exchanges the owner's API key for an HttpOnly
cookie holding a random session token; Redis keeps only its hash
(``ca:console:{sha256}`` -> owner id, with the session's TTL). The API key never reaches
page storage. Logging out, or rotating the key (the session remembers the key's hash),
ends the session.

The cookie opens the owner's ``/v1`` API like the key does. It is ``SameSite=Strict``;
writes made with it must also carry ``X-CallAssist-Console: 1`` (a header a cross-site
form cannot send), so a cookie alone never changes anything.
"""

from __future__ import annotations

import hashlib
import secrets

from redis.asyncio import Redis

COOKIE_NAME = "ca_app"
CSRF_HEADER = "X-CallAssist-Console"


def _key(token: str) -> str:
    return "ca:console:" + hashlib.sha256(token.encode()).hexdigest()


class ConsoleSessions:
    def __init__(self, redis: Redis, *, ttl_s: int) -> None:
        self._r = redis
        self.ttl_s = ttl_s

    async def create(self, owner_id: str, key_hash: str) -> str:
        token = secrets.token_urlsafe(32)
        await self._r.set(_key(token), f"{owner_id} {key_hash}", ex=self.ttl_s)
        return token

    async def owner(self, token: str | None) -> str | None:
        """The owner of a live session whose API key is still the current one."""
        if not token or len(token) > 100:
            return None
        value = await self._r.get(_key(token))
        if value is None:
            return None
        owner_id, _, key_hash = str(value).partition(" ")
        current = await self._r.get(f"ca:apikey:{key_hash}")
        return owner_id if current == owner_id else None

    async def end(self, token: str | None) -> None:
        if token:
            await self._r.delete(_key(token))
