"""The summary of an ended call, in the owner's language: who, why, the message,
callback digits, urgency, spam label, what the assistant conveyed and what it did not
promise. Built from the owner record the coordinator kept (no model, no I/O), so it
only says what the call said."""

from __future__ import annotations

import re
from typing import Any

from coordinator.types import CallContext

from .records import CallRecord

_SPAM_FLAGS = {"sales_or_harassment", "hostile_caller", "injection_attempt", "threat", "sales"}

_TEXT: dict[str, dict[str, Any]] = {
    "en": {
        "who": "Caller: {v}.",
        "unknown": "an unidentified caller",
        "number": " ({v})",
        "why": "Why: {v}.",
        "message": "Message: {v}",
        "callback": "Call back: {v}.",
        "unconfirmed": " (not confirmed by the caller when read back)",
        "numbers": "Numbers given: {v}.",
        "kinds": {"code": "code", "amount": "amount", "time": "time"},
        "urgent": "Marked urgent.",
        "spam": "Labelled {v}.",
        "conveyed": "The assistant passed on: {v}",
        "requests": "Asked of you (not decided, not promised): {v}",
        "nothing_promised": "The assistant agreed to nothing on your behalf.",
        "owner": "You said: {v}",
        "blocked": "Screening: {v}.",
        "labels": {"spam": "spam or sales", "harassment": "harassment or hostile"},
    },
    "zh": {
        "who": "来电人：{v}。",
        "unknown": "未说明身份的来电人",
        "number": "（{v}）",
        "why": "事由：{v}。",
        "message": "留言：{v}",
        "callback": "回电号码：{v}。",
        "unconfirmed": "（复述后来电人未确认）",
        "numbers": "来电人给的数字：{v}。",
        "kinds": {"code": "码", "amount": "金额", "time": "时间"},
        "urgent": "标记为紧急。",
        "spam": "标记为{v}。",
        "conveyed": "助理已转达：{v}",
        "requests": "需要您决定（助理未作任何承诺）：{v}",
        "nothing_promised": "助理没有替您答应任何事情。",
        "owner": "您说过：{v}",
        "blocked": "来电筛选：{v}。",
        "labels": {"spam": "推销或垃圾电话", "harassment": "骚扰或恶意来电"},
    },
}


def digits(number: str | None) -> str | None:
    """A callback number as digits only (a leading + kept)."""
    if not number:
        return None
    d = re.sub(r"\D", "", number)
    if not d:
        return None
    return ("+" + d) if number.strip().startswith("+") else d


def spam_label(flags: list[str]) -> str | None:
    if any(f in flags for f in ("hostile_caller", "threat")):
        return "harassment"
    if any(f in _SPAM_FLAGS for f in flags):
        return "spam"
    return None


def preset_texts(ctx: CallContext) -> dict[str, str]:
    """Preset id -> the owner's words, for the summary's "conveyed"."""
    texts = {f"regular:{scene}": response for scene, response in ctx.regular.items()}
    texts.update({c.preset.id: c.preset.response for c in ctx.emergent})
    return texts


def summarize(record: CallRecord, owner_lang: str, *, conveyed_texts: dict[str, str] | None = None) -> dict[str, Any]:
    """The structured summary plus ``text``, a few short lines in ``owner_lang``."""
    lang = owner_lang if owner_lang in _TEXT else "en"
    words = _TEXT[lang]
    orec = record.owner_record or {}
    flags = list(orec.get("flags") or [])
    label = spam_label(flags)
    if label is None and record.screening and record.screening.get("label"):
        label = str(record.screening["label"])
    conveyed_ids = list(orec.get("presets_conveyed") or [])
    conveyed = [(conveyed_texts or {}).get(i, i) for i in conveyed_ids]
    owner_said = [e.text for e in record.transcript if e.role == "owner" and e.text]
    messages = [*orec.get("messages", []), *orec.get("exceptions", [])]
    summary: dict[str, Any] = {
        "lang": lang,
        "caller": orec.get("caller"),
        "caller_number": record.caller_number,
        "reason": orec.get("reason"),
        "messages": messages,
        "requests": list(orec.get("requests") or []),
        "callback_number": digits(orec.get("callback_number")),
        "callback_confirmed": orec.get("callback_confirmed"),
        "urgency": orec.get("urgency", "normal"),
        "spam_label": label,
        "conveyed": conveyed,
        "owner_said": owner_said,
        "not_promised": list(orec.get("requests") or []),
        "screening": (record.screening or {}).get("decision"),
    }
    sep = "" if lang == "zh" else " "
    join = "；" if lang == "zh" else "; "
    who = orec.get("caller") or words["unknown"]
    if record.caller_number:
        who += words["number"].format(v=record.caller_number)
    lines = [words["who"].format(v=who)]
    if orec.get("reason"):
        lines.append(words["why"].format(v=orec["reason"]))
    if messages:
        lines.append(words["message"].format(v=join.join(messages)))
    if summary["callback_number"]:
        flag = words["unconfirmed"] if orec.get("callback_confirmed") is False else ""
        lines.append(words["callback"].format(v=summary["callback_number"] + flag))
    others = [n for n in orec.get("captured") or [] if n.get("kind") in words["kinds"]]
    if others:
        given = [
            f"{words['kinds'][n['kind']]} {n['value']}" + ("" if n.get("confirmed") else words["unconfirmed"])
            for n in others
        ]
        lines.append(words["numbers"].format(v=join.join(given)))
    if summary["urgency"] == "urgent":
        lines.append(words["urgent"])
    if label:
        lines.append(words["spam"].format(v=words["labels"][label]))
    if conveyed:
        lines.append(words["conveyed"].format(v=join.join(conveyed)))
    if owner_said:
        lines.append(words["owner"].format(v=join.join(owner_said)))
    if summary["requests"]:
        lines.append(words["requests"].format(v=join.join(summary["requests"])))
    else:
        lines.append(words["nothing_promised"])
    if record.screening and record.screening.get("decision") == "block":
        lines.append(words["blocked"].format(v=record.screening.get("reason", "")))
    summary["text"] = sep.join(lines)
    return summary
