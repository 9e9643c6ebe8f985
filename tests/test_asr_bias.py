"""Context biasing: the call's hotwords hold the owner's name and the presets' specific
words (places first), in the call's language, bounded in length."""

from __future__ import annotations

from pipeline.asr_bias import MAX_CHARS, call_hotwords, key_terms


def test_chinese_key_terms_put_places_first() -> None:
    terms = key_terms("麻烦放在小区南门的快递柜就可以了", "zh")
    assert terms[0] in {"南门", "小区"} or "南门" in terms[:2]
    assert "可以" not in terms and "麻烦" not in terms


def test_english_key_terms_keep_names_numbers_places() -> None:
    terms = key_terms("Leave it with the front desk at Building C, 1450 Mission Street", "en")
    for word in ("Building", "1450", "Mission", "Street"):
        assert word in terms
    assert "the" not in terms and "it" not in terms


def test_call_hotwords_order_and_bound() -> None:
    hw = call_hotwords(
        lang="zh", scene="takeout", owner_name="陈先生", preset_texts=["放在小区南门", "有人问我什么时候回来"]
    )
    assert hw.startswith("陈先生 ")
    assert hw.index("南门") < hw.index("外卖")  # the owner's words before the scene's
    many = call_hotwords(lang="en", scene="work", preset_texts=[f"Project Falcon{i} review" for i in range(80)])
    assert 0 < len(many) <= MAX_CHARS["en"]
    assert call_hotwords(lang="en", scene=None) == ""


def test_a_transcript_that_is_the_prompt_read_back_is_dropped() -> None:
    from pipeline.asr import echoes_hotwords

    hw = call_hotwords(lang="zh", scene="takeout", owner_name="张老师", preset_texts=["敲门就行"])
    assert echoes_hotwords("外卖 骑手", hw)
    assert echoes_hotwords("你好 张老师 敲门 门口", hw)
    assert not echoes_hotwords("你好，外卖到了，放门口吗？", hw)
    assert not echoes_hotwords("外卖", hw)  # one word can be what the caller said
    assert not echoes_hotwords("Leave it at the door please", "takeout DoorDash")


# ------------------------------------------------------- number turns ----


def test_a_number_is_expected_after_a_read_back_or_a_request() -> None:
    from coordinator import CallContext, CallState, Coordinator
    from pipeline.asr_bias import expects_number

    state = CallState(call_id="t", lang="zh")
    ctx = CallContext(owner_name="陈先生", lang="zh")
    co = Coordinator()
    co.greet(state, ctx)
    assert not expects_number(state)
    co.decide(state, ctx, "我的电话是一三九一二三四五六七八，有事打给我")
    assert expects_number(state)  # read back: the answer may hold the digits again
    co.decide(state, ctx, "对，没错")
    assert not expects_number(state)


def test_number_hotwords_lead_with_digits_and_keep_the_call_terms() -> None:
    from pipeline.asr_bias import NUMBER_HINT, number_hotwords

    hw = call_hotwords(lang="zh", scene="takeout", owner_name="陈先生")
    biased = number_hotwords(hw, "zh")
    assert biased.startswith(NUMBER_HINT["zh"]) and "陈先生" in biased
    assert any(ch.isdigit() for ch in number_hotwords("", "en"))


def test_a_second_number_pass_only_where_a_number_is_named_but_not_whole() -> None:
    from pipeline.asr_bias import number_text, wants_number_pass

    assert wants_number_pass("我的电话是一三次,一四三次九八八", "zh")  # 8 digits: not a whole number
    assert wants_number_pass("Call me back on 8148. I know you. 86144.", "en")
    assert not wants_number_pass("我的电话是139 1234 5678", "zh")
    assert not wants_number_pass("你好，外卖到了，放门口吗？", "zh")  # no number named
    first, second = "我的电话是一三次,一四三次九八八", "我的电话是134 1434 9808"
    assert number_text(first, second, "zh") == second
    assert number_text(second, first, "zh") == second  # never a worse reading
    assert number_text(first, "电话号码 138 0000 0000", "zh") == first  # the prompt's example read back
