"""End of the caller's turn at processor level (issue 14 item 6): the real TurnRecorder,
TurnBridge and TranscriptAwareTurnStop, fed by a fake line that plays a scripted caller
in 20 ms frames at the line's pace, with VAD events where Silero reports them (a start
0.3 s into speech, a stop 0.2 s into silence), a fake recognizer with a set decode time
that hears the sentences the audio holds, and a scripted end-of-turn audio model
(pessimistic: it calls every pause the end of the turn, or never does).

What is asserted is behaviour: how many caller turns come out, with which words, and how
much line audio had passed when the turn was answered (line-audio time is what the turn
end counts, so the assertions hold on a loaded machine too).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from pipecat.audio.turn.base_turn_analyzer import BaseTurnAnalyzer, BaseTurnParams, EndOfTurnState
from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import MetricsData
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.turns.user_start import VADUserTurnStartStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from pipeline.asr import Transcript
from pipeline.session import CallServices
from pipeline.turn_end import TranscriptAwareTurnStop
from pipeline.turn_model import TurnTextModel, default_model
from pipeline.turns import ONSET_MARGIN_S, STATEMENT_PAUSE_S
from pipeline.turns import VAD_START_S as VAD_START_S_HOLD
from pipeline.voice import Listener, TurnBridge, TurnRecorder, UserTurnText, VoiceCall, VoiceOptions, VoiceResources
from pipeline.voice.frames import TurnEndedByWords

from .test_voice_processors import Harness, open_session, services, until

__all__ = ["services"]  # the fixture (a real Redis behind the session)

RATE = 16000
FRAME = 320  # samples: 20 ms
VAD_START_S = 0.3  # Silero reports speech this far into it (0.28-0.48 s measured)
VAD_STOP_S = 0.2  # and silence this far into it
ASR_S = 0.15  # the fake recognizer's decode time
SILENCE_WORD = {"en": "you", "zh": "你不认识我吗?"}  # what Whisper makes of a line's silence


def _speech(seconds: float) -> bytes:
    t = np.arange(int(RATE * seconds)) / RATE
    return (np.sin(2 * np.pi * 220 * t) * 6000).astype(np.int16).tobytes()


def _silence(seconds: float) -> bytes:
    return bytes(int(RATE * seconds) * 2)


class HearingRecognizer:
    """Hears the sentences the audio holds: bursts of speech separated by at least 0.25 s
    of silence, the n-th burst being sentence n of the script; silence alone is heard as
    Whisper hears it. Each decode takes ``ASR_S``; decode number ``slow`` waits for
    ``release`` (a loaded server's slow decode)."""

    def __init__(self, sentences: list[str], lang: str, *, slow: int | None = None) -> None:
        self.sentences = sentences
        self.lang = lang
        self.slow = slow
        self.release = asyncio.Event()
        self.decodes: list[str] = []

    async def transcribe(self, audio: np.ndarray, lang: str, **_kw: Any) -> Transcript:
        number = len(self.decodes)
        self.decodes.append("")
        await asyncio.sleep(ASR_S)
        if number == self.slow:
            await self.release.wait()
        heard = self.sentences[: _bursts(audio)]
        text = (" " if self.lang == "en" else "").join(heard) or SILENCE_WORD[self.lang]
        self.decodes[number] = text
        return Transcript(text, lang, ASR_S, len(audio) / RATE)


def _bursts(audio: np.ndarray) -> int:
    loud = np.abs(audio[: len(audio) // FRAME * FRAME]).reshape(-1, FRAME).max(axis=1) > 0.05
    bursts, quiet = 0, 99
    for frame_loud in loud:
        if frame_loud:
            if quiet * FRAME / RATE >= 0.25:
                bursts += 1
            quiet = 0
        else:
            quiet += 1
    return bursts


class ScriptedTurnModel(BaseTurnAnalyzer):
    """The end-of-turn audio model, scripted: at every VAD stop it says ``verdict``; after
    ``stop_secs`` of silence it calls the turn complete (as Smart Turn does)."""

    def __init__(self, verdict: EndOfTurnState, *, stop_secs: float = 1.2) -> None:
        super().__init__()
        self.verdict = verdict
        self._stop_ms = stop_secs * 1000
        self._silence_ms = 0.0
        self._triggered = False

    @property
    def speech_triggered(self) -> bool:
        return self._triggered

    @property
    def params(self) -> BaseTurnParams:
        return BaseTurnParams()

    def append_audio(self, buffer: bytes, is_speech: bool) -> EndOfTurnState:
        if is_speech:
            self._triggered, self._silence_ms = True, 0.0
        elif self._triggered:
            self._silence_ms += len(buffer) / 2 / RATE * 1000
            if self._silence_ms >= self._stop_ms:
                self.clear()
                return EndOfTurnState.COMPLETE
        return EndOfTurnState.INCOMPLETE

    async def analyze_end_of_turn(self) -> tuple[EndOfTurnState, MetricsData | None]:
        if self.verdict == EndOfTurnState.COMPLETE:
            self.clear()
        return self.verdict, None

    def clear(self) -> None:
        self._triggered, self._silence_ms = False, 0.0


@dataclass
class Answered:
    text: str
    line_s: float  # line audio played when the turn came out


class Line(FrameProcessor):
    """Records the caller turns that come out of the bridge, with the line time."""

    def __init__(self) -> None:
        super().__init__()
        self.answered: list[Answered] = []
        self.words_ends: list[int] = []
        self.played_s = 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, UserTurnText):
            self.answered.append(Answered(frame.text, self.played_s))
        elif isinstance(frame, TurnEndedByWords):
            self.words_ends.append(frame.count)
        await self.push_frame(frame, direction)


def _noise(seconds: float) -> bytes:
    """A burst of line noise (a cough, a bump): loud on the line, below the fake
    recognizer's speech level, and no VAD start."""
    rng = np.random.default_rng(int(seconds * 1000))
    return rng.uniform(-1200, 1200, int(RATE * seconds)).astype(np.int16).tobytes()


async def play(h: Harness, line: Line, script: list[tuple[Any, ...]], *, after_s: float) -> list[float]:
    """Play ``script`` ((``"speech"`` | ``"pause"`` | ``"noise"``, seconds[, VAD start
    delay]), ...) then ``after_s`` of silence, in 20 ms frames at the line's pace, with
    Silero-like VAD events (speech is reported ``VAD_START_S`` into it unless the step
    says otherwise; noise never). Returns the line time at which each sentence ended."""
    audio = bytearray()
    events: dict[int, Frame] = {}  # frame index -> VAD event sent after it
    ends: list[float] = []
    speaking = False
    for kind, seconds, *vad in [*script, ("pause", after_s)]:
        start = len(audio) // (FRAME * 2)
        audio += {"speech": _speech, "pause": _silence, "noise": _noise}[kind](seconds)
        if kind == "speech":
            delay = vad[0] if vad else VAD_START_S
            events[start + int(delay * RATE / FRAME)] = VADUserStartedSpeakingFrame(start_secs=delay)
            ends.append(len(audio) / 2 / RATE)
            speaking = True
        elif kind == "pause" and speaking and seconds > VAD_STOP_S:
            events[start + int(VAD_STOP_S * RATE / FRAME)] = VADUserStoppedSpeakingFrame(stop_secs=VAD_STOP_S)
            speaking = False
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    for i in range(len(audio) // (FRAME * 2)):
        await h.send(InputAudioRawFrame(bytes(audio[i * FRAME * 2 : (i + 1) * FRAME * 2]), RATE, 1))
        line.played_s = (i + 1) * FRAME / RATE
        if i in events:
            await h.send(events[i])
        await asyncio.sleep(max(0.0, t0 + line.played_s - loop.time()))
    return ends


def _pipeline(
    recognizer: HearingRecognizer, lang: str, verdict: EndOfTurnState, model: TurnTextModel | None
) -> tuple[list[FrameProcessor], Line]:
    listener = Listener(
        recognizer,  # type: ignore[arg-type]
        lang=lang,
        languages=(lang,),
        owner_name="Alex Chen",
        preset_texts=[],
        preset_scenes=[],
        turn_model=model,
    )
    stop = TranscriptAwareTurnStop(
        listener.transcriber, model=model, turn_analyzer=ScriptedTurnModel(verdict), wait_for_transcript=False
    )
    strategies = UserTurnStrategies(start=[VADUserTurnStartStrategy()], stop=[stop])
    line = Line()
    return [TurnRecorder(listener), TurnBridge(listener, user_turn_strategies=strategies), line], line


TWO_SENTENCES = {
    "en": ["Hi, this is the delivery driver.", "Where should I put it?"],
    "zh": ["你好，我是送外卖的。", "放哪儿比较好？"],
}
PAUSED = [
    ("en", EndOfTurnState.COMPLETE, True),  # the audio model calls the pause the end of the turn
    ("en", EndOfTurnState.INCOMPLETE, True),  # the words path is what could end it
    ("zh", EndOfTurnState.COMPLETE, True),
    ("zh", EndOfTurnState.INCOMPLETE, True),
    ("en", EndOfTurnState.COMPLETE, False),  # without the text classifier
]


@pytest.mark.parametrize(("lang", "verdict", "classifier"), PAUSED, ids=[f"{p[0]}-{p[1].name}-{p[2]}" for p in PAUSED])
async def test_a_600_ms_pause_between_two_sentences_does_not_cut_the_caller(
    lang: str, verdict: EndOfTurnState, classifier: bool
) -> None:
    sentences = TWO_SENTENCES[lang]
    recognizer = HearingRecognizer(sentences, lang)
    processors, line = _pipeline(recognizer, lang, verdict, default_model() if classifier else None)
    async with Harness(processors) as h:
        ends = await play(h, line, [("speech", 1.4), ("pause", 0.6), ("speech", 1.0)], after_s=2.5)
        await until(lambda: bool(line.answered), "the turn was answered")
    whole = (" " if lang == "en" else "").join(sentences)
    assert [a.text for a in line.answered] == [whole], line.answered
    assert line.answered[0].line_s > ends[-1]  # answered after the caller finished, not before


SURE = TurnTextModel(np.zeros(1 << 15, np.float32), bias=10.0, threshold=0.9)  # scripted: every text complete
PROMPT = [
    ("Where should I put it?", "packaged", True),
    ("放哪儿比较好？", "packaged", True),
    ("I'll leave it with the front desk.", "sure", True),
    ("I'll leave it with the front desk.", "none", False),
]


@pytest.mark.parametrize(("said", "classifier", "prompt"), PROMPT, ids=[f"{p[1]}-{p[2]}" for p in PROMPT])
async def test_a_finished_turn_still_ends_promptly(said: str, classifier: str, prompt: bool) -> None:
    """A question ends the turn by its words as soon as it is transcribed (not after the
    audio model's 1.2 s, nor after the statement's long pause); a statement the classifier
    is sure of does too; without the classifier a statement waits out the pause."""
    model = {"packaged": default_model(), "sure": SURE, "none": None}[classifier]
    lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in said) else "en"
    processors, line = _pipeline(HearingRecognizer([said], lang), lang, EndOfTurnState.INCOMPLETE, model)
    async with Harness(processors) as h:
        ends = await play(h, line, [("pause", 0.3), ("speech", 1.2)], after_s=2.5)
        await until(lambda: bool(line.answered), "the turn was answered")
    assert [a.text for a in line.answered] == [said], line.answered
    waited = line.answered[0].line_s - ends[-1]
    if prompt:  # the VAD stop (0.2 s) and one decode, well before the long pause
        assert waited < STATEMENT_PAUSE_S, waited
        assert line.words_ends == [1], line.words_ends  # the words ended it, not the audio model
    else:
        assert waited >= STATEMENT_PAUSE_S, waited


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_slow_early_decode_does_not_answer_the_silence_after_the_turn(lang: str) -> None:
    """The stray turn: two stops of one utterance wait at once; the first stop's decode
    outlasts the caller's second sentence. One caller turn comes out, whole; the line's
    silence afterwards is not transcribed as another ("you")."""
    sentences = TWO_SENTENCES[lang]
    recognizer = HearingRecognizer(sentences, lang, slow=0)
    processors, line = _pipeline(recognizer, lang, EndOfTurnState.COMPLETE, default_model())
    async with Harness(processors) as h:
        feed = asyncio.get_running_loop().create_task(
            play(h, line, [("speech", 1.4), ("pause", 0.6), ("speech", 1.0)], after_s=3.0)
        )
        await until(lambda: line.played_s > 3.6, "the caller finished")
        recognizer.release.set()  # the slow first decode comes back after the second stop
        await feed
    whole = (" " if lang == "en" else "").join(sentences)
    assert [a.text for a in line.answered] == [whole], (line.answered, recognizer.decodes)
    assert SILENCE_WORD[lang] not in recognizer.decodes, recognizer.decodes


# ------------------------------------------------ the line's own evidence ----
# A statement the words do not mark finished is held until the pause reaches
# STATEMENT_PAUSE_S. The VAD reports a caller going on up to VAD_START_S late, so the hold
# used to wait STATEMENT_PAUSE_S + VAD_START_S; a line whose energy stayed at its floor
# (pipeline.onset) has nothing to report late, and the hold ends at the pause.

HOLD_CASES = [
    (lang, verdict) for lang in ("en", "zh") for verdict in (EndOfTurnState.COMPLETE, EndOfTurnState.INCOMPLETE)
]
HOLD_IDS = [f"{c[0]}-{c[1].name}" for c in HOLD_CASES]


@pytest.mark.parametrize(("lang", "verdict"), HOLD_CASES, ids=HOLD_IDS)
async def test_a_quiet_pause_ends_the_hold_at_the_statement_pause(lang: str, verdict: EndOfTurnState) -> None:
    said = TWO_SENTENCES[lang][0]  # a statement: held for the long pause (no classifier)
    processors, line = _pipeline(HearingRecognizer([said], lang), lang, verdict, None)
    async with Harness(processors) as h:
        ends = await play(h, line, [("pause", 0.3), ("speech", 1.2)], after_s=2.5)
        await until(lambda: bool(line.answered), "the turn was answered")
    assert [a.text for a in line.answered] == [said], line.answered
    waited = line.answered[0].line_s - ends[-1]
    # Not + VAD_START_S (0.4 s): the slack is for frames and a decode in flight.
    assert STATEMENT_PAUSE_S <= waited < STATEMENT_PAUSE_S + ONSET_MARGIN_S + 0.15, waited


@pytest.mark.parametrize(("lang", "verdict"), HOLD_CASES, ids=HOLD_IDS)
async def test_a_caller_who_goes_on_at_0_7_s_reported_late_is_one_turn(lang: str, verdict: EndOfTurnState) -> None:
    """The caller resumes 0.7 s into the pause and the VAD reports it 0.45 s later, after
    the quiet-line hold would have ended (0.9 + 0.15 s): the line's energy heard it, so the
    hold waited for the VAD, and the utterance is answered once, whole."""
    sentences = TWO_SENTENCES[lang]
    processors, line = _pipeline(HearingRecognizer(sentences, lang), lang, verdict, None)
    async with Harness(processors) as h:
        ends = await play(h, line, [("speech", 1.4), ("pause", 0.7), ("speech", 1.0, 0.45)], after_s=2.5)
        await until(lambda: bool(line.answered), "the turn was answered")
    whole = (" " if lang == "en" else "").join(sentences)
    assert [a.text for a in line.answered] == [whole], line.answered
    assert line.answered[0].line_s > ends[-1]


@pytest.mark.parametrize(("lang", "verdict"), HOLD_CASES, ids=HOLD_IDS)
async def test_a_noise_burst_in_the_pause_does_not_leave_the_turn_unanswered(
    lang: str, verdict: EndOfTurnState
) -> None:
    """A cough or a bump 0.5 s into the pause: the line's energy rises but the VAD never
    reports speech. The turn is answered, once, no later than the hold before the energy
    onset detector (STATEMENT_PAUSE_S + VAD_START_S)."""
    said = TWO_SENTENCES[lang][0]
    processors, line = _pipeline(HearingRecognizer([said], lang), lang, verdict, None)
    async with Harness(processors) as h:
        ends = await play(h, line, [("speech", 1.2), ("pause", 0.5), ("noise", 0.15)], after_s=2.5)
        await until(lambda: bool(line.answered), "the turn was answered")
    assert [a.text for a in line.answered] == [said], line.answered
    waited = line.answered[0].line_s - ends[-1]
    assert waited < STATEMENT_PAUSE_S + VAD_START_S_HOLD + 0.25, waited  # + frame and decode slack


# ------------------------------------------------------------ settings ----


def test_the_classifier_switch_is_a_setting_read_from_callassist_turn_text_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.settings import Settings

    monkeypatch.setenv("CALLASSIST_TURN_TEXT_MODEL", "0")
    assert Settings().turn_text_model is False
    monkeypatch.setenv("CALLASSIST_TURN_TEXT_MODEL", "1")
    assert Settings().turn_text_model is True
    monkeypatch.setenv("CALLASSIST_TURN_TEXT_MODEL", "maybe")
    with pytest.raises(ValueError, match="turn_text_model"):
        Settings()


@pytest.mark.parametrize("on", [True, False])
async def test_a_voice_call_gets_the_classifier_from_its_options(services: CallServices, on: bool) -> None:
    session = await open_session(services)
    voice = VoiceResources(services, HearingRecognizer([], "en"), None, VoiceOptions(turn_text_model=on))  # type: ignore[arg-type]
    call = VoiceCall(voice, session, "twilio")
    assert call.listener.transcriber.turn_model is (default_model() if on else None)
