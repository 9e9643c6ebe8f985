"""The typed frames of a voice call: how its processors tell each other what happened
(instead of reaching into each other or into the session).

Downstream, in pipeline order:

- :class:`UserTurnText` (listener -> CallProcessor): the caller's whole turn, its ASR
  confidence, and the language it was heard in while a bilingual call is detecting it.
- :class:`ReplySentence` (CallProcessor -> LocalTTS): one guarded sentence of reply
  ``reply``, at position ``index``.
- :class:`DropUnspoken` (CallProcessor -> LocalTTS, system): the owner speaks; sentences
  of replies up to ``reply`` not yet started are not spoken.
- :class:`SentenceStarted` / :class:`SentenceEnded` (LocalTTS -> PlaybackTracker): markers
  around a sentence's audio. They travel in the output transport's audio queue, so they
  leave it only once the audio before them has been sent to the caller; an interruption
  drops them with the audio.
- :class:`TurnLatency` (VoiceCall's latency observer -> CallProcessor).
- :class:`TurnEndedByWords` (TranscriptAwareTurnStop in TurnBridge -> CallProcessor, system):
  the transcript ended the caller's turn before the audio model did (a per-call count).
  The strategy reads the turn so far through a narrow interface instead
  (``pipeline.turn_end.TurnEvidence``: the speculative transcript with its confidence,
  the pause in line-audio time), not through the call; it is defined in
  ``pipeline.turn_end`` beside its sender and re-exported here.

Upstream:

- :class:`SentencePlayed` / :class:`PlaybackCut` (PlaybackTracker -> CallProcessor): a
  sentence reached the caller whole; an interruption cut playback there.
- :class:`TTSFirstAudio` (LocalTTS -> CallProcessor): the turn's first audio timing.
- :class:`ListeningContext` (CallProcessor -> TurnRecorder): the call's language and scene
  after a committed turn, for the recognizer's language and hotwords.
- :class:`HangUp` (any processor -> VoiceCall.end, the one way a call ends).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipecat.frames.frames import DataFrame, SystemFrame, TTSSpeakFrame

from ..turn_end import TurnEndedByWords

__all__ = [
    "DropUnspoken",
    "HangUp",
    "ListeningContext",
    "PlaybackCut",
    "ReplySentence",
    "SentenceEnded",
    "SentencePlayed",
    "SentenceStarted",
    "TTSFirstAudio",
    "TurnEndedByWords",
    "TurnLatency",
    "UserTurnText",
]


@dataclass
class UserTurnText(DataFrame):
    """The caller's whole turn, emitted once the turn has ended."""

    text: str
    asr_ms: float | None = None
    # Whisper's confidence in the turn (pipeline.asr.Confidence, as asr_* numbers), kept
    # in the turn's record beside asr_ms.
    asr: dict[str, float] = field(default_factory=dict)
    lang: str | None = None  # the language it was heard in, while the call detects it


@dataclass
class ReplySentence(TTSSpeakFrame):
    """A sentence of the assistant's reply number ``reply`` (0: the greeting)."""

    reply: int = 0
    index: int = 0


@dataclass
class DropUnspoken(SystemFrame):
    """Sentences of replies up to ``reply`` that have not started are not to be spoken."""

    reply: int


@dataclass
class SentenceStarted(DataFrame):
    reply: int
    index: int
    text: str  # the unit of the sentence this audio speaks (a preset response apart from its lead-in)
    seconds: float  # the unit's audio length
    offset: int = 0  # characters of the sentence before this unit


@dataclass
class SentenceEnded(DataFrame):
    reply: int
    index: int


@dataclass
class SentencePlayed(SystemFrame):
    """Sentence ``index`` of ``reply`` reached the caller whole."""

    reply: int
    index: int


@dataclass
class PlaybackCut(SystemFrame):
    """An interruption cut playback: in sentence ``index`` of ``reply`` (None: nothing was
    playing), after ``chars`` of its characters (estimated from the share of audio sent)."""

    reply: int | None
    index: int = 0
    chars: int = 0


@dataclass
class TTSFirstAudio(SystemFrame):
    """The first audio of a reply was ready ``ms`` after its first sentence reached TTS."""

    reply: int
    ms: float
    cached: bool


@dataclass
class TurnLatency(DataFrame):
    """Caller stopped -> assistant audio started (pipecat's UserBotLatencyObserver)."""

    seconds: float


@dataclass
class ListeningContext(SystemFrame):
    """The language and scene the recognizer should expect (after a committed turn), and
    whether the next caller turn is expected to hold a number (a read-back is pending or a
    callback number was asked for: :func:`pipeline.asr_bias.expects_number`)."""

    lang: str
    scene: str | None = None
    expect_number: bool = False


@dataclass
class HangUp(SystemFrame):
    """End the call. ``graceful``: after what is queued has been spoken (a goodbye);
    otherwise at once. ``error``: what failed, for the record (speaker failure)."""

    reason: str
    outcome: str
    graceful: bool = False
    error: str | None = None
