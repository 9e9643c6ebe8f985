"""Small facts about a turn the policy reads: is the caller asking, abusive, what has
the assistant said, which exceptions break an owner's premise."""

from __future__ import annotations

import re

from .acts import Classification
from .templates import DISCLOSURE
from .types import CallContext, CallerAct, CallState

# Exceptions that change what the owner answered under (a cost, damage, a changed offer):
# the owner's preset answer is stale for the rest of the call. (Late, blocked, can't find
# are logistics: the owner's instruction may still be what the caller needs.)
PREMISE_EXCEPTIONS = frozenset({"payment", "damaged", "wrong_item", "problem", "installation", "spilled"})

_QUESTIONING_MESSAGE = re.compile(
    r"(问|能不能|可不可以|要不要|是否|行不行|\bask\b|\bwhether\b|\bif (he|she|they)\b|\bcan (he|she|they)\b)",
    re.IGNORECASE,
)


def abusive(c: Classification) -> bool:
    """Insults with nothing else to handle ("你个机器人，傻不傻啊")."""
    return "abuse" in c.cues and c.act in (CallerAct.INFO_QUESTION, CallerAct.STATEMENT, CallerAct.OTHER)


def said(state: CallState) -> str:
    """Everything the assistant has said in this call (an echo of it is no news)."""
    return " ".join(reply for _, reply in state.history)


_ASKING_ACTS = {
    CallerAct.ASK_DECISION, CallerAct.WHERE_TO_LEAVE, CallerAct.ASK_PRIVATE, CallerAct.INFO_QUESTION,
    CallerAct.ASK_OWNER,
}  # fmt: skip


def asking(c: Classification) -> bool:
    """Does the caller ask or request something this turn (a question, "能不能...", "where do I...")?"""
    if c.act == CallerAct.LEAVE_MESSAGE:  # "帮我问问他能不能来" asks; "跟他说会推迟到周三" tells
        return c.question or bool(_QUESTIONING_MESSAGE.search(c.raw))
    return c.question or c.act in _ASKING_ACTS or bool(c.cues & {"where", "press_yes", "private"})


def with_disclosure(greeting: str, state: CallState, ctx: CallContext) -> str:
    """An owner's custom greeting must still say that an assistant is answering."""
    lowered = greeting.lower()
    if any(w in lowered for w in ("assistant", " ai", "ai ", "助理", "助手", "ai")):
        return greeting
    disclosure = DISCLOSURE[state.lang].format(owner=ctx.owner_name)
    return f"{disclosure}{'' if state.lang == 'zh' else ' '}{greeting}"
