"""The caller's turn ends over steady background noise (issue 14 item 7).

Real audio: caller sentences synthesized with ``bench voice``'s caller voice (piper joe),
put on ``bench/line_audio.py``'s babble line (other talkers 12 dB below the caller, also
filling the line before and after the words), decoded from mu-law and fed at 16 kHz in
20 ms frames through the call path's real processors: pipecat's ``VADProcessor`` with the
call's VAD, the turn recorder and the turn bridge, and a fake recognizer with a set delay.
Plain Silero hears the background talkers as the caller still speaking (the turn never
ends); the noise-gated VAD ends it after the caller stops, and on a clean line it cuts the
caller's speech exactly as plain Silero does (Whisper gets the same audio).
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.frames.frames import InputAudioRawFrame, VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame
from pipecat.processors.audio.vad_processor import VADProcessor
from pipecat.processors.frame_processor import FrameDirection

from bench.callers import ROSTER, CallerVoices
from bench.vad_noise import LEAD_S, TAIL_S, line16k
from pipeline.voice import Listener, TurnRecorder, UserTurnText
from pipeline.voice.vad import FLOOR_MIN_DB, NoiseFloor, NoiseGatedVAD, level_db

from .test_voice_processors import Capture, FakeRecognizer, Harness, timeout_bridge, until

SENTENCE = "Hi, I'm outside with your order, the bag ripped and the curry leaked all over."
OTHERS = [
    "Do you want me to still leave it, or should I cancel it and get you a refund?",
    "Okay, I'll wait a couple minutes then. Can he text me back?",
    "Hello, I have a parcel for you, where should I leave it?",
]


@pytest.fixture(scope="module")
def caller() -> tuple[np.ndarray, list[np.ndarray]]:
    voices = CallerVoices()
    voice = ROSTER["en"][0]
    return voices._speech8k(SENTENCE, "en", voice), [voices._speech8k(t, "en", voice) for t in OTHERS]


def frames(audio16: bytes) -> list[InputAudioRawFrame]:
    step = 640  # 20 ms at 16 kHz, as the transports deliver it
    return [InputAudioRawFrame(audio16[i : i + step], 16000, 1) for i in range(0, len(audio16) - step + 1, step)]


def states(analyzer: Any, audio16: bytes) -> list[str]:
    analyzer.set_sample_rate(16000)
    return [analyzer._run_analyzer(audio16[i : i + 640]).name for i in range(0, len(audio16) - 639, 640)]


# ------------------------------------------------------------- the floor ----


def test_the_floor_follows_the_background_not_the_caller() -> None:
    floor = NoiseFloor(windows=125, warm_windows=10)
    assert floor.update(-40.0) is None  # not known before the warm-up
    rng = np.random.default_rng(1)
    for i in range(400):  # background at -40 dB with the caller 15 dB above it 70% of the time
        value = floor.update(-25.0 + rng.normal(0, 2) if i % 10 < 7 else -40.0 + rng.normal(0, 1))
    assert value is not None and -43.0 < value < -37.0
    quiet = NoiseFloor(windows=125, warm_windows=1)
    assert quiet.update(-100.0) == FLOOR_MIN_DB  # a silent line: the clamp, never below
    assert level_db(b"\x00\x00" * 512) == -100.0
    assert abs(level_db((np.full(512, 3277, dtype=np.int16)).tobytes()) - (-20.0)) < 0.1


# ---------------------------------------------------- turn end in babble ----


async def _turns_over(audio16: bytes, vad: Any) -> tuple[list[str], Capture]:
    recognizer = FakeRecognizer([(0.5, SENTENCE)], delay_s=0.05)
    listener = Listener(
        recognizer,  # type: ignore[arg-type]
        lang="en",
        languages=("en",),
        owner_name="Alex Chen",
        preset_texts=[],
        preset_scenes=[],
    )
    bridge = timeout_bridge(listener)
    vad_events = Capture(FrameDirection.DOWNSTREAM)
    turns = Capture(FrameDirection.DOWNSTREAM)
    async with Harness([VADProcessor(vad_analyzer=vad), vad_events, TurnRecorder(listener), bridge, turns]) as h:
        await h.send(*frames(audio16))
        # The audio is all queued; wait (bounded) until the VAD has seen the last of it.
        await until(
            lambda: sum(isinstance(f, InputAudioRawFrame) for f in vad_events.frames) >= len(frames(audio16)),
            "all audio analyzed",
        )
        await asyncio.sleep(1.5)  # the stop strategy's 0.5 s timeout, then the transcript
    return [f.text for f in turns.frames if isinstance(f, UserTurnText)], vad_events


async def test_a_turn_over_steady_babble_ends_after_the_caller_stops(caller: Any) -> None:
    speech, others = caller
    audio = line16k(speech, "babble12", seed=7, talkers=others)
    texts, vad = await _turns_over(audio, NoiseGatedVAD())
    assert texts == [SENTENCE], texts  # one turn, answered
    events = [f for f in vad.frames if isinstance(f, (VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame))]
    assert events and isinstance(events[-1], VADUserStoppedSpeakingFrame), "the VAD stopped, and stayed stopped"
    # The stop came from the audio (the caller's last word), not from the audio running
    # out (pipecat forces a stop after 1 s without audio): a second and more of the
    # background followed it, and no speech started in it (no phantom turn).
    last_stop = vad.frames.index(events[-1])
    after = [f for f in vad.frames[last_stop:] if isinstance(f, InputAudioRawFrame)]
    assert len(after) * 0.02 >= 1.0, len(after)


def test_plain_silero_never_ends_that_turn(caller: Any) -> None:
    """The failure the gate fixes, on the same audio: the background keeps Silero speaking
    for the TAIL_S seconds after the caller's last word."""
    speech, others = caller
    audio = line16k(speech, "babble12", seed=7, talkers=others)
    end_chunk = int((LEAD_S + len(speech) / 8000 + 1.0) / 0.02)
    plain = states(SileroVADAnalyzer(), audio)
    assert any(s in ("SPEAKING", "STOPPING") for s in plain[end_chunk:]), "plain Silero stopped"
    gated = states(NoiseGatedVAD(), audio)
    assert all(s in ("QUIET", "STARTING") for s in gated[end_chunk:])


def test_on_a_clean_line_the_gate_cuts_speech_as_silero_does(caller: Any) -> None:
    speech, _ = caller
    audio = line16k(speech, "clean", seed=7, talkers=[])
    gated = NoiseGatedVAD()
    assert states(gated, audio) == states(SileroVADAnalyzer(), audio)
    assert gated.gated == 0  # the same windows reach the recognizer: recognized the same
    assert len(audio) / 32000 > LEAD_S + TAIL_S


def test_the_gate_can_be_turned_off(caller: Any) -> None:
    speech, others = caller
    audio = line16k(speech, "babble12", seed=7, talkers=others)
    assert states(NoiseGatedVAD(margin_db=None), audio) == states(SileroVADAnalyzer(), audio)
