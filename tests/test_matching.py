"""Emergent-trigger matching on labelled probes (tests/data/trigger_pairs.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from presets.matching import (
    Candidate,
    core,
    focus,
    is_topic_trigger,
    match_trigger,
    third_person,
    trigger_variants,
)

from .coordinator_helpers import embedder

CASES = yaml.safe_load((Path(__file__).parent / "data" / "trigger_pairs.yaml").read_text(encoding="utf-8"))
PROBES = [
    pytest.param(case["triggers"], probe[0], probe[1], id=f"{probe[0][:30]}->{probe[1]}",
                 marks=[pytest.mark.xfail(strict=True, reason="known limit")] if len(probe) > 2 else [])
    for case in CASES
    for probe in case["probes"]
]  # fmt: skip


@pytest.mark.parametrize(("triggers", "utterance", "expected"), PROBES)
def test_probe(triggers: dict[str, str], utterance: str, expected: str | None) -> None:
    e = embedder()
    cands = [Candidate(k, t, e.embed(trigger_variants(t))) for k, t in triggers.items()]
    m = match_trigger(utterance, e.embed_one(utterance), cands)
    assert m.id == expected, m.reason


def test_frames_and_perspective() -> None:
    assert core("if someone asks where I am") == "where I am"
    assert third_person("where I am") == "where he is"
    assert core("如果有人问我现在在哪里") == "我现在在哪里"
    assert third_person("我现在在哪里") == "他现在在哪里"
    assert is_topic_trigger("if the landlord asks about the spare key")
    assert not is_topic_trigger("someone asks where I am")
    assert focus("when will he be back?") == {"when"}
    assert focus("他在哪") == {"where"}


def test_lexical_fallback_without_vectors() -> None:
    cands = [Candidate("k", "someone asks about the spare key", None)]
    assert match_trigger("hi, I'm calling about the spare key", None, cands).id == "k"
    assert match_trigger("hi, I'm calling about the rent", None, cands).id is None


def test_question_trigger_needs_a_question_and_sales_trigger_a_pitch() -> None:
    e = embedder()
    t = "问陈先生能不能参加周六的团建"
    cands = [Candidate("k", t, e.embed(trigger_variants(t)))]
    said = "我们这周末组织团建，在统计人数"
    assert match_trigger(said, e.embed_one(said), cands, asking=False).id is None  # context, not the question
    asked = "就是想问下陈先生周六能不能来？"
    assert match_trigger(asked, e.embed_one(asked), cands, asking=True).id == "k"
    t = "推销房产或者问买不买房"
    cands = [Candidate("h", t, e.embed(trigger_variants(t)))]
    pitch = "您好，我们是链家的，最近有个新楼盘开盘，您有没有兴趣了解一下？"
    assert match_trigger(pitch, e.embed_one(pitch), cands, pitch=True).id == "h"
    other = "您好，我们是物业，小区下周停水，麻烦转告一下"
    assert match_trigger(other, e.embed_one(other), cands, pitch=False).id is None
