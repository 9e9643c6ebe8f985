"""What a caller turn tells the owner: news, as opposed to acknowledgements, goodbyes,
echoes of what the assistant said, pleasantries, and the caller's own next steps.

The owner record holds what the assistant promised to relay; :func:`informative`
decides whether a statement carries anything worth that promise.
"""

from __future__ import annotations

import itertools
import re

from . import lexicon as lx
from .acts import _all_ack, _short
from .text import compact, normalize

# (A space between two hanzi is a pause in a recognizer's Chinese: "没了 那我先等他电话" is two clauses.)
_CLAUSE_SPLIT = re.compile(r"[,.!?;:，。！？；：~～]+|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")
# The caller's own next step ("I'll wait out front", "我先放门口了", "我开过去"): not news for the owner.
_PLAN_EN = re.compile(
    r"^(and |so |then |okay |ok |alright |great |well |perfect |cool |sure |right )*"
    r"(i'll|i will|i'm going to|i am going to|i'm gonna|we'll|we will|we're going to|we're gonna|i can|let me|"
    r"i understand|i see|i'll be|i'm heading|i'm on it|i'm off|we're off|i'll just)\b"
)
_PLAN_ZH = re.compile(
    r"^(那|好|行|嗯|哦|对|好的|好嘞|行吧|中|成|妥)*(我|我们)(就|先|再|去|会|等|回头|马上|下次|记|登记|这边|改天|过会|一会|"
    r"开|走|过去|下去|上去|放|搁|送|拿|找|停|掉头|绕|发|打|联系|看|查|在这|在那|到时候|明白|知道)"
)
# A confirmation tag on an echo ("凳子上是吧", "side gate, right?"): still an echo.
_TAG = re.compile(r"(是吧|对吧|是不是|对不对|是嘛|吧|啊|哈|right|yeah|yes|correct|then)$")
_FOR_OWNER = re.compile(r"(帮|给|替)(他|她)|\b(for|to) (him|her)\b|\b(his|her)\b")


_RESTATE = re.compile(r"^(我(刚才)?说|我是说|我刚说|i said|like i said|as i said|i just said)(?!.*\d)")
_THANKS_SOUNDS = re.compile(r"^(tai|feichang|shifen|zhenshi|zhen)?(ganxie|xiexie|duoxie|xiele)(le|ni|nin|la|a)*$")


def _thanks_by_sound(zh: str) -> bool:
    hanzi = "".join(re.findall(r"[\u4e00-\u9fff]", zh))
    if not hanzi or len(hanzi) > 6:
        return False
    from pypinyin import lazy_pinyin

    return bool(_THANKS_SOUNDS.match("".join(lazy_pinyin(hanzi))))


_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30",
}  # fmt: skip
# A plea for speed ("快点哈", "别让我等太久啊", "tell her to hurry, please"): the pace of a hand-over the owner's
# answer already settled, nothing to act on.
_URGING_ZH = re.compile(
    r"^(那|你|您)*((让|叫|跟)(他|她)(说)?)?(快点|快一点|快些|赶紧|抓紧|麻利点|尽快|别让我(等(太久|太长时间|很久)?|久等))"
    r"(下来|过来|出来|啊|哈|呀|哦|了|吧|点)*$"
)
_URGING_EN = re.compile(
    r"^(and |so |but )?(please )?((tell|ask) (him|her|them) (to )?)?(hurry( up)?|be quick|make it quick|"
    r"don't keep me waiting( too long| long)?)( please)?$"
)
_THANKS_ONLY = re.compile(r"^(太|非常|十分|真是)?(感谢|谢谢|多谢|麻烦|辛苦)(了|你|您|啦|啊|哈)*$")


# English function words and the words of asking for a relay: never what a message says.
_RELAY_WORDS = frozenset(
    [
        "the",
        "and",
        "you",
        "your",
        "him",
        "her",
        "his",
        "them",
        "they",
        "she",
        "please",
        "tell",
        "let",
        "know",
        "that",
        "this",
        "with",
        "for",
        "are",
        "was",
        "will",
        "just",
        "can",
        "could",
        "would",
        "okay",
        "yeah",
        "thanks",
        "thank",
        "asked",
        "ask",
        "say",
        "said",
        "hey",
    ]
)


def _units(text: str) -> set[str]:
    zh = re.findall(r"[\u4e00-\u9fff]", text)
    units = {a + b for a, b in itertools.pairwise(zh)}
    for w in re.findall(r"[a-z0-9]+", normalize(text)):
        w = _NUMBER_WORDS.get(w, w)
        if len(w) > 2 or w.isdigit():
            units.add(w[:-1] if len(w) > 4 and w.endswith("s") else w)
    return units


_WHEN_EN = re.compile(
    r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(tomorrow|tonight|today|noon|midnight|o'clock|weekend|"
    r"january|february|march|april|june|july|august|september|october|november|december)\b|\b\d+ ?(am|pm)\b"
)

_WHEN_ZH = re.compile(
    r"(周|星期|礼拜)[一二三四五六日天]|明天|后天|今晚|[上下中]午|早上|晚上|\d|[一二三四五六七八九十两]+(点|号)"
)


_ECHO_TAG_ZH = re.compile(r"(是吧|对吧|对吗|是吗|是不是|对不对|是嘛|吧)\s*[?？]?$")
_ECHO_TAG_EN = re.compile(r",?\s*(yeah|yes|right|correct|is that right|is that it|you said|ok|okay)\s*[?]$")


_QUESTION_SENTENCE = re.compile(r"[^?？。.!！]+[?？]")


def questions(raw: str) -> list[str]:
    """The turn's question sentences, in order ("Will she make it? Oh, and is she ...?" -> two)."""
    return [q for q in (m.group(0).strip(" ,，") for m in _QUESTION_SENTENCE.finditer(raw)) if q]


def confirms_echo(raw: str, said: str) -> bool:
    """ "南门公交站是吧？我现在在西门，得绕一圈儿" / "Number fourteen, yeah?": the caller's only question
    repeats back what the assistant said, with a confirmation tag, to check it (a yes/no the
    assistant can answer from its own words). Not when another question follows ("... The one with
    the blue door?": something the owner never said)."""
    said_units = _units(said)
    if not said_units:
        return False
    asked = questions(raw)
    if len(asked) != 1:
        return False
    q = asked[0]
    zh = bool(re.search(r"[\u4e00-\u9fff]", q))
    m = _ECHO_TAG_ZH.search(q) if zh else _ECHO_TAG_EN.search(q.lower())
    if m is None:
        return False
    units = _units(q[: m.start()])
    return bool(units) and len(units & said_units) >= 0.8 * len(units)


def informative(raw: str, previous_reply: str | None = None) -> str | None:
    """What a turn tells the owner beyond acknowledging, closing, echoing the assistant's
    last words or announcing the caller's own next step ("Great, we'll get started.
    Pickup's at four. Bye." -> "Pickup's at four"; "行，我先清一下，拜拜" -> None)."""
    said = _units(previous_reply or "")
    kept: list[str] = []
    for clause in _CLAUSE_SPLIT.split(raw):
        clause = clause.strip()
        if not clause:
            continue
        zh, en = compact(clause), normalize(clause)
        if (
            lx.ACK.match(zh)
            or lx.ACK.match(en)
            or _all_ack(zh, en)
            or lx.GREETING_ONLY.match(zh)
            or lx.GREETING_ONLY.match(en)
            or lx.DISMISS.search(zh, en)
            or _THANKS_ONLY.match(zh)
            or (lx.ACK_MARK.search(zh, en) and _short(clause, zh_max=4, en_max=3))
        ):
            continue
        if lx.CLOSING.search(zh, en) and _short(clause, zh_max=6, en_max=4):
            continue
        if (_PLAN_EN.match(en) or _PLAN_ZH.match(zh)) and not _FOR_OWNER.search(clause.lower()):
            continue
        if _URGING_ZH.match(zh) or _URGING_EN.match(en):
            continue
        if _RESTATE.match(en) or _RESTATE.match(zh) or _thanks_by_sound(zh):
            continue  # "我说外卖到楼下了": said before; "太秆谢了": thanks, misheard
        units = _units(_TAG.sub("", zh) if re.search(r"[\u4e00-\u9fff]", clause) else _TAG.sub("", en).strip())
        # The echo test weighs what the clause says, not how a message is asked for: "Please tell him
        # the invoice is in the box." shares "please", "tell", "the" with "Alex asked me to tell you:
        # Please leave it with the front desk." and is news all the same.
        content = units - _RELAY_WORDS
        if not units or (said and len(content & said) >= 0.5 * len(content)):
            continue
        cjk = len(re.findall(r"[\u4e00-\u9fff]", clause))
        words = len(re.findall(r"[a-z0-9']+", en))
        # "Thursday, around three.": a when or a number is news however short (the rest of a message
        # begun the turn before: "tell her the plumber is coming" ... "Thursday, around three")
        detail = bool(_WHEN_ZH.search(zh)) if cjk else any(u.isdigit() for u in units) or bool(_WHEN_EN.search(en))
        if cjk >= 4 or (not cjk and words >= 3) or detail:
            kept.append(clause)
    return "，".join(kept) if kept and not kept[0].isascii() else (". ".join(kept) or None)


# Where the caller says they leave it or wait ("I'll leave it with your neighbour at number 5", "那我放电梯口了").
_PLACED_EN = re.compile(
    r"\b(leave|leaving|put|putting|drop|dropping|keep|keeping|stick|hand|wait|waiting|be)( it| them| this| the \w+)?"
    r"( off)? (with|at|on|in|by|behind|under|outside|inside|next to|near) (?P<place>[\w' ]{3,40})"
)
# (等 names a place only with 在/到 after it, or 在 before the place: "等机主回话", "我等会儿" wait for a
# reply or a while, not somewhere; "我在停车场等他" / "等在地库出口" is a place.)
_PLACED_ZH = re.compile(
    r"((放|搁|留|交给|塞|寄存|存)(在|到|给)?|等(在|到))(你|您)?(?P<place>[^了吧啊哈呢嘛您你我他她的\W\d_]{2,8}?)"
    r"(了|吧|啊|哈|呢|等|$)|在(?P<waiting>[^了吧啊哈呢嘛您你我他她的\W\d_]{2,8}?)(等|候)"
)
# What one waits on or is "in" that is no place ("we'll be in touch", "wait on his reply", "be on my way").
_NOT_A_PLACE_NOUN = re.compile(
    r"\b(touch|way|reply|answer|call|word|news|hold|line|time|message|text|response|decision)\b"
)

_ZH_LOCATIVE = re.compile(r"子?(里面|里头|里边|上面|下面|旁边|边上|那儿|那里|这儿|这里|里|上|下|边|旁|那|这)?$")


def placed_elsewhere(raw: str, instruction: str | None) -> bool:
    """The caller says they leave it (or wait) somewhere the owner's instruction does not name ("I'll
    leave it with your neighbour at number 5" after "leave it on the bench"): news for the owner,
    where the parcel or the driver is. Saying the instruction's own place back is compliance, also
    shorter ("the step" for "the doorstep") and with a goodbye after it ("..., have a good one")."""
    if not instruction:
        return False
    return any(_placed_elsewhere(clause, instruction) for clause in _PLACE_CLAUSE.split(raw) if clause.strip())


_PLACE_CLAUSE = re.compile(r"[,，.。!！?？;；]")
_NOT_A_PLACE = "the your his her my there here then now okay right"


def _placed_elsewhere(raw: str, instruction: str) -> bool:
    zh, en = compact(raw), normalize(raw)
    m = _PLACED_ZH.search(zh) if re.search(r"[\u4e00-\u9fff]", raw) else _PLACED_EN.search(en)
    if m is None:
        return False
    where = m.group("place") or (m.group("waiting") if m.re is _PLACED_ZH else None) or ""
    if m.re is _PLACED_ZH:
        # "那我放柜子里了" after "放楼下的快递柜就行": the same cabinet, said shorter; the place's core
        # (without 子 and a locative: 柜子里 -> 柜) said in the instruction is compliance
        core = _ZH_LOCATIVE.sub("", where) or where
        if core in compact(instruction):
            return False
    elif _NOT_A_PLACE_NOUN.search(where.strip()):
        return False
    place, said = _units(where) - _units(_NOT_A_PLACE), _units(instruction)
    return (
        bool(place)
        and not any(p in s or s in p for p in place for s in said if min(len(p), len(s)) >= 4)
        and not (place & said)
    )


# The owner's instruction does not work where the caller is: nobody at the meeting point ("二号口我就在这儿呢，
# 没看见人啊"), or the place does not exist ("the label says 4B but there's no 4B in this building").
_NOBODY_ZH = re.compile(r"没(看见|看到|见着|见到|瞧见)(人|你|您|她|他)|一个人(都|也)没(有|看见)|没人(啊|呀|呢)")
_NOBODY_EN = re.compile(
    r"\b(nobody|no one|no-one|noone)('s| is)? (here|around|there|at the)|"
    r"\b(can't|cannot|don't|do not) see (her|him|them|anyone|anybody|you)\b"
)
_NO_SUCH_ZH = re.compile(
    r"(没有|没)(这个|这)(门牌|门牌号|单元|楼|号|地址|房间|门)|(门牌|地址|房间|单元)(号)?不存在|根本没有.{0,4}(号|楼|单元|室)"
)
_NO_SUCH_EN = re.compile(
    r"\bthere('s| is) no (apartment |unit |flat |number |suite |house )?[\w-]{1,6} (here|in (this|the) building|on "
    r"(this|the) street)|\b(that|the|this) (address|apartment|unit|flat|house number) (doesn't|does not) exist|"
    r"\bno such (apartment|unit|flat|address|number|house|door)"
)


def instruction_fails(raw: str) -> str | None:
    """ "nobody": the caller is there and finds no one; "no_such": the place they were given does not exist."""
    zh, en = compact(raw), normalize(raw)
    if _NO_SUCH_ZH.search(zh) or _NO_SUCH_EN.search(en):
        return "no_such"
    if _NOBODY_ZH.search(zh) or _NOBODY_EN.search(en):
        return "nobody"
    return None
