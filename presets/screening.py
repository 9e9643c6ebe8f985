"""Owner settings for who gets through and what the owner can answer in one click.

- ``ca:owner:{oid}:screening``      ScreeningRules JSON (block/allow lists, contacts, alert policy)
- ``ca:owner:{oid}:quick_replies``  QuickReplies JSON (absent: the defaults per language)

List entries are phone numbers (``+14155550100``), prefixes (``+1900*``: a trailing
``*``) or SIP users (``sip:alice``, ``sip:alice@pbx``).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator
from redis.asyncio import Redis

from .models import CleanText, Lang, _Strict

AlertPolicy = Literal["always", "urgent", "known", "stated_reason"]
MAX_ENTRIES = 500
MAX_QUICK_REPLIES = 20

_NUMBER = re.compile(r"^\+?[0-9 ()\-.]{3,30}\*?$")
_SIP = re.compile(r"^sip:[A-Za-z0-9._~+\-]+(@[A-Za-z0-9.\-]+)?\*?$", re.IGNORECASE)

DEFAULT_QUICK_REPLIES: dict[str, list[str]] = {
    "en": [
        "I'll call you back.",
        "Please leave it at the door.",
        "Who is this, please?",
        "Not interested, please don't call again.",
    ],
    "zh": ["我稍后给您回电话。", "请放在门口就好。", "请问您是哪位？", "不需要，谢谢，请不要再打来了。"],
}


def normalize_entry(raw: str) -> str:
    """Canonical list entry: digits with an optional leading ``+`` (and ``*``), or ``sip:user[@host]``."""
    value = raw.strip()
    if _SIP.match(value):
        return "sip:" + value[4:].lower()
    if _NUMBER.match(value):
        star = value.endswith("*")
        digits = re.sub(r"[^0-9]", "", value)
        if not 2 <= len(digits) <= 20:
            raise ValueError(f"{raw!r}: a number or prefix has 2 to 20 digits")
        return ("+" if value.startswith("+") else "") + digits + ("*" if star else "")
    raise ValueError(f"{raw!r} is not a phone number (+14155550100), a prefix (+1900*) or a SIP user (sip:alice)")


class Contact(_Strict):
    name: CleanText = Field(max_length=100)
    number: str = Field(max_length=64)

    @field_validator("number")
    @classmethod
    def _number(cls, value: str) -> str:
        entry = normalize_entry(value)
        if entry.endswith("*"):
            raise ValueError("a contact's number cannot be a prefix")
        return entry


class ScreeningRules(_Strict):
    block: list[str] = Field(default_factory=list, max_length=MAX_ENTRIES)
    allow: list[str] = Field(default_factory=list, max_length=MAX_ENTRIES)
    contacts: list[Contact] = Field(default_factory=list, max_length=MAX_ENTRIES)
    alert: AlertPolicy = "always"

    @field_validator("block", "allow")
    @classmethod
    def _entries(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        for raw in value:
            entry = normalize_entry(raw)
            if entry not in out:
                out.append(entry)
        return out


class QuickReplies(_Strict):
    replies: list[CleanText] = Field(min_length=0, max_length=MAX_QUICK_REPLIES)

    @field_validator("replies")
    @classmethod
    def _short(cls, value: list[str]) -> list[str]:
        for i, text in enumerate(value):
            if len(text) > 200:
                raise ValueError(f"reply {i} is longer than 200 characters")
        return value


def screening_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:screening"


def quick_replies_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:quick_replies"


class ScreeningStore:
    def __init__(self, redis: Redis) -> None:
        self._r = redis

    async def get_rules(self, owner_id: str) -> ScreeningRules:
        raw = await self._r.get(screening_key(owner_id))
        return ScreeningRules() if raw is None else ScreeningRules.model_validate_json(raw)

    async def put_rules(self, owner_id: str, rules: ScreeningRules) -> ScreeningRules:
        await self._r.set(screening_key(owner_id), rules.model_dump_json())
        return rules

    async def get_quick_replies(self, owner_id: str, lang: Lang) -> tuple[list[str], bool]:
        """The owner's quick replies, and whether they are the defaults (for ``lang``)."""
        raw = await self._r.get(quick_replies_key(owner_id))
        if raw is None:
            return list(DEFAULT_QUICK_REPLIES.get(lang, DEFAULT_QUICK_REPLIES["en"])), True
        return list(QuickReplies.model_validate_json(raw).replies), False

    async def put_quick_replies(self, owner_id: str, replies: QuickReplies) -> list[str]:
        await self._r.set(quick_replies_key(owner_id), replies.model_dump_json())
        return list(replies.replies)
