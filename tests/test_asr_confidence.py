"""Each recognized turn carries Whisper's confidence; unclear audio scores lower than clear
speech, and the beam re-decode runs only for low-confidence short turns."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bench.line_audio import LineCondition, apply_line
from bench.tts_bench import phone_band
from pipeline.asr import Confidence, RedecodePolicy, SpeechRecognizer
from pipeline.tts import PiperEngine


@pytest.fixture(scope="module")
def asr() -> SpeechRecognizer:
    r = SpeechRecognizer()
    r.load()
    return r


@pytest.fixture(scope="module")
def clear() -> tuple[bytes, int]:
    a = PiperEngine().synthesize("Hi, the driver is outside, where should I wait?")
    return a.pcm, a.rate


def test_clear_speech_carries_high_confidence(asr: SpeechRecognizer, clear: tuple[bytes, int]) -> None:
    t = asr.transcribe_sync(phone_band(*clear), "en")
    assert "driver" in t.text.lower()
    c = t.confidence
    assert c is not None
    assert c.avg_logprob > -0.5 and c.score > 0.6
    assert c.no_speech_prob < 0.5 and 0.5 < c.compression_ratio < 2.4
    assert len(c.token_probs) >= 8 and 0 < c.min_token_prob <= 1
    assert set(c.as_dict()) >= {"avg_logprob", "no_speech_prob", "compression_ratio", "min_token_prob", "score"}


def test_buried_speech_scores_lower(asr: SpeechRecognizer, clear: tuple[bytes, int]) -> None:
    import audioop

    import soxr

    pcm, rate = clear
    x8 = soxr.resample(np.frombuffer(pcm, np.int16).astype(np.float32) / 32768, rate, 8000)
    ulaw, _ = apply_line(x8, LineCondition("awful", noise="babble", snr_db=-6.0, loss_pct=25.0), random.Random(1),
                         talkers=[x8])  # fmt: skip
    noisy = np.frombuffer(audioop.ulaw2lin(ulaw, 2), np.int16).astype(np.float32) / 32768
    bad = asr.transcribe_sync(soxr.resample(noisy, 8000, 16000).astype(np.float32), "en")
    good = asr.transcribe_sync(phone_band(*clear), "en")
    assert bad.confidence is not None and good.confidence is not None
    assert bad.confidence.score < good.confidence.score


def test_redecode_policy() -> None:
    policy = RedecodePolicy(below_logprob=-0.6, max_audio_s=6.0)
    assert policy.wants(Confidence(avg_logprob=-0.9), 3.0)
    assert not policy.wants(Confidence(avg_logprob=-0.3), 3.0)
    assert not policy.wants(Confidence(avg_logprob=-0.9), 9.0)  # too long for the budget


def test_redecode_keeps_the_better_scored_text(asr: SpeechRecognizer, clear: tuple[bytes, int]) -> None:
    always = RedecodePolicy(below_logprob=0.0, max_audio_s=30.0)
    once = asr.transcribe_sync(phone_band(*clear), "en")
    again = asr.transcribe_sync(phone_band(*clear), "en", redecode=always)
    assert again.confidence is not None and once.confidence is not None
    assert again.confidence.avg_logprob >= once.confidence.avg_logprob


class _CountingRecognizer(SpeechRecognizer):
    """Records the beam size of every decode (a subclass, not a patch)."""

    beams: list[int]

    def _decode(self, audio, lang, hotwords, *, beam_size=1, token_probs=False):  # type: ignore[no-untyped-def]
        self.beams.append(beam_size)
        return super()._decode(audio, lang, hotwords, beam_size=beam_size, token_probs=token_probs)


def test_the_call_paths_policy_is_the_recognizers_default(asr: SpeechRecognizer, clear: tuple[bytes, int]) -> None:
    """CALLASSIST_ASR_REDECODE builds the recognizer with a policy: transcribe() uses it
    unless told otherwise (``redecode=None``: never); without a policy, never."""
    audio = phone_band(*clear)
    r = _CountingRecognizer(redecode=RedecodePolicy(below_logprob=0.0, max_audio_s=30.0, beam_size=4))
    r._model, r.beams = asr._model, []  # the loaded model, shared
    r.transcribe_sync(audio, "en")
    assert r.beams == [1, 4]
    r.beams = []
    r.transcribe_sync(audio, "en", redecode=None)
    assert r.beams == [1]
    plain = _CountingRecognizer()
    plain._model, plain.beams = asr._model, []
    plain.transcribe_sync(audio, "en")
    assert plain.beams == [1]
