"""When a transcript reads as a finished turn (ends Smart Turn's "incomplete" wait early)."""

from __future__ import annotations

import pytest

from pipeline.turns import STATEMENT_PAUSE_S, looks_complete, words_end_after


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
    from pipeline.turns import TurnTranscriber

    t = TurnTranscriber(None, lang=lambda: "en", hotwords=lambda: "", candidates=lambda: ())  # type: ignore[arg-type]
    t.speech_stopped()  # the VAD stop just happened
    assert 0.7 < t._hold_s("Hi, this is the delivery driver.", 0.7) <= STATEMENT_PAUSE_S + 0.2 + 1e-9
    assert t._hold_s("Where should I put it?", 0.7) == 0.0  # a question is answered at once
    assert t._hold_s("Okay.", 0.7) == 0.7  # a short turn keeps its own grace
    assert t._hold_s("I have a package and", 0.7) > 0.5  # trailing off: wait too
