"""Sentence splitting and spoken-number normalization (safety._text, safety._numerals)."""

from __future__ import annotations

import pytest

from safety import split_sentences
from safety._numerals import digit_runs, numerals_to_digits
from safety._text import normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("好的，我记下了。还有别的事吗？", ["好的，我记下了。", "还有别的事吗？"]),
        ("It costs 3.5 dollars. Mr. Chen will call. OK!", ["It costs 3.5 dollars.", "Mr. Chen will call.", "OK!"]),
        ("他说：“好的。”然后挂了", ["他说：“好的。”", "然后挂了"]),
        ("See you at 5 p.m. tomorrow. Bye...", ["See you at 5 p.m. tomorrow.", "Bye..."]),
        ("我会转告他…您还有别的事吗", ["我会转告他…", "您还有别的事吗"]),
        ("first line\nsecond line", ["first line", "second line"]),
        ("No. 88 is on the left; room 4B is upstairs", ["No. 88 is on the left;", "room 4B is upstairs"]),
        ("", []),
        ("   ", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("spoken", "digits"),
    [
        ("一三九一二三四五六七八", "13912345678"),
        ("幺三九 幺二三四 五六七八", "139 1234 5678"),
        ("洞拐洞", "洞拐洞"),  # radio digits only count beside standard ones
        ("幺洞拐", "107"),
        ("漕溪北路八十八号", "漕溪北路88号"),
        ("两百块", "200块"),
        ("三百五", "350"),
        ("一万五", "15000"),
        ("一百零五", "105"),
        ("二零二四年", "2024年"),
        ("他下午三点回来", "他下午3点回来"),
        ("我确认一下", "我确认一下"),
        ("有一个问题", "有一个问题"),
        ("万一", "万一"),
        ("拐弯", "拐弯"),
        ("one three nine one two three four", "1391234"),
        ("fifty-six seventy-eight", "5678"),
        ("double five six", "556"),
        ("triple five oh one", "55501"),
        ("one hundred and twenty dollars", "120 dollars"),
        ("one moment please", "one moment please"),
        ("no one is home", "no one is home"),
        ("oh okay", "oh okay"),
    ],
)
def test_numerals_to_digits(spoken: str, digits: str) -> None:
    assert numerals_to_digits(spoken) == digits


def test_digit_runs_join_separators() -> None:
    assert digit_runs("139-1234-5678 and 139 1234 5678") == ["13912345678", "13912345678"]
    assert digit_runs(normalize("一三九，一二三四，五六七八")) == ["13912345678"]
    assert digit_runs("no digits") == []


def test_normalize_fullwidth_and_case() -> None:
    assert normalize("幺三九－１２３４ He’s at Room ４B") == "139-1234 he's at room 4b"
