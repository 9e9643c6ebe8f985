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
