"""What the caller's words say about the end of their turn: can the transcript be
finished at all (:func:`looks_complete`), is it a short preface (:func:`short_turn`), and
how long a pause must follow it before the turn is answered (:func:`words_end_after`;
``pipeline.turns.TurnTranscriber.hold_pause`` then waits for it in line-audio time,
ended early when the line's energy stayed at its floor).

Pure functions over text and scores; no audio, no clock.
"""

from __future__ import annotations

import re

from .turn_model import TurnTextModel

_CLOSING = ("bye", "再见", "拜拜", "that's all", "thank you", "thanks", "谢谢")


def short_turn(text: str) -> bool:
    """A preface-like turn ("Okay.", "Hi, this is FedEx", "喂，你好"): a few words, not a
    goodbye, and not a question of three words or more ("Is Alex there?", "放哪儿比较好？"
    hand the turn over; "Hello?" / "喂？" may still be a preface)."""
    lowered = text.lower()
    if any(c in lowered for c in _CLOSING):
        return False
    words = re.findall(r"[A-Za-z']+", text)
    hanzi = re.findall(r"[\u4e00-\u9fff]", text)
    if text.rstrip().endswith(("?", "？")) and len(words) + len(hanzi) >= 3:
        return False
    return len(words) + len(hanzi) > 0 and len(words) <= 4 and len(hanzi) <= 6


# Words a sentence is not finished on: the caller paused to think, not to hand over.
_OPEN_EN = frozenset({
    "and", "but", "or", "so", "because", "the", "a", "an", "to", "of", "for", "with", "um", "uh", "er",
    "like", "my", "your", "his", "her", "our", "their", "is", "are", "was", "were", "i'm", "it's", "that",
    "which", "if", "then", "at", "from", "by", "about", "as", "than", "also",
})  # fmt: skip
_OPEN_ZH = ("然后", "就是", "那个", "这个", "因为", "所以", "但是", "可是", "还有", "而且", "如果", "的话",
            "和", "跟", "把")  # fmt: skip
# Sentence-final particles and words: Whisper often leaves the full stop off Chinese.
_FINAL_ZH = tuple("了吧吗呢啦嘛见谢好的行哈哦")
# A turn ending in a closing is finished, full stop or not ("Thanks, bye", "Have a good night").
_CLOSING_END = re.compile(
    r"(?<![a-z])("
    + "|".join(map(re.escape, (*_CLOSING, "goodbye", "good night")))
    + r"|have a good (day|night|one|evening))"
    r"[\s.!。！]*$",
    re.IGNORECASE,
)
_FILLERS = ("um", "uh", "er", "嗯", "呃")


def looks_complete(text: str) -> bool:
    """Whether a transcript reads as a finished turn: it ends with a full stop, question
    or exclamation mark (Whisper punctuates from the audio), not with a trailing-off
    ellipsis or a comma, and its last word is not a conjunction, article, filler or
    preposition. Used to end a turn that Smart Turn judged incomplete once the speech
    recognizer has heard a whole sentence."""
    t = text.strip()
    if not t or t.endswith(("...", "…", ",", "，", "、", "-", "—")):
        return False
    if _CLOSING_END.search(t):
        return True  # Whisper often drops the full stop after a closing
    if t[-1] not in ".?!。？！" and not t.endswith(_FINAL_ZH):
        return False
    body = t.rstrip(".?!。？！ ")
    # A filler as the last word ("Hmm, um."), not a word ending in its letters ("driver").
    last = re.findall(r"[A-Za-z']+|[\u4e00-\u9fff]", body.lower())
    if not body or (last and last[-1] in _FILLERS) or body.endswith(("嗯", "呃")):
        return False
    if t[-1] in "?？":
        return True  # a question hands the turn over
    if re.search(r"[\u4e00-\u9fff]$", body):
        return not body.endswith(_OPEN_ZH)
    words = re.findall(r"[A-Za-z']+", body.lower())
    return bool(words) and words[-1] not in _OPEN_EN


#: A statement the transcript model does not find clearly finished ends the turn only
#: after this much pause: callers pause 300-900 ms between the sentences of one turn
#: ("Hi, this is the driver. <pause> I'm at your building. <pause> Where should I put
#: it?"), and a statement is what they pause after. A question or a closing hands the
#: turn over at once.
STATEMENT_PAUSE_S = 0.9


#: When Smart Turn hears the turn as unfinished, the words must be this much surer.
AUDIO_DISAGREES_MARGIN = 0.05

#: A statement the classifier scores below this reads as the start of a turn (an
#: introduction: "Hi, this is the delivery driver.", "喂，你好，我是顺丰快递。" score
#: 0.03-0.06), and its pause is held :data:`BEGINNING_EXTRA_S` longer: a caller pausing
#: 0.9 s is reported by the VAD up to 0.48 s late, past the plain hold (0.9 + 0.4 s).
#: Chosen on data/nlu/dev: 0.4% (en) / 0.3% (zh) of whole turns score below it (the
#: latency cost), 17% / 30% of turns cut at a sentence boundary (docs/benchmarks.md).
BEGINNING_P = 0.1
BEGINNING_EXTRA_S = 0.2


def words_end_after(text: str, *, audio_complete: bool = True, model: TurnTextModel | None = None) -> float | None:
    """How long the caller must have been silent (seconds since the end of speech) before
    the transcript ends the turn; None when the words say the turn is not over.
    Questions and closings: 0 (end as soon as the transcript is ready). Statements: 0 when
    the text end-of-turn classifier (``pipeline.turn_model``) scores the transcript a whole
    turn (above its threshold, chosen on held-out data; higher when the audio model,
    ``audio_complete=False``, disagrees), :data:`STATEMENT_PAUSE_S` plus
    :data:`BEGINNING_EXTRA_S` when it reads as the start of one (below
    :data:`BEGINNING_P`), else :data:`STATEMENT_PAUSE_S`. ``model``:
    the classifier (``Settings.turn_text_model`` decides whether a call has one; None:
    every statement waits out the pause)."""
    t = text.strip()
    if not looks_complete(t):
        return None
    if t.rstrip(" ")[-1:] in "?？" or _CLOSING_END.search(t) or t.endswith(("吗", "呢")):
        return 0.0
    if model is not None:
        bar = model.threshold + (0.0 if audio_complete else AUDIO_DISAGREES_MARGIN)
        p = model.p_complete(t)
        if p >= min(bar, 0.99):
            return 0.0
        if p < BEGINNING_P:
            return STATEMENT_PAUSE_S + BEGINNING_EXTRA_S
    return STATEMENT_PAUSE_S
