"""Owners, API keys, lines and profiles in Redis.

Keys (``ca:`` prefix):

- ``ca:owner:{oid}``          hash: the Owner record and its key hash
- ``ca:owners``               set of owner ids
- ``ca:apikey:{sha256}``      -> oid (API keys are stored only hashed)
- ``ca:line:{line}``          -> oid; a line belongs to exactly one owner
- ``ca:lineaddr:{address}``   -> oid; every variant of an address (``line_address``) too
- ``ca:owner:{oid}:lines``    hash: line -> Line JSON
- ``ca:owner:{oid}:profile``  Profile JSON
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import uuid
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

from .errors import Conflict, NotFound
from .models import Lang, Line, LineKind, Owner, Profile, default_profile, line_address

API_KEY_PREFIX = "ca_"

log = logging.getLogger(__name__)

# Called after a profile is saved (e.g. to synthesize the owner's greeting ahead of calls).
ProfileHook = Callable[[str, Profile], Awaitable[None]]


def hash_api_key(api_key: str) -> str:
    # API keys carry 256 bits of entropy, so a fast hash is enough (no brute force).
    return hashlib.sha256(api_key.encode()).hexdigest()


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


class OwnerStore:
    """Owner accounts and everything scoped to one owner except presets and calls."""

    def __init__(self, redis: Redis, profile_hooks: list[ProfileHook] | None = None) -> None:
        self._r = redis
        self.profile_hooks: list[ProfileHook] = list(profile_hooks or [])

    # ---------------------------------------------------------- owners ----

    async def create_owner(self, name: str, lang: Lang = "zh") -> tuple[Owner, str]:
        owner = Owner(owner_id="own_" + uuid.uuid4().hex[:16], name=name, lang=lang)
        api_key = new_api_key()
        key_hash = hash_api_key(api_key)
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.hset(
                f"ca:owner:{owner.owner_id}",
                mapping={"json": owner.model_dump_json(), "key_hash": key_hash},
            )
            pipe.sadd("ca:owners", owner.owner_id)
            pipe.set(f"ca:apikey:{key_hash}", owner.owner_id)
            pipe.set(f"ca:owner:{owner.owner_id}:profile", default_profile(owner).model_dump_json())
            await pipe.execute()
        await self._run_hooks(owner.owner_id, default_profile(owner))
        return owner, api_key

    async def ensure_unlisted_owner(self, owner_id: str, name: str, lang: Lang) -> None:
        """An owner with no API key, no lines and no place in the owner list (idempotent):
        it answers anonymous text calls to lines nobody registered, so that such a call
        looks like one to a registered line (see ``pipeline.text_calls``)."""
        owner = Owner(owner_id=owner_id, name=name, lang=lang)
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.hsetnx(f"ca:owner:{owner_id}", "json", owner.model_dump_json())
            pipe.set(f"ca:owner:{owner_id}:profile", default_profile(owner).model_dump_json(), nx=True)
            await pipe.execute()

    async def get_owner(self, owner_id: str) -> Owner:
        raw = await self._r.hget(f"ca:owner:{owner_id}", "json")
        if raw is None:
            raise NotFound(f"no owner {owner_id}")
        return Owner.model_validate_json(raw)

    async def list_owners(self) -> list[Owner]:
        ids = sorted(_s(x) for x in await self._r.smembers("ca:owners"))
        owners = []
        for oid in ids:
            raw = await self._r.hget(f"ca:owner:{oid}", "json")
            if raw is not None:
                owners.append(Owner.model_validate_json(raw))
        return owners

    async def rotate_key(self, owner_id: str) -> str:
        """Issue a new API key; the old one stops working at once."""
        old_hash: str | bytes | None = await self._r.hget(f"ca:owner:{owner_id}", "key_hash")
        if old_hash is None:
            raise NotFound(f"no owner {owner_id}")
        api_key = new_api_key()
        key_hash = hash_api_key(api_key)
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.delete(f"ca:apikey:{_s(old_hash)}")
            pipe.set(f"ca:apikey:{key_hash}", owner_id)
            pipe.hset(f"ca:owner:{owner_id}", "key_hash", key_hash)
            await pipe.execute()
        return api_key

    # ----------------------------------------------------------- lines ----

    async def claim_line(self, owner_id: str, line: str, kind: LineKind, label: str | None) -> tuple[Line, bool]:
        """Register ``line`` for the owner. Returns (line, created). Conflict if the line,
        or any variant of it (:func:`line_address`), belongs to another owner."""
        await self._claim_address(owner_id, line)
        claimed = await self._r.set(f"ca:line:{line}", owner_id, nx=True)
        if not claimed:
            holder = await self._r.get(f"ca:line:{line}")
            if holder is not None and _s(holder) != owner_id:
                raise Conflict(f"line {line} is registered to another owner", field="line")
        record = Line(line=line, kind=kind, label=label)
        existing = await self._r.hget(f"ca:owner:{owner_id}:lines", line)
        if existing is not None:
            record.created_at = Line.model_validate_json(existing).created_at
        await self._r.hset(f"ca:owner:{owner_id}:lines", line, record.model_dump_json())
        return record, bool(claimed)

    async def _claim_address(self, owner_id: str, line: str) -> None:
        """Reserve the line's address for the owner (SET NX makes two owners racing for
        variants of one address end with exactly one winner)."""
        address = line_address(line)
        key = f"ca:lineaddr:{address}"
        if not await self._r.set(key, owner_id, nx=True):
            holder = await self._r.get(key)
            if holder is not None and _s(holder) != owner_id:
                raise Conflict(f"line {line} shadows a line registered to another owner", field="line")
            return
        # Lines registered before addresses were reserved: the plain variant's holder wins.
        plain = await self._r.get(f"ca:line:{address}")
        if plain is not None and _s(plain) != owner_id:
            await self._r.delete(key)
            raise Conflict(f"line {line} shadows a line registered to another owner", field="line")

    async def release_line(self, owner_id: str, line: str) -> None:
        holder = await self._r.get(f"ca:line:{line}")
        if holder is None or _s(holder) != owner_id:
            raise NotFound(f"no line {line}")
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.delete(f"ca:line:{line}")
            pipe.hdel(f"ca:owner:{owner_id}:lines", line)
            await pipe.execute()
        address = line_address(line)
        if not any(line_address(other.line) == address for other in await self.list_lines(owner_id)):
            key = f"ca:lineaddr:{address}"
            if _s(await self._r.get(key) or "") == owner_id:
                await self._r.delete(key)

    async def list_lines(self, owner_id: str) -> list[Line]:
        raw = await self._r.hgetall(f"ca:owner:{owner_id}:lines")
        lines = [Line.model_validate_json(v) for v in raw.values()]
        return sorted(lines, key=lambda x: x.line)

    async def owner_for_line(self, line: str) -> str | None:
        holder = await self._r.get(f"ca:line:{line}")
        return None if holder is None else _s(holder)

    # --------------------------------------------------------- profile ----

    async def get_profile(self, owner_id: str) -> Profile:
        raw = await self._r.get(f"ca:owner:{owner_id}:profile")
        if raw is None:
            return default_profile(await self.get_owner(owner_id))
        return Profile.model_validate_json(raw, strict=False)

    async def put_profile(self, owner_id: str, profile: Profile) -> Profile:
        await self._r.set(f"ca:owner:{owner_id}:profile", profile.model_dump_json())
        await self._run_hooks(owner_id, profile)
        return profile

    async def _run_hooks(self, owner_id: str, profile: Profile) -> None:
        for hook in self.profile_hooks:
            try:
                await hook(owner_id, profile)
            except Exception:  # a hook must never lose the owner's write
                log.exception("profile save hook failed")


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
