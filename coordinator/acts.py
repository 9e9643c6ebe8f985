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
from .text import compact, find_phone_number, normalize, short_turn
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
    en_route: bool = False  # on the way, not there yet
    threat: bool = False  # a threat the owner must hear about
    scam: bool = False  # poses as an authority to extract money or data
    injection: bool = False  # tries to rewrite the assistant's rules or role
    credential_probe: bool = False  # asks for an ID/bank card number or a password: no caller needs those
    dismiss: bool = False  # "算了" / "Forget it"
    ends_with_thanks: bool = False
    errand: str | None = None  # asks the assistant to act at the place (C_phys): "handover" / "errand"
    raw: str = ""

    @property
    def exception_stated(self) -> bool:
        """The caller's own words name the exception kind (see :mod:`.honesty`)."""
        from .honesty import stated

        return stated(self.raw, self.exception)


def _exception_kind(zh: str, en: str) -> str | None:
    kinds = [kind for kind, pattern in lx.EXCEPTIONS.items() if pattern.search(zh, en)]
    if "late" in kinds and "blocked" in kinds:
        return "late"  # "前面出了事故堵死了，我得晚十五分钟": the jam is why they are late
    specific = [k for k in kinds if k != "problem"]
    return specific[0] if specific else (kinds[0] if kinds else None)


_TITLE_DOT = re.compile(r"\b(Dr|Mr|Mrs|Ms|St|Jr|Sr|Inc|Co|Ltd)\.", re.IGNORECASE)
_NOT_A_NAME_EN = re.compile(
    r"^(just|about|regarding|to|not|it|what|how|why|urgent|important|final|here|calling|so|really|me|him|that|this|"
    r"because)\b|\b(notice|reminder|message|recording|call about)\b",
    re.IGNORECASE,
)
_NOT_A_NAME_ZH = re.compile(r"^(说|问|想|等|在|要|不|来|打|觉得|怕|真的|就|跟|给|对|替)|还是|怎么|什么|吗|呢|吧")


# Where a self-introduction's name ends: the errand after it ("City Cars dispatch confirming your ride", "Jim
# with Apex Roofing about the estimate"), or a correction ("闪送……不是，我是美团的": the first try was wrong).
_WHO_ENDS_EN = re.compile(
    r"\s+(calling|confirming|checking|following up|reaching out|ringing|regarding|about|re:|to (confirm|check|let|ask|"
    r"remind|say|tell|follow|see))\b.*$",
    re.IGNORECASE,
)
_WHO_CORRECTED_ZH = re.compile(r"(…|\.\.\.|[，,]?\s*(哦|噢|呃)?不是)")


def _self_id(raw: str) -> str | None:
    text = _TITLE_DOT.sub(lambda m: m.group(1), raw)  # "Dr. Patel's office" is one name
    for pattern in lx.SELF_ID:
        for m in pattern.finditer(text):
            who = m.group("who").strip(" ,.，。")
            if who.isascii():
                who = _WHO_ENDS_EN.sub("", who).strip(" ,.")
            elif _WHO_CORRECTED_ZH.search(who):
                continue  # "我是闪送……不是，我是美团的": the name the caller corrects is not theirs
            bad = _NOT_A_NAME_EN if who.isascii() else _NOT_A_NAME_ZH
            if who and not bad.search(who) and who.lower() not in {"here", "calling", "just", "the", "a"}:
                return who
            break  # (only a corrected name looks further)
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


MAX_TURN_CHARS = 600  # a spoken phone turn is far shorter; longer text is cut (bounded regex work)


def classify(raw: str, *, scene: str | None = None) -> Classification:
    """Classify one caller utterance (never a silence turn)."""
    raw = raw[:MAX_TURN_CHARS]
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
        ("threat", lx.THREAT),
        ("abuse", lx.ABUSE),
        ("scam", lx.SCAM),
        ("identity", lx.ASK_IDENTITY),
        ("en_route", lx.EN_ROUTE),
        ("dismiss", lx.DISMISS),
        ("press_yes", lx.PRESS_YES),
        ("injection", lx.INJECTION),
    ):
        if pattern.search(zh, en):
            found.add(name)
    if lx.SALES_TOPIC.search(zh, en) and lx.SALES_MARKER.search(zh, en):
        found.add("sales")
    if "closing" not in found and _closing_by_sound(zh):
        found.add("closing")  # "在见" / "拜败": a goodbye the line misheard
    # A leading "喂？" / "Hello?" / "听得到吗？" checks the line; it does not make the turn a question.
    body = _LINE_CHECK.sub("", raw)
    question = (
        bool(re.search(r"[?？]", body))
        or bool(lx.QUESTION.search(compact(body), normalize(body)))
        or bool(lx.INDIRECT_QUESTION.search(compact(body), normalize(body)))
    )
    greeting_only = bool(lx.GREETING_ONLY.match(zh) or lx.GREETING_ONLY.match(en))
    ack_only = bool(lx.ACK.match(zh)) or bool(lx.ACK.match(en)) or _all_ack(zh, en)
    exception = _exception_kind(zh, en)
    if exception and errand(raw):
        # "能不能帮我看一下门关了没有" asks for an errand about the door; nothing is wrong at the door yet
        # ("门关着进不去，你能下来开一下门吗" still reports the problem: it is outside the request)
        exception = _exception_kind(lx.ERRAND_ZH.sub("", zh), lx.ERRAND_EN.sub("", en))
    nobody_home = bool(lx.NOBODY_HOME.search(zh) or lx.NOBODY_HOME.search(en))
    c = Classification(
        act=CallerAct.OTHER,
        cues=found,
        exception=exception,
        self_id=_self_id(raw),
        callback_number=find_phone_number(raw),
        urgent=bool(lx.URGENT.search(zh, en)),
        question=question,
        # "Say that again" is a short turn; "...one more time I'm having the car towed" is not.
        repeat_request=bool(lx.REPEAT_REQUEST.search(zh, en)) and _short(raw, zh_max=16, en_max=10),
        nobody_home=nobody_home,
        en_route="en_route" in found
        or (bool(lx.LATER.search(zh, en)) and ("arrival" in found or scene in ("takeout", "delivery", "taxi"))),
        threat="threat" in found,
        scam="scam" in found,
        injection="injection" in found,
        dismiss="dismiss" in found,
    )
    c.ack_marked = bool(lx.ACK_MARK.search(zh, en))
    c.insists = bool(lx.INSIST.search(zh, en))
    c.ends_with_closing = bool(lx.ENDS_WITH_CLOSING.search(raw.strip())) or _closing_by_sound(zh[-4:])
    c.ends_with_thanks = ends_with_thanks(raw)
    c.raw = raw
    c.errand = errand(raw)
    c.starts_with_ack = bool(
        re.match(r"^(ok|okay|sure|alright|all right|got it|great|perfect|thanks)\b", en)
        or re.match(r"^(好的|好嘞|好|行|嗯|那好|那行)", zh)
    )
    c.act = CallerAct.GREETING if greeting_only else _primary(c, found, ack_only, scene, raw)
    c.credential_probe = c.act == CallerAct.ASK_PRIVATE and bool(_CREDENTIAL.search(zh, en))
    if c.act == CallerAct.LEAVE_MESSAGE and "closing" in found and message_body(raw) is None:
        c.act = CallerAct.CLOSING
    if c.act in (CallerAct.LEAVE_MESSAGE, CallerAct.STATEMENT):
        c.message_body = message_body(raw)
    return c


_LINE_CHECK = re.compile(
    r"^\s*((喂|hello|hi|hey)[?？,，]*\s*)?((听得(到|见)|能听(到|见)|听(到|见)了)(吗|么|没|我说话吗)?|在吗|can you hear me|are you there)?[?？]+\s*",
    re.IGNORECASE,
)
_CLOSING_SOUNDS = re.compile(
    r"(zaijian|baibai|bailiao|guale|guadiaole|xianzheyang)$|^mei(you)?(le|la|shi|shile)$"  # "媒了": 没了, nothing more
)


def _closing_by_sound(zh: str) -> bool:
    """A short turn that sounds like 再见 / 拜拜 / 挂了 (toneless pinyin), however the line
    transcribed it: phone recognisers swap homophones."""
    hanzi = "".join(re.findall(r"[\u4e00-\u9fff]", zh))
    if not hanzi or len(hanzi) > 6:
        return False
    from pypinyin import lazy_pinyin  # imported on first use (~0.3 s)

    return bool(_CLOSING_SOUNDS.search("".join(lazy_pinyin(hanzi))))


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


def errand(raw: str) -> str | None:
    """ "Can you just check on him?", "能不能帮我看一下门关了没有", "could you go knock on his door",
    "帮我把快递拿进去": the caller asks the assistant itself to act at the place, which it cannot (an
    assistant on the phone). Not when the owner (or someone else) is the one asked first ("tell him to
    check the stove", "让他回来看一下煤气"): that is a message. ``"handover"`` when the errand is the
    hand-over itself ("could you come down and grab it?"), else ``"errand"``."""
    zh, en = compact(raw), normalize(raw)
    m_zh, m_en = lx.ERRAND_ZH.search(zh), lx.ERRAND_EN.search(en)
    for m, text, frame, handover in (
        (m_zh, zh, lx.ERRAND_FOR_OWNER.zh, lx.ERRAND_HANDOVER.zh),
        (m_en, en, lx.ERRAND_FOR_OWNER.en, lx.ERRAND_HANDOVER.en),
    ):
        if m is not None and not frame.search(text[: m.start()]):
            return "handover" if handover.search(m.group(0)) else "errand"
    return None


def _primary(c: Classification, found: set[str], ack_only: bool, scene: str | None, raw: str) -> CallerAct:
    taxi = scene == "taxi"
    if c.exception == "cant_find" and taxi:
        # A driver who cannot find the passenger is asking where to meet.
        c.exception = None
        found.add("where")
    if c.nobody_home:
        found.add("where")  # nobody answers the door: the courier needs the drop-off instruction
        if c.exception == "cant_find" and not _LOST.search(normalize(raw)) and "找不" not in compact(raw):
            # "the buzzer ain't working and nobody's answering" is nobody at the door, not a lost courier
            c.exception = None
    if c.exception == "id_needed" and "private" in found and _ID_NUMBER.search(compact(raw), normalize(raw)):
        c.exception = None  # "报一下她的身份证号" asks for private data; "要出示身份证" is a delivery exception
    if not c.scam and lx.OFFICIAL_CHANNEL.search(compact(raw), normalize(raw)):
        # A bank's alert sending the owner to its official number ("call the number on the back of the
        # card"): a message, not a fee asked of them, and nothing private asked (unless it asks: it stays).
        if c.exception == "payment":
            c.exception = None
        if not _ASKS_ME.search(compact(raw), normalize(raw)):
            found.discard("private")
        found.add("message")
    if c.exception and c.exception != "late":
        return CallerAct.EXCEPTION
    if "identity" in found:
        return CallerAct.ASK_IDENTITY
    if c.dismiss and not c.question and _short(raw, zh_max=12, en_max=6):
        return CallerAct.CLOSING  # "算了" / "Forget it.": the caller is done
    if c.threat and not re.search(r"[?？]|(吗|呢)\s*$", raw.strip()):
        return CallerAct.LEAVE_MESSAGE if "message" in found else CallerAct.STATEMENT
    if c.ends_with_closing and not c.question:
        # "...，你让他回我电话，再见" carries a message; "我放好了啊，挂了" is just goodbye.
        return CallerAct.LEAVE_MESSAGE if "message" in found and message_body(raw) else CallerAct.CLOSING
    if "private" in found and "message" in found and not _ASKS_ME.search(compact(raw), normalize(raw)):
        found.discard("private")  # "让他回个电话，门牌号对不上": a message that mentions the address
    if "private" in found and not ("where" in found and "private" not in _strong_private(raw)):
        return CallerAct.ASK_PRIVATE
    if "where" in found and _OTHER_AGENT.search(normalize(raw)):
        found.discard("where")  # "Could someone put it in the mailbox?": asks the owner's side to act
        found.add("decision")
    if "where" in found:
        return CallerAct.WHERE_TO_LEAVE
    if c.exception == "late":
        return CallerAct.EXCEPTION
    if "message" in found:
        return CallerAct.LEAVE_MESSAGE
    if ("decision" in found and c.question) or "press_yes" in found:
        return CallerAct.ASK_DECISION
    if "arrival" in found or c.en_route:
        return CallerAct.ARRIVAL
    if "sales" in found:
        return CallerAct.SALES
    if "ask_owner" in found:
        return CallerAct.ASK_OWNER
    if "closing" in found:
        return CallerAct.CLOSING
    if ack_only:
        return CallerAct.ACK
    if (
        (c.starts_with_ack or c.ack_marked)
        and not c.question
        and not found - {"greeting", "closing", "dismiss"}
        and _short(raw)
    ):
        return CallerAct.ACK  # "好的好的，马上过去" / "Porch bench, got it.": compliance, nothing new
    if c.repeat_request:
        return CallerAct.INFO_QUESTION
    if c.question:
        return CallerAct.INFO_QUESTION
    if "greeting" in found or c.self_id:
        rest = _strip_greeting(raw, c.self_id)
        return CallerAct.GREETING if _trivial(rest) or lx.SERVICE_INTRO.match(rest) else CallerAct.STATEMENT
    if c.callback_number:
        return CallerAct.STATEMENT
    letters = sum(ch.isalnum() for ch in raw)
    return CallerAct.STATEMENT if letters >= 4 else CallerAct.OTHER


def _trivial(rest: str) -> bool:
    """Too little left after the greeting to be a statement ("您点的土豆粉卖完了" is one)."""
    cjk = len(re.findall(r"[\u4e00-\u9fff]", rest))
    words = len(re.findall(r"[a-z']+", rest))
    return cjk < 6 and words < 3 if cjk else words < 3


# The caller wants the assistant to tell them something (not a message that mentions it).
_ASKS_ME = lx.cues(
    [
        "告诉我",
        "给我说",
        "跟我说",
        "发(给)?我",
        "念",
        "读",
        "报(一下|一遍)",
        "说一下",
        "多少",
        "是什么",
        "在哪",
        "几号",
        "什么时候",
        "啥时候",
    ],
    [r"tell me", r"give me", r"read", r"what('s| is)", r"where", r"when", r"which", r"send me"],
)
_OTHER_AGENT = re.compile(
    r"\b(could|can|would|will) (someone|somebody|anyone|you|he|she|they|\w+) (please )?(just )?(put|leave|drop|bring|take)\b"
)


_ID_NUMBER = lx.cues(
    ["(身份证|证件|银行卡|卡|社保|护照)号", "卡号", "密码", "验证码"],
    [r"(id|social security|ssn|card|account|passport|license) number", r"password", r"(pin|verification) code"],
)


_LOST = re.compile(r"\b(can't|cannot|couldn't|can not) (find|locate)\b|\blost\b|wrong address")
_CREDENTIAL = lx.cues(
    ["(身份证|证件|银行卡|社保|护照)号", "卡号", "密码", "银行卡"],
    [
        r"(id|social security|ssn|passport) number",
        r"(bank|credit|debit) card",
        r"(bank )?account number",
        r"password",
        r"\bssn\b",
    ],
)


def _short(raw: str, zh_max: int = 12, en_max: int = 8) -> bool:
    return short_turn(raw, zh_max, en_max)


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
    # "Tanya, the shift manager" / "automated message from the courier system": who, not what.
    text = re.sub(r"^(the|your|a|an) [\w' ]{1,25}$", "", text.strip()) if len(text.split()) <= 4 else text
    text = re.sub(
        r"^(an? )?(automated|recorded|automatic) (message|call|notice)( from [\w' ]{1,30})?$", "", text.strip()
    )
    # "..., calling for Marcus" / "calling about Biscuit" / "找一下林小姐": still an introduction.
    text = re.sub(
        r"\b(i'm |i am |we're |just )?(calling|ringing|phoning)( you)?( (for|about|regarding|on behalf of|from) [\w' ]{1,30})?$",
        "",
        text.strip(),
    )
    text = re.sub(r"(给|找)(一下)?\S{1,6}(打(个)?电话|的)?$", "", text.strip())
    return text.strip()


_THANKS_TAIL = re.compile(r"(谢谢|多谢|感谢|thanks|thank you|appreciate it)[\s。.!！~～]*$", re.IGNORECASE)


def ends_with_thanks(raw: str) -> bool:
    return bool(_THANKS_TAIL.search(raw.strip()))
