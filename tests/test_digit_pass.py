"""The digits-only re-decode of a number turn (pipeline/digit_pass.py): real Whisper on a
synthesized caller (piper) whose first reading has a digit wrong gets the number right, the
words around it kept; where the number starts in a first reading (zh homophones, en words);
a yes or a turn without digits is never re-decoded; a recognizer without a model (a fake)
keeps its reading."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from pipeline.asr import SpeechRecognizer, Transcript
from pipeline.digit_pass import digit_text, number_span
from pipeline.number_pass import NumberPass


@pytest.fixture(scope="module")
def recognizer() -> SpeechRecognizer:
    asr = SpeechRecognizer()
    asr.load()
    return asr


def _piper(text: str) -> np.ndarray:
    import soxr

    from pipeline.tts_config import engine_factory

    audio = engine_factory("piper", "en")().synthesize(text)
    pcm = np.frombuffer(audio.pcm, dtype=np.int16).astype(np.float32) / 32768
    return np.asarray(soxr.resample(pcm, audio.rate, 16000), dtype=np.float32)


def test_en_a_digit_misheard_is_decoded_again_digits_only(recognizer: SpeechRecognizer) -> None:
    audio = _piper("Hi, it's Jordan. You can get me on six two eight, seven four one, nine zero five three, bye.")
    # What Whisper base wrote for such a turn on a phone line: one digit wrong, one extra.
    first = Transcript("Hi, it's Jordan. You can get me on 628 774 1905 53, bye.", "en", 0.3, len(audio) / 16000)
    heard = asyncio.run(NumberPass(timeout_s=120).run_digits(recognizer, audio, first, "Alex"))  # no timing here
    assert "628" in heard.text and "".join(ch for ch in heard.text if ch.isdigit()) == "6287419053"
    assert heard.text.startswith("Hi, it's Jordan. You can get me on") and heard.text.endswith("bye.")


def test_en_a_right_reading_is_left_alone(recognizer: SpeechRecognizer) -> None:
    audio = _piper("My cell is three one two, four four six, eight eight zero one.")
    assert digit_text(recognizer.model, audio, "My cell is 312 446 8801.", "en", "Alex") is None


def test_where_the_number_starts_in_a_first_reading() -> None:
    text = "不对是157 刘三七九七一九啊。"
    start, end = number_span(text, "zh")  # type: ignore[misc]
    assert text[:start] == "不对是" and text[start:end].rstrip() == "157 刘三七九七一九"
    text = "我这边号码，幺五八，三三零二，九六四七，麻烦回个电话"
    start, end = number_span(text, "zh")  # type: ignore[misc]
    assert text[:start] == "我这边号码，" and text[end:].lstrip("，") == "麻烦回个电话"
    text = "Yeah, try me at nine one seven, two 0 2, 4478 okay?"
    start, end = number_span(text, "en")  # type: ignore[misc]
    assert text[:start] == "Yeah, try me at " and text[end:].strip() == "okay?"


@pytest.mark.parametrize(
    ("text", "lang"), [("对，没错", "zh"), ("好的，谢谢你", "zh"), ("Yes, that's right.", "en"), ("No.", "en")]
)
def test_a_yes_or_a_no_holds_no_number(text: str, lang: str) -> None:
    assert number_span(text, lang) is None


def test_a_recognizer_without_a_model_keeps_its_reading() -> None:
    class Fake:
        model = None

    first = Transcript("我的电话是139 1234 567八", "zh", 0.3, 3.0)
    heard = asyncio.run(NumberPass().run_digits(Fake(), np.zeros(16000, dtype=np.float32), first, ""))  # type: ignore[arg-type]
    assert heard is first
