"""What happens after the owner's answer was given (issue 12, stop 16; classes found on dev2's
owner-record and repeated-preset errors, sentences ours):

- a later turn the trigger matches again, about another matter or about the answer itself, is
  answered or relayed by the table, never the preset's words again (repeat requests still are);
- "please pass it on" right after the news was taken down is acknowledged, not "go ahead";
- a second question in the turn the preset answers ("... Oh, and ...?") is taken down and said so;
- a caller who checks the answer back ("north entrance, right?") gets a yes, nothing relayed;
- an urgent need beside a private question the preset partly answers is kept as a message.

Each class in Chinese and English, with the learned understander and the input guard."""

from __future__ import annotations

import pytest

from coordinator import Act

from .coordinator_helpers import emergent
from .test_understanding_judge2 import call

# ------------------------------------------------ the trigger matched again, another matter ----


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "first", "then"),
    [
        (
            "en", "the daycare calls", "Her husband Tom picks the kids up today at five.",
            "Hi, this is Rosa from Little Acorns daycare, calling for the Parkers.",
            "Oh lovely. Separate thing, the kids need new spare clothes in their cubbies, could someone bring a set this week?",
        ),
        (
            "zh", "幼儿园打电话来", "今天孩子爸爸五点来接",
            "喂，您好，我是小太阳幼儿园的张老师。",
            "哦好的，爸爸接是吧。还有个事，幼儿园这周五要开家长会，家长能来吗？",
        ),
    ],
)  # fmt: skip
def test_another_matter_after_the_answer_is_relayed_not_answered_with_the_preset(
    lang: str, trigger: str, response: str, first: str, then: str
) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    assert c.say(first).act == Act.CONVEY_PRESET
    d = c.say(then)
    assert d.act != Act.CONVEY_PRESET and response not in d.text
    assert c.conveyed_count("e1") == 1
    assert c.record.has_message  # the new matter is for the owner


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "first", "again"),
    [
        ("en", "someone asks if he can make the 2 pm meeting", "He's off sick today; please ask Priya to cover.",
         "Hey, quick one, can he make the 2 pm meeting?", "Off sick? Oh no, what's wrong with him?"),
        ("zh", "有人问他能不能参加下午的会", "他今天请病假了，会议请找小王",
         "喂，他下午的会能来吗？", "请病假了？怎么了，严重吗？"),
    ],
)  # fmt: skip
def test_a_question_about_the_answer_does_not_get_the_answer_again(
    lang: str, trigger: str, response: str, first: str, again: str
) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    assert c.say(first).act == Act.CONVEY_PRESET
    d = c.say(again)
    assert response not in d.text
    assert c.conveyed_count("e1") == 1


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "first", "repeat"),
    [
        ("en", "someone asks when he'll be back", "He's back on Monday.", "When's he back?", "Sorry, what was that?"),
        ("zh", "有人问他什么时候回来", "他周一回来", "他什么时候回来啊？", "啊？你说啥？信号不好"),
    ],
)  # fmt: skip
def test_a_repeat_request_still_gets_the_answer_again(
    lang: str, trigger: str, response: str, first: str, repeat: str
) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    assert c.say(first).act == Act.CONVEY_PRESET
    assert response in c.say(repeat).text


# ------------------------------------------------------ "please pass it on", already down ----


@pytest.mark.parametrize(
    ("lang", "news", "pass_on"),
    [
        ("en", "Can you tell him the building's water is off tomorrow from nine to noon?", "Okay, please let him know. Thanks."),
        ("zh", "跟他说一声，明天上午九点到十二点小区停水。", "好，那麻烦转告一下，谢谢"),
    ],
)  # fmt: skip
def test_pass_it_on_after_the_news_is_down_is_not_an_invitation(lang: str, news: str, pass_on: str) -> None:
    c = call(lang)
    c.say("Hi, this is the building manager." if lang == "en" else "喂，你好，我是物业的。")
    c.say(news)
    assert c.record.has_message
    before = list(c.record.messages)
    d = c.say(pass_on)
    assert d.act != Act.INVITE_MESSAGE
    assert c.state.awaiting != "message"
    assert c.record.messages == before  # "please pass it on" is not a second message


# --------------------------------------------------------- the other question of the turn ----


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "turn", "other"),
    [
        ("en", "the vet calls to confirm the appointment", "Yes, she'll bring Biscuit on Friday at ten.",
         "Hi, it's Maple Vet confirming Biscuit's appointment Friday at ten, will she make it? Oh, and does she still want the nail trim?",
         "nail trim"),
        ("zh", "宠物医院打电话确认预约", "会的，她周五上午十点带球球过去",
         "喂您好，这边是安安宠物医院，确认一下球球周五上午十点的预约，能来吗？另外，指甲还要一起剪吗？",
         "指甲"),
    ],
)  # fmt: skip
def test_the_second_question_beside_the_answer_is_taken_down(
    lang: str, trigger: str, response: str, turn: str, other: str
) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    d = c.say(turn)
    assert d.act == Act.CONVEY_PRESET and response in d.text
    assert any(other in r for r in c.record.requests)
    assert ("other question" in d.text) if lang == "en" else ("另外您问的" in d.text)


def test_one_question_only_adds_nothing() -> None:
    c = call("en", emergent=(emergent("e1", "the vet calls to confirm the appointment", "Yes, Friday at ten."),))
    d = c.say("Hi, it's Maple Vet confirming Biscuit's appointment Friday at ten, will she make it?")
    assert d.act == Act.CONVEY_PRESET and "other question" not in d.text
    assert not c.record.requests


# ------------------------------------------------------------- checking the answer back ----


@pytest.mark.parametrize(
    ("lang", "regular", "arrive", "check"),
    [
        ("en", "Please wait at the north entrance, by the fountain.", "Hi, your ride's here, where are you?",
         "North entrance, by the fountain, right? I'm pulling around now."),
        ("zh", "请到北门喷泉那儿等一下", "喂，师傅到了，您在哪儿呢？", "北门喷泉是吧？我现在绕过去"),
    ],
)  # fmt: skip
def test_checking_the_answer_back_gets_a_yes_and_nothing_relayed(
    lang: str, regular: str, arrive: str, check: str
) -> None:
    c = call(lang, regular={"taxi": regular}, scene_hint="taxi")
    assert c.say(arrive).act == Act.CONVEY_PRESET
    d = c.say(check)
    assert d.act == Act.CONFIRM_ECHO
    assert not c.record.has_message


@pytest.mark.parametrize(
    ("lang", "regular", "arrive", "check"),
    [
        ("en", "Please wait at the north entrance.", "Hi, your ride's here, where are you?",
         "North entrance, right? The one with the flag pole?"),
        ("zh", "请到北门等一下", "喂，师傅到了，您在哪儿呢？", "北门是吧？是有旗杆的那个吗？"),
    ],
)  # fmt: skip
def test_a_check_with_a_new_question_is_not_confirmed_blindly(lang: str, regular: str, arrive: str, check: str) -> None:
    """The flag pole is nothing the owner said: no "yes, that's right" to it."""
    c = call(lang, regular={"taxi": regular}, scene_hint="taxi")
    c.say(arrive)
    assert c.say(check).act != Act.CONFIRM_ECHO


# ------------------------------------------- an urgent need beside a private question ----


@pytest.mark.parametrize(
    ("lang", "trigger", "response", "turn", "kept"),
    [
        pytest.param(
            "en", "someone asks when he'll be back", "He's back in the office after 4 pm.",
            "When's he back? And what's his cell, the one I have doesn't work, our website is down and it's urgent",
            "urgent",
            marks=pytest.mark.xfail(
                strict=True,
                reason="known: 'our website is down' reads as an exception, relayed, and the owner's answer is not given",
            ),
        ),
        pytest.param(
            "en", "someone asks when he'll be back", "He's back in the office after 4 pm.",
            "When's he back? And what's his cell number, I need him urgently to sign off the release",
            "urgently",
            marks=pytest.mark.xfail(
                reason="by design the English input guard reads urgency with a request for the owner's number as a pretext "
                "(docs/safety.md), so the owner's answer to the first question is not given",
            ),
        ),
        ("zh", "有人问他什么时候回来", "他下午四点以后回办公室",
         "他什么时候回来？还有他手机号多少，我这个打不通，支付系统挂了，急着要他处理", "支付系统"),
    ],
)  # fmt: skip
def test_an_urgent_need_beside_a_private_question_is_kept(
    lang: str, trigger: str, response: str, turn: str, kept: str
) -> None:
    c = call(lang, emergent=(emergent("e1", trigger, response),))
    d = c.say(turn)
    assert response in d.text
    assert any(kept in m for m in c.record.messages)
    assert not any(ch.isdigit() for ch in d.text.replace(response, ""))  # no number given out
