"""When a transcript reads as a finished turn (ends Smart Turn's "incomplete" wait early)."""

from __future__ import annotations

import pytest

from pipeline.turn_model import TurnTextModel, default_model
from pipeline.turns import BEGINNING_EXTRA_S, STATEMENT_PAUSE_S, VAD_START_S, looks_complete, words_end_after


@pytest.mark.parametrize(
    "text",
    [
        "Where should I leave it?",
        "DoorDash here. I've got your order outside.",
        "Front desk, okay. Thanks. Bye.",
        "Is it for the?",  # a question hands the turn over
        "你好，外卖到了。",
        "好的 那我放门口了",  # Whisper often leaves the full stop off Chinese
        "放哪儿啊？",
        "好嘞再见",
        "Front desk OK Thanks Bye",  # closings, often without a full stop
        "Have a good night",
        "好的谢谢",
    ],
)
def test_finished_turns(text: str) -> None:
    assert looks_complete(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I have a package and...",
        "My number is 415,",
        "So I was going to the",
        "I'm calling because.",
        "Hmm, um.",
        "Hi, this is",
        "我想问一下",
        "我想问一下，然后。",
        "他说如果",
        "嗯。",
    ],
)
def test_unfinished_turns(text: str) -> None:
    assert not looks_complete(text)


@pytest.mark.parametrize(
    ("text", "after"),
    [
        ("Where should I put it?", 0.0),  # a question hands the turn over at once
        ("Thanks, bye", 0.0),
        ("放哪儿啊？", 0.0),
        ("他在家吗", 0.0),
        ("Hi, this is the delivery driver.", STATEMENT_PAUSE_S),  # callers go on after a pause
        ("你好，我是送外卖的。", STATEMENT_PAUSE_S),
        ("喂 你好 我是顺丰快递", None),  # as Whisper writes it: no full stop, not read as finished
        ("Hi, it's your taxi driver.", STATEMENT_PAUSE_S),
        ("I have a package and...", None),
        ("我想问一下", None),
    ],
)
def test_a_pause_after_a_statement_is_not_the_end(text: str, after: float | None) -> None:
    assert words_end_after(text) == after


def test_statement_pause_outlasts_natural_pauses_between_sentences() -> None:
    # Natural pauses between the sentences of one turn run 300-900 ms.
    assert STATEMENT_PAUSE_S >= 0.9


@pytest.mark.parametrize("text", ["This is the delivery driver.", "I have your order.", "That's my number."])
def test_words_ending_in_filler_letters_are_not_fillers(text: str) -> None:
    assert looks_complete(text)  # "driver" ends in "er" but is no "er"


def test_an_ended_statement_still_waits_out_a_sentence_pause() -> None:
    from pipeline.turns import TurnTranscriber, _short

    t = TurnTranscriber(None, lang=lambda: "en", hotwords=lambda: "", candidates=lambda: ())  # type: ignore[arg-type]
    t.speech_stopped()  # the VAD stop just happened
    assert t._pause_s("Hi, this is the delivery driver.") == STATEMENT_PAUSE_S  # held to the long pause
    assert t._pause_s("Where should I put it?") == 0.0  # a question is answered at once
    assert _short("Okay.") and _short("喂？")  # a short turn keeps its own grace ("Hello?" may be a preface)
    assert not _short("放哪儿比较好？") and t._pause_s("放哪儿比较好？") == 0.0  # a short question hands over
    assert not _short("Is Alex there?") and t._pause_s("Is Alex there?") == 0.0
    assert t._pause_s("I have a package and") == STATEMENT_PAUSE_S  # trailing off: wait too


def test_the_packaged_classifier_loads_with_a_threshold_chosen_on_dev() -> None:
    model = default_model()
    assert model is not None
    assert 0.5 <= model.threshold < 1.0


@pytest.mark.parametrize(
    "text",
    [
        "Hi, this is the delivery driver.",
        "Hello, this is Mike from FedEx.",
        "你好，我是送外卖的。",
        "喂，你好，我是顺丰快递。",
        "师傅，我是滴滴司机",
    ],
)
def test_introductions_read_as_the_start_of_a_turn(text: str) -> None:
    model = default_model()
    assert model is not None
    assert model.p_complete(text) < 0.3


def test_a_clearly_finished_statement_is_answered_without_the_long_hold() -> None:
    import numpy as np

    zeros = np.zeros(1 << 15, np.float32)
    sure = TurnTextModel(zeros, bias=10.0, threshold=0.9)  # scores every transcript complete
    said = "I'll leave it with the front desk."
    assert words_end_after(said, model=sure) == 0.0
    assert words_end_after(said, audio_complete=False, model=sure) == 0.0
    assert words_end_after("I have a package and...", model=sure) is None  # trailing off: never
    unsure = TurnTextModel(zeros, bias=2.0, threshold=0.86)  # p = 0.88
    assert words_end_after(said, model=unsure) == 0.0
    # Smart Turn heard it unfinished: the words must be surer than the bare threshold.
    assert words_end_after(said, audio_complete=False, model=unsure) == STATEMENT_PAUSE_S
    doubtful = TurnTextModel(zeros, bias=0.0, threshold=0.86)  # p = 0.5: the long hold
    assert words_end_after(said, model=doubtful) == STATEMENT_PAUSE_S


def test_a_statement_read_as_the_start_of_a_turn_waits_longer_than_a_doubted_one() -> None:
    import numpy as np

    beginning = TurnTextModel(np.zeros(1 << 15, np.float32), bias=-4.0, threshold=0.86)  # p = 0.018
    said = "Hi, this is the delivery driver."
    assert words_end_after(said, model=beginning) == STATEMENT_PAUSE_S + BEGINNING_EXTRA_S
    assert words_end_after("Where should I put it?", model=beginning) == 0.0  # a question: at once
    # The packaged classifier reads introductions that way, in both languages.
    model = default_model()
    for intro in ("Hi, this is the delivery driver.", "喂，你好，我是顺丰快递。"):
        assert words_end_after(intro, model=model) == STATEMENT_PAUSE_S + BEGINNING_EXTRA_S, intro
    # And the hold outlasts the longest natural pause plus the VAD's measured start delay.
    assert STATEMENT_PAUSE_S + BEGINNING_EXTRA_S + VAD_START_S >= 0.9 + 0.48


async def test_a_waiter_from_an_earlier_stop_does_not_answer_the_empty_remainder() -> None:
    """Two stops of one turn wait at once (pipecat runs each turn-stopped handler as a
    task): on a loaded server the first stop's transcription outlasts the caller's next
    sentence. Once the later stop has answered the whole turn, the earlier waiter must not
    transcribe what is left (silence: Whisper's "you") as another caller turn."""
    import asyncio

    import numpy as np

    from pipeline.asr import Transcript
    from pipeline.turns import TurnTranscriber, silence_of

    heard: list[float] = []
    release_first = asyncio.Event()

    class SlowFirst:
        async def transcribe(self, audio: np.ndarray, lang: str, **_kw: object) -> Transcript:
            heard.append(len(audio) / 16000)
            if len(heard) == 1:
                await release_first.wait()  # the first stop's decode is slow
                return Transcript("Hi, this is the delivery driver.", lang, 4.0, 1.0)
            return Transcript("Hi, this is the delivery driver. Where should I put it?", lang, 0.3, 2.0)

    speech = np.full(16000, 3000, dtype=np.int16).tobytes()
    t = TurnTranscriber(SlowFirst(), lang=lambda: "en", hotwords=lambda: "", candidates=lambda: ())  # type: ignore[arg-type]
    t.speech_started()
    t.audio(speech)
    t.speech_stopped()  # first sentence: its decode starts and hangs
    first = asyncio.create_task(t.turn_text())
    await asyncio.sleep(0.01)
    t.speech_started()  # the caller goes on
    t.audio(speech)
    t.speech_stopped()
    t.audio(silence_of(0.2))
    release_first.set()
    second = await t.turn_text()
    texts = sorted([(await first)[0] or "", second[0] or ""])
    # One waiter answers the whole turn, the other nothing.
    assert texts == ["", "Hi, this is the delivery driver. Where should I put it?"]
    assert len(heard) == 2  # nothing transcribed after the turn was answered


@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        ("en", "Call me back on 8148. I know you. 86144.", "Call me back on 814 861 4437."),
        ("zh", "我的电话是一三次,一四三次九八八。", "我的电话是13912345678。"),
    ],
)
async def test_a_held_number_turn_is_decoded_again_during_the_hold(lang: str, first: str, second: str) -> None:
    """A statement held for the long pause that names a number without a whole one gets
    its second decode (pipeline.number_pass) while the hold runs, not after it: when the
    hold ends the turn is answered with the second decode's number."""
    import asyncio

    import numpy as np

    from pipeline.asr import Transcript
    from pipeline.turns import TurnTranscriber, silence_of

    started_at: list[float] = []

    class Decoder:
        async def transcribe(self, audio: np.ndarray, lang: str, **kw: object) -> Transcript:
            started_at.append(t.paused_s())
            await asyncio.sleep(0.05)
            return Transcript(second if len(started_at) > 1 else first, lang, 0.3, 2.0)

    t = TurnTranscriber(
        Decoder(),  # type: ignore[arg-type]
        lang=lambda: lang,
        hotwords=lambda: "",
        candidates=lambda: (),
        number_hotwords=lambda: "139 1234 5678",
    )
    t.speech_started()
    t.audio(np.full(32000, 3000, dtype=np.int16).tobytes())
    t.speech_stopped()
    answer = asyncio.create_task(t.turn_text(grace_s=0.7))
    paused = 0.0
    while not answer.done():  # the line's silence, 20 ms at a time
        paused = t.paused_s()
        t.audio(silence_of(0.02))
        await asyncio.sleep(0.005)
    text, _ = await answer
    assert text == second
    assert len(started_at) == 2
    assert started_at[1] < STATEMENT_PAUSE_S  # the second decode began inside the hold
    assert paused >= STATEMENT_PAUSE_S  # and the hold was still kept
