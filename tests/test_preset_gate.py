"""The preset gate (stop 17): when an emergent preset is conveyed. Classes found on builtin:dev and
builtin:dev2's preset-gate failures, fixed at their mechanism; the sentences here are ours, zh and en.

- *Who calls about what*, a near miss: the caller is the kind the trigger names, but asks something
  else. The topic was read anywhere in the turn ("I have your pickup booked" against "the driver asks
  where to pick me up") and any one shared English word was enough; now the topic must be in what the
  caller asks when the trigger says they ask, the question focus must not clash, and more than half of
  the topic's English words must be shared.
- *A billing desk is no bank*: "billing" / 账单 named a bank caller, so any business's billing office
  met "if a debt collector calls".
- *An exception the trigger itself names*: "如果隔壁邻居说我家水管漏水了" is met by the leak it names,
  and a trigger about callers who claim to be customer service is met by their story (a parcel
  damaged, a refund); the owner answered for exactly that, so it is not a premise-breaking exception.
  A trigger that names no problem (consent to a routine repair) is still suspended by one.
"""

from __future__ import annotations

import pytest

from coordinator import Act
from presets.callers import who_calls_match

from .coordinator_helpers import emergent
from .test_understanding_judge2 import call

# ---------------------------------------------------------- who calls about what ----

NEAR_MISSES = [
    ("en", "the driver asks where to pick me up", "Please wait at the hotel's side entrance.",
     "Hi, it's the driver from Metro Cars, I have your pickup booked for six. How long is the drive to the airport usually?"),
    ("zh", "司机问在哪里上车", "在酒店东门等他",
     "喂，我是滴滴司机，明早六点来接您上车。请问大概要开多久？"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "line"),
    [
        ("en", "the driver asks where to pick me up", "Please wait at the hotel's side entrance.",
         "Hi, it's the driver from Metro Cars. Where should I pick you up?"),
        ("zh", "司机问在哪里上车", "在酒店东门等他", "喂，我是滴滴司机，明早六点来接您，您在哪儿上车？"),
    ],
)  # fmt: skip
def test_the_same_caller_asking_the_trigger_still_gets_it(lang: str, trigger: str, response: str, line: str) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    d = c.say(line)
    assert d.act == Act.CONVEY_PRESET and response in d.text


def test_the_topic_is_read_in_what_is_asked_and_by_most_of_its_words() -> None:
    # One shared word of two is not the same errand: the bins are not the neighbour.
    assert not who_calls_match(
        "the courier asks whether to leave it with the neighbour",
        "Hi, UPS here, nobody's home, can I leave it behind the bins?",
        asking=True,
    )
    assert who_calls_match(
        "the courier asks whether to leave it with the neighbour",
        "Hi, UPS here, nobody's home, should I leave it with your neighbour instead?",
        asking=True,
    )
    # The topic named before the question, then another question asked: not met.
    assert not who_calls_match(
        "the driver asks where to pick me up",
        "Hi, it's the driver from Metro Cars, I have your pickup booked for six. How long is the drive?",
        asking=True,
    )


# --------------------------------------------------------------- a billing desk ----


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "line"),
    [
        ("en", "if a debt collector calls", "He disputes the debt, please write to him.",
         "Hi, it's the billing office at Lakeside Dental about a balance from June."),
        ("zh", "如果催收公司打电话来", "他对这笔欠款有异议，请书面联系", "您好，我是小区物业，您这个月的账单还没交"),
    ],
)  # fmt: skip
def test_a_billing_office_is_not_a_debt_collector(lang: str, trigger: str, response: str, line: str) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    assert response not in c.say(line).text


# ------------------------------------------------- an exception the trigger names ----

FORESEEN = [
    ("zh", "如果隔壁邻居说我家水管漏水了", "他已经叫了维修工，下午三点到",
     "你好，我是隔壁的，你家好像在漏水，走廊里全是水"),
    ("en", "if the downstairs neighbour says water is leaking through", "He has already called a plumber, who comes at 3 pm.",
     "Hi, I live in the flat downstairs. There is water dripping through my kitchen ceiling, I think it is coming from yours."),
    ("zh", "冒充快递客服说要理赔的", "他只在官方APP上处理理赔，谢谢",
     "您好，我是顺丰快递客服，您的包裹在运输中被压坏了，我们要给您双倍理赔"),
    ("en", "someone claims to be customer service offering a refund", "He only handles refunds in the official app.",
     "Hello, this is Amazon customer service, your order was damaged in our warehouse and we will refund you double."),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "trigger", "response", "line"), FORESEEN)
def test_the_problem_the_trigger_names_gets_the_owners_answer_once(
    lang: str, trigger: str, response: str, line: str
) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    d = c.say(line)
    assert d.act == Act.CONVEY_PRESET and response in d.text
    assert c.conveyed_count("e1") == 1


# A trigger that names no problem (consent to a routine repair) is still suspended by one.
STILL_SUSPENDED = [
    ("zh", "物业问能不能进来修空调", "可以，周末白天都行", "喂，物业的，你家楼上漏水漏到你家了，得马上进去看看"),
    ("en", "the landlord asks if the handyman can come in to fix the blinds", "Yes, any weekday morning works.",
     "Hi, it's your landlord. Water is pouring through the ceiling of your unit, we need to get in right now."),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "trigger", "response", "line"), NEAR_MISSES + STILL_SUSPENDED)
def test_not_conveyed(lang: str, trigger: str, response: str, line: str) -> None:
    """A near miss of the kind of caller, and a problem the trigger does not name: no owner's answer."""
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    d = c.say(line)
    assert d.act != Act.CONVEY_PRESET and response not in d.text


# ------------------------------------------ a hand-over in a scene read from a word ----

HANDOVERS = [
    ("en", {"takeout": "Leave it on the bench by the door."},
     ["hi so your dinner from the noodle bar is here, where do i put it"]),
    ("en", {"delivery": "Please put it in the mailroom."},
     ["Good morning, calling from the depot about today's drop.", "Our driver's two stops away.",
      "Any safe spot to leave it if no one answers?"]),
    ("zh", {"delivery": "放门口的鞋柜上就行"}, ["你好，京东物流的，今天给您送货", "司机师傅马上到了", "家里没人的话放哪儿？"]),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "regular", "turns"), HANDOVERS)
def test_a_handover_gets_the_filled_slot_when_the_tracker_read_another_scene(
    lang: str, regular: dict[str, str], turns: list[str]
) -> None:
    # ("dinner ... is here" read as life, "driver" as taxi: scenes whose slot the owner left empty)
    c = call(lang, regular=regular)
    *before, ask = turns
    for line in before:
        assert c.say(line).act != Act.CONVEY_PRESET
    d = c.say(ask)
    assert d.act == Act.CONVEY_PRESET and next(iter(regular.values())) in d.text


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        ("en", "Hi, it's your Uber driver, I'm outside the lobby, where are you?"),
        ("zh", "喂，我是滴滴司机，到小区门口了，您在哪儿？"),
    ],
)
def test_a_driver_does_not_get_the_takeout_instruction(lang: str, line: str) -> None:
    response = "Leave it at the door." if lang == "en" else "放门口就行，谢谢"
    c = call(lang, regular={"takeout": response})
    assert response not in c.say(line).text


# ------------------------------------------- "not a sales call" against a sales trigger ----

DENIED = [
    ("zh", "推销理财产品的", "他不需要理财，谢谢",
     "喂，王哥您好，我是您开户那家银行的理财经理小周，不是推销啊，就是您那笔理财下周到期了，提醒您一下"),
    ("en", "someone sells insurance", "He already has insurance, thanks.",
     "Hi, it's Dana, your insurance agent. This is not a sales call, just a reminder that your car insurance renews on the 20th."),
    ("en", "someone tries to sell a home warranty", "She is not interested in a home warranty, thanks.",
     "Hi, it's Brightline Home Warranty. Not trying to sell you anything, just confirming the technician visit for your warranty claim."),
]  # fmt: skip
PITCHED = [
    ("zh", "推销理财产品的", "他不需要理财，谢谢",
     "您好，我们银行新出了一款理财产品，年化收益百分之五，非常适合您，要不要了解一下？"),
    ("en", "someone tries to sell a home warranty", "She is not interested in a home warranty, thanks.",
     "Hi, this is Carla from Brightline. We have a great home warranty deal for homeowners this month, want to hear about it?"),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "trigger", "response", "line"), DENIED)
def test_a_caller_who_says_it_is_not_a_sale_does_not_get_the_refusal(
    lang: str, trigger: str, response: str, line: str
) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    assert response not in c.say(line).text


@pytest.mark.parametrize(("lang", "trigger", "response", "line"), PITCHED)
def test_a_pitch_still_gets_it(lang: str, trigger: str, response: str, line: str) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    d = c.say(line)
    assert d.act == Act.CONVEY_PRESET and response in d.text
