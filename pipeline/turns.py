"""The caller's turn as audio, transcribed whole.

Whisper is not streaming and reads short pieces badly (a two-character "喂，你好"
alone comes back as noise), and its cost is nearly fixed per call (~0.6 s on 2 cores
for anything up to 30 s). So CallAssist records the whole turn, from the first speech
(with a little pre-roll) to the end of the turn, and transcribes it in one go.

To keep that off the critical path, transcription starts speculatively at every VAD
stop, on the audio so far, while Smart Turn decides whether the turn is over. If the
turn ends and no speech came after that stop, the speculative result is the answer;
if the caller spoke again, the audio is transcribed again, whole. If the caller
resumes after the turn was declared over, the turn is not answered; its audio stays
and becomes the start of the next turn (one reply to the whole utterance).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import metrics
from .asr import SpeechRecognizer, Transcript, pcm16_to_float
from .number_pass import NumberPass
from .onset import LineOnset
from .turn_model import TurnTextModel

log = logging.getLogger(__name__)

RATE = 16000
PRE_ROLL_S = 1.0  # the VAD confirms speech up to ~1.1 s after a short "Hi," (bench.vad_noise)
TRAILING_S = 0.3


@dataclass
class _Job:
    covers: int  # bytes of turn audio transcribed
    task: asyncio.Task[Transcript]
    started: float
    audio: np.ndarray  # what was transcribed (a number pass decodes it again)


class TurnTranscriber:
    """Per-call recorder of the caller's current turn, with speculative transcription."""

    def __init__(
        self,
        recognizer: SpeechRecognizer,
        *,
        lang: Callable[[], str],
        hotwords: Callable[[], str],
        candidates: Callable[[], tuple[str, ...]],
        turn_model: TurnTextModel | None = None,
        number_hotwords: Callable[[], str | None] | None = None,
        number_pass: NumberPass | None = None,
    ) -> None:
        self._recognizer = recognizer
        # The second decode of a turn that names a number without holding a whole one
        # (pipeline.number_pass): the prompt for it, None when this turn needs none.
        self._number_hotwords = number_hotwords
        self._number_pass = number_pass or NumberPass()
        # The text end-of-turn classifier (None: every statement waits out the long pause).
        self.turn_model = turn_model
        self._lang = lang
        self._hotwords = hotwords
        self._candidates = candidates
        self._pre_roll: deque[bytes] = deque()
        self._pre_roll_bytes = 0
        self._audio = bytearray()
        self._recording = False
        self.speaking = False
        self._speech_end = 0  # bytes of turn audio at the last VAD stop
        self._job: _Job | None = None
        self.last: Transcript | None = None
        self._starts = 0
        self._started = asyncio.Event()
        #: Hook for each speculative transcript once ready (the session precomputes the
        #: turn's embedding from it: CallSession.precompute); must not block.
        self.on_speculative_text: Callable[[str], object] | None = None
        self._answered = 0  # turns answered so far: a waiter from an older stop sees it move
        # The line's own evidence that the caller went on, before the VAD says so
        # (pipeline.onset); _stop_frame: its frame count at the last VAD stop.
        self._onset = LineOnset()
        self._stop_frame = 0
        # The number pass of a held turn, started while the hold runs: (job, task).
        self._numbers: tuple[_Job, asyncio.Task[Transcript]] | None = None

    # -------------------------------------------------------- audio side ----

    def audio(self, pcm: bytes) -> None:
        self._onset.feed(pcm, speech=self.speaking)
        if self._recording:
            self._audio.extend(pcm)
            return
        self._pre_roll.append(pcm)
        self._pre_roll_bytes += len(pcm)
        limit = int(PRE_ROLL_S * RATE * 2)
        while self._pre_roll_bytes > limit and self._pre_roll:
            self._pre_roll_bytes -= len(self._pre_roll.popleft())

    def speech_started(self) -> None:
        self.speaking = True
        self._drop_numbers()  # a number pass of the turn so far is stale now
        self._starts += 1
        self._started.set()
        if not self._recording:
            self._recording = True
            self._audio = bytearray(b"".join(self._pre_roll))
            self._pre_roll.clear()
            self._pre_roll_bytes = 0

    def speech_stopped(self) -> None:
        """VAD stop: transcribe the turn so far while end-of-turn is being decided."""
        self.speaking = False
        self._stop_frame = self._onset.frames
        if not self._recording:
            return
        self._speech_end = len(self._audio)
        self._start_job()

    def _start_job(self) -> None:
        if self._job is not None and self._job.covers == self._speech_end:
            return
        if self._job is not None and not self._job.task.done():
            return  # one at a time; turn_text() re-runs if this one goes stale
        snapshot = bytes(self._audio[: self._speech_end]) + bytes(int(TRAILING_S * RATE) * 2)
        audio = pcm16_to_float(snapshot)
        task = asyncio.get_running_loop().create_task(
            self._recognizer.transcribe(audio, self._lang(), hotwords=self._hotwords(), candidates=self._candidates())
        )
        self._job = _Job(self._speech_end, task, time.perf_counter(), audio)
        task.add_done_callback(self._speculated)

    def _speculated(self, task: asyncio.Task[Transcript]) -> None:
        hook = self.on_speculative_text
        if hook is None or task.cancelled() or task.exception() is not None or not task.result().text:
            return
        try:
            hook(task.result().text)
        except Exception:  # a precompute that fails must not touch the transcription
            log.exception("speculative transcript hook failed")

    # ---------------------------------------------------------- turn side ----

    async def turn_text(self, *, grace_s: float = 0.0) -> tuple[str | None, Transcript | None]:
        """At end of turn: the whole turn's text, or None if the caller has resumed
        speaking (the audio is kept for the next turn).

        A very short turn ("Okay.", "喂") is often the start of a sentence: with
        ``grace_s`` the caller gets that long to go on before it is answered alone.
        """
        if not self._recording:
            return "", None
        turn = self._answered
        while True:
            if self._answered != turn:
                # Another stop's waiter answered this turn while this one waited (pipecat
                # runs each turn-stopped handler as a task; on a loaded server the decode of
                # an early stop outlasts the caller's next sentence). Going on would
                # transcribe what is left: the line's silence (Whisper's "you"), or the
                # start of the caller's next turn, which that turn's own stop answers.
                return None, None
            job = self._job
            if job is None or job.covers != self._speech_end:
                if job is not None and not job.task.done():
                    with contextlib.suppress(Exception):
                        await job.task
                self._start_job()
                continue
            try:
                result = await job.task
            except Exception:
                metrics.ERRORS.labels(component="asr").inc()
                log.exception("transcription failed")
                result = Transcript("", self._lang(), 0.0, 0.0)
            if self.speaking or job.covers != self._speech_end:
                if self.speaking:
                    return None, None  # the caller went on: answer the whole utterance later
                continue
            if grace_s > 0 and _short(result.text):
                went = await self.went_on(grace_s)
            elif grace_s > 0 and (pause := self._pause_s(result.text)) > 0:
                went = await self.hold_pause(pause)
            else:
                went = False
            if went:
                self._drop_numbers()
                return None, None  # the caller went on after "Okay." / after a sentence
            if self._answered != turn:
                return None, None  # answered by another waiter during the hold
            numbers = self._numbers_for(job, result)
            if numbers is not None:
                await asyncio.wait({numbers})  # not raising if the caller's going on cancels it
                if numbers.cancelled():
                    return None, None
                result = numbers.result()
                self._numbers = None
                if self._answered != turn or self.speaking:
                    return None, None  # answered meanwhile, or the caller went on: the whole turn later
            self.last = result
            metrics.ASR_SECONDS.labels(lang=result.lang).observe(result.seconds)
            self._commit(job.covers)
            return result.text, result

    def paused_s(self) -> float:
        """Silence since the end of speech, in *audio* time (line audio received since the
        VAD stop, plus the VAD's own delay): on a loaded machine frames are processed in
        bursts, and a wall-clock pause would look longer than the caller's."""
        return VAD_STOP_S + max(0, len(self._audio) - self._speech_end) / (RATE * 2)

    async def went_on(self, hold_s: float) -> bool:
        """Wait until ``hold_s`` more seconds of line audio have arrived (bounded in wall
        time, in case the line stops); True if the caller started speaking meanwhile."""
        starts = self._starts
        target = self.paused_s() + hold_s
        deadline = time.monotonic() + hold_s + 2.0
        self._started.clear()
        while self.paused_s() < target and time.monotonic() < deadline and self._starts == starts:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._started.wait(), 0.02)  # a start ends the wait at once
        return self._starts != starts

    async def hold_pause(self, pause_s: float) -> bool:
        """Hold the turn until the caller's pause reaches ``pause_s`` (line-audio time);
        True if the caller went on meanwhile (a VAD start).

        The VAD reports resumed speech up to :data:`VAD_START_S` late, so a hold that must
        not miss a caller going on at ``pause_s`` waits ``pause_s + VAD_START_S``. It ends
        sooner, at ``pause_s + ONSET_MARGIN_S``, when the line itself stayed at its noise
        floor since the VAD stop (``pipeline.onset``: no energy onset, floor known): then
        there is nothing for the VAD to report late. That pause is counted both ways, by
        the VAD and by the line's energy, and the shorter one counts (the VAD may call a
        voice's soft tail silence already, which would make a caller's 0.9 s look longer).
        Any onset (the caller, a cough, a burst of line noise) keeps the full wait, which ends the turn unless the VAD
        confirms speech: a false onset costs the old latency, never the turn."""
        self._prefetch_numbers()
        starts = self._starts
        full = pause_s + VAD_START_S
        quiet = pause_s + ONSET_MARGIN_S
        deadline = time.monotonic() + max(0.0, full - self.paused_s()) + 2.0
        self._started.clear()
        while self._starts == starts and time.monotonic() < deadline:
            paused = self.paused_s()
            if paused >= full or (
                min(paused, self._onset.silent_s()) >= quiet and self._onset.quiet_since(self._stop_frame)
            ):
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._started.wait(), 0.02)  # a start ends the wait at once
        return self._starts != starts

    def _pause_s(self, text: str) -> float:
        """The pause an ended turn is held to, waiting for the caller to go on (0: answer
        it now). The audio model can call a turn complete at the pause after its first
        sentence ("Hi, this is the driver." <0.8 s> "I'm at your building."): words that
        trail off, or a statement the transcript model does not score a whole turn, are
        answered only once the pause reaches :data:`STATEMENT_PAUSE_S` (see
        :meth:`hold_pause`); a question, a closing or a clearly finished statement at once.
        A very short turn ("Okay.") has its own grace (``turn_text``)."""
        after = words_end_after(text, model=self.turn_model)
        if after == 0.0:
            return 0.0
        return STATEMENT_PAUSE_S if after is None else after

    def _numbers_for(self, job: _Job, first: Transcript) -> asyncio.Task[Transcript] | None:
        """The number pass of ``job``'s transcript (pipeline.number_pass), started now or
        already during the hold; None when this turn needs none."""
        if self._numbers is not None and self._numbers[0] is job:
            return self._numbers[1]
        self._drop_numbers()
        numbers = self._number_hotwords() if self._number_hotwords is not None else None
        if numbers is None and self._number_hotwords is not None and self._number_pass.wants_digits(first):
            # A turn decoded with the number hotwords already (a number was expected): only
            # the digits-only re-decode of its number (pipeline.digit_pass).
            task = asyncio.get_running_loop().create_task(
                self._number_pass.run_digits(self._recognizer, job.audio, first, self._hotwords())
            )
            self._numbers = (job, task)
            return task
        if numbers is None or not self._number_pass.wanted(first):
            return None
        task = asyncio.get_running_loop().create_task(
            self._number_pass.run(self._recognizer, job.audio, first, numbers)
        )
        self._numbers = (job, task)
        return task

    def _prefetch_numbers(self) -> None:
        """A hold is starting: run the turn's number pass meanwhile (it is a second
        decode, ~0.6 s, that would otherwise start only when the hold ends)."""
        job = self._job
        if job is None or job.covers != self._speech_end or not job.task.done() or job.task.cancelled():
            return
        if job.task.exception() is None:
            self._numbers_for(job, job.task.result())

    def _drop_numbers(self) -> None:
        if self._numbers is not None:
            self._numbers[1].cancel()
            self._numbers = None

    async def speculative(self) -> Transcript | None:
        """The transcript of the turn so far (text and Whisper's confidence), as of the last
        VAD stop; None if the caller has spoken again since (or nothing is being transcribed)."""
        job = self._job
        if job is None or self.speaking or job.covers != self._speech_end:
            return None
        try:
            result = await asyncio.shield(job.task)
        except Exception:
            return None
        if self.speaking or self._job is not job:
            return None
        return result

    def _commit(self, covered: int) -> None:
        """Start afresh, keeping what came after the transcribed speech as pre-roll: the
        first syllable of the caller's next words may already be in it."""
        tail = bytes(self._audio[covered:])[-int(PRE_ROLL_S * RATE * 2) :]
        self._pre_roll = deque([tail]) if tail else deque()
        self._pre_roll_bytes = len(tail)
        self._answered += 1
        self._recording = False
        self._audio = bytearray()
        self._speech_end = 0
        self._job = None
        self._drop_numbers()

    def close(self) -> None:
        if self._job is not None and not self._job.task.done():
            self._job.task.cancel()
        self._drop_numbers()


_CLOSING = ("bye", "再见", "拜拜", "that's all", "thank you", "thanks", "谢谢")


def _short(text: str) -> bool:
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


VAD_STOP_S = 0.2  # Silero VAD's default stop_secs: silence before it reports a stop
#: A caller who goes on is reported up to ~0.5 s after they do (Silero's 0.2 s start_secs
#: plus its 0.4 s loudness window filling): 0.28-0.48 s measured on the bench's caller
#: voices after 0.3-0.9 s pauses, both languages (docs/benchmarks.md, turn end).
# 0.4, not the 0.48 measured: with the text classifier on, an introduction is held
# BEGINNING_EXTRA_S more, which covers a 0.9 s pause reported 0.48 s late.
VAD_START_S = 0.4
#: A hold over a pause in which the line stayed at its noise floor ends this long after
#: the pause it waits for (TurnTranscriber.hold_pause): the energy onset detector needs
#: three 20 ms frames of a caller's resumed speech, plus slack for a soft first syllable
#: on a noisy line (up to five frames late at 5 dB SNR).
ONSET_MARGIN_S = 0.15

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


def silence_of(seconds: float) -> bytes:
    return np.zeros(int(seconds * RATE), dtype=np.int16).tobytes()
