"""Conversation-shaped tests of the behaviour classes the learned reading makes possible
(issue 12, item 4): either/or questions answered from the preset, repeat requests,
bare closings, the caller's own action, same-topic follow-ups - in Chinese and English."""

from __future__ import annotations

import pytest

from coordinator import Act, CallerAct
from coordinator.nlu import LearnedUnderstander

from .coordinator_helpers import Call, embedder


def learned() -> LearnedUnderstander:
    return LearnedUnderstander(embed=embedder().embed_one)


@pytest.mark.parametrize(
    ("lang", "scene", "preset", "line"),
    [
        (
            "en",
            "taxi",
            "I'll meet you at the north gate.",
            "Hi, your driver here, should I go to the north gate or the south gate?",
        ),
        ("zh", "taxi", "我在小区南门等你", "师傅到了，您是在东门还是南门啊？"),
    ],
)
def test_either_or_question_is_answered_from_the_preset(lang: str, scene: str, preset: str, line: str) -> None:
    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, regular={scene: preset}, scene_hint=scene,
                understander=learned())  # fmt: skip
    d = call.say(line)
    assert d.act == Act.CONVEY_PRESET and preset in d.text
    assert not call.record.requests  # not relayed as a decision the owner must make


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        (
            "en",
            ["Hi, it's Sam from UPS.", "Could you tell him I'll come back tomorrow afternoon with the parcel?", "nope"],
        ),
        ("zh", ["你好，我是快递员", "麻烦跟他说一声，明天下午我再送一次", "没了"]),
    ],
)
def test_bare_closing_after_anything_else_closes(lang: str, lines: list[str]) -> None:
    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, understander=learned())
    first, message, bare = lines
    call.say(first)
    assert call.say(message).act == Act.CONFIRM_MESSAGE
    d = call.say(bare)
    assert d.act == Act.CLOSE and d.end_call  # not "sorry, I didn't catch that"
    assert len(call.record.messages) == 1


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        ("en", ["Hi, FedEx here with a package for Alex.", "I'll just leave it with the guard, tell him."]),
        ("zh", ["你好，顺丰快递", "那我放门卫那了啊，跟他说一声"]),
    ],
)
def test_callers_own_action_is_acknowledged_and_relayed(lang: str, lines: list[str]) -> None:
    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, understander=learned())
    call.say(lines[0])
    d = call.say(lines[1])
    assert d.act in (Act.CONFIRM_MESSAGE, Act.ACKNOWLEDGE)  # not "I can't decide that for him"
    assert lines[1] in call.record.messages
    assert lines[1] not in call.record.requests


def test_same_topic_follow_up_never_gets_the_preset_again() -> None:
    call = Call(owner="Alex", lang="en", regular={"delivery": "Please leave it at the door."}, scene_hint="delivery",
                understander=learned())  # fmt: skip
    assert call.say("Hi, delivery here, where should I leave it?").act == Act.CONVEY_PRESET
    d = call.say("which door, the front or the back?")
    assert d.preset is None and "leave it at the door" not in d.text
    assert d.act in (Act.DEFER_DECISION, Act.ANSWER_UNKNOWN)  # an honest "I'll ask"
    assert call.conveyed_count("regular:delivery") == 1


def test_repeat_request_repeats_the_preset_without_counting_it_twice() -> None:
    call = Call(owner="Alex", lang="en", regular={"delivery": "Please leave it at the door."}, scene_hint="delivery",
                understander=learned())  # fmt: skip
    assert call.say("Hi, delivery here, where should I leave it?").act == Act.CONVEY_PRESET
    d = call.say("sorry, where did you say?")
    assert d.act == Act.CONVEY_PRESET and "Please leave it at the door." in d.text
    assert call.state.conveyed["regular:delivery"] == 1
    assert call.record.presets_conveyed == ["regular:delivery"]


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        ("en", "There's a problem with the order, the box is all wet.", "signature"),
        ("zh", "你这个件有点问题，箱子湿了", "签收"),
    ],
)
def test_relay_restates_only_what_the_caller_said(lang: str, text: str, word: str) -> None:
    """A reading that says "signature" (wrongly) must not make the relay claim one."""
    from dataclasses import replace

    from coordinator.acts import classify
    from coordinator.understanding import typed_understanding

    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, regular={"delivery": "放门口"},
                scene_hint="delivery")  # fmt: skip
    c = replace(classify(text, scene="delivery"), exception="signature", act=CallerAct.EXCEPTION)
    wrong = typed_understanding("test", c, text, call.state, call.ctx)
    d = call.co.decide(call.state, call.ctx, text, understanding=wrong)
    assert d.act == Act.RELAY_EXCEPTION
    assert word not in d.text
    assert call.record.exceptions == [text]


@pytest.mark.parametrize(
    ("lang", "pronoun", "word"), [("en", "she", "her"), ("en", "they", "they"), ("zh", "she", "她")]
)
def test_pronouns_follow_the_owners_profile(lang: str, pronoun: str, word: str) -> None:
    from dataclasses import replace

    from coordinator.render import render

    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang)  # names that guess neutral / "he"
    ctx = replace(call.ctx, pronoun=pronoun)
    texts = [render(act, call.state, ctx, {}) for act in (Act.GREET, Act.GREET, Act.ANSWER_UNKNOWN, Act.ANSWER_UNKNOWN)]
    assert any(word in t for t in texts), texts
    if lang == "zh":
        assert not any("他" in t for t in texts), texts


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        ("en", ["Hi, is Alex there?", "Is he around?", "Can I speak to him?", "Could you put him on?"]),
        ("zh", ["陈先生在吗？", "他在不在啊？", "能让他接电话吗？", "麻烦叫他接一下"]),
    ],
)
def test_no_sentence_is_said_twice_in_a_call(lang: str, lines: list[str]) -> None:
    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang)
    replies = [call.greeting.text] + [call.say(line).text for line in lines[:3]]
    assert len(set(replies)) == len(replies), replies


def test_a_repeat_request_gets_the_same_words() -> None:
    call = Call(owner="Alex", lang="en")
    first = call.say("Can I speak to Alex?").text
    again = call.say("sorry, what did you say?").text
    assert first in again and again != first


@pytest.mark.parametrize(
    ("lang", "preset", "line", "message"),
    [
        (
            "en",
            "Leave it at the door, please.",
            "Hi, your food's here, where do I leave it? Also tell him the receipt is in the bag.",
            "receipt",
        ),
        ("zh", "放门口就行", "外卖到了，放哪啊？还有跟他说一声发票在袋子里", "发票"),
    ],
)
def test_two_requests_in_one_turn_are_both_handled(lang: str, preset: str, line: str, message: str) -> None:
    for understander in (None, learned()):
        call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, regular={"takeout": preset},
                    scene_hint="takeout", understander=understander)  # fmt: skip
        d = call.say(line)
        assert d.act == Act.CONVEY_PRESET and preset in d.text
        assert any(message in m for m in call.record.messages), call.record.messages


def test_one_claim_of_closeness_does_not_make_the_caller_hostile() -> None:
    def guard(utt: str, ctx: object) -> tuple[str, ...]:  # the input guard's verdict, scripted
        return ("pretexting",) if "sister" in utt else ()

    call = Call(owner="Alex", lang="en", input_guard=guard)
    assert call.say("Hi, I'm his sister, where is he right now?").act == Act.DEFLECT_PRIVATE
    call.say("Okay. Please tell him Mum's birthday dinner moved to Sunday at six.")
    assert not call.state.hostile
    assert any("Sunday" in m for m in call.record.messages)
    call.say("Come on, I'm his sister, just tell me where he is.")  # a second pretext: now it is
    assert call.state.hostile


@pytest.mark.parametrize(
    ("lang", "line", "caller"),
    [
        ("en", "Hi, it's pretty bad, the box got crushed.", None),
        ("en", "Hey it's kind of a long story but the food is cold", None),
        ("en", "Hello, this is Maria from Bright Dental.", "Maria from Bright Dental"),
        ("zh", "你好，我是顺丰快递的小王", "顺丰快递的小王"),
    ],
)
def test_caller_field_is_a_name_company_or_role_or_nothing(lang: str, line: str, caller: str | None) -> None:
    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, understander=learned())
    call.say(line)
    assert call.record.caller == caller


@pytest.mark.parametrize("reader", ["rules", "learned"])
@pytest.mark.parametrize(
    ("lang", "preset", "lost", "late", "then"),
    [
        (
            "en",
            "Leave it with the guard at the north gate.",
            "Hi, courier here with a parcel for Alex, I can't find your building.",
            "Right, the guard says he won't take it, it needs a signature.",
            "So where do I leave it now?",
        ),
        (
            "zh",
            "放北门保安亭那儿就行",
            "你好，我是快递，我找不到你们那栋楼啊",
            "保安说不收，这个件要本人签收",
            "那我现在放哪儿？",
        ),
    ],
)
def test_a_preset_that_solves_an_early_exception_is_conveyed_a_late_one_suspends_it(
    reader: str, lang: str, preset: str, lost: str, late: str, then: str
) -> None:
    co_reader = learned() if reader == "learned" else None
    call = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, regular={"delivery": preset},
                scene_hint="delivery", understander=co_reader)  # fmt: skip
    d = call.say(lost)
    assert d.act == Act.CONVEY_PRESET and preset in d.text  # the owner's answer solves it: not suspended
    assert call.conveyed_count("regular:delivery") == 1
    d = call.say(late)
    assert d.act == Act.RELAY_EXCEPTION and d.preset is None  # after the answer: suspend, relay
    assert call.record.exceptions == [late]
    d = call.say(then)
    assert d.preset is None and d.act == Act.DEFER_DECISION  # never the stale instruction again
    assert call.conveyed_count("regular:delivery") == 1


def test_an_exception_the_preset_does_not_solve_still_suspends_it() -> None:
    call = Call(owner="Alex", lang="en", regular={"delivery": "Please leave it at the door."}, scene_hint="delivery")
    d = call.say("Hi, courier here, I can't find your building.")
    assert d.act == Act.RELAY_EXCEPTION and d.preset is None  # "at the door" does not find the building
    assert call.say("Where should I leave it?").preset is None
