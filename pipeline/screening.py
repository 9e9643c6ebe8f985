"""Screening: what to do with a caller, decided when the call opens, recorded on the call.

Order: the allow list, then known contacts, then the block list; anyone else is
screened (the assistant answers as usual). A blocked caller hears a short polite close
and the call ends. The decision, its reason and the matched entry go into the record's
``screening``; the owner's alert policy decides which events carry ``alert: true``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from presets.screening import ScreeningRules, ScreeningStore

from .records import CallRecord

log = logging.getLogger(__name__)

BLOCKED_CLOSE = {
    "en": "Sorry, this number can't take your call. Goodbye.",
    "zh": "抱歉，这个号码现在无法接听您的来电，再见。",
}


def caller_key(number: str | None) -> str | None:
    """A caller id in list-entry form: ``+digits`` / ``digits`` or ``sip:user[@host]``."""
    if not number:
        return None
    value = number.strip()
    if value.lower().startswith("sip:"):
        return "sip:" + value[4:].lower()
    digits = re.sub(r"[^0-9]", "", value)
    if not digits:
        return None
    return ("+" if value.startswith("+") else "") + digits


def sip_caller(from_header: str | None) -> str | None:
    """The caller from a SIP ``From`` header: the number when the user part is one
    (``sip:+14155550100@host``), else ``sip:user@host``."""
    if not from_header:
        return None
    m = re.search(r"<?\s*sips?:([^@;>\s]+)(?:@([^;>\s]+))?", from_header, re.IGNORECASE)
    if not m:
        return None
    user, host = m.group(1), m.group(2)
    if re.fullmatch(r"\+?[0-9]{3,20}", user):
        return user
    host = (host or "").split(":", 1)[0]
    return f"sip:{user}@{host}" if host else f"sip:{user}"


def _matches(entry: str, caller: str) -> bool:
    if entry.endswith("*"):
        return caller.startswith(entry[:-1])
    if entry.startswith("sip:") and "@" not in entry:
        return caller == entry or caller.startswith(entry + "@")  # sip:alice matches sip:alice@any-host
    if caller.startswith("+") != entry.startswith("+"):
        # +14155550100 and 14155550100 are the same number written two ways
        return caller.lstrip("+") == entry.lstrip("+")
    return caller == entry


def decide(rules: ScreeningRules, caller_number: str | None) -> dict[str, Any]:
    """``{"decision": "allow"|"block"|"screen", "reason", "matched"?, "contact"?, "alert"}``."""
    caller = caller_key(caller_number)
    base: dict[str, Any] = {"alert": rules.alert, "caller": caller}
    if caller is None:
        return {**base, "decision": "screen", "reason": "no caller number from the transport"}
    for entry in rules.allow:
        if _matches(entry, caller):
            return {**base, "decision": "allow", "reason": "on the allow list", "matched": entry}
    for contact in rules.contacts:
        if _matches(contact.number, caller):
            return {**base, "decision": "allow", "reason": "a known contact", "contact": contact.name}
    for entry in rules.block:
        if _matches(entry, caller):
            return {**base, "decision": "block", "reason": "on the block list", "matched": entry}
    return {**base, "decision": "screen", "reason": "not on any list"}


def should_alert(screening: dict[str, Any] | None, event_type: str, owner_record: dict[str, Any]) -> bool:
    """Whether this event should alert the owner, under the owner's policy.

    always: every call start and message; urgent: urgent calls only; known: calls from
    allowed numbers and contacts; stated_reason: once the caller said why they called.
    A blocked call never alerts; an urgent one always does, whatever the policy.
    """
    s = screening or {}
    if s.get("decision") == "block":
        return False
    if event_type == "call.urgent":
        return True
    policy = s.get("alert", "always")
    if policy == "always":
        return event_type in ("call.started", "message.left")
    if policy == "known":
        return s.get("decision") == "allow" and event_type in ("call.started", "message.left")
    if policy == "stated_reason":
        return event_type == "message.left" or (event_type == "call.ended" and bool(owner_record.get("reason")))
    return False


class Screener:
    """Reads the owner's rules and decides; a store failure lets the call through."""

    def __init__(self, store: ScreeningStore) -> None:
        self.store = store

    async def screen(self, owner_id: str, record: CallRecord) -> dict[str, Any]:
        try:
            rules = await self.store.get_rules(owner_id)
        except Exception:
            log.warning("screening rules unreachable: the call is screened as usual", exc_info=True)
            return {"decision": "screen", "reason": "screening rules unavailable", "alert": "always"}
        return decide(rules, record.caller_number)
