"""Pure pieces of the owner loop: caller ids from each transport, screening's alert
policy, and summaries in both languages."""

from __future__ import annotations

from pipeline.records import CallRecord, TranscriptEntry
from pipeline.screening import caller_key, should_alert, sip_caller
from pipeline.summary import digits, summarize
from pipeline.telephony import _start_info


def test_caller_ids_from_each_transport() -> None:
    twilio = _start_info(
        "twilio",
        {
            "event": "start",
            "start": {"streamSid": "MZ1", "customParameters": {"line": "+1555", "from_number": "+14155550100"}},
        },
    )
    assert twilio is not None and twilio.from_number == "+14155550100"
    telnyx = _start_info(
        "telnyx", {"event": "start", "stream_id": "s", "start": {"from": "+8613912345678", "to": "+1555"}}
    )
    assert telnyx is not None and telnyx.from_number == "+8613912345678"
    plivo = _start_info(
        "plivo", {"event": "start", "start": {"streamId": "p", "extra_headers": "From=+447700900123,To=+1555"}}
    )
    assert plivo is not None and plivo.from_number == "+447700900123"
    assert sip_caller('"Bob" <sip:+14155550100@pbx.example;user=phone>;tag=1') == "+14155550100"
    assert sip_caller("<sip:alice@10.0.0.5:5070>;tag=x") == "sip:alice@10.0.0.5"
    assert sip_caller("sip:bob@host") == "sip:bob@host"
    assert sip_caller(None) is None and sip_caller("garbage") is None
    assert caller_key("+1 (415) 555-0100") == "+14155550100"
    assert caller_key("SIP:Alice@Host") == "sip:alice@host"
    assert caller_key("anonymous") is None


def test_alert_policy() -> None:
    allow = {"decision": "allow", "alert": "known"}
    screen = {"decision": "screen", "alert": "known"}
    assert should_alert(allow, "call.started", {}) and not should_alert(screen, "call.started", {})
    assert should_alert(screen, "call.urgent", {})  # urgent always alerts
    assert not should_alert({"decision": "block", "alert": "always"}, "call.urgent", {})
    reason = {"decision": "screen", "alert": "stated_reason"}
    assert not should_alert(reason, "call.started", {}) and should_alert(reason, "message.left", {})
    assert should_alert(reason, "call.ended", {"reason": "parcel"}) and not should_alert(reason, "call.ended", {})
    urgent_only = {"decision": "allow", "alert": "urgent"}
    assert not should_alert(urgent_only, "call.started", {}) and not should_alert(urgent_only, "message.left", {})
    assert should_alert(None, "call.started", {})  # no rules: always


def _record(**owner_record: object) -> CallRecord:
    return CallRecord(
        call_id="call_x", owner_id="own_x", lang="zh", caller_number="+8613912345678",
        owner_record=owner_record,
        transcript=[TranscriptEntry(role="owner", text="我马上下来", t=3.0, turn=0)],
    )  # fmt: skip


def test_summary_in_the_owners_language() -> None:
    rec = _record(
        caller="顺丰快递员", reason="送快递", messages=["包裹放在前台了"], callback_number="139-1234-5678",
        urgency="urgent", presets_conveyed=["regular:delivery"], requests=["能不能改天再送"], flags=[],
    )  # fmt: skip
    zh = summarize(rec, "zh", conveyed_texts={"regular:delivery": "放前台就好"})
    assert zh["callback_number"] == "13912345678" and zh["urgency"] == "urgent" and zh["spam_label"] is None
    assert zh["conveyed"] == ["放前台就好"] and zh["owner_said"] == ["我马上下来"]
    assert zh["not_promised"] == ["能不能改天再送"]
    for part in (
        "来电人：顺丰快递员（+8613912345678）",
        "留言：包裹放在前台了",
        "回电号码：13912345678",
        "紧急",
        "助理未作任何承诺",
    ):
        assert part in zh["text"], zh["text"]
    en = summarize(rec, "en")
    assert en["text"].startswith("Caller: 顺丰快递员 (+8613912345678).") and "Asked of you" in en["text"]
    spam = summarize(_record(flags=["sales_or_harassment"]), "en")
    assert spam["spam_label"] == "spam" and "spam or sales" in spam["text"]
    assert "agreed to nothing" in spam["text"]
    hostile = summarize(_record(flags=["hostile_caller"]), "zh")
    assert hostile["spam_label"] == "harassment" and "骚扰" in hostile["text"]
    assert digits("+1 (415) 555-0100") == "+14155550100" and digits("call me") is None
