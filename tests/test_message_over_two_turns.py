"""A message said over two turns (issue 12, stop 16): "tell her the plumber is coming" ... "Thursday,
around three. That's all." The owner record keeps both parts (two messages, or one with both),
never drops the second. Before, a short second part said with a goodbye ("Thursday, around
three. That's all.", "周四，谢谢拜拜") was read as a bare goodbye: the when was lost."""

from __future__ import annotations

import pytest

from .coordinator_helpers import Call
from .test_understanding_judge2 import guard, learned


def _call(lang: str) -> Call:
    return Call(owner="Sarah" if lang == "en" else "刘女士", lang=lang, input_guard=guard, understander=learned())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lang", "first", "second", "part"),
    [
        ("en", "Could you let her know the plumber's coming?", "Thursday, around three. That's all.", "Thursday"),
        ("en", "tell her the plumber is coming", "on Thursday at 3", "Thursday"),
        ("en", "Please let her know the piano tuner will come by", "Friday. Bye!", "Friday"),
        ("zh", "跟她说一下水管工要来", "周四，谢谢拜拜", "周四"),
        ("zh", "你告诉她钢琴调音师要来", "下周一上午", "周一"),
        ("zh", "麻烦你跟她说一声，修水管的师傅要上门", "周四下午，就这样", "周四"),
    ],
)
def test_the_second_part_of_a_message_is_kept(lang: str, first: str, second: str, part: str) -> None:
    c = _call(lang)
    c.say(first)
    if not c.state.ended:
        c.say(second)
    text = " ".join([*c.record.messages, *c.record.exceptions, *c.record.requests])
    assert part in text, (c.record.messages, c.record.notes)
    assert any(w in text for w in ("plumber", "piano", "水管", "钢琴", "修水管")), c.record.messages


@pytest.mark.parametrize(("lang", "bye"), [("en", "Ok, thanks, bye."), ("zh", "好的，谢谢，拜拜")])
def test_a_bare_goodbye_after_the_message_adds_nothing(lang: str, bye: str) -> None:
    c = _call(lang)
    c.say("tell her the plumber is coming" if lang == "en" else "跟她说一下水管工要来")
    assert c.say(bye).end_call
    assert len(c.record.messages) == 1
