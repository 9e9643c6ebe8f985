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
from .turn_words import AUDIO_COMPLETE_P, STATEMENT_PAUSE_S, short_turn, words_end_after

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
        # The audio model's P(turn complete) at the last VAD stop (None: not heard), and
        # how the last answered turn was ended: its per-turn timings (eot_*), kept in the
        # turn's record so the latency can be taken apart (docs/benchmarks.md, stop 17).
        self.audio_p: float | None = None
        self.end_of_turn: dict[str, float] = {}

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
        self.audio_p = None
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
            waited = time.perf_counter()
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
            if await self._held_and_went_on(result, grace_s, waited):
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

    async def _held_and_went_on(self, result: Transcript, grace_s: float, waited: float) -> bool:
        """Hold the ended turn for the pause its words call for (``grace_s`` for a short
        preface, :meth:`_pause_s` otherwise; none without ``grace_s``); True if the caller
        went on. Notes how the turn was ended in :attr:`end_of_turn`."""
        asr_wait_ms = round((time.perf_counter() - waited) * 1000, 1)
        pause = 0.0
        if grace_s > 0:
            pause = max(grace_s, self._pause_s(result.text)) if short_turn(result.text) else self._pause_s(result.text)
        went = pause > 0 and await self.hold_pause(pause)
        self.end_of_turn = {
            "eot_hold_ms": round(pause * 1000, 1),  # the pause the words called for (0: none)
            "eot_pause_ms": round(self.paused_s() * 1000, 1),  # line-audio pause when answered
            "eot_asr_wait_ms": asr_wait_ms,  # waiting for the decode after the turn ended
            **({"eot_audio_p": round(self.audio_p, 3)} if self.audio_p is not None else {}),
            **({"eot_text_p": round(self.turn_model.p_complete(result.text), 3)} if self.turn_model else {}),
        }
        return went

    def heard_audio_model(self, probability: float) -> None:
        """The audio end-of-turn model's P(complete) at this VAD stop (Smart Turn's)."""
        self.audio_p = probability

    def paused_s(self) -> float:
        """Silence since the end of speech, in *audio* time (line audio received since the
        VAD stop, plus the VAD's own delay): on a loaded machine frames are processed in
        bursts, and a wall-clock pause would look longer than the caller's."""
        return VAD_STOP_S + max(0, len(self._audio) - self._speech_end) / (RATE * 2)

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
        Any onset (the caller, a cough, a burst of line noise) keeps the full wait, which
        ends the turn unless the VAD confirms speech, and an onset late in the pause
        extends it to :data:`VAD_START_MAX_S` after the onset (the VAD's slowest report
        of speech begun there): a false onset costs latency, never the turn."""
        self._prefetch_numbers()
        starts = self._starts
        full = pause_s + VAD_START_S
        quiet = pause_s + ONSET_MARGIN_S
        deadline = time.monotonic() + max(0.0, full + VAD_START_MAX_S - self.paused_s()) + 2.0
        self._started.clear()
        while self._starts == starts and time.monotonic() < deadline:
            paused = self.paused_s()
            onset = self._onset.onset_since(self._stop_frame)
            limit = full if onset is None else max(full, VAD_STOP_S + onset + VAD_START_MAX_S)
            if paused >= limit or (
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
        A very short turn ("Okay.") has its own grace (``turn_text``). The audio model's
        probability at the stop (:attr:`audio_p`) grades the hold too (``turn_words``)."""
        audio_complete = self.audio_p is None or self.audio_p >= AUDIO_COMPLETE_P
        after = words_end_after(text, audio_complete=audio_complete, model=self.turn_model)
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
#: The VAD's slowest report of resumed speech measured (0.48 s, above): a hold in whose
#: pause the line's energy rose waits at least this long after that onset for the VAD.
VAD_START_MAX_S = 0.5


def silence_of(seconds: float) -> bytes:
    return np.zeros(int(seconds * RATE), dtype=np.int16).tobytes()
