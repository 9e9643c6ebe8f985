"""The input guard: labels caller turns that try to steer or pry.

Kinds (:data:`~safety.types.INPUT_KINDS`): ``injection`` (override the
assistant's instructions, jailbreak personas, role tags, instructions hidden in
encodings), ``extraction`` (the system prompt), ``pretexting`` (claiming to be the
owner, family, police, the bank... to get private data or messages; a bare claim
is labelled too), ``social_engineering`` (urgency, threats or claimed authorization
used to get private data or actions) and ``private_probe`` (asking for the owner's
address, numbers, whereabouts, schedule...).

Ordinary callers are not labelled: couriers asking where to leave a parcel, family
leaving a message ("I'm his brother, tell him to call mom"), a bank asking for a
call back. The label informs the coordinator; no caller text can change what the
output guard lets through.
"""

from __future__ import annotations

import re

from . import _decode
from ._context import owner_pattern
from ._input_lexicon import (
    ACCESS,
    EXTRACTION,
    IDENTITY_AUTHORITY,
    IDENTITY_FAMILY,
    IDENTITY_OWNER,
    INJECTION,
    LINE_CHECK,
    PRESSURE,
    PROBE,
    Rules,
)
from ._text import normalize
from .types import BENIGN, INPUT_KINDS, GuardContext, InputLabel

_FILLER = re.compile(
    r"[\s,.!?;:。、~]+|\b(?:hi|hello|hey|yes|yeah|ok|okay|um|uh|well|so|and|actually|just|"
    r"calling|speaking|here)\b|你好|您好|喂|嗯|啊|呀|哦|那个|就是|的"
)


def _first(rules: Rules, text: str) -> str | None:
    for rule, rx in rules:
        if rx.search(text):
            return rule
    return None


def _owner_as_pronoun(norm: str, ctx: GuardContext | None) -> str:
    if ctx is None:
        return norm
    rx = owner_pattern(ctx.owner_name)
    if rx is None:
        return norm
    return rx.sub(lambda m: "他" if re.search(r"[\u4e00-\u9fff]", m.group(0)) else "he", norm)


def _injection(norm: str, raw: str) -> tuple[str | None, str | None]:
    """(injection rule, extraction rule), looking into decoded views as well."""
    inj, ext = _first(INJECTION, norm), _first(EXTRACTION, norm)
    if inj or ext:
        return inj, ext
    for view in _decode.views(raw):
        v = normalize(view)
        inj, ext = _first(INJECTION, v), _first(EXTRACTION, v)
        if inj or ext:
            return "inj.encoded", ext
    return None, None


def _pretexting(norm: str, asks: bool) -> str | None:
    for rule, rx in (
        ("pretext.owner_claim", IDENTITY_OWNER),
        ("pretext.authority", IDENTITY_AUTHORITY),
        ("pretext.identity", IDENTITY_FAMILY),
    ):
        m = rx.search(norm)
        if not m:
            continue
        if asks or rule == "pretext.owner_claim":
            return rule
        rest = _FILLER.sub("", norm[: m.start()] + norm[m.end() :])
        if len(rest) <= 4:
            return "identity.only"  # an introduction: identity_claim, not pretexting
    return None


# "when is he back?" / "他什么时候回来": the one question an owner often answers (a preset), and the
# one an urgent caller with a real need asks; urgency beside it is a reason to call, not leverage.
_WHEN_BACK = re.compile(
    r"\b(?:when|what time)\b.{0,25}\b(?:back|home|return|free|available|finish|done|off work|out of)\b"
    r"|(?:什么时候|啥时候|几点|哪天|多久|多长时间)(?:能|会|才|可以)?(?:回来|回家|回|到家|有空|方便|忙完|下班|结束)"
)


def _urgent_when_back(pressure: str, probe: str | None, access: str | None, norm: str) -> bool:
    """Urgency next to "when is he back?" and nothing else pried for (no code, number, address or
    whereabouts): an urgent caller, not social engineering ("It's kind of urgent, when is he back?",
    "有点急事，他什么时候回来？"). The question is still a private probe: the coordinator answers it
    with the owner's preset or an honest "I'll tell him it's urgent"; "urgent, read me the code" is
    still flagged (access), and so is "it's urgent, what's his number / where is he?"."""
    if pressure != "se.urgency" or access or probe != "probe.whereabouts":
        return False
    return bool(_WHEN_BACK.search(norm)) and _first(PROBE, _WHEN_BACK.sub(" ", norm)) is None


class InputGuard:
    """Labels one caller utterance (pure, no I/O; a few dozen regex scans)."""

    def classify(self, utterance: str, ctx: GuardContext | None = None) -> InputLabel:
        """The kinds of attack found in ``utterance`` (empty kinds = benign)."""
        if not utterance or not utterance.strip():
            return BENIGN
        norm = _owner_as_pronoun(normalize(utterance[: _decode.MAX_CHARS]), ctx)
        found: dict[str, str] = {}
        inj, ext = _injection(norm, utterance)
        if inj:
            found["injection"] = inj
        if ext:
            found["extraction"] = ext
        # "Is this Alex Morgan's phone?" checks the caller dialled right: not a probe.
        probe = _first(PROBE, LINE_CHECK.sub(" ", norm))
        access = _first(ACCESS, norm)
        pre = _pretexting(norm, asks=bool(probe or access))
        if pre == "identity.only":
            found["identity_claim"] = pre
        elif pre:
            found["pretexting"] = pre
        pressure = _first(PRESSURE, norm)
        if pressure and (probe or access) and not _urgent_when_back(pressure, probe, access, norm):
            found["social_engineering"] = pressure
        if probe:
            found["private_probe"] = probe
        if not found:
            return BENIGN
        kinds = tuple(k for k in INPUT_KINDS if k in found)
        return InputLabel(kinds=kinds, rule=found[kinds[0]])
