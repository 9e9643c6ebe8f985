"""What a call is about: a few bilingual topics that owners name in "who calls about what"
triggers ("if the school calls about pick-up", "如果快递员问门禁密码"), and whether a caller's
turn is about the same one in other words ("who's collecting Mia", "what do I punch in").

Topics are kinds of errand, generic across owners (pick-up, being unwell, a door code,
results, an appointment, a bill...), never one owner's wording. Beside them, plain word
overlap: English word stems, Chinese two-character words. Pure.
"""

from __future__ import annotations

import re

from .bilingual import compile_table, named_in

# name -> (zh pattern, en pattern)
_TOPICS: dict[str, tuple[str, str]] = {
    "pickup": (
        r"(来|去|过来|谁)接|接(孩子|人|回|走|一下|送)|放学|接送",
        r"\b(pick(ed|ing|s)?[- ]?(him |her |them |\w+ )?up|pickup|collect\w*|fetch\w*|come (and )?get|"
        r"school run|dismissal|home time|end of (the )?day)\b",
    ),
    "unwell": (
        r"发烧|生病|病了|不舒服|受伤|摔(倒|伤|了)|咳嗽|呕吐|吐了|医务室|过敏|头疼|肚子疼|拉肚子|流鼻血",
        r"\b(sick|ill|fever|temperature|unwell|hurt|injur\w*|threw up|throwing up|vomit\w*|not feeling (well|good)|"
        r"accident|allerg\w*|nurse'?s? office|headache|tummy|stomach ?ache|nosebleed)\b",
    ),
    "door_code": (
        r"门禁|密码|开门|进不去|进不了|单元门|门铃|楼门|按哪个|按几",
        r"\b((door|gate|entry|access|building|buzzer|lobby|front door|keypad) ?(code|number|pin)|passcode|keypad|"
        r"key pad|punch in|buzz (me |us |you )?in|let me in|get in(to)?|intercom|fob|enter code|"
        r"(entry|door|gate|access|intercom|call) (panel|box|system)|"
        r"which (button|buttons|number|numbers) (do|should) i (press|push|hit|dial))\b",
    ),
    "results": (
        r"结果|报告|化验|检查|体检|片子",
        r"\b(results?|reports?|lab|labs|tests?|scan|x-?ray|biopsy|bloodwork)\b",
    ),
    "appointment": (
        r"预约|挂号|改期|复诊|约(个|的)?时间|改时间",
        r"\b(appointment|booking|reschedul\w*|slot|check-?up|follow-?up visit)\b",
    ),
    "bill": (
        r"账单|房租|租金|交费|缴费|欠费|付款|物业费|水电费",
        r"\b(bill|billing|rent|invoice|payment|owe[sd]?|overdue|fees?)\b",
    ),
    "parcel": (r"快递|包裹|送货|签收|派件|取件", r"\b(parcel|package|deliver\w*|shipment)\b"),
    "keys": (r"钥匙", r"\bkeys?\b"),
    # Water where it should not be ("楼下邻居说家里漏水" and "你家是不是有水漏下来了").
    "leak": (
        r"漏水|渗水|水漏|漏下来|滴水|淹了|水管(爆|破)|往下滴",
        r"\b(leak\w*|flood\w*|dripping|drips|water (is )?(coming|pouring|running) (through|in|down)|burst pipe|"
        r"water damage)\b",
    ),
    # Something ordered or left is in and can be collected (medicine, glasses, a repair, dry cleaning).
    "ready": (
        r"到货|(药|货|东西|眼镜|衣服)(已经|现在)?到(了|$)|(可以|能)(过来|来)?(取|拿|领)(了|走)|(修|做|配|洗)好了",
        r"\b((is|are|has|have)( now)?( come| arrived)? in|in stock|came in|come in|arrived|"
        r"ready (for|to) (pick\w*|collect\w*)|"
        r"ready for collection|ready to be (picked|collected)|(is|are) ready)\b",
    ),
    "school_work": (
        r"成绩|作业|考试|家长会|期末|评语",
        r"\b(grades?|homework|exams?|report card|parent[- ]teacher|conference)\b",
    ),
    "trip": (r"春游|秋游|研学|出游|活动费", r"\b(field trip|school trip|excursion|permission slip)\b"),
}
_TOPIC_RE = compile_table(_TOPICS)

_EN_STOP_WORDS = (
    "about regarding for the a an my me to ask asks asking say says saying that this with back again us i "
    "anything something in on of any some it them him her his their is are be what when where who whether if "
    "or and please call calls calling"
)
_EN_STOP = frozenset(_EN_STOP_WORDS.split())
# Two-character words too common to say what a call is about.
_ZH_STOP_WORDS = "孩子 家长 电话 事情 一下 今天 明天 这个 那个 什么 的事 是不 不是 我们 你们 他们 她们 先生 女士 小姐"
_ZH_STOP = frozenset(_ZH_STOP_WORDS.split())


def topics(text: str) -> frozenset[str]:
    """The topics ``text`` names."""
    return named_in(_TOPIC_RE, text)


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z]+", text.lower())
    return {re.sub(r"(ing|ed|es|s)$", "", w) for w in words if len(w) >= 4 and w not in _EN_STOP}


def _bigrams(text: str) -> set[str]:
    hanzi = "".join(re.findall(r"[\u4e00-\u9fff]", text))
    return {hanzi[i : i + 2] for i in range(len(hanzi) - 1)} - _ZH_STOP


def content(topic: str) -> bool:
    """Does a trigger's topic phrase say anything ("about pick-up"), or nothing ("back", "的")?"""
    return bool(topics(topic) or _stems(topic) or _bigrams(topic))


def same_topic(topic: str, utterance: str) -> bool:
    """Is the caller's turn about the trigger's topic (same kind of errand, or shared words)?

    English: more than half of the topic's content words ("whether to leave it with the neighbour" is
    not met by "can I leave it behind the bins?", nor "where to pick up Mr. Becker" by "how long
    until Mr. Becker comes out?": one word of two, and not the one that says what is asked).
    Chinese two-character windows also span word boundaries, so one shared word still counts there."""
    if topics(topic) & topics(utterance):
        return True
    words = _stems(topic)
    if words and len(words & _stems(utterance)) * 2 > len(words):
        return True
    return bool(_bigrams(topic) & _bigrams(utterance))


# A fixed time in an owner's answer ("今天放学五点由爷爷来接", "Grandma picks her up at 3:30").
_FIXED_TIME = re.compile(
    r"\d{1,2}\s*[:：点]|[一二三四五六七八九十两]{1,3}点|\b\d{1,2}(:\d\d)?\s*(am|pm|a\.m\.|p\.m\.)|o'clock",
    re.IGNORECASE,
)


def urgent_breaks_routine(response: str, caller_texts: tuple[str, ...]) -> bool:
    """A child or person taken ill ("孩子发烧了") makes a routine plan given as a time ("五点由爷爷
    来接") stale: the owner answered for an ordinary day, not for "can someone come now"."""
    return bool(_FIXED_TIME.search(response)) and any("unwell" in topics(t) for t in caller_texts)
