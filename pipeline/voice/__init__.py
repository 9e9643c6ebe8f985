"""The live voice call: a per-call pipecat pipeline around the shared CallSession.

    transport.input()          Twilio/Telnyx/Plivo WebSocket, WebRTC, SIP bridge
    VADProcessor               Silero VAD (ships in pipecat)
    TurnRecorder               records the caller's turn; speculative Whisper at each VAD stop
    TurnBridge                 Smart Turn v3 end-of-turn; emits the whole turn's text at once
    CallProcessor              CallSession.respond(): coordinator -> realizer -> safety guard;
                               commits each turn once spoken (or where a barge-in cut it)
    LocalTTS                   cached / piper / Kokoro / espeak-ng audio, unit by unit
    transport.output()
    PlaybackTracker            which sentences reached the caller, where playback was cut

Modules: :mod:`.frames` (the typed frames processors talk in), :mod:`.listen` (caller
side), :mod:`.processors` (turn-taking), :mod:`.speech` (TTS and playback),
:mod:`.call` (the call, its pipeline and its one hang-up path), :mod:`.recording`.

Barge-in: the caller speaking starts a user turn, pipecat broadcasts an
InterruptionFrame, queued assistant audio is dropped and the serializer sends
Twilio's ``clear``; the reply task is cancelled, the turn is committed as far as the
caller heard it, and the new turn is handled.
"""

from ..turn_end import TranscriptAwareTurnStop
from .call import VoiceCall, VoiceOptions, VoiceResources, active_voice_calls, open_voice_call
from .frames import HangUp, ListeningContext, UserTurnText
from .listen import SHORT_TURN_GRACE_S, Listener, TurnBridge, TurnRecorder
from .processors import CallProcessor
from .speech import LocalTTS, PlaybackTracker

__all__ = [
    "SHORT_TURN_GRACE_S",
    "CallProcessor",
    "HangUp",
    "Listener",
    "ListeningContext",
    "LocalTTS",
    "PlaybackTracker",
    "TranscriptAwareTurnStop",
    "TurnBridge",
    "TurnRecorder",
    "UserTurnText",
    "VoiceCall",
    "VoiceOptions",
    "VoiceResources",
    "active_voice_calls",
    "open_voice_call",
]
