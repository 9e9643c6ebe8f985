"""Conversation tests for emergent presets in takeout / delivery / taxi calls (issue 12).

The regular slot ("leave it at the door") answers the turns it bears on (arrival, where to
leave it / where to meet); any other turn is checked against the owner's emergent triggers,
as in every other scene: the courier (or a family member on the same line) asking "他什么时候
回来啊？" gets the owner's answer, not the privacy deflection. Each in Chinese and English; no
scene hint, as the evaluation calls."""

from __future__ import annotations

import pytest

from coordinator import Act

from .coordinator_helpers import emergent
from .test_understanding_judge2 import call

ZH_BACK = ("有人问我什么时候回来", "他今天会晚一点回来，大概八点到家")
EN_BACK = ("someone asks when I'll be back", "She'll be back late today, around eight.")

CASES = [
    # lang, scene, regular preset, arrival, the emergent question, trigger, response
    ("zh", "takeout", "放门口就行", "喂，你好，你的外卖到了", "他什么时候回来啊？", *ZH_BACK),
    ("zh", "taxi", "她两分钟就下来", "你好，我是滴滴司机，车到小区门口了", "她什么时候回来啊？", *ZH_BACK),
    ("en", "takeout", "Leave it on the bench outside.", "Hi, your food's here.", "When is she coming back?", *EN_BACK),
    ("en", "taxi", "She's coming down in two minutes.", "Hi, your cab's here.", "When will she be back?", *EN_BACK),
]  # fmt: skip


@pytest.mark.parametrize("arrival_first", [True, False])
@pytest.mark.parametrize(("lang", "scene", "regular", "arrival", "question", "trigger", "response"), CASES)
def test_an_emergent_preset_is_answered_in_a_regular_scene_and_the_regular_one_on_arrival(
    lang: str, scene: str, regular: str, arrival: str, question: str, trigger: str, response: str, arrival_first: bool
) -> None:
    c = call(lang, regular={scene: regular}, emergent=(emergent("e1", trigger, response),))
    for line in (arrival, question) if arrival_first else (question, arrival):
        d = c.say(line)
        assert d.act == Act.CONVEY_PRESET
        if line == arrival:
            assert regular in d.text and response not in d.text  # the regular preset on arrival
        else:
            assert response in d.text and regular not in d.text  # the owner foresaw it: not a deflection
    assert c.conveyed_count(f"regular:{scene}") == 1 and c.conveyed_count("e1") == 1  # neither repeated


@pytest.mark.parametrize(
    ("lang", "scene", "regular", "arrival", "question", "trigger", "response", "unrelated", "repeat"),
    [
        (*CASES[0], "你们要发票吗？", "啊？你说啥？"),
        (*CASES[2], "Do you want a receipt?", "Sorry, say that again?"),
    ],
)  # fmt: skip
def test_an_unrelated_question_gets_the_normal_answer_and_a_repeat_the_last_preset(
    lang: str, scene: str, regular: str, arrival: str, question: str, trigger: str, response: str, unrelated: str,
    repeat: str,
) -> None:  # fmt: skip
    c = call(lang, regular={scene: regular}, emergent=(emergent("e1", trigger, response),))
    without = call(lang, regular={scene: regular})  # the same call, no emergent preset
    for each in (c, without):
        each.say(arrival)
    d, normal = c.say(unrelated), without.say(unrelated)  # no trigger matches: as if there were none
    assert d.act == normal.act and d.act != Act.CONVEY_PRESET
    assert response not in d.text and regular not in d.text
    c.say(question)
    d = c.say(repeat)  # the emergent answer again, not the regular one
    assert response in d.text and regular not in d.text
    assert c.conveyed_count(f"regular:{scene}") == 1


@pytest.mark.parametrize(
    ("lang", "scene", "regular", "where"),
    [
        ("zh", "takeout", "放门口就行", "到你们楼下了，放哪儿？"),
        ("en", "taxi", "She's coming down in two minutes.", "I'm outside, where should I wait?"),
    ],
)  # fmt: skip
def test_the_regular_preset_keeps_priority_for_the_turns_it_bears_on(
    lang: str, scene: str, regular: str, where: str
) -> None:
    # An emergent trigger about the place itself: the regular slot still answers "where".
    trigger, response = ("有人问放哪儿", "放邻居家") if lang == "zh" else ("someone asks where to wait", "At the gym.")
    c = call(lang, regular={scene: regular}, emergent=(emergent("e1", trigger, response),))
    d = c.say(where)
    assert d.act == Act.CONVEY_PRESET and regular in d.text and response not in d.text
