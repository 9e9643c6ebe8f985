"""Caller-act classification: which act a caller turn performs, with its details.

Deterministic cue rules over the normalised utterance (see ``lexicon.py``). Several
cues may fire in one turn ("hi, your food is here, where do I leave it?"); the
primary act is picked by a fixed priority that puts what the assistant must handle
first (an exception, a private probe, a decision) before what it may simply answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import lexicon as lx
from .text import compact, find_phone_number, normalize
from .types import CallerAct

_MESSAGE_FRAME = re.compile(
    r"^(请|麻烦|麻烦你|帮我|你|您)?(帮我)?(转告|告诉|跟|和|给|通知)(一下)?(他|她|陈\S{0,3}|王\S{0,3}|李\S{0,3}|张\S{0,3}|老板)?(一声|一下)?(说|讲)?"
    r"|^(can|could|would) you (please )?(tell|let) \w+ (know )?(that )?|^(please )?(tell|let) (him|her|them|\w+) (know )?(that )?"
    r"|^(please )?pass (on|along) (that|this)?|^(i'd like to |i want to |can i )?leave a message( for \w+)?( that)?"
)


@dataclass(slots=True)
class Classification:
    act: CallerAct
    cues: set[str] = field(default_factory=set)
    exception: str | None = None
    self_id: str | None = None
    callback_number: str | None = None
    urgent: bool = False
    question: bool = False
    repeat_request: bool = False
    nobody_home: bool = False
    starts_with_ack: bool = False
    ack_marked: bool = False  # an acknowledgement word anywhere ("Porch bench, got it.")
    insists: bool = False  # pressing on after a refusal
    ends_with_closing: bool = False
    message_body: str | None = None  # what to pass on, when the turn carries a message


def _exception_kind(zh: str, en: str) -> str | None:
    for kind, pattern in lx.EXCEPTIONS.items():
        if pattern.search(zh, en):
            return kind
    return None


def _self_id(raw: str) -> str | None:
    for pattern in lx.SELF_ID:
        m = pattern.search(raw)
        if m:
            who = m.group("who").strip(" ,.，。")
            if who and who.lower() not in {"here", "calling", "just", "the", "a"}:
                return who
    return None


_FILLER = re.compile(r"^(好吧|好的|好|那你|那|嗯|哦|行|okay|ok|so|alright|well|and)(?![a-z])[\s,，。.]*", re.IGNORECASE)
_TRAILING_CLOSE = re.compile(
    r"[\s,，。.!！]*(谢谢|再见|拜拜|thanks|thank you|bye|goodbye)[\s,，。.!！]*$", re.IGNORECASE
)
_REFERENTIAL = re.compile(
    r"^(一声|一下|这个|这件事|这事|情况|that|this|about (it|this|that)|it)?[\s,，。.!！]*$",
    re.IGNORECASE,
)


def message_body(raw: str) -> str | None:
    """The content of a message once its frame ("please tell him that") is removed;
    None when nothing is left but a reference to what was already said."""
    text = raw.strip()
    for _ in range(3):
        text = _FILLER.sub("", text).strip()
        text = _TRAILING_CLOSE.sub("", text).strip()
    stripped = _MESSAGE_FRAME.sub("", text.lower() if text.isascii() else text, count=1).strip(" ,，。.:：")
    if _REFERENTIAL.match(stripped):
        return None
    if not stripped:
        return None
    letters = sum(ch.isalnum() for ch in stripped)
    return raw.strip() if letters >= 5 else None


def classify(raw: str, *, scene: str | None = None) -> Classification:
    """Classify one caller utterance (never a silence turn)."""
    zh = compact(raw)
    en = normalize(raw)
    found: set[str] = set()
    for name, pattern in (
        ("greeting", lx.GREETING),
        ("arrival", lx.ARRIVAL),
        ("where", lx.WHERE_TO_LEAVE),
        ("ask_owner", lx.ASK_OWNER),
        ("message", lx.LEAVE_MESSAGE),
        ("decision", lx.ASK_DECISION),
        ("private", lx.ASK_PRIVATE),
        ("sales", lx.SALES),
        ("closing", lx.CLOSING),
    ):
        if pattern.search(zh, en):
            found.add(name)
    # A leading "喂？" / "Hello?" checks the line; it does not make the turn a question.
    body = re.sub(r"^\s*(喂|hello|hi|hey)[?？]+\s*", "", raw, flags=re.IGNORECASE)
    question = bool(re.search(r"[?？]", body)) or bool(lx.QUESTION.search(compact(body), normalize(body)))
    greeting_only = bool(lx.GREETING_ONLY.match(zh) or lx.GREETING_ONLY.match(en))
    ack_only = bool(lx.ACK.match(zh)) or bool(lx.ACK.match(en)) or _all_ack(zh, en)
    exception = _exception_kind(zh, en)
    nobody_home = bool(lx.NOBODY_HOME.search(zh) or lx.NOBODY_HOME.search(en))
    c = Classification(
        act=CallerAct.OTHER,
        cues=found,
        exception=exception,
        self_id=_self_id(raw),
        callback_number=find_phone_number(raw),
        urgent=bool(lx.URGENT.search(zh, en)),
        question=question,
        repeat_request=bool(lx.REPEAT_REQUEST.search(zh, en)),
        nobody_home=nobody_home,
    )
    c.ack_marked = bool(lx.ACK_MARK.search(zh, en))
    c.insists = bool(lx.INSIST.search(zh, en))
    c.ends_with_closing = bool(lx.ENDS_WITH_CLOSING.search(raw.strip()))
    c.starts_with_ack = bool(
        re.match(r"^(ok|okay|sure|alright|all right|got it|great|perfect|thanks)\b", en)
        or re.match(r"^(好的|好嘞|好|行|嗯|那好|那行)", zh)
    )
    c.act = CallerAct.GREETING if greeting_only else _primary(c, found, ack_only, scene, raw)
    if c.act == CallerAct.LEAVE_MESSAGE and "closing" in found and message_body(raw) is None:
        c.act = CallerAct.CLOSING
    if c.act in (CallerAct.LEAVE_MESSAGE, CallerAct.STATEMENT):
        c.message_body = message_body(raw)
    return c


def _all_ack(zh: str, en: str) -> bool:
    """ "好的好的，谢谢" / "ok thanks" / "好的，再见": only acknowledgement tokens."""
    tokens = [t for t in re.split(r"[ ,，。.!！~～]+", en) if t]
    if (
        tokens
        and len(tokens) <= 6
        and all(lx.ACK.match(t) or t in {"then", "so", "and", "oh", "ah", "very", "much"} for t in tokens)
    ):
        return True
    rest = re.sub(
        r"(好的|好嘞|好吧|好|行|可以|嗯|哦|噢|知道了|明白了|明白|了解|收到|没问题|谢谢|谢了|多谢|辛苦了|辛苦|麻烦了|对|是的|那|啊|呀|哈|啦|嘞|您|你)",
        "",
        zh,
    )
    return zh != "" and rest == ""


def _primary(c: Classification, found: set[str], ack_only: bool, scene: str | None, raw: str) -> CallerAct:
    taxi = scene == "taxi"
    if c.exception == "cant_find" and taxi:
        # A driver who cannot find the passenger is asking where to meet.
        c.exception = None
        found.add("where")
    if c.nobody_home:
        found.add("where")  # nobody answers the door: the courier needs the drop-off instruction
    if c.exception and c.exception != "late":
        return CallerAct.EXCEPTION
    if c.ends_with_closing and not c.question:
        # "...，你让他回我电话，再见" carries a message; "我放好了啊，挂了" is just goodbye.
        return CallerAct.LEAVE_MESSAGE if "message" in found and message_body(raw) else CallerAct.CLOSING
    if "private" in found and not ("where" in found and "private" not in _strong_private(raw)):
        return CallerAct.ASK_PRIVATE
    if "where" in found:
        return CallerAct.WHERE_TO_LEAVE
    if c.exception == "late":
        return CallerAct.EXCEPTION
    if "message" in found:
        return CallerAct.LEAVE_MESSAGE
    if "decision" in found and c.question:
        return CallerAct.ASK_DECISION
    if "arrival" in found:
        return CallerAct.ARRIVAL
    if "sales" in found:
        return CallerAct.SALES
    if "ask_owner" in found:
        return CallerAct.ASK_OWNER
    if "closing" in found:
        return CallerAct.CLOSING
    if ack_only:
        return CallerAct.ACK
    if (c.starts_with_ack or c.ack_marked) and not c.question and not found - {"greeting", "closing"} and _short(raw):
        return CallerAct.ACK  # "好的好的，马上过去" / "Porch bench, got it.": compliance, nothing new
    if c.repeat_request:
        return CallerAct.INFO_QUESTION
    if c.question:
        return CallerAct.INFO_QUESTION
    if "greeting" in found or c.self_id:
        rest = _strip_greeting(raw, c.self_id)
        return CallerAct.GREETING if len(rest) < 12 or lx.SERVICE_INTRO.match(rest) else CallerAct.STATEMENT
    if c.callback_number:
        return CallerAct.STATEMENT
    letters = sum(ch.isalnum() for ch in raw)
    return CallerAct.STATEMENT if letters >= 4 else CallerAct.OTHER


def _short(raw: str) -> bool:
    zh_chars = len(re.findall(r"[\u4e00-\u9fff]", raw))
    words = len(re.findall(r"[A-Za-z']+", raw))
    return zh_chars <= 12 and words <= 8


def _strong_private(raw: str) -> set[str]:
    """Private cues that are about the owner, not about the drop-off spot."""
    zh = compact(raw)
    en = normalize(raw)
    strong = re.search(r"(地址|住址|电话|手机|号码|什么时候回|几点回|在哪(上班|工作))", zh) or re.search(
        r"(address|phone|number|email|when will|where does \w+ (live|work))", en
    )
    return {"private"} if strong else set()


def _strip_greeting(raw: str, self_id: str | None = None) -> str:
    """What is left of a turn once greetings and the caller's self-introduction are removed."""
    text = normalize(raw)
    if self_id:
        text = text.replace(normalize(self_id), " ")
    for _ in range(3):
        text = re.sub(r"^\s*(喂|你好|您好|哈喽|嗨|hello|hi|hey|yes|good (morning|afternoon|evening))\s*", "", text)
    text = re.sub(r"^(我是|这里是|this is|it's|i am|i'm)\s*(?=\s|$)", "", text)
    return text.strip()
