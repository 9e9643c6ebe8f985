"""Conversation tests for the owner record's caller field (issue 12 item 5): a name, a company
or a role, or nothing, never a sentence fragment. The introduction ends at the sentence's end
(. ? ! 。？！) and where a question or a request begins, punctuated or not (a recognizer may
give "hi this is priya from zendesk is alex around"). Chinese and English."""

from __future__ import annotations

import pytest

from .coordinator_helpers import Call
from .test_understanding_judge2 import guard, learned


def call(lang: str) -> Call:
    owner = "Alex" if lang == "en" else "陈先生"
    return Call(owner=owner, lang=lang, input_guard=guard, understander=learned())


@pytest.mark.parametrize(
    ("lang", "line", "caller"),
    [
        ("en", "Hi, this is Priya from Zendesk. Is Alex around?", "Priya from Zendesk"),
        ("en", "hi this is priya from zendesk is alex around", "priya from zendesk"),
        ("en", "Hello, it's Dan from Acme Inc. Is Alex in?", "Dan from Acme Inc"),
        ("en", "This is Jenny from the dentist's office could I speak to Alex", "Jenny from the dentist's office"),
        ("en", "I'm Joe from Comcast is Alex home", "Joe from Comcast"),
        ("en", "Hi it's Carlos from IT what time is Alex free tomorrow", "Carlos from IT"),
        ("en", "hey it's Nadia from marketing um did Alex finish the deck", "Nadia from marketing"),
        ("zh", "喂你好，我是顺丰的小李。陈先生在吗？", "顺丰的小李"),
        ("zh", "喂你好，我是顺丰的小李！陈先生在不在？", "顺丰的小李"),
        # a company name with a dot, an "and" or several words is kept whole
        ("en", "This is Tom from Bank of America, calling about the card.", "Tom from Bank of America"),
        ("en", "Hi, this is Mark from St. Mary's school.", "Mark from St Mary's school"),
        ("en", "Hi, it's Fiona from Bloom and Wild, the flowers for Alex are running late.", "Fiona from Bloom and Wild"),
        ("en", "Hi, it's Auntie May, can I leave the presents with you?", "Auntie May"),
    ],
)  # fmt: skip
def test_the_caller_field_stops_at_the_end_of_the_introduction(lang: str, line: str, caller: str) -> None:
    c = call(lang)
    c.say(line)
    assert c.record.caller == caller
