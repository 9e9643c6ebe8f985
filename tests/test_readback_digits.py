"""Stop 15 (issue 14): after "say the number digit by digit", "OK time" was taken as a yes.

The caller was asked for digits, not for a yes: a misheard digit string ("OK time", "嗯那个") or
a bare "okay" / "好" (agreeing to say it) never confirms the number read back before; digits
("oh nine", "four one five", "幺三九") are a new attempt; only an actual yes ("yes", "yeah that's
right", "对", "没错", "是的") confirms. Dev cases of ours, zh and en (coordinator/readback_yes.py)."""

from __future__ import annotations

import pytest

from coordinator import Act

from .coordinator_helpers import Call

SETUP = {
    "en": ("Alex", ["Call me back at 415 555 0134.", "No, it's 415 555 0143.", "No, 415 555 0144."]),
    "zh": ("陈先生", ["我的电话是13912345678", "不对，是13912345679", "不对，13912345670"]),
}
SPELLED = {"en": ("4 1 5 5 5 5 0 1 4 5", "4155550145"), "zh": ("幺三九 幺二三四 五六七八", "13912345678")}


def asked_digit_by_digit(lang: str) -> Call:
    owner, lines = SETUP[lang]
    c = Call(owner=owner, lang=lang)
    for line in lines:
        d = c.say(line)
    assert d.act == Act.READ_BACK and ("digit by digit" in d.text or "一位一位" in d.text)  # no twice
    return c


def confirmed(c: Call) -> bool:
    return bool(c.record.captured[-1]["confirmed"])


@pytest.mark.parametrize(
    ("lang", "answer"),
    [("en", "OK time"), ("en", "okay"), ("en", "ok, um"), ("zh", "嗯那个"), ("zh", "好"), ("zh", "是")],
)
def test_a_misheard_digit_string_or_an_okay_after_the_request_is_not_a_confirmation(lang: str, answer: str) -> None:
    c = asked_digit_by_digit(lang)
    d = c.say(answer)
    assert not confirmed(c) and c.record.callback_confirmed is False
    assert d.act == Act.READ_BACK and c.state.readback is not None  # still waiting for the digits
    spelled, value = SPELLED[lang]
    d = c.say(spelled)  # the digits come next: read back, as spelled
    assert d.act == Act.READ_BACK and not confirmed(c) and c.record.captured[-1]["value"] == value


@pytest.mark.parametrize(("lang", "answer"), [("en", "oh nine"), ("en", "four one five"), ("zh", "幺三九")])
def test_digits_after_the_request_are_a_new_attempt_not_a_confirmation(lang: str, answer: str) -> None:
    c = asked_digit_by_digit(lang)
    d = c.say(answer)
    assert d.act == Act.READ_BACK and not confirmed(c)


@pytest.mark.parametrize(
    ("lang", "answer"),
    [("en", "yes"), ("en", "yeah, that's right"), ("zh", "对"), ("zh", "没错"), ("zh", "是的")],
)
def test_an_actual_yes_after_the_request_still_confirms(lang: str, answer: str) -> None:
    c = asked_digit_by_digit(lang)
    d = c.say(answer)
    assert d.act == Act.ACKNOWLEDGE and confirmed(c) and c.record.callback_confirmed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_spelled_read_back_is_not_confirmed_by_ok_time_but_by_a_yes(lang: str) -> None:
    c = asked_digit_by_digit(lang)
    spelled, value = SPELLED[lang]
    assert c.say(spelled).act == Act.READ_BACK  # "4 1 5, 5 5 5, 0 1 4 5, is that right now?"
    d = c.say("OK time" if lang == "en" else "嗯那个")
    assert d.act == Act.READ_BACK and not confirmed(c)
    d = c.say("yeah that's right" if lang == "en" else "对的")
    assert confirmed(c) and c.record.captured[-1]["value"] == value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_unclear_twice_keeps_the_number_unconfirmed_and_moves_on(lang: str) -> None:
    c = asked_digit_by_digit(lang)
    c.say("OK time" if lang == "en" else "嗯那个")
    d = c.say("OK time" if lang == "en" else "嗯那个")
    assert d.act == Act.ACKNOWLEDGE and not confirmed(c) and c.state.readback is None
    assert "check" in d.text or "核对" in d.text  # flagged for the owner to check


@pytest.mark.parametrize(("lang", "answer"), [("en", "okay"), ("zh", "好")])
def test_okay_to_a_first_read_back_still_confirms(lang: str, answer: str) -> None:
    owner, lines = SETUP[lang]
    c = Call(owner=owner, lang=lang)
    assert c.say(lines[0]).act == Act.READ_BACK
    c.say(answer)
    assert confirmed(c)
