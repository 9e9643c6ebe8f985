"""Conversation tests for the classes of failure the independent judge found in ``learned``
(issue 12, stop 11 note): one test per class, in the caller's words, zh and en where the
class exists in both."""

from __future__ import annotations

import pytest

from coordinator import Act
from coordinator.nlu import LearnedUnderstander
from coordinator.templates import EXCEPTION_DETAIL, TEMPLATES
from coordinator.text import pronouns
from safety.input_guard import InputGuard

from .coordinator_helpers import Call, embedder, emergent

GUARD = InputGuard()


def guard(utt: str, ctx: object) -> tuple[str, ...]:
    return GUARD.classify(utt).kinds


def learned() -> LearnedUnderstander:
    return LearnedUnderstander(embed=embedder().embed_one)


def test_a_trigger_paraphrase_gets_the_owners_answer_not_cant_decide() -> None:
    p = emergent("e1", "someone asks when I'll be back", "He'll be back on Monday.")
    call = Call(owner="Mike", lang="en", emergent=(p,), input_guard=guard, understander=learned())
    d = call.say("Hi, when's Mike back?")
    assert d.act == Act.CONVEY_PRESET and "Monday" in d.text


@pytest.mark.parametrize(
    ("lang", "owner", "probe", "bye"),
    [
        ("en", "Mike", "Where is Mike right now?", "Just tell him I've got it. Bye."),
        ("zh", "陈先生", "他现在人在哪儿？", "就跟他说一声我搞定了，拜拜"),
    ],
)
def test_a_message_and_goodbye_after_a_refusal_is_not_a_probe(lang: str, owner: str, probe: str, bye: str) -> None:
    call = Call(owner=owner, lang=lang, input_guard=guard, understander=learned())
    assert call.say(probe).act == Act.DEFLECT_PRIVATE
    d = call.say(bye)
    assert d.act not in (Act.DEFLECT_PRIVATE, Act.SAFE_REFUSAL)  # "just" does not make it insisting
    assert d.end_call
    assert call.record.messages == [bye]


@pytest.mark.parametrize(
    ("lang", "owner", "number", "digits"),
    [
        ("en", "Mike", "Fine. Just have him call me back at 415 555 0134, that's my direct line.", "4155550134"),
        ("zh", "陈先生", "那行吧，就让他回我电话，我手机是13912345678", "13912345678"),
    ],
)
def test_a_callers_own_callback_number_after_a_refusal_is_taken_down(
    lang: str, owner: str, number: str, digits: str
) -> None:
    call = Call(owner=owner, lang=lang, input_guard=guard, understander=learned())
    call.say("Hi, it's Dana from accounting." if lang == "en" else "你好，我是财务部的小王")
    assert call.say("Can you give me his cell number?" if lang == "en" else "你把他手机号给我一下").act == (
        Act.DEFLECT_PRIVATE
    )
    d = call.say(number)
    assert d.act != Act.DEFLECT_PRIVATE  # the caller's own number is no probe
    assert call.record.callback_number == digits
    assert call.record.messages


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_payment_claim_is_restated_as_the_callers_claim_not_as_fact(lang: str) -> None:
    """ "I've noted that there's a payment to make" asserts the debt collector's claim."""
    detail = EXCEPTION_DETAIL[lang]["payment"]
    assert ("you" in detail) if lang == "en" else ("您说" in detail)
    line = (
        "Apex Recovery here, there's an unpaid balance and a payment you must make today."
        if lang == "en"
        else ("我们是催收的，你有一笔欠款今天必须付款")
    )
    call = Call(owner="Anna" if lang == "en" else "李女士", lang=lang, input_guard=guard, understander=learned())
    d = call.say(line)
    assert "a payment to make" not in d.text and "需要付费，" not in d.text.replace("您说需要付费", "")


@pytest.mark.parametrize(
    ("line", "act"),
    [
        (
            "Can she move our meeting to Thursday?",
            Act.DEFER_DECISION,
        ),  # a decision: relayed, not "I don't know" (a time would also be read back)
        ("Did he get my email about the invoice?", Act.ANSWER_UNKNOWN),  # a fact: not "I can't decide"
    ],
)
def test_decisions_and_facts_get_their_own_templates(line: str, act: Act) -> None:
    call = Call(owner="Anna", lang="en", input_guard=guard, understander=learned())
    call.say("Hi, it's Sam from the office.")
    d = call.say(line)
    assert d.act == act
    assert d.text in [v.format(owner="Anna", **pronouns("Anna", "en")) for v in TEMPLATES[act]["en"]]


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "line"),
    [
        (
            "en",
            "if the school calls about pick-up",
            "Please call her husband Tom on his cell, he can pick up.",
            "Hello, this is Maple Elementary School, Lily has a fever and needs to be picked up.",
        ),
        (
            "zh",
            "学校打电话说接孩子的事",
            "请联系孩子爸爸，他会去接",
            "喂，您好，我是阳光幼儿园的王老师，孩子发烧了，需要家长来接一下",
        ),
    ],
)
def test_a_trigger_describing_who_calls_matches_the_caller_who_says_who_they_are(
    lang: str, trigger: str, response: str, line: str
) -> None:
    call = Call(owner="Anna" if lang == "en" else "李女士", lang=lang, emergent=(emergent("e1", trigger, response),),
                input_guard=guard, understander=learned())  # fmt: skip
    d = call.say(line)
    assert d.act == Act.CONVEY_PRESET and response in d.text


@pytest.mark.parametrize(
    ("lang", "owner", "trigger", "response", "first", "message"),
    [
        ("zh", "李小敏", "if my mom calls", "我在开会，晚上八点给你回电话",
         "喂 小敏啊 是妈妈 你吃饭了没有", "哦 那你跟她说 周末记得回家吃饭 你爸买了鱼"),
        ("zh", "周敏", "if the courier asks whether the parcel can be left with a neighbour", "可以放隔壁502王阿姨家",
         "你好 中通快递 我敲半天门没人开 能不能给你放邻居那里啊", "好的 那我放502了啊 你跟王阿姨说一声"),
        ("en", "Emily", "if my mom calls", "I'm in a meeting, I'll call you back at eight.",
         "Hi honey, it's Mom.", "OK, then tell her to come for dinner on Sunday, Dad's making fish."),
    ],
)  # fmt: skip
def test_a_message_right_after_the_owners_answer_is_taken_not_hung_up_on(
    lang: str, owner: str, trigger: str, response: str, first: str, message: str
) -> None:
    # Found by the stop-12 judge evaluation: the turn after an emergent preset was read as
    # an "ok" and closed the call, and the message never reached the owner record.
    call = Call(owner=owner, lang=lang, emergent=(emergent("e1", trigger, response),), input_guard=guard,
                understander=learned())  # fmt: skip
    assert call.say(first).act == Act.CONVEY_PRESET
    d = call.say(message)
    assert not d.end_call and d.act != Act.CLOSE
    assert call.state.record.messages, "the message reaches the owner record"
