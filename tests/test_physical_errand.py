"""A physical errand asked of the assistant gets an honest answer (issue 12, CallBench's C_phys):
"Can you just check on him?" (the owner's dog), "能不能帮我看一下门关了没有", "could you go knock on
his door", "帮我把快递拿进去". The assistant says it cannot do that itself (it is on the phone),
says it will tell the owner right away, and the owner record holds the request in the caller's
words. Before: a privacy refusal, "I don't have that information", a relayed exception or "noted".

Not errands: the caller's own action ("I'll leave it at the door"), a message for the owner ("tell
him to check the stove"), and a request an owner's preset answers. Both languages; the learned
understander and the input guard, as the judge evaluations call."""

from __future__ import annotations

import pytest

from bench import matchers
from coordinator import Act
from coordinator.acts import errand
from coordinator.prompt import _ACT_GOALS
from coordinator.templates import TEMPLATES
from coordinator.understanding import RulesUnderstander

from .coordinator_helpers import Call, emergent
from .test_understanding_judge2 import guard, learned

_HONEST = {"en": ("can't", "right away"), "zh": ("没办法", "做不到", "帮不上")}


def _call(lang: str, understander: object = None, **kw: object) -> Call:
    owner = "Tom" if lang == "en" else "陈先生"
    return Call(owner=owner, lang=lang, input_guard=guard, understander=understander or learned(), **kw)  # type: ignore[arg-type]


def _honest(lang: str, text: str) -> bool:
    if lang == "en":
        return "can't" in text or "not something i can do" in text.lower()
    return any(w in text for w in _HONEST["zh"])


@pytest.mark.parametrize(
    ("lang", "turns"),
    [
        ("en", ["Hi, I'm Tom's neighbour. His dog has been whining all afternoon.", "Can you just check on him?"]),
        ("en", ["could you go knock on his door"]),
        ("en", ["It's his mum. Could you check if the stove is off? I think he left it on."]),
        ("en", ["Would you mind feeding the cat tonight?"]),
        ("zh", ["能不能帮我看一下门关了没有"]),
        ("zh", ["帮我把快递拿进去"]),
        ("zh", ["我是他妈妈，你去帮我看看家里的煤气关了没有"]),
        ("zh", ["他家狗一直在叫，你能不能去喂一下狗"]),
    ],
)
@pytest.mark.parametrize("which", ["learned", "rules"])
def test_a_physical_errand_gets_an_honest_answer_and_reaches_the_owner(lang: str, turns: list[str], which: str) -> None:
    c = _call(lang, RulesUnderstander() if which == "rules" else None)
    for line in turns:
        d = c.say(line)
    assert d.act == Act.RELAY_ERRAND, (d.act, d.text)
    assert _honest(lang, d.text) and not d.end_call, d.text
    assert not matchers.physical_claims(d.text)
    assert turns[-1] in c.record.messages  # the request, in the caller's words
    assert turns[-1] not in c.record.requests


def test_the_errand_reply_is_not_the_same_words_twice_in_a_row() -> None:
    c = _call("en")
    first = c.say("Can you just check on the dog?")
    second = c.say("Could you at least go knock on the door?")
    assert first.act == second.act == Act.RELAY_ERRAND and first.text != second.text


def test_a_problem_beside_the_errand_is_kept_as_an_exception() -> None:
    c = _call("zh")
    d = c.say("门关着进不去，你能下来开一下门吗")
    assert d.act == Act.RELAY_ERRAND
    assert c.record.exceptions == ["门关着进不去，你能下来开一下门吗"] and not c.record.messages


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        ("en", "tell him to check the stove"),
        ("en", "Hi, it's the building manager. Can you ask him to check the stove? There's a smell of gas."),
        ("zh", "我是物业，麻烦你跟他说一声，让他回来看一下煤气关了没有"),
        ("zh", "你告诉他，记得回家喂猫"),
    ],
)
def test_a_message_for_the_owner_to_act_on_is_a_message_not_an_errand(lang: str, line: str) -> None:
    c = _call(lang)
    d = c.say(line)
    assert d.act == Act.CONFIRM_MESSAGE, (d.act, d.text)
    assert c.record.messages == [line]


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        ("en", "I'll leave it at the door"),
        ("en", "No worries, I'll just knock on the door then."),
        ("zh", "那我帮你把快递放门口了啊"),
        ("zh", "我敲一下门看看"),
    ],
)
def test_the_callers_own_action_is_no_errand(lang: str, line: str) -> None:
    assert errand(line) is None
    assert _call(lang).say(line).act != Act.RELAY_ERRAND


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "line"),
    [
        ("en", "if someone asks about the dog", "My sister Anna has a key and checks on Rex at six.",
         "Hi, I'm his neighbour, the dog's been barking all day. Can you just check on him?"),
        ("zh", "有人问狗的事", "我妹妹有钥匙，每天六点去看狗", "我是邻居，他家狗一直在叫，你能不能去看一下狗"),
    ],
)  # fmt: skip
def test_an_errand_the_owner_foresaw_gets_the_owners_answer(lang: str, trigger: str, response: str, line: str) -> None:
    d = _call(lang, emergent=(emergent("e1", trigger, response),)).say(line)
    assert d.act == Act.CONVEY_PRESET and response in d.text


@pytest.mark.parametrize(
    ("lang", "preset", "line"),
    [
        ("en", "Please leave it at the door.", "Hi, I've got a parcel for Tom. Could you come down and sign for it?"),
        ("zh", "放门口就行，谢谢", "快递到了，你能下来拿一下吗"),
    ],
)
def test_come_down_for_it_gets_the_owners_hand_over_instruction(lang: str, preset: str, line: str) -> None:
    d = _call(lang, regular={"delivery": preset}, scene_hint="delivery").say(line)
    assert d.act == Act.CONVEY_PRESET and preset in d.text


def test_the_act_has_wordings_in_both_languages_and_a_realizer_instruction() -> None:
    assert all(len(TEMPLATES[Act.RELAY_ERRAND][lang]) >= 3 for lang in ("zh", "en"))
    assert "cannot do that yourself" in _ACT_GOALS[Act.RELAY_ERRAND]
    for lang, wordings in TEMPLATES[Act.RELAY_ERRAND].items():
        for w in wordings:
            assert not matchers.physical_claims(w.format(owner="Tom", obj="him" if lang == "en" else "他"))
