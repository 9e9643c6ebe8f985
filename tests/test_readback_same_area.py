"""A caller's number of the owner's own area is read back (issue 14, the demo's number turn).

In every ``make demo`` voice run, "Please tell him the contract is ready to sign. My number
is 415 555 0134." was noted without a read-back: the demo owner's private mobile is
+1 415 555 0199, and the caller's number shares its start (415 555 01: area code,
exchange, the 555-01 block), which the "six digits of a private fact" rule took for the
owner's number; the output guard had the same rule. Not the voice path: the same turns
as a text call, with the demo owner's profile, were noted without a read-back too.
Numbers of one area share their start (a Chinese mobile's 139 1234 too) and are different
numbers; the owner's number, a piece of it, its last six digits or all of it but one digit are
still never read back (``safety/_same_number.py``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pipecat.frames.frames import VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame

from coordinator import Act
from coordinator.readback import private
from pipeline.session import CallServices, CallSession
from pipeline.voice import CallProcessor, Listener, LocalTTS, PlaybackTracker, TurnRecorder
from presets.models import PrivateFact, Profile
from safety import GuardContext, OutputGuard
from safety._same_number import same_number

from .coordinator_helpers import Call, emergent
from .test_understanding_judge2 import guard, learned
from .test_voice_processors import (  # noqa: F401  (services is a fixture)
    PRESET,
    FakeRecognizer,
    FakeSynthesizer,
    Harness,
    services,
    speech,
    timeout_bridge,
    until,
)

EN_OWNER = ("mobile", "+1 415 555 0199")  # the demo owner's (bench/demo.py)
ZH_OWNER = ("手机", "139 1234 8765")
DEMO: dict[str, dict[str, Any]] = {
    "en": dict(
        owner="Alex Chen", private=EN_OWNER, trigger="someone asks where I am",
        response="Alex is in a meeting right now; please leave a message.",
        # the demo's turns as the recognizer wrote them (voice run, 2026-12-02)
        turns=["Hi, this is Priya from Zindisk is Alex around", "Do you know where he is right now",
               "Okay, please tell him the contract is ready to sign my number is 415 555 0134"],
        said="415 555 0134", value="4155550134", yes="Yes, that's right.",
    ),
    "zh": dict(
        owner="陈先生", private=ZH_OWNER, trigger="有人问我什么时候回来",
        response="他今天会晚一点回来，有事可以给他留言。",
        turns=["喂，你好，我是合同那边的小王，陈先生在吗？", "他什么时候回来啊？", "麻烦跟他说合同可以签了，我电话是139 1234 5678。"],
        said="139 1234 5678", value="13912345678", yes="对，没错。",
    ),
}  # fmt: skip


def _guard_ctx(call: Call) -> GuardContext:
    """As if any realizer had written the reply (no allowed texts)."""
    said = tuple(c for c, _ in call.state.history if c)
    return GuardContext(call.state.lang, call.ctx.owner_name, call.ctx.private_facts, (), said)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_callers_number_of_the_owners_area_is_read_back_after_an_emergent_preset(lang: str) -> None:
    demo = DEMO[lang]
    c = Call(
        owner=demo["owner"], lang=lang, input_guard=guard, understander=learned(), private=(demo["private"],),
        emergent=(emergent("e1", demo["trigger"], demo["response"]),),
    )  # fmt: skip
    intro, where, number = demo["turns"]
    c.say(intro)
    assert c.say(where).act == Act.CONVEY_PRESET
    d = c.say(number)
    assert d.act == Act.READ_BACK and demo["said"] in d.text, d
    assert d.text.count(demo["said"]) == 1  # once
    for sentence, verdict in OutputGuard().check_text(d.text, _guard_ctx(c)):
        assert verdict.ok, (sentence, verdict)
    assert c.record.captured == [
        {"kind": "callback", "heard": number, "value": demo["value"], "confirmed": False, "readbacks": 1}
    ]
    assert c.record.messages  # the message is taken as well
    d = c.say(demo["yes"])
    assert d.act != Act.READ_BACK and demo["said"] not in d.text  # read back once, not again
    assert c.record.captured[0]["confirmed"] is True
    assert c.record.callback_number == demo["value"] and c.record.callback_confirmed is True


@pytest.mark.parametrize(
    ("fact", "said", "owners"),
    [
        ("+1 415 555 0199", "4155550134", False),  # same area and exchange, another line
        ("+1 415 555 0199", "14155550134", False),  # with the country code
        ("13912348765", "13912345678", False),  # same mobile prefix and region
        ("1200 Elm Street", "4151200134", False),  # a house number inside a phone number
        ("+1 415 555 0199", "5555550100", False),  # shares "555501", not at the same place
        ("217-555-0111", "2175550142", False),  # the owner's town: area, exchange, 555-01
        ("+1 415 555 0199", "4155550199", True),  # the owner's number
        ("+1 415 555 0199", "5550199", True),  # a piece of it
        ("4155550199", "14155550199", True),  # the whole of it, with a country code
        ("+1 415 555 0199", "3125550199", True),  # its last six digits (the line's own part)
        ("13912348765", "13812348765", True),  # one digit changed (a recital with a slip)
        ("217-555-0111", "2175550112", True),
        ("217-555-0111", "217555011", True),  # one dropped: a piece of it
    ],
)
def test_what_counts_as_the_owners_number(fact: str, said: str, owners: bool) -> None:
    digits = "".join(ch for ch in fact if ch.isdigit())
    assert same_number(said, digits) is owners
    c = Call(owner="Alex", lang="en", private=(("x", fact),))
    assert private(said, c.ctx) is owners


@pytest.mark.parametrize(
    ("lang", "fact", "line", "leak"),
    [
        ("en", EN_OWNER, "Call me back on 312 555 0199.", "That's 312 555 0199, right?"),
        ("zh", ZH_OWNER, "我电话是138 1234 8765。", "是138 1234 8765，对吗？"),
    ],
)
def test_six_owner_digits_past_the_areas_start_are_still_never_read_back(
    lang: str, fact: tuple[str, str], line: str, leak: str
) -> None:
    c = Call(owner="Alex" if lang == "en" else "陈先生", lang=lang, private=(fact,))
    d = c.say(line)
    assert d.act != Act.READ_BACK and c.record.captured == []
    assert not OutputGuard().check(leak, _guard_ctx(c)).ok


# ----------------------------------------------------------- voice path ----


async def test_voice_the_demo_number_turn_is_read_back_and_confirmed(services: CallServices) -> None:  # noqa: F811
    owner, _ = await services.owners.create_owner("Alex Chen", "en")
    profile = Profile(
        display_name="Alex Chen", languages=["en"], private_facts=[PrivateFact(label=EN_OWNER[0], value=EN_OWNER[1])]
    )
    await services.owners.put_profile(owner.owner_id, profile)
    session = await CallSession.open(services, owner_id=owner.owner_id, channel="twilio", line="+15550100")
    recognizer = FakeRecognizer([(1.0, DEMO["en"]["turns"][2])])
    listener = Listener(
        recognizer,  # type: ignore[arg-type]
        lang="en", languages=("en",), owner_name="Alex Chen", preset_texts=[PRESET], preset_scenes=["delivery"],
    )  # fmt: skip
    processor = CallProcessor(session, silence_timeout_s=60, transport_name="twilio")
    tts = LocalTTS(FakeSynthesizer())  # type: ignore[arg-type]
    pipeline = [TurnRecorder(listener), timeout_bridge(listener), processor, tts]
    async with Harness([*pipeline, PlaybackTracker()]) as h:
        await h.send(VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await until(lambda: len(session.record.turns) == 1, "the number turn was answered")
        reply = session.record.turns[0].reply
        assert session.record.turns[0].act == Act.READ_BACK.value and "415 555 0134" in reply, reply
        recognizer.pieces = [(1.0, "Yes, that's right.")]
        await h.send(*speech(0.3), VADUserStartedSpeakingFrame(), *speech(1.0), VADUserStoppedSpeakingFrame())
        await until(lambda: len(session.record.turns) == 2, "the confirmation was taken")
    item = session.state.record.captured[0]
    assert item["value"] == "4155550134" and item["confirmed"] is True and "415 555 0134" in item["heard"]
    assert session.state.record.callback_confirmed is True


# ------------------------------------------------------------- text API ----


async def test_text_api_demo_owner_number_turn_is_read_back(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    profile = {"display_name": "Alex Chen", "languages": ["en"],
               "private_facts": [{"label": EN_OWNER[0], "value": EN_OWNER[1]}]}  # fmt: skip
    (await api.put("/v1/profile", json=profile)).raise_for_status()
    cid = (await api.post("/v1/calls/text", json={"lang": "en"})).json()["call_id"]
    t = (await api.post(f"/v1/calls/{cid}/turns", json={"text": DEMO["en"]["turns"][2]})).json()
    assert t["act"] == "read_back" and "415 555 0134" in t["reply"], t
    t = (await api.post(f"/v1/calls/{cid}/turns", json={"text": "Yes, that's right."})).json()
    rec = (await api.get(f"/v1/calls/{cid}")).json()["owner_record"]
    assert rec["callback_number"] == "4155550134" and rec["callback_confirmed"] is True
    assert rec["captured"][0]["heard"] == DEMO["en"]["turns"][2] and rec["captured"][0]["confirmed"] is True
