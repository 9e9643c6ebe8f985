"""Conversation tests for the classes of failure the fourth judge evaluation found in ``learned``
(issue 12, stop 15): an emergent preset inside a long turn, a stock reply that does not answer
(a physical errand, a secret asked again), a regular preset pushed after the caller said it does
not work, a callback number after "call us / the office back at", and a goodbye after the
owner's answer ("..., have a good one").

The evaluation's calls are development data: each of its phrasings appears at most once, beside
our own; no scene hint, as the evaluation calls. Each class in Chinese and English."""

from __future__ import annotations

import pytest

from coordinator import Act
from coordinator.spoken_numbers import extract

from .coordinator_helpers import Call
from .test_understanding_judge2 import call, guard, learned


def _call(lang: str, owner: str, **kw: object) -> Call:
    return Call(owner=owner, lang=lang, input_guard=guard, understander=learned(), **kw)  # type: ignore[arg-type]


# ------------------------------------------- 4. a callback number after "call us back at" ----

EN_PRIVATE = (("mobile", "217-555-0111"), ("home address", "18 Oak Lane"))
ZH_PRIVATE = (("手机", "13912345678"),)


@pytest.mark.parametrize(
    ("lang", "private", "lines", "number"),
    [
        # the caller's number shares the owner's area code and exchange: still the caller's
        ("en", EN_PRIVATE, ["Hi, it's the front office at Maple Street Clinic.",
                            "Could you have her call us back at 217 555 0163 when she's free?"], "2175550163"),
        ("en", (("mobile", "415-555-0199"),), ["This is Harbor Dental, about the filling on Friday.",
                                              "Okay, please have him call us back at 555-555-0100."], "5555550100"),
        ("en", (), ["Hello, this is the leasing office.", "She can call the front desk at 555 0187 any time."],
         "5550187"),
        ("zh", ZH_PRIVATE, ["你好，我是物业的小王", "麻烦让他打我们办公室电话，139 1234 0066"], "13912340066"),
        ("zh", (), ["您好，这边是社区医院", "麻烦让她有空回拨到我们前台，6437 0045"], "64370045"),
    ],
)  # fmt: skip
def test_a_callback_number_after_call_us_back_is_taken_and_read_back(
    lang: str, private: tuple[tuple[str, str], ...], lines: list[str], number: str
) -> None:
    c = _call(lang, "Sarah" if lang == "en" else "陈先生", private=private)
    for line in lines:
        d = c.say(line)
    assert c.record.callback_number == number
    assert d.act == Act.READ_BACK


@pytest.mark.parametrize(
    ("lang", "private", "line"),
    [
        ("en", EN_PRIVATE, "Is her mobile 217 555 0112? I just want to check I have it right."),  # one digit off
        ("en", EN_PRIVATE, "Tell her to call me back on 217 555 0111."),  # the owner's own number
        ("zh", ZH_PRIVATE, "他手机是不是139 1234 5679啊"),
    ],
)
def test_the_owners_own_number_is_still_never_read_back(
    lang: str, private: tuple[tuple[str, str], ...], line: str
) -> None:
    c = _call(lang, "Sarah" if lang == "en" else "陈先生", private=private)
    d = c.say(line)
    assert d.act != Act.READ_BACK and c.record.captured == [], d.text


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "I'll call the office at 3 pm about it."),
        ("en", "Our order number is 55120987 and the total was 45 dollars."),
        ("en", "My number is 12 in the queue, so call the front desk later."),
        ("zh", "我们前台说订单号是88123456"),
        ("zh", "回拨的话下午三点以后，一共是128块"),
    ],
)
def test_what_is_not_a_callback_number_is_not_taken(lang: str, said: str) -> None:
    assert not [v for v in extract(said, lang) if v.kind == "callback"], extract(said, lang)


# ---------------------------------------------- 5. a goodbye after the owner's answer ----


@pytest.mark.parametrize(
    ("lang", "scene", "preset", "arrival", "bye"),
    [
        ("en", "takeout", "Please leave it on the doorstep and ring the bell.",
         "Hey, DoorDash, I'm outside with your order.", "Okay cool, leaving it on the step then, have a good one"),
        ("en", "delivery", "Put it on the doorstep, thanks.",
         "Hi, parcel for you, where do you want it?", "Sure, sticking it on the step, take it easy!"),
        ("en", "takeout", "Leave it by the front door.",
         "Hello, your food's here.", "No problem, leaving it by the door then. Have a nice day!"),
        ("zh", "delivery", "放门口鞋柜上就行", "快递到了，放哪儿", "好嘞，给你放鞋柜上了，回见"),
        ("zh", "takeout", "放门口就行", "外卖到了，放哪儿啊", "行，给你放门口了，我先走了"),
    ],
)  # fmt: skip
def test_a_goodbye_after_the_owners_answer_closes_the_call(
    lang: str, scene: str, preset: str, arrival: str, bye: str
) -> None:
    c = call(lang, regular={scene: preset})
    assert c.say(arrival).act == Act.CONVEY_PRESET
    d = c.say(bye)
    assert d.end_call, d.text


def test_a_place_the_owner_did_not_name_is_still_news_before_the_goodbye() -> None:
    c = call("en", regular={"delivery": "Put it on the doorstep, thanks."})
    c.say("Hi, parcel for you, where do you want it?")
    d = c.say("Actually I'm leaving it with your neighbour at number 5, have a good one")
    assert c.record.has_message, d.text
