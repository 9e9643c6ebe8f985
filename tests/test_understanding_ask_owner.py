"""Stop 15 (issue 14): "Is Alex around?" after an introduction got "Okay, noted." (seen in `make demo`).

The learned heads read the introduction ("Hi, this is Priya from Zendesk."): a greeting, answered
"Go ahead", or unpunctuated, as the recognizer sometimes gives it, a statement, answered "Okay,
noted." A request for the owner gets an answer about the owner's availability that discloses no
whereabouts (C_priv), or the owner's matching preset. The owner and presets are the demo's
(bench/demo.py). Our phrasings, zh and en."""

from __future__ import annotations

import pytest

from bench.demo import SCRIPTS
from coordinator import Act

from .coordinator_helpers import Call, emergent
from .test_understanding_judge2 import guard, learned


def demo_call(lang: str) -> Call:
    s = SCRIPTS[lang]
    em = tuple(emergent(f"e{i}", p["trigger"], p["response"]) for i, p in enumerate(s.emergent))
    return Call(owner=s.owner, lang=lang, regular=s.regular, emergent=em, input_guard=guard, understander=learned())


ASKS = [
    ("en", "Hi, this is Priya from Zendesk. Is Alex around?"),
    ("en", "Hi this is Priya from Zendesk is Alex around"),  # unpunctuated, as the recognizer gave it
    ("en", "good morning, Dan from the print shop here, is Alex there"),
    ("en", "hey it's Maria from accounts, is Alex available?"),
    ("en", "Is Alex around?"),
    ("zh", "你好 我是老王 陈先生在吗"),
    ("zh", "喂 我是他同事小李 陈先生在不在"),
    ("zh", "陈先生在吗？"),
]


@pytest.mark.parametrize(("lang", "line"), ASKS)
def test_asking_for_the_owner_gets_the_owners_availability_not_okay_noted(lang: str, line: str) -> None:
    c = demo_call(lang)
    d = c.say(line)
    assert d.act in (Act.OWNER_UNAVAILABLE, Act.CONVEY_PRESET), (d.act, d.text)
    assert "noted" not in d.text.lower() and "记下" not in d.text
    if d.act == Act.OWNER_UNAVAILABLE:  # availability only: no where, no when (C_priv)
        assert not any(w in d.text.lower() for w in ("meeting", "office", "home", "back at", "会议", "回来", "在家"))
    assert not c.record.messages  # nothing was said for the owner


def test_the_demo_call_answers_availability_then_conveys_where_he_is() -> None:
    c = demo_call("en")
    assert c.say("Hi this is Priya from Zendesk is Alex around").act == Act.OWNER_UNAVAILABLE
    d = c.say("Do you know where he is right now?")
    assert d.act == Act.CONVEY_PRESET and "in a meeting" in d.text


@pytest.mark.parametrize(
    ("lang", "line", "news"),
    [
        ("en", "Hi, this is Mark from the garage. Is Alex around? His car is ready.", "car is ready"),
        ("zh", "你好 我是老王 陈先生在吗 跟他说一下明天的会取消了", "会取消"),
    ],
)
def test_news_beside_the_request_for_the_owner_is_still_taken_down(lang: str, line: str, news: str) -> None:
    c = demo_call(lang)
    d = c.say(line)
    assert d.act in (Act.ACKNOWLEDGE, Act.CONFIRM_MESSAGE), (d.act, d.text)
    assert any(news in m for m in c.record.messages)
