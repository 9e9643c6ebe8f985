"""Owner, profile, line and preset-pool models (pydantic: API payloads and stored data).

The preset pool follows CallBench: *regular* slots exist only for takeout,
delivery and taxi (the trigger is fixed by the system, the owner writes the
response); *emergent* presets are owner-written (trigger, response) pairs usable
in any scene.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

Scene = Literal["takeout", "delivery", "taxi", "work", "life", "harassment"]
RegularScene = Literal["takeout", "delivery", "taxi"]
Lang = Literal["zh", "en"]

SCENES: tuple[str, ...] = get_args(Scene)
REGULAR_SCENES: tuple[str, ...] = get_args(RegularScene)
LANGS: tuple[str, ...] = get_args(Lang)
_BOTH_LANGS: tuple[Lang, ...] = ("zh", "en")

MAX_TRIGGER_CHARS = 200
MAX_RESPONSE_CHARS = 500
MAX_EMERGENT_PRESETS = 100
MAX_PRIVATE_FACTS = 50

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Bidirectional embeddings, overrides and isolates: they reorder what the owner reads.
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
# Invisible characters that would make a blank-looking trigger or name: dropped.
_ZERO_WIDTH = re.compile(r"[\u200b\u2060\ufeff\u00ad]")


def check_unicode(value: str) -> str:
    """Refuse text Redis and JSON cannot store as UTF-8 (a lone surrogate escaped in JSON)."""
    if _SURROGATE.search(value):
        raise ValueError("must be valid Unicode text (a lone surrogate is not)")
    return value


def _clean_text(value: str) -> str:
    """Normalise a free-text field: valid Unicode, NFC, no control or BIDI characters,
    zero-width characters dropped, trimmed, not blank."""
    check_unicode(value)
    value = unicodedata.normalize("NFC", value)
    if _CONTROL.search(value):
        raise ValueError("must not contain control characters")
    if _BIDI.search(value):
        raise ValueError("must not contain bidirectional control characters")
    value = _ZERO_WIDTH.sub("", value)
    value = " ".join(value.split())
    if not value:
        raise ValueError("must not be empty or whitespace-only")
    return value


CleanText = Annotated[str, AfterValidator(_clean_text)]
UnicodeText = Annotated[str, AfterValidator(check_unicode)]


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Strict(BaseModel):
    """Request bodies: unknown fields and wrong types are rejected, never coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------- owners ----


class Owner(BaseModel):
    owner_id: str
    name: str
    lang: Lang = "zh"
    created_at: datetime = Field(default_factory=utcnow)


class PrivateFact(_Strict):
    label: Annotated[CleanText, Field(max_length=60)]
    value: Annotated[CleanText, Field(max_length=300)]


class Profile(_Strict):
    """How the assistant presents the owner, and what it must never say."""

    display_name: Annotated[CleanText, Field(max_length=80)]
    languages: list[Lang] = Field(default_factory=lambda: list(_BOTH_LANGS), min_length=1)
    greeting: Annotated[CleanText, Field(max_length=300)] | None = None
    private_facts: list[PrivateFact] = Field(default_factory=list, max_length=MAX_PRIVATE_FACTS)
    pronoun: Literal["he", "she", "they"] | None = Field(
        default=None, description="How the assistant refers to the owner: he / she / they (zh 他 / 她); unset: guessed"
    )

    @field_validator("pronoun", mode="before")
    @classmethod
    def _chinese_pronoun(cls, value: object) -> object:
        return {"他": "he", "她": "she"}.get(value, value) if isinstance(value, str) else value

    @field_validator("languages")
    @classmethod
    def _unique_languages(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("languages must not repeat")
        return value


def default_profile(owner: Owner) -> Profile:
    other: Lang = "en" if owner.lang == "zh" else "zh"
    return Profile(display_name=owner.name, languages=[owner.lang, other])


# ----------------------------------------------------------------- lines ----

LineKind = Literal["phone", "sip", "webrtc"]
_PHONE = re.compile(r"^\+?[0-9][0-9 ()./-]{2,30}$")
_HANDLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~+-]{0,63}(@[A-Za-z0-9.-]{1,190})?$")


def normalize_line(raw: str) -> tuple[str, LineKind]:
    """Canonical form of a line identifier, and its kind.

    Phone numbers lose their separators (``+1 (415) 555-0100`` -> ``+14155550100``);
    ``sip:alice@pbx`` becomes ``alice@pbx``; other handles (SIP users, WebRTC
    link slugs) must be plain URL-safe names. Raises ValueError otherwise.
    """
    value = raw.strip()
    if value.lower().startswith("sip:"):
        value = value[4:]
        if not _HANDLE.match(value):
            raise ValueError("a SIP line must look like sip:user or sip:user@host")
        user, at, host = value.partition("@")
        if _PHONE.match(user):  # sip:415-555-0100 is the number 4155550100
            user = re.sub(r"[^0-9]", "", user)
        return user + at + host.lower(), "sip"  # hosts are case-insensitive (RFC 3261 19.1.4)
    if _PHONE.match(value):
        digits = re.sub(r"[^0-9]", "", value)
        if not 3 <= len(digits) <= 20:
            raise ValueError("a phone line must have 3 to 20 digits")
        return ("+" if value.startswith("+") else "") + digits, "phone"
    if _HANDLE.match(value):
        return value, "webrtc"
    raise ValueError(
        "a line is a phone number (+14155550100), a SIP user (sip:alice) or a link name (letters, digits, . _ ~ + -)"
    )


def line_address(line: str) -> str:
    """The address a canonical line answers to, whatever the variant: ``alex``,
    ``alex@pbx`` and ``Alex@other`` are all ``alex``; ``+14155550100`` and
    ``14155550100`` are ``14155550100``. One owner per address, so no variant of a
    line can capture calls meant for another owner's line."""
    return line.partition("@")[0].lower().removeprefix("+")


class LineBody(_Strict):
    kind: LineKind | None = None
    label: Annotated[CleanText, Field(max_length=80)] | None = None


class Line(BaseModel):
    line: str
    kind: LineKind
    label: str | None = None
    created_at: datetime = Field(default_factory=utcnow)


# --------------------------------------------------------------- presets ----

TriggerText = Annotated[CleanText, Field(max_length=MAX_TRIGGER_CHARS)]
ResponseText = Annotated[CleanText, Field(max_length=MAX_RESPONSE_CHARS)]


class RegularBody(_Strict):
    response: ResponseText


class RegularSlot(BaseModel):
    response: str
    updated_at: datetime = Field(default_factory=utcnow)


class EmergentBody(_Strict):
    trigger: TriggerText
    response: ResponseText
    scenes: list[Scene] | None = Field(default=None, min_length=1)
    enabled: bool = True

    @field_validator("scenes")
    @classmethod
    def _unique_scenes(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError("scenes must not repeat")
        return value


class EmergentPreset(BaseModel):
    id: str
    trigger: str
    response: str
    scenes: list[Scene] | None = None
    enabled: bool = True
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    def applies_to(self, scene: str | None) -> bool:
        return self.enabled and (self.scenes is None or scene is None or scene in self.scenes)


def _empty_regular() -> dict[RegularScene, RegularSlot | None]:
    return {"takeout": None, "delivery": None, "taxi": None}


class PresetPool(BaseModel):
    """One owner's whole preset pool; ``version`` increases with every write."""

    version: int = 0
    regular: dict[RegularScene, RegularSlot | None] = Field(default_factory=_empty_regular)
    emergent: list[EmergentPreset] = Field(default_factory=list)

    def find_emergent(self, preset_id: str) -> EmergentPreset | None:
        return next((p for p in self.emergent if p.id == preset_id), None)
