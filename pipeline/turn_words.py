"""What the caller's words say about the end of their turn: can the transcript be
finished at all (:func:`looks_complete`), is it a short preface (:func:`short_turn`), and
how long a pause must follow it before the turn is answered (:func:`words_end_after`, the
graded hold: the text end-of-turn classifier's score and the audio model's verdict give
one pause length; ``pipeline.turns.TurnTranscriber.hold_pause`` then waits for it in
line-audio time, ended early when the line's energy stayed at its floor).

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


#: The graded band. A statement the classifier scores between GRADED_P and its bar, when
#: the audio model also heard the turn as finished, is held for a pause shortened in
#: proportion to the score, from STATEMENT_PAUSE_S at GRADED_P down to GRADED_MIN_S just
#: under the bar. Chosen on data/nlu/dev (docs/benchmarks.md, stop 17): with callers'
#: pauses spread over 300-900 ms, this band adds ~0.1 point of cut-in risk per pause
#: (en 0.45 -> 0.54%, zh 0.76 -> 0.89% of pauses after an unfinished transcript) for
#: 0-0.2 s sooner on the whole statements scored in it (a third of them in each language).
#: A wider band (from 0.6, or down to 0.6 s) costs more risk than it saves.
GRADED_P = 0.7
GRADED_MIN_S = 0.7


#: The audio model's P(complete) at or above which it hears the turn finished (Smart
#: Turn's own cut: its verdict is "complete" from 0.5).
AUDIO_COMPLETE_P = 0.5


def statement_hold(p: float, *, threshold: float, audio_complete: bool = True) -> float:
    """The pause a statement scored ``p`` by the classifier is held to (0: answer at once).

    One hold length from the two models: sure (``p`` at or above ``threshold``, plus
    :data:`AUDIO_DISAGREES_MARGIN` when the audio model heard the turn unfinished) ->
    0; read as the start of a turn (below :data:`BEGINNING_P`) -> the long pause plus
    :data:`BEGINNING_EXTRA_S`; fairly sure and the audio model agrees -> graded between
    :data:`GRADED_MIN_S` and :data:`STATEMENT_PAUSE_S`; doubtful -> the long pause."""
    bar = min(threshold + (0.0 if audio_complete else AUDIO_DISAGREES_MARGIN), 0.99)
    if p >= bar:
        return 0.0
    if p < BEGINNING_P:
        return STATEMENT_PAUSE_S + BEGINNING_EXTRA_S
    if not audio_complete or p < GRADED_P or bar <= GRADED_P:
        return STATEMENT_PAUSE_S
    return round(STATEMENT_PAUSE_S - (STATEMENT_PAUSE_S - GRADED_MIN_S) * (p - GRADED_P) / (bar - GRADED_P), 3)


def hands_over(text: str) -> bool:
    """A question or a closing: the caller hands the turn over, whatever the pause."""
    t = text.strip()
    return t.rstrip(" ")[-1:] in "?？" or bool(_CLOSING_END.search(t)) or t.endswith(("吗", "呢"))


def words_end_after(text: str, *, audio_complete: bool = True, model: TurnTextModel | None = None) -> float | None:
    """How long the caller must have been silent (seconds since the end of speech) before
    the transcript ends the turn; None when the words say the turn is not over.
    Questions and closings: 0 (end as soon as the transcript is ready). Statements: the
    graded hold of :func:`statement_hold` on the text end-of-turn classifier's score
    (``pipeline.turn_model``; ``audio_complete=False``: the audio model disagrees).
    ``model``: the classifier (``Settings.turn_text_model`` decides whether a call has
    one; None: every statement waits out :data:`STATEMENT_PAUSE_S`)."""
    t = text.strip()
    if not looks_complete(t):
        return None
    if hands_over(t):
        return 0.0
    if model is None:
        return STATEMENT_PAUSE_S
    return statement_hold(model.p_complete(t), threshold=model.threshold, audio_complete=audio_complete)
