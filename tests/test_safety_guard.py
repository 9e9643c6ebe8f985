"""OutputGuard: each constraint, each spoken form of a private fact, what must pass."""

from __future__ import annotations

import pytest

from safety import GuardContext, OutputGuard, Verdict, redact

GUARD = OutputGuard()

ZH = GuardContext(
    lang="zh",
    owner_name="陈先生",
    private_facts=(
        ("home address", "上海市徐汇区漕溪北路88号阳光花园3栋1201室"),
        ("mobile", "13912345678"),
        ("workplace", "华为技术有限公司上海研究所"),
        ("wife", "李娜"),
        ("plate", "沪A·D12345"),
    ),
    preset_texts=("麻烦放在门口就可以了",),
    conversation=("您好，我是顺丰快递的王师傅，陈先生的快递到了，放哪里？",),
)
EN = GuardContext(
    lang="en",
    owner_name="Alex Chen",
    private_facts=(
        ("home address", "12 Elm Street, Apt 4B, Springfield, IL 62704"),
        ("mobile", "415-555-0142"),
        ("workplace", "Acme Robotics, 200 Market St"),
        ("wife", "Mary Chen"),
        ("plate", "7KXM291"),
    ),
    preset_texts=("Please leave it at the front door.",),
    conversation=("Hi, this is Dave from UPS with a package for Alex. Can I leave it with the neighbour?",),
)


def blocked(sentence: str, ctx: GuardContext, constraint: str) -> Verdict:
    verdict = GUARD.check(sentence, ctx)
    assert not verdict.ok, f"not blocked: {sentence}"
    assert verdict.constraint == constraint, f"{sentence}: {verdict}"
    assert verdict.rule and verdict.rule.split(".")[0] == constraint[2:]
    return verdict


def passes(sentence: str, ctx: GuardContext) -> None:
    verdict = GUARD.check(sentence, ctx)
    assert verdict.ok, f"blocked: {sentence}: {verdict}"


# ----------------------------------------------------------------- C_priv: the phone number
PHONE_FORMS_ZH = [
    "他的手机是13912345678。",
    "号码是139-1234-5678。",
    "139 1234 5678",
    "一三九一二三四五六七八",
    "幺三九，幺二三四，五六七八。",
    "一三九零一二三四",  # a 〇/零 inside is still a digit run; 1234 is a 4-digit piece
    "尾号5678。",
    "后四位是五六七八。",
    "中间四位是1234。",
    "他手机是139开头的。",  # 3-digit piece while talking about the number
]
PHONE_FORMS_EN = [
    "His cell is 415-555-0142.",
    "It's (415) 555 0142.",
    "The last four digits are 0142.",
    "It ends in zero one four two.",
    "It ends in oh one four two.",
    "Four one five, five five five, zero one four two.",
    "Four one five, triple five, oh one four two.",
    "4-1-5-5-5-5-0-1-4-2",
    "His number starts with 415.",
]


@pytest.mark.parametrize("sentence", PHONE_FORMS_ZH)
def test_phone_number_forms_zh(sentence: str) -> None:
    assert blocked(sentence, ZH, "C_priv").rule == "priv.phone_digits"


@pytest.mark.parametrize("sentence", PHONE_FORMS_EN)
def test_phone_number_forms_en(sentence: str) -> None:
    assert blocked(sentence, EN, "C_priv").rule == "priv.phone_digits"


def test_span_is_redacted() -> None:
    verdict = blocked("他的手机是13912345678。", ZH, "C_priv")
    assert verdict.span is not None and "1391" not in verdict.span and "5678" not in verdict.span


def test_callers_own_number_with_a_shared_piece_passes() -> None:
    """A caller's callback number may share 4 digits (1234, 555) with the owner's."""
    ctx = GuardContext("zh", "陈先生", ZH.private_facts, (), ("让他回电话，我的号码是13800001234。",))
    passes("好的，您的号码是13800001234，我记下了。", ctx)
    ctx_en = GuardContext("en", "Alex Chen", EN.private_facts, (), ("Call me back at 312-555-0187.",))
    passes("Sure, I'll ask Alex to call you back at 312-555-0187.", ctx_en)
    # but repeating the owner's own number back, even if the caller said it, is a leak
    ctx_leak = GuardContext("en", "Alex Chen", EN.private_facts, (), ("Is his number 415-555-0142?",))
    blocked("Yes, it's 415-555-0142.", ctx_leak, "C_priv")


# ----------------------------------------------------------------- C_priv: address and other facts
@pytest.mark.parametrize(
    "sentence",
    ["他住在漕溪北路。", "就在漕溪那边。", "八十八号。", "他家在3栋1201室。", "阳光花园。", "他老婆叫李娜。",
     "他的车牌是沪A·D12345。", "他在华为上班。"],
)  # fmt: skip
def test_private_fragments_zh(sentence: str) -> None:
    blocked(sentence, ZH, "C_priv")


@pytest.mark.parametrize(
    "sentence",
    ["He lives on Elm Street.", "It's 12 Elm St.", "Apartment 4B.", "He's in apt 4B.", "Unit 4B, second floor.",
     "He works at Acme Robotics.", "His wife is Mary.", "The plate is 7KXM 291.", "He lives on Caoxi Road."],
)  # fmt: skip
def test_private_fragments_en(sentence: str) -> None:
    ctx = EN
    if "Caoxi" in sentence:  # a Chinese address said in pinyin on an English call
        ctx = GuardContext("en", "陈先生", ZH.private_facts, (), ())
    blocked(sentence, ctx, "C_priv")


@pytest.mark.parametrize(
    "sentence",
    ["他在公司。", "她出差了。", "他下午三点回来。", "他今晚不在家。", "家里没人。", "陈先生在开会。", "他住院了。",
     "他去外地了。", "他一般晚上七点后到家。", "他欠了不少钱。"],
)  # fmt: skip
def test_whereabouts_schedule_personal_zh(sentence: str) -> None:
    blocked(sentence, ZH, "C_priv")


@pytest.mark.parametrize(
    "sentence",
    ["He's not home until nine.", "She's at the office.", "He's on vacation.", "Alex is out of town this week.",
     "He just left for work.", "Nobody's home right now.", "He'll be back at five.", "He's in a meeting.",
     "He has a doctor's appointment.", "She's pregnant.", "He's behind on his mortgage.",
     "My instructions are to protect his address."],
)  # fmt: skip
def test_whereabouts_schedule_personal_en(sentence: str) -> None:
    blocked(sentence, EN, "C_priv")


@pytest.mark.parametrize(
    "sentence",
    ["他现在不方便接电话。", "陈先生暂时无法接听，您可以留言。", "他现在在忙，我帮您记下来。", "抱歉，他的地址我不方便透露。"],
)  # fmt: skip
def test_unavailability_is_not_whereabouts_zh(sentence: str) -> None:
    passes(sentence, ZH)


def test_relayed_request_is_not_a_schedule() -> None:
    """他 is whom the message goes to: "tell him to call you tonight" says nothing about him."""
    ctx = GuardContext("zh", "陈先生", ZH.private_facts, (), ("我是他妈妈，让他晚上给我回个电话。",))
    passes("好的，我会转告他晚上给您回电话。", ctx)


@pytest.mark.parametrize(
    "sentence",
    ["Alex can't take the call right now.", "He isn't available at the moment.", "He's busy right now.",
     "Alex can't come to the phone right now.", "I can't share Alex's address, but I can take a message.",
     "Alex left a note: Please leave it at the front door."],
)  # fmt: skip
def test_unavailability_is_not_whereabouts_en(sentence: str) -> None:
    passes(sentence, EN)


# ----------------------------------------------------------------- C_dec
@pytest.mark.parametrize(
    "sentence",
    ["他同意了。", "您放邻居家吧。", "他会付的。", "他会给您回电话。", "他不要了。", "我替他答应了。", "您明天再送过来吧。",
     "就这么定了。", "就在北门等他。"],
)  # fmt: skip
def test_decisions_zh(sentence: str) -> None:
    blocked(sentence, ZH, "C_dec")


@pytest.mark.parametrize(
    "sentence",
    ["Sure, he'll pay the fee.", "No, she won't accept it.", "Leave it with the neighbour.", "You can come tomorrow.",
     "I'll approve that.", "She'll call you back.", "He's not interested.", "That works for him.",
     "He's fine with the new price."],
)  # fmt: skip
def test_decisions_en(sentence: str) -> None:
    blocked(sentence, EN, "C_dec")


@pytest.mark.parametrize(
    "sentence",
    ["我会转告他。", "好的，我记下了。", "我会请他给您回电话。", "这个我没法替他决定，我会转告他。", "请问您是想放在门卫吗？",
     "抱歉，这个我不能替他答应或拒绝。"],
)  # fmt: skip
def test_relaying_is_not_deciding_zh(sentence: str) -> None:
    passes(sentence, ZH)


@pytest.mark.parametrize(
    "sentence",
    ["I'll pass that on.", "I'll let her know and she'll get back to you.", "I'll ask her to call you back.",
     "I'll ask Alex whether you can leave it with the neighbour.", "I can't agree or refuse on Alex's behalf.",
     "Sure, go ahead, I'm noting it down for Alex."],
)  # fmt: skip
def test_relaying_is_not_deciding_en(sentence: str) -> None:
    passes(sentence, EN)


def test_bare_agreement_depends_on_what_was_asked() -> None:
    asked = GuardContext("zh", "陈先生", (), (), ("放邻居家可以吗？",))
    thanked = GuardContext("zh", "陈先生", (), (), ("好的，谢谢啊。",))
    blocked("好的没问题。", asked, "C_dec")
    passes("好的没问题。", thanked)
    asked_en = GuardContext("en", "Alex", (), (), ("Can I leave it with the neighbour?",))
    blocked("Sure.", asked_en, "C_dec")
    passes("Sure.", GuardContext("en", "Alex", (), (), ("Can I leave a message for him?",)))
    # a bare "好的。" followed by a deferral in the same reply is an acknowledgment
    results = GUARD.check_text("好的。这个我没法替他决定，我会转告他。", asked)
    assert all(v.ok for _, v in results)


# ----------------------------------------------------------------- C_phys
@pytest.mark.parametrize(
    "sentence",
    ["我去门口看看。", "我听到敲门声了。", "我马上下楼。", "我帮您开门。", "我看见您的车了。", "看起来没问题。", "我就在门口。"],
)  # fmt: skip
def test_physical_claims_zh(sentence: str) -> None:
    blocked(sentence, ZH, "C_phys")


@pytest.mark.parametrize(
    "sentence",
    ["I can see the parcel.", "Let me check the door.", "I'll go downstairs.", "I'll open the door for you.",
     "I'm standing at the door.", "I heard the doorbell.", "It looks fine to me.", "I'll be right out."],
)  # fmt: skip
def test_physical_claims_en(sentence: str) -> None:
    blocked(sentence, EN, "C_phys")


@pytest.mark.parametrize(
    "sentence",
    ["I see, so the package is damaged.", "Yes, I can hear you.", "Sorry, I didn't catch that.",
     "I'm an AI assistant, so I can't see the package.", "我能听到，您请说。", "好的，我听到了。", "我帮您看一下他的留言。"],
)  # fmt: skip
def test_phone_hearing_and_idioms_pass(sentence: str) -> None:
    passes(sentence, EN if sentence.isascii() else ZH)


# ----------------------------------------------------------------- C_fact
@pytest.mark.parametrize(
    "sentence",
    ["快递费是二十块。", "李先生让我转告您。", "他点了两份。", "是南门那个丰巢快递柜。", "已经付过了。", "约的是明天上午九点。"],
)  # fmt: skip
def test_unsupported_facts_zh(sentence: str) -> None:
    blocked(sentence, ZH, "C_fact")


@pytest.mark.parametrize(
    "sentence",
    ["The fee is 20 dollars.", "Mr. Li asked me to call you.", "He ordered 3 pizzas.", "Use the south entrance.",
     "It's already paid.", "The pickup is at 8:30 tomorrow.", "A medium, in blue.", "He ordered the pad thai."],
)  # fmt: skip
def test_unsupported_facts_en(sentence: str) -> None:
    blocked(sentence, EN, "C_fact")


def test_facts_from_the_caller_may_be_repeated() -> None:
    ctx = GuardContext("zh", "陈先生", ZH.private_facts, (), ("明天上午十点的评审会改到下午两点了，运费十二块。",))
    passes("好的，明天上午十点的评审会改到下午两点，我会转告陈先生。", ctx)
    passes("运费是十二块，我记下了。", ctx)
    passes("好的王师傅，请问还有别的事吗？", ZH)
    ctx_en = GuardContext("en", "Alex Chen", (), (), ("The review moved to Friday at 3pm.",))
    passes("Got it, Friday at 3 pm. I'll pass it on.", ctx_en)
    passes("Got it, Friday at 15:00.", ctx_en)


# ----------------------------------------------------------------- authorized texts
def test_preset_text_passes_even_with_a_decision_or_time() -> None:
    ctx = GuardContext("en", "Alex Chen", EN.private_facts, ("I'll be back at 5, leave it with the neighbour.",), ())
    passes("Alex said: I'll be back at 5, leave it with the neighbour.", ctx)
    passes("Thanks! Alex asked me to tell you: Please leave it at the front door.", EN)
    passes("陈先生交代过：麻烦放在门口就可以了。", ZH)
    # the preset does not authorize anything else in the same sentence
    blocked("Please leave it at the front door, he's at the office.", EN, "C_priv")


def test_allowed_texts_pass_as_is() -> None:
    template = "您好，我是陈先生的电话助理，他现在不方便接听。请问有什么事吗？"
    ctx = GuardContext("zh", "陈先生", ZH.private_facts, (), (), allowed_texts=(template,))
    for sentence, verdict in GUARD.check_text(template, ctx):
        assert verdict.ok, sentence


def test_check_text_splits_and_checks_each_sentence() -> None:
    results = GUARD.check_text("好的，我记下了。他在公司。我会转告他。", ZH)
    assert [s for s, _ in results] == ["好的，我记下了。", "他在公司。", "我会转告他。"]
    assert [v.ok for _, v in results] == [True, False, True]
    assert results[1][1].constraint == "C_priv"


def test_violations_lists_every_constraint() -> None:
    constraints = {v.constraint for v in GUARD.violations("他在公司，我去门口看看，他同意了。", ZH)}
    assert constraints == {"C_priv", "C_phys", "C_dec"}
    assert GUARD.violations("好的，我会转告他。", ZH) == []


def test_empty_and_punctuation_only_pass() -> None:
    passes("", ZH)
    passes("。。。", ZH)


def test_redact_masks_private_values_and_digits() -> None:
    text = "他的手机是一三九一二三四五六七八，住在漕溪北路88号，车牌沪A·D12345，订单3306"
    out = redact(text, ZH)
    for secret in ("漕溪北路", "88", "12345", "3306", "一三九"):
        assert secret not in out
    assert "[private]" in out
    out_en = redact("Call 415-555-0142 or visit 12 Elm Street, apt 4B; ask for Mary.", EN)
    for secret in ("0142", "Elm Street", "4B", "Mary"):
        assert secret not in out_en


class _Slots(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ""


def test_coordinator_templates_pass_without_being_allowed() -> None:
    """coordinator/templates.py promises every wording passes the guard as is; check it
    with no allowed_texts (only the preset, as the realizer would quote it)."""
    templates = pytest.importorskip("coordinator.templates")
    owners = {
        "zh": ("陈先生", "他", "麻烦放在门口就可以了", ZH),
        "en": ("Alex Chen", "he", "Please leave it at the front door.", EN),
    }
    details = getattr(templates, "EXCEPTION_DETAIL", {"zh": {None: "这个情况"}, "en": {None: "there's a problem"}})
    total, failures = 0, []
    for by_lang in templates.TEMPLATES.values():
        for lang, wordings in by_lang.items():
            name, pronoun, preset, base = owners[lang]
            ctx = GuardContext(lang, name, base.private_facts, (preset,), ("您好" if lang == "zh" else "Hello",))
            for wording in wordings:
                for detail in details[lang].values():
                    slots = _Slots(owner=name, sub=pronoun, obj="他" if lang == "zh" else "him", Sub="He", be="is",
                                   preset=preset, detail=detail)  # fmt: skip
                    for sentence, verdict in GUARD.check_text(wording.format_map(slots), ctx):
                        total += 1
                        if not verdict.ok:
                            failures.append(f"{verdict.rule}: {sentence}")
    print(f"\ncoordinator template sentences: {total}, blocked: {len(failures)}")
    assert not failures, "\n".join(sorted(set(failures)))
