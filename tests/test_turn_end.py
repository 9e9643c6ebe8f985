"""When a transcript reads as a finished turn (ends Smart Turn's "incomplete" wait early)."""

from __future__ import annotations

import pytest

from pipeline.turns import looks_complete


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
