"""The readback bench's case sets and simulated caller (no audio): the held-out set is
package data with its own phrasings, and the caller behaves like a person (yes when the
read-back is right, no and the number again when wrong, slower the second time, digit by
digit when asked)."""

from __future__ import annotations

import pytest

from bench.readback_caller import _EN_FRAMES, _ZH_FRAMES, cases, next_words
from coordinator import Act, CallContext, CallState, Coordinator


def test_heldout_set_has_its_own_phrasings_and_numbers() -> None:
    dev, held = cases(20), cases(20, case_set="heldout")
    assert len(held) == 40 and {c.lang for c in held} == {"en", "zh"}
    dev_frames = [f.split("{n}")[0] for f in _EN_FRAMES + _ZH_FRAMES]
    assert not any(c.said.startswith(tuple(p for p in dev_frames if p)) for c in held)
    assert not {c.number for c in dev} & {c.number for c in held}
    assert {c.form for c in held if c.lang == "zh"} >= {"mixed", "run", "digits"}
    mixed = next(c for c in held if c.form == "mixed")
    assert "幺" in mixed.said and "两" in mixed.said and "零" in mixed.said
    with pytest.raises(ValueError, match="heldout"):
        cases(2, case_set="nope")


def test_simulated_caller_says_yes_no_and_digit_by_digit() -> None:
    case = next(c for c in cases(6) if c.lang == "zh")
    wrong = case.number[:-1] + str((int(case.number[-1]) + 1) % 10)
    co, ctx = Coordinator(), CallContext(owner_name="陈先生", lang="zh")
    state = CallState(call_id="t", lang="zh")
    co.greet(state, ctx)
    d = co.decide(state, ctx, f"我的电话是{wrong}，有事打给我")
    words, nos = next_words(case, state, d.act, d.text, 0)
    assert words is not None and words.startswith("不对") and nos == 1
    again, nos = next_words(case, state, d.act, d.text, nos)
    assert again is not None and again != words and "再说一遍" in again  # slower, group by group
    d = co.decide(state, ctx, "不对")
    d = co.decide(state, ctx, "不是")
    assert d.act == Act.READ_BACK
    spelled, _ = next_words(case, state, d.act, d.text, nos)
    assert spelled is not None and spelled.count("，") == len(case.number) - 1
    d = co.decide(state, ctx, case.number)
    yes, _ = next_words(case, state, d.act, d.text, nos)
    assert yes == "对，没错。"
