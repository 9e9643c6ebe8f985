"""Numbers in the caller's words as Whisper writes them on a phone line (coordinator.
spoken_numbers): Chinese numerals, 幺 / 两 / 零 / 〇 / 洞, numerals mixed with Arabic
digits, a digit's sound written as another character where a number is expected, and
百 / 千 / 十 forms for amounts and times (not digit strings)."""

from __future__ import annotations

import pytest

from coordinator.spoken_numbers import correction_runs, digit_text, extract


def _values(said: str, lang: str = "zh", **kw: bool) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in extract(said, lang, **kw):
        out.setdefault(v.kind, []).append(v.value)
    return out


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("我的电话是一三九，一二三四，五六七八", "13912345678"),
        ("回电号码幺三九幺二三四五六七八", "13912345678"),
        ("我手机是一三八两两零零五六七八", "13822005678"),
        ("有事打我手机一八六〇〇一三八〇〇一", "18600138001"),
        ("回电号码一三八洞洞一三八洞洞一", "13800138001"),
        # Whisper's mixed forms: numerals and Arabic digits in one number
        ("我的电话是139 1234 567八", "13912345678"),
        ("我的电话是13两 6920 七七七八", "13269207778"),
        ("我的手机是1三9，1234，5678", "13912345678"),
        # a digit's sound, written as another character, inside a run of digits
        ("回电号码一三九，一二三四，五六漆八", "13912345678"),
        ("有事打我手机139 1234 56期8", "13912345678"),
        ("打我电话，幺三九，腰二三四，五六七八", "13912345678"),
        ("麻烦让陈先生回电话到193 遥遥667 490", "19311667490"),
        # 十 inside a digit string is a misrecognition (of 一 or 是), dropped
        ("回电号码是十一八二三四七七二八六零", "18234772860"),
    ],
)
def test_chinese_callback_number_forms(said: str, value: str) -> None:
    assert _values(said).get("callback") == [value], extract(said, "zh")


@pytest.mark.parametrize(
    ("said", "kind", "value"),
    [
        ("一共一百二十八块", "amount", "128.00"),
        ("两千五百元，现金还是转账都行", "amount", "2500.00"),
        ("一共三十二块五", "amount", "32.50"),
        ("我十一点半到", "time", "11:30"),
        ("下午两点十分过来", "time", "14:10"),
        ("取件码是四八二七", "code", "4827"),
    ],
)
def test_chinese_amounts_times_and_codes(said: str, kind: str, value: str) -> None:
    assert value in _values(said).get(kind, []), extract(said, "zh")


def test_sounds_count_only_among_digits() -> None:
    # 是 before a number is never a 4; 期/吧/酒 in ordinary words are not digits
    assert _values("号码是139 1234 5678").get("callback") == ["13912345678"]
    assert digit_text("下个星期吧 一起去喝酒", sounds=True) == "下个星期吧 一起去喝酒"
    assert digit_text("好吧期待", sounds=True) == "好吧期待"
    # a lone sound-alike next to two digits is not enough to be a number
    assert digit_text("等12期", sounds=True) == "等12期"
    assert digit_text("以后再说吧 义务的", sounds=True) == "以后再说吧 义务的"


@pytest.mark.parametrize(
    ("said", "value"),
    [
        # 一 (yī) as Whisper writes it on a phone line: 以 / 义 / 亿, first or last in the number
        ("不对，我再说一遍，以3905128847", "13905128847"),
        ("号码是1360227594亿", "13602275941"),
        ("我手机一三九以二八八四一七六", "13912884176"),
    ],
)
def test_one_written_as_its_sound(said: str, value: str) -> None:
    assert value in digit_text(said, sounds=True).replace(" ", "")


def test_a_correction_of_a_part_keeps_the_count_out() -> None:
    assert correction_runs("不对，最后四位是5687") == ["5687"]
    assert correction_runs("不对，后四位是五六八七") == ["5687"]
    assert correction_runs("No, the last four digits are 0143.") == ["0143"]
    assert correction_runs("No, the first three are 416.") == ["416"]


def test_english_forms_still_captured() -> None:
    assert _values("Call me back at four one five, double five five, oh one three four.", "en")["callback"] == [
        "4155550134"
    ]
    assert _values("You can reach me at 415.555.0134.", "en")["callback"] == ["4155550134"]


@pytest.mark.parametrize(
    ("lang", "said", "value"),
    [
        # How callers ask to be called back without "call" or "number"; Whisper writes the
        # groups with commas or dots, which only a callback context joins into one number.
        ("en", "If you need to get back to me, it's 415,555,0134.", "4155550134"),
        ("en", "You can get hold of me at 2.12, 5.55, 0.199.", "2125550199"),
        ("en", "Give me a ring on 312, 555, 0188 when he's back.", "3125550188"),
        ("en", "Ring me, I'm on 617,555,0123.", "6175550123"),
        ("zh", "有事回我电话，一三九，一二三四，五六七八", "13912345678"),
    ],
)
def test_callback_without_call_or_number_words(lang: str, said: str, value: str) -> None:
    assert _values(said, lang).get("callback") == [value]
