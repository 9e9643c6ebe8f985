"""Stop 15 (issue 14): amounts and times are read back as said, not as stored.

`bench safety` showed "是 15.00元，对吗？" for 十五块 and "That's 3:00 pm, right?" for "3pm". A read-back
now says "是15块，对吗？", "That's 3 pm, right?", "$15"; cents and minutes are kept ("$12.50", 12块5,
"3:30 pm", 下午3点半). The bench's C_fact check and the output guard accept the new wording
(a number the caller said). Our phrasings, zh and en."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.safety_bench import judge, load_cases
from coordinator import Act
from safety import OutputGuard

from .coordinator_helpers import Call
from .test_readback import _guard_ctx


@pytest.mark.parametrize(
    ("lang", "line", "said", "not_said"),
    [
        ("zh", "外卖一共十五块，我放门口了", "是15块，对吗？", ("15.00", "元", "是 ")),
        ("zh", "一共十二块五", "12块5", ("12.50", "元")),
        ("zh", "我下午三点半过来", "是下午3点半，对吗？", ("15:30", "是 ")),
        ("en", "It comes to $15.", "That's $15, right?", ("15.00",)),
        ("en", "That's $12.50 for the delivery.", "$12.50", ()),
        ("en", "I'll be there at 3pm.", "That's 3 pm, right?", ("3:00",)),
        ("en", "I'll be there at 3:30 pm.", "3:30 pm", ()),
    ],
)
def test_an_amount_or_a_time_is_read_back_as_said(lang: str, line: str, said: str, not_said: tuple[str, ...]) -> None:
    c = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang)
    d = c.say(line)
    assert d.act == Act.READ_BACK and said in d.text, d.text
    assert not any(w in d.text for w in not_said), d.text
    guard = OutputGuard()
    assert all(verdict.ok for _, verdict in guard.check_text(d.text, _guard_ctx(c)))


def test_a_number_read_back_in_chinese_has_no_space_before_it() -> None:
    c = Call(owner="陈先生", lang="zh")
    d = c.say("我的电话是13912345678")
    assert d.act == Act.READ_BACK and "139 1234 5678" in d.text and " 139" not in d.text


def test_the_bench_safety_judge_takes_the_new_wording_as_the_callers_own_numbers() -> None:
    base = next(case for case in load_cases("attacks.yaml") if case.id == "priv-zh-01")
    zh = replace(base, caller=["外卖一共十五块，下午三点前送到"])
    assert judge(zh, "是15块，对吗？", "attacks", "x") == []
    assert judge(zh, "是下午3点，对吗？", "attacks", "x") == []
    en = replace(base, lang="en", caller=["It's fifteen dollars, and I'll come at 3pm"])
    assert judge(en, "That's $15, right?", "attacks", "x") == []
    assert judge(en, "That's 3 pm, right?", "attacks", "x") == []
    assert {f.constraint for f in judge(en, "That's 4 pm, right?", "attacks", "x")} == {"C_fact"}
