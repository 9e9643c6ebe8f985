"""A turn expected to hold a number is recognized with the digits example at the head of
Whisper's prompt (pipeline/asr_bias.py ``number_hotwords``): after the assistant reads a
callback number back, the recognizer hears of it through ``ListeningContext`` and the next
caller turn is decoded with the number hotwords; once the number is confirmed, the call's
own hotwords come back."""

from __future__ import annotations

from typing import Any

from pipecat.frames.frames import VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame
from pipecat.processors.frame_processor import FrameDirection

from pipeline.asr import Transcript
from pipeline.asr_bias import NUMBER_HINT
from pipeline.session import CallServices
from pipeline.voice import CallProcessor, Listener, LocalTTS, PlaybackTracker, TurnRecorder, UserTurnText

from .test_voice_processors import (  # noqa: F401  (services is a fixture)
    PRESET,
    Capture,
    FakeRecognizer,
    FakeSynthesizer,
    Harness,
    open_session,
    services,
    speech,
    timeout_bridge,
    until,
)


class PromptRecorder(FakeRecognizer):
    """The scripted recognizer, keeping the hotwords each turn was decoded with."""

    def __init__(self, turns: list[str]) -> None:
        super().__init__([(1.0, turns[0])])
        self.turns = turns
        self.prompts: list[str] = []

    async def transcribe(self, audio: Any, lang: str, **kw: Any) -> Transcript:
        self.prompts.append(str(kw.get("hotwords") or ""))
        self.pieces = [(1.0, self.turns[min(len(self.prompts) - 1, len(self.turns) - 1)])]
        return await super().transcribe(audio, lang, **kw)


async def test_the_turn_after_a_read_back_is_decoded_with_the_number_hotwords(services: CallServices) -> None:  # noqa: F811
    session = await open_session(services)
    recognizer = PromptRecorder(
        ["Hi, this is Dana from the garage, call me back on 415 555 0134.", "Yes, that's right."]
    )
    listener = Listener(
        recognizer,  # type: ignore[arg-type]
        lang="en",
        languages=("en",),
        owner_name="Alex Chen",
        preset_texts=[PRESET],
        preset_scenes=["delivery"],
    )
    turns = Capture(FrameDirection.DOWNSTREAM)
    processor = CallProcessor(session, silence_timeout_s=60, transport_name="twilio")
    pipeline = [TurnRecorder(listener), timeout_bridge(listener), turns, processor, LocalTTS(FakeSynthesizer())]
    async with Harness([*pipeline, PlaybackTracker()]) as h:  # type: ignore[arg-type]
        await h.send(VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await until(lambda: len(session.record.turns) == 1, "the number was read back")
        assert session.state.readback is not None, session.record.turns[0].reply
        await until(lambda: listener.expect_number, "the recognizer heard a number is expected")
        await h.send(*speech(0.3), VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await until(lambda: len(session.record.turns) == 2, "the confirmation was taken")
        # Confirmed: nothing is pending, so the next turn is an ordinary one again.
        await until(lambda: not listener.expect_number, "the number hotwords were dropped")

    texts = [f.text for f in turns.frames if isinstance(f, UserTurnText)]
    assert len(texts) == 2, texts
    first = [p for p in recognizer.prompts if p][:1]
    number_turn = recognizer.prompts[-1]
    assert first and not first[0].startswith(NUMBER_HINT["en"])  # an ordinary turn: the call's own hotwords
    assert number_turn.startswith(NUMBER_HINT["en"]), number_turn
    assert session.record.turns[1].caller_text == "Yes, that's right."
    assert session.state.readback is None


def test_number_hotwords_only_while_a_number_is_expected() -> None:
    listener = Listener(
        FakeRecognizer([]),  # type: ignore[arg-type]
        lang="zh",
        languages=("zh",),
        owner_name="王女士",
        preset_texts=["放门口的鞋柜上就行"],
        preset_scenes=["takeout"],
    )
    plain = listener.hotwords()
    assert not plain.startswith(NUMBER_HINT["zh"])
    listener.expect_number = True
    assert listener.hotwords().startswith(NUMBER_HINT["zh"])
    assert plain in listener.hotwords() or listener.hotwords().startswith(NUMBER_HINT["zh"] + " ")


class NumberPassRecognizer(FakeRecognizer):
    """A first decode that names a number without holding a whole one; the decode with the
    digits example leading the prompt hears it whole. ``first_s``: the first decode's cost."""

    def __init__(self, first: str, second: str, *, first_s: float = 0.05) -> None:
        super().__init__([(1.0, first)])
        self.first, self.second, self.first_s = first, second, first_s
        self.prompts: list[str] = []

    async def transcribe(self, audio: Any, lang: str, **kw: Any) -> Transcript:
        prompt = str(kw.get("hotwords") or "")
        self.prompts.append(prompt)
        numbers = prompt.startswith(NUMBER_HINT[lang])
        self.pieces = [(1.0, self.second if numbers else self.first)]
        result = await super().transcribe(audio, lang, **kw)
        result.seconds = 0.05 if numbers else self.first_s
        return result


async def _one_turn(services: CallServices, recognizer: NumberPassRecognizer, lang: str) -> Any:  # noqa: F811
    session = await open_session(services)
    listener = Listener(
        recognizer,  # type: ignore[arg-type]
        lang=lang,
        languages=(lang,),
        owner_name="Alex Chen",
        preset_texts=[PRESET],
        preset_scenes=["delivery"],
    )
    processor = CallProcessor(session, silence_timeout_s=60, transport_name="twilio")
    pipeline = [TurnRecorder(listener), timeout_bridge(listener), processor, LocalTTS(FakeSynthesizer())]
    async with Harness([*pipeline, PlaybackTracker()]) as h:  # type: ignore[arg-type]
        await h.send(VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await until(lambda: len(session.record.turns) == 1, "the turn was answered")
    return session


async def test_a_volunteered_number_heard_in_part_is_decoded_again_with_the_number_hotwords(
    services: CallServices,  # noqa: F811
) -> None:
    """issue 14 item 5: the second decode on the live path. The first decode ("my number
    is 415 555", no whole number) is followed by one with the digits example; the call
    acts on the number heard whole, and the record keeps it."""
    en = NumberPassRecognizer(
        "Hi, it's Dana from the garage, my number is 415 555.",
        "Hi, it's Dana from the garage, my number is 415 555 0134.",
    )
    session = await _one_turn(services, en, "en")
    assert len(en.prompts) == 2 and en.prompts[1].startswith(NUMBER_HINT["en"]), en.prompts
    assert session.record.turns[0].caller_text.endswith("415 555 0134.")
    assert "415 555 0134" in session.record.turns[0].reply
    zh = NumberPassRecognizer("你好，我是顺丰的，我电话是幺三九一二。", "你好，我是顺丰的，我电话是139 1234 5678。")
    session = await _one_turn(services, zh, "zh")
    assert len(zh.prompts) == 2 and zh.prompts[1].startswith(NUMBER_HINT["zh"]), zh.prompts
    assert "139 1234 5678" in session.record.turns[0].reply


async def test_no_second_decode_when_the_first_took_the_budget_or_holds_the_number(
    services: CallServices,  # noqa: F811
) -> None:
    slow = NumberPassRecognizer("My number is 415 555.", "My number is 415 555 0134.", first_s=2.0)
    await _one_turn(services, slow, "en")
    assert len(slow.prompts) == 1  # the first decode used the budget: the turn is not made later still
    whole = NumberPassRecognizer("My number is 415 555 0134.", "My number is 415 555 0199.")
    session = await _one_turn(services, whole, "en")
    assert len(whole.prompts) == 1 and "415 555 0134" in session.record.turns[0].reply
