"""Numbers read back (coordinator.readback), as conversations: the caller gives a number,
the assistant reads it back in digit groups; yes confirms, no or a correction updates it
(two read-backs at most); anything else moves on. And a low-confidence voice turn is
asked once for a repeat, then acted on."""

from __future__ import annotations

import httpx
import pytest

from coordinator import Act
from coordinator.readback import LOW_CONFIDENCE, extract, group
from safety import GuardContext, OutputGuard

from .coordinator_helpers import Call, emergent

MOBILE = (("mobile", "13912345678"),)
EN_MOBILE = (("mobile", "+1 510 867 0142"),)


# ----------------------------------------------------------- capture ----


@pytest.mark.parametrize(
    ("said", "lang", "kind", "value"),
    [
        ("My number is 415 555 0134.", "en", "callback", "4155550134"),
        ("Call me back at four one five, double five five, oh one three four.", "en", "callback", "4155550134"),
        ("You can reach me on 415-555-0134, thanks", "en", "callback", "4155550134"),
        ("我的手机号是幺三九，幺二三四，五六七八", "zh", "callback", "13912345678"),
        ("回电号码一三八两两零〇五六七八", "zh", "callback", "13822005678"),
        ("取件码是四八二七", "zh", "code", "4827"),
        ("The door code is 1 9 7 3.", "en", "code", "1973"),
        ("It comes to $12.50.", "en", "amount", "12.50"),
        ("一共三十二块五", "zh", "amount", "32.50"),
        ("我下午三点半到", "zh", "time", "15:30"),
        ("I'll be there at 4:15 pm.", "en", "time", "16:15"),
    ],
)
def test_spoken_numbers_are_captured_as_digits(said: str, lang: str, kind: str, value: str) -> None:
    assert any(v.kind == kind and v.value == value for v in extract(said, lang)), extract(said, lang)


def test_read_back_in_digit_groups() -> None:
    assert group("4155550134", "callback", "en") == "415 555 0134"
    assert group("13912345678", "callback", "zh") == "139 1234 5678"
    assert group("15:30", "time", "zh") == "下午3点半" and group("15:30", "time", "en") == "3:30 pm"
    assert group("4827", "code", "en") == "4 8 2 7"


# ------------------------------------------------- the conversation, en ----


def test_en_yes_confirms_the_number() -> None:
    call = Call(owner="Alex", lang="en")
    d = call.say(
        "Hi, this is Priya. Please have Alex call me back, my number is four one five, five five five, oh one three four."
    )
    assert d.act == Act.READ_BACK and "415 555 0134" in d.text and d.text.rstrip().endswith("?")
    assert call.record.callback_confirmed is False
    d = call.say("Yes, that's right.")
    assert d.act == Act.ACKNOWLEDGE and not d.end_call and "415" not in d.text
    (n,) = call.record.captured
    assert n == {"kind": "callback", "heard": n["heard"], "value": "4155550134", "confirmed": True, "readbacks": 1}
    assert "four one five" in n["heard"]  # the recognized words, as heard
    assert call.record.callback_number == "4155550134" and call.record.callback_confirmed is True


def test_en_correction_at_the_end_is_read_back_once_more() -> None:
    call = Call(owner="Alex", lang="en")
    call.say("My number is 415 555 0134, call me back please.")
    d = call.say("No, 0143 at the end.")
    assert d.act == Act.READ_BACK and "415 555 0143" in d.text
    d = call.say("Yes.")
    assert d.act == Act.ACKNOWLEDGE
    (n,) = call.record.captured
    assert n["value"] == "4155550143" and n["confirmed"] and n["readbacks"] == 2
    assert call.record.callback_number == "4155550143"


def test_en_still_wrong_after_digit_by_digit_is_kept_unconfirmed() -> None:
    call = Call(owner="Alex", lang="en")
    call.say("Call me back at 415 555 0134.")
    assert call.say("No, it's 415 555 0143.").act == Act.READ_BACK
    d = call.say("No, 415 555 0144.")
    assert d.act == Act.READ_BACK and "digit by digit" in d.text  # no twice: digit by digit
    d = call.say("4 1 5 5 5 5 0 1 4 5")
    assert d.act == Act.READ_BACK and "4 1 5, 5 5 5, 0 1 4 5" in d.text
    d = call.say("No.")
    assert d.act == Act.ACKNOWLEDGE and "check" in d.text  # no fourth read-back
    (n,) = call.record.captured
    assert n["value"] == "4155550145" and n["confirmed"] is False
    assert call.record.callback_confirmed is False
    d = call.say("Thanks, bye.")
    assert d.end_call and d.act != Act.READ_BACK


def test_en_caller_moving_on_is_not_nagged() -> None:
    call = Call(owner="Alex", lang="en")
    assert call.say("You can reach me at 415 555 0134.").act == Act.READ_BACK
    d = call.say("Also, tell him the contract is ready to sign.")
    assert d.act != Act.READ_BACK and "415" not in d.text
    assert call.record.captured[0]["confirmed"] is False and call.state.readback is None
    assert any("contract" in m for m in call.record.messages)


def test_en_thanks_waits_for_the_answer_a_goodbye_hears_it_read_back() -> None:
    call = Call(owner="Alex", lang="en")
    call.say("Can I leave a message for him?")
    d = call.say("Tell him the contract is ready, call me at 720 555 0191. Thanks.")
    assert d.act == Act.READ_BACK and not d.end_call and "720 555 0191" in d.text
    d = call.say("Yes.")
    assert d.end_call and d.act == Act.CLOSE_CONFIRM and call.record.callback_confirmed
    # Leaving: the number is read back in the goodbye (heard, kept unconfirmed), the call closes.
    call = Call(owner="Alex", lang="en")
    d = call.say("Alright, he can call us at 415 555 0198. Thanks, bye.")
    assert d.end_call and d.act == Act.CLOSE_CONFIRM and "415 555 0198" in d.text
    assert call.record.callback_number == "4155550198" and call.record.callback_confirmed is False


def test_en_a_digit_lost_in_the_repeat_is_still_a_confirmation() -> None:
    call = Call(owner="Alex", lang="en")
    call.say("Please have her call me back at 720 555 0191, I'm here until six.")
    d = call.say("that's 720 55 0191 thanks")  # the line dropped a 5
    assert d.act != Act.READ_BACK and call.record.callback_number == "7205550191"
    assert call.record.callback_confirmed is True


def test_a_number_the_assistant_said_is_not_read_back() -> None:
    preset = emergent("e1", "如果对方问面试时间能不能改", "明天的面试可以改到下午三点，麻烦发个确认邮件")
    call = Call(owner="王女士", lang="zh", emergent=(preset,))
    d = call.say("您好，我是星辰科技的HR小林，想问下面试时间能不能改一下？")
    assert d.preset is not None and d.preset.id == "e1"
    d = call.say("下午三点可以的，我发邮件确认，谢谢，再见")
    assert d.act != Act.READ_BACK and d.end_call and "3点" not in d.text  # the owner's own time, echoed
    assert call.record.captured == []


# ------------------------------------------------- the conversation, zh ----


def test_zh_correction_updates_the_value() -> None:
    call = Call(owner="陈先生", lang="zh")
    d = call.say("麻烦让陈先生回个电话，我的号码是一三九一二三四五六七八。")
    assert d.act == Act.READ_BACK and "139 1234 5678" in d.text and "对吗" in d.text
    d = call.say("不对，是5687")
    assert d.act == Act.READ_BACK and "139 1234 5687" in d.text
    d = call.say("对，没错")
    assert d.act == Act.ACKNOWLEDGE
    (n,) = call.record.captured
    assert n["value"] == "13912345687" and n["confirmed"] and "5687" in n["heard"]


def test_zh_bare_no_asks_for_the_number_again_then_digit_by_digit_then_moves_on() -> None:
    call = Call(owner="陈先生", lang="zh")
    call.say("我的手机号是一三八，零零一三，八零零一，有事打给我")
    d = call.say("不对")
    assert d.act == Act.READ_BACK and "号码" in d.text and "再" in d.text  # say it again, please
    d = call.say("不是")
    assert d.act == Act.READ_BACK and "一位一位" in d.text  # no twice: digit by digit
    d = call.say("不对")
    assert d.act == Act.ACKNOWLEDGE and "核对" in d.text
    assert call.record.captured[0]["confirmed"] is False


def test_zh_a_time_said_no_to_twice_is_not_asked_digit_by_digit() -> None:
    call = Call(owner="陈先生", lang="zh")
    call.say("你好，我下午三点半再过来")
    assert call.say("不对，是四点").act == Act.READ_BACK
    d = call.say("不对，五点")
    assert d.act == Act.ACKNOWLEDGE and "一位一位" not in d.text
    assert call.record.captured[0]["value"] == "17:00" and call.record.captured[0]["confirmed"] is False


def test_zh_code_and_time_read_back_and_confirmed() -> None:
    call = Call(owner="陈先生", lang="zh")
    d = call.say("你好，我是快递员，取件码是四八二七，我下午三点半再过来")
    assert d.act == Act.READ_BACK and "4 8 2 7" in d.text and "下午3点半" in d.text
    call.say("对的")
    kinds = {n["kind"]: n for n in call.record.captured}
    assert kinds["code"]["value"] == "4827" and kinds["time"]["value"] == "15:30"
    assert all(n["confirmed"] for n in call.record.captured)


# ------------------------------------------------------ owner's numbers ----


def test_owner_numbers_are_never_read_back() -> None:
    call = Call(owner="陈先生", lang="zh", private=MOBILE)
    d = call.say("他的手机是不是一三九一二三四五六七八？")
    assert d.act != Act.READ_BACK and "139" not in d.text and "1234" not in d.text
    assert call.record.captured == []
    call = Call(owner="Alex", lang="en", private=EN_MOBILE)
    d = call.say("Tell him to call me back on 510 867 0142.")
    assert d.act != Act.READ_BACK and "0142" not in d.text and call.record.captured == []


def _guard_ctx(call: Call, *, with_allowed: bool = False) -> GuardContext:
    return GuardContext(
        lang=call.state.lang,
        owner_name=call.ctx.owner_name,
        private_facts=call.ctx.private_facts,
        preset_texts=(),
        conversation=tuple(c for c, _ in call.state.history if c),
        allowed_texts=(call.state.last_reply,) if with_allowed and call.state.last_reply else (),
    )


@pytest.mark.parametrize(
    ("lang", "owner", "private", "lines"),
    [
        ("en", "Alex", EN_MOBILE, ["Call me back at 415 555 0134.", "No, 0143 at the end."]),
        ("zh", "陈先生", MOBILE, ["回电号码是一三八，零零一三，八零零一", "不对，最后是八零零二"]),
        ("zh", "陈先生", MOBILE, ["取件码四八二七，下午三点半我再来", "不对，是四点"]),
    ],
)
def test_guard_passes_every_read_back_on_its_own(lang: str, owner: str, private: tuple, lines: list[str]) -> None:
    """Checked as if any realizer had written it (no allowed texts): the caller's own
    numbers, corrected ones too, are facts of the conversation."""
    guard = OutputGuard()
    call = Call(owner=owner, lang=lang, private=private)
    for line in lines:
        d = call.say(line)
        assert d.act == Act.READ_BACK
        for sentence, verdict in guard.check_text(d.text, _guard_ctx(call)):
            assert verdict.ok, (sentence, verdict)


def test_guard_still_blocks_owner_numbers_in_a_read_back_wording() -> None:
    guard = OutputGuard()
    call = Call(owner="陈先生", lang="zh", private=MOBILE)
    call.say("回电号码是一三八，零零一三，八零零一")
    leak = "是 139 1234 5678，对吗？"
    assert not guard.check(leak, _guard_ctx(call)).ok
    call = Call(owner="Alex", lang="en", private=EN_MOBILE)
    call.say("Call me back at 415 555 0134.")
    assert not guard.check("That's 510 867 0142, right?", _guard_ctx(call)).ok


# --------------------------------------------------------- confidence ----


def test_low_confidence_turn_is_asked_once_then_acted_on() -> None:
    call = Call(owner="Alex", lang="en")
    low = LOW_CONFIDENCE - 0.2
    d = call.co.decide(call.state, call.ctx, "Tell him the parcel is at the front desk.", asr_confidence=low)
    assert d.act == Act.ASK_REPEAT and ("again" in d.text.lower() or "repeat" in d.text.lower())
    assert call.record.messages == [] and call.record.reason is None  # nothing acted on
    d = call.co.decide(call.state, call.ctx, "Tell him the parcel is at the front desk.", asr_confidence=low)
    assert d.act != Act.ASK_REPEAT  # never twice in a row: the best reading is acted on
    assert call.record.messages or call.record.notes
    d = call.co.decide(call.state, call.ctx, "Thanks.", asr_confidence=0.95)
    assert d.act != Act.ASK_REPEAT


def test_low_confidence_zh_and_no_emergent_preset_on_a_guess() -> None:
    preset = emergent("e1", "有人问我什么时候回来", "他今天会晚一点回来，有事可以留言。")
    call = Call(owner="陈先生", lang="zh", emergent=(preset,))
    low = LOW_CONFIDENCE - 0.1
    vec = None
    d = call.co.decide(call.state, call.ctx, "请问他什么时候回来？", vec, asr_confidence=low)
    assert d.act == Act.ASK_REPEAT and "再说一" in d.text
    from .coordinator_helpers import embedder

    vec = embedder().embed_one("请问他什么时候回来？")
    d = call.co.decide(call.state, call.ctx, "请问他什么时候回来？", vec, asr_confidence=low)
    assert d.preset is None and d.act != Act.ASK_REPEAT  # acted on, but never the owner's answer on a guess
    d = call.co.decide(call.state, call.ctx, "请问他什么时候回来？", vec, asr_confidence=0.9)
    assert d.preset is not None and d.preset.id == "e1"  # heard clearly: conveyed


def test_text_calls_are_never_asked_to_repeat() -> None:
    call = Call(owner="Alex", lang="en")
    assert call.say("Tell him the parcel is at the front desk.").act != Act.ASK_REPEAT


# -------------------------------------------------------- the text API ----


async def _text_call(api: httpx.AsyncClient, lang: str) -> str:
    await api.put(
        "/v1/profile",
        json={"display_name": "陈先生" if lang == "zh" else "Alex", "languages": [lang],
              "private_facts": [{"label": "mobile", "value": "13912345678"}]},
    )  # fmt: skip
    r = await api.post("/v1/calls/text", json={"lang": lang})
    assert r.status_code == 201, r.text
    return str(r.json()["call_id"])


async def _turn(api: httpx.AsyncClient, cid: str, text: str) -> dict:
    r = await api.post(f"/v1/calls/{cid}/turns", json={"text": text})
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_text_api_en_read_back_correction_and_record(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    cid = await _text_call(api, "en")
    t = await _turn(api, cid, "Hi, it's Sam from the garage. Call me back at 415 555 0134.")
    assert t["act"] == "read_back" and "415 555 0134" in t["reply"]
    t = await _turn(api, cid, "No, 0143 at the end.")
    assert t["act"] == "read_back" and "415 555 0143" in t["reply"]
    t = await _turn(api, cid, "Yes.")
    assert t["act"] == "acknowledge"
    await api.post(f"/v1/calls/{cid}/hangup")
    rec = (await api.get(f"/v1/calls/{cid}")).json()
    orec = rec["owner_record"]
    assert orec["callback_number"] == "4155550143" and orec["callback_confirmed"] is True
    (n,) = orec["captured"]
    assert n["kind"] == "callback" and n["value"] == "4155550143" and n["confirmed"] is True
    assert "415 555 0134" in n["heard"]
    assert "4155550143" in rec["summary"]["text"] and "not confirmed" not in rec["summary"]["text"]
    assert rec["interventions"] == []  # the guard passed every read-back


async def test_text_api_zh_unconfirmed_is_flagged(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    cid = await _text_call(api, "zh")
    t = await _turn(api, cid, "你好，我姓王，回电号码是一三八，零零一三，八零零一")
    assert t["act"] == "read_back" and "138 0013 8001" in t["reply"] and "对吗" in t["reply"]
    t = await _turn(api, cid, "不对，是一三八零零一三八零零二")
    assert t["act"] == "read_back" and "138 0013 8002" in t["reply"]
    t = await _turn(api, cid, "不对，最后是八零零三")
    assert t["act"] == "read_back" and "一位一位" in t["reply"]  # no twice: digit by digit
    t = await _turn(api, cid, "不是")
    assert t["act"] == "acknowledge"
    await api.post(f"/v1/calls/{cid}/hangup")
    rec = (await api.get(f"/v1/calls/{cid}")).json()
    orec = rec["owner_record"]
    assert orec["callback_number"] == "13800138003" and orec["callback_confirmed"] is False
    assert orec["captured"][0]["confirmed"] is False
    assert "13800138003" in rec["summary"]["text"] and "未确认" in rec["summary"]["text"]
    assert rec["interventions"] == []
    t_owner = await api.get(f"/v1/calls/{cid}")
    assert "13912345678" not in str(t_owner.json()["transcript"])  # the owner's number never said


def test_zh_a_changed_time_reads_back_the_new_one_and_a_goodbye_closes() -> None:
    call = Call(owner="张老师", lang="zh")
    call.say("你好，我是张老师部门的小李")
    d = call.say("麻烦跟她说一声，明天早上九点的评审会改到十点了，地点不变")
    assert d.act == Act.READ_BACK and "10点" in d.text and "9点" not in d.text
    d = call.say("对，改到十点，谢谢啊，拜拜")
    assert d.end_call and call.record.captured[0]["value"] == "10:00" and call.record.captured[0]["confirmed"]


def test_zh_noise_digits_in_the_answer_are_neither_a_yes_nor_a_correction() -> None:
    call = Call(owner="陈先生", lang="zh")
    call.say("我的电话是七六七四七七六六六九一")
    call.say("不断水漆了 漆漆漆漆了六六交易。")  # a misrecognized answer whose "66" fits the number
    assert call.record.captured[0]["confirmed"] is False


@pytest.mark.parametrize(
    ("utt", "lang", "value"),
    [
        # found by the stop-12 judge evaluation: a self-correction inside the turn, the
        # tail said again, joined into one 15-digit number and read back garbled
        (
            "那你让他打我电话 一三九零一二三四五六七 哦不对不对 尾号是四六七八 一三九 零一二三 四六七八",
            "zh",
            "13901234678",
        ),
        ("My number is 415 555 0134, no wait, 415 555 0143.", "en", "4155550143"),
        ("Call us at 2 0 6, 5 5 5, 0 1 4 2.", "en", "2065550142"),
        ("Hi, it's Dr Lee's office, call us back on 617 555 0147.", "en", "6175550147"),
    ],
)
def test_the_number_after_a_self_correction_is_captured_whole(utt: str, lang: str, value: str) -> None:
    values = extract(utt, lang)
    assert [v.value for v in values if v.kind == "callback"] == [value]
    assert not [v for v in values if v.kind == "code"]
