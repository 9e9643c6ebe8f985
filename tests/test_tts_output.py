"""Speech output (issue 15, item 2): a call that switches language keeps speaking (one
resampler per engine rate: piper 22,050 Hz, Kokoro 24,000 Hz), and a call whose speaker
fails ends cleanly with the record saying so."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest
from pipecat.frames.frames import ErrorFrame, TTSAudioRawFrame, TTSSpeakFrame
from pipecat.tests.utils import run_test
from redis.asyncio import Redis

from pipeline.records import CallStore
from pipeline.session import CallServices, CallSession
from pipeline.tts import Audio
from pipeline.voice import HangUp, LocalTTS, VoiceCall, VoiceOptions, VoiceResources
from presets.owners import OwnerStore
from presets.pool import PresetStore

from .helpers import RedisProcess


def tone(rate: int, seconds: float = 0.5) -> Audio:
    t = np.arange(int(rate * seconds)) / rate
    return Audio((np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16).tobytes(), rate)


class ScriptedSynthesizer:
    """Stands in for the engines: each unit at the rate its language's engine speaks at."""

    def __init__(self, *, fail_on: str | None = None) -> None:
        self.fail_on = fail_on

    def synthesize_unit(self, text: str) -> tuple[Audio, bool, str]:
        if self.fail_on and self.fail_on in text:
            raise RuntimeError("voice model crashed")
        zh = any("\u4e00" <= ch <= "\u9fff" for ch in text)
        return (tone(24000), False, "kokoro") if zh else (tone(22050), False, "piper")


@pytest.fixture
async def voice_call(clean_redis: RedisProcess) -> AsyncIterator[VoiceCall]:
    redis = Redis.from_url(clean_redis.url, decode_responses=True)
    owners = OwnerStore(redis)
    services = CallServices(redis=redis, owners=owners, presets=PresetStore(redis), calls=CallStore(redis, 3600))
    owner, _ = await owners.create_owner("陈先生", "zh")
    session = await CallSession.open(services, owner_id=owner.owner_id, channel="twilio", line="+15550100")
    voice = VoiceResources(services, None, ScriptedSynthesizer(), VoiceOptions())  # type: ignore[arg-type]
    yield VoiceCall(voice, session, "twilio")
    await redis.aclose()


async def _spoken(tts: LocalTTS, text: str, context: str) -> list[object]:
    return [f async for f in tts.run_tts(text, context)]


async def test_call_switching_language_keeps_speaking(voice_call: VoiceCall) -> None:
    tts = LocalTTS(voice_call.voice.synthesizer)
    tts._sample_rate = 8000  # what the pipeline's StartFrame sets for a phone line
    for i, text in enumerate(["您好，我是陈先生的助理。", "Sure, I can take a message.", "好的，我会转告他。"]):
        frames = await _spoken(tts, text, f"c{i}")
        audio = [f for f in frames if isinstance(f, TTSAudioRawFrame)]
        assert not [f for f in frames if isinstance(f, ErrorFrame)], text
        assert audio and all(f.sample_rate == 8000 for f in audio), text
        seconds = sum(len(f.audio) for f in audio) / 2 / 8000
        assert seconds > 0.4, (text, seconds)  # the whole unit, resampled from 22.05 or 24 kHz
    assert voice_call.session.record.ended_at is None


async def test_failing_speaker_asks_to_hang_up(voice_call: VoiceCall) -> None:
    tts = LocalTTS(ScriptedSynthesizer(fail_on="message"))  # type: ignore[arg-type]
    down, up = await run_test(tts, frames_to_send=[TTSSpeakFrame("Hello."), TTSSpeakFrame("I can take a message.")])
    assert [f for f in down if isinstance(f, TTSAudioRawFrame)]  # the first sentence was spoken
    assert any(isinstance(f, ErrorFrame) for f in down + up)
    hangups = [f for f in up if isinstance(f, HangUp)]
    assert len(hangups) == 1 and hangups[0].reason == "speaker_failed"
    assert hangups[0].error is not None and "voice model crashed" in hangups[0].error


async def test_failing_speaker_ends_the_call_with_the_reason(voice_call: VoiceCall) -> None:
    await voice_call.end("speaker_failed", outcome="error", error="RuntimeError: voice model crashed")
    await voice_call.end("caller_hangup", outcome="caller_hangup")  # a second end changes nothing
    record = await voice_call.voice.services.calls.get(voice_call.session.call_id)
    assert record is not None and record.ended_at is not None
    assert record.end_reason == "speaker_failed"
    assert "voice model crashed" in record.stats["speaker_error"]
