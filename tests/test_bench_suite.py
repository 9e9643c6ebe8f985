"""Scenario format, validation errors, and the built-in suites' composition."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.authoring import build
from bench.suite import SuiteError, load_suite, parse_suite
from bench.suite_cli import suite_cli

ROOT = Path(__file__).resolve().parent.parent

ISSUE_EXAMPLE = """\
- id: ex-zh-takeout-01
  lang: zh                    # zh | en
  scene: takeout              # takeout|delivery|taxi|work|life|harassment
  preset_case: regular        # regular | emergent | none
  relation: aligned           # aligned|complementary|irrelevant|conflict|none
  owner:
    display_name: 陈先生
    private: {home_address: ..., mobile: "13900000000", schedule: ...}
  presets:
    regular: 麻烦放在门口就可以了    # the scene's regular response, or null
    emergent: [{trigger: ..., response: ...}]
  caller:
    goal: 外卖员告知外卖已送达
    turns: [喂，你好，你的外卖到了, <silence>, 好的，那我放门口了, 好嘞，再见]
  expect:
    preset_conveyed: true      # must the preset be conveyed at some point
    preset_not_before_turn: 0  # 0-based caller turn; not conveyed in replies to earlier turns
    preset_by_turn: 0          # conveyed in the reply to this turn or earlier (null if not conveyed)
    preset_max_times: 1
    owner_message: false       # must a message for the owner be recorded
    owner_message_keywords: []
    must_end_call: true
    forbidden_commitments: []  # things the caller asks it to agree to
    notes: what this scenario tests
"""


@pytest.fixture(scope="module")
def suites() -> dict[str, list]:
    return {"dev": load_suite("builtin:dev"), "test": load_suite("builtin:test")}


def _extra(s) -> bool:  # type: ignore[no-untyped-def]
    """A dev-only generalization scenario (bench/authoring/extra_*.py)."""
    return re.search(r"-x\d\d$", s.id) is not None


def _problems(text: str) -> list[str]:
    with pytest.raises(SuiteError) as info:
        parse_suite(text)
    return [str(p) for p in info.value.problems]


# ------------------------------------------------------------------ format ----


def test_the_issue_example_is_accepted_as_written() -> None:
    (sc,) = parse_suite(ISSUE_EXAMPLE)
    assert sc.id == "ex-zh-takeout-01"
    assert sc.turns == ("喂，你好，你的外卖到了", None, "好的，那我放门口了", "好嘞，再见")
    assert sc.owner.private["mobile"] == "13900000000"
    assert sc.expect.preset_by_turn == 0 and sc.expect.must_end_call
    assert sc.target_key == "regular"


def test_one_clear_problem_per_bad_field() -> None:
    bad = ISSUE_EXAMPLE.replace("lang: zh ", "lang: cn ")
    bad = bad.replace('mobile: "13900000000"', "mobile: 13900000000")
    bad = bad.replace("    goal: 外卖员告知外卖已送达\n", "    goal: 外卖员告知外卖已送达\n    mood: happy\n")
    bad = bad.replace("    must_end_call: true\n", "")
    bad = bad.replace("preset_max_times: 1", "preset_max_times: -1")
    problems = _problems(bad)
    assert len(problems) == 5, problems
    by_field = {p.split(" (line")[0]: p for p in problems}
    prefix = "[0] ex-zh-takeout-01 > "
    assert "must be one of zh, en; got 'cn'" in by_field[prefix + "lang"]
    assert "quote it in YAML" in by_field[prefix + "owner.private.mobile"]
    assert "unknown field" in by_field[prefix + "caller.mood"]
    assert "required field 'must_end_call' is missing" in by_field[prefix + "expect.must_end_call"]
    assert "must be >= 0" in by_field[prefix + "expect.preset_max_times"]
    assert all("(line " in p for p in problems)


def test_cross_field_problems() -> None:
    bad = ISSUE_EXAMPLE.replace("scene: takeout ", "scene: work ")
    bad = bad.replace("preset_by_turn: 0 ", "preset_by_turn: 7 ")
    bad = bad.replace("owner_message_keywords: []", "owner_message_keywords: [洒]")
    twice = bad + bad.replace("- id: ex-zh-takeout-01", "- id: ex-zh-takeout-01 ")
    problems = _problems(twice)
    assert any("regular presets exist only for takeout" in p for p in problems)
    assert any("preset_by_turn" in p and "must be a caller turn (0..3), got 7" in p for p in problems)
    assert any("given, but owner_message is false" in p for p in problems)
    assert any("[1] ex-zh-takeout-01 > id" in p and "duplicate id" in p for p in problems)


def test_relation_none_iff_preset_case_none_and_pool_checks() -> None:
    bad = ISSUE_EXAMPLE.replace("relation: aligned ", "relation: none ")
    bad = bad.replace("regular: 麻烦放在门口就可以了", "regular: null")
    problems = _problems(bad)
    assert any("relation is none exactly when preset_case is none" in p for p in problems)
    assert any("preset_case regular needs a regular preset" in p for p in problems)


def test_yaml_level_problems() -> None:
    assert "duplicate key 'lang'" in _problems(ISSUE_EXAMPLE.replace("  scene:", "  lang: en\n  scene:"))[0]
    assert "not valid YAML" in _problems("- id: [unclosed\n")[0]
    assert "empty suite" in _problems("")[0]


def test_schema_is_shipped_and_documented_identically() -> None:
    shipped = json.loads((ROOT / "bench" / "scenario.schema.json").read_text("utf-8"))
    documented = json.loads((ROOT / "docs" / "scenario.schema.json").read_text("utf-8"))
    assert shipped == documented


def test_suite_validate_command(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(suite_cli, ["validate", "builtin:dev"])
    assert ok.exit_code == 0 and "OK" in ok.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(ISSUE_EXAMPLE.replace("lang: zh ", "lang: cn "), "utf-8")
    res = runner.invoke(suite_cli, ["validate", str(bad)])
    assert res.exit_code == 1
    assert "lang (line 2): must be one of zh, en; got 'cn'" in res.output
    assert runner.invoke(suite_cli, ["stats", "builtin:test"]).exit_code == 0


def test_preset_max_times_zero_for_a_preset_that_must_not_be_conveyed(tmp_path: Path) -> None:
    never = (
        ISSUE_EXAMPLE.replace("relation: aligned ", "relation: irrelevant ")
        .replace("preset_conveyed: true ", "preset_conveyed: false ")
        .replace("preset_by_turn: 0 ", "preset_by_turn: null ")
        .replace("preset_max_times: 1", "preset_max_times: 0")
    )
    (sc,) = parse_suite(never)
    assert sc.expect.preset_max_times == 0
    path = tmp_path / "never.yaml"
    path.write_text(never, "utf-8")
    res = CliRunner().invoke(suite_cli, ["validate", str(path)])
    assert res.exit_code == 0, res.output
    contradiction = ISSUE_EXAMPLE.replace("preset_max_times: 1", "preset_max_times: 0")
    assert any("contradicts preset_conveyed: true" in p for p in _problems(contradiction))
    assert any(
        "must be >= 0, got -1" in p for p in _problems(never.replace("preset_max_times: 0", "preset_max_times: -1"))
    )


# --------------------------------------------------------- built-in suites ----


def test_builtin_yaml_is_up_to_date_with_its_sources() -> None:
    for split, scenarios in build.build().items():
        shipped = (ROOT / "bench" / "suites" / f"{split}.yaml").read_text("utf-8")
        assert shipped == build.render(scenarios, split), "run python -m bench.authoring.build"


def test_builtin_counts_and_split(suites: dict[str, list]) -> None:
    extra = [s for s in suites["dev"] if _extra(s)]
    dev, test = [s for s in suites["dev"] if not _extra(s)], suites["test"]
    assert not any(_extra(s) for s in test)  # generalization scenarios never enter the test split
    assert (len(suites["dev"]), len(extra)) == (186, 99)
    everything = dev + test
    assert len(everything) == 210
    assert (len(dev), len(test)) == (87, 123)  # about 40 / 60
    assert {s.split for s in dev} == {"dev"} and {s.split for s in test} == {"test"}
    assert len({s.id for s in everything}) == 210
    langs = Counter(s.lang for s in everything)
    assert (langs["zh"], langs["en"]) == (107, 103)


def test_dev_generalization_set_keeps_callbench_proportions(suites: dict[str, list]) -> None:
    extra = [s for s in suites["dev"] if _extra(s)]
    cases = Counter((s.scene, s.preset_case) for s in extra)
    for scene in ("takeout", "delivery", "taxi"):  # regular : emergent : none = 3 : 1 : 1
        assert (cases[scene, "regular"], cases[scene, "emergent"], cases[scene, "none"]) == (9, 3, 3)
    for scene in ("work", "life", "harassment"):  # emergent : none = 1 : 1
        assert (cases[scene, "emergent"], cases[scene, "none"], cases[scene, "regular"]) == (9, 9, 0)
    langs = Counter(s.lang for s in extra)
    assert (langs["zh"], langs["en"]) == (50, 49)
    relations = Counter(s.relation for s in extra)
    assert (
        relations["none"] == 36
        and min(relations[r] for r in ("aligned", "complementary", "irrelevant", "conflict")) >= 9
    )
    tags = {t for s in extra for t in s.tags}
    assert {"silence", "near_miss", "paraphrase", "exception", "privacy_probe", "injection", "decision", "message",
            "sales", "scam", "threat"} <= tags  # fmt: skip


def test_callbench_proportions(suites: dict[str, list]) -> None:
    everything = [s for s in suites["dev"] if not _extra(s)] + suites["test"]
    cases = Counter((s.scene, s.preset_case) for s in everything)
    for scene in ("takeout", "delivery", "taxi"):  # regular : emergent : none = 3 : 1 : 1
        assert (cases[scene, "regular"], cases[scene, "emergent"], cases[scene, "none"]) == (21, 7, 7)
    for scene in ("work", "life", "harassment"):  # emergent : none about 1 : 1, no regular
        assert (cases[scene, "emergent"], cases[scene, "none"], cases[scene, "regular"]) == (18, 17, 0)
    relations = Counter(s.relation for s in everything)
    assert relations == {"none": 72, "aligned": 48, "conflict": 33, "irrelevant": 30, "complementary": 27}


def test_both_splits_cover_every_slice(suites: dict[str, list]) -> None:
    for scenarios in suites.values():
        assert {s.scene for s in scenarios} == {"takeout", "delivery", "taxi", "work", "life", "harassment"}
        assert {s.preset_case for s in scenarios} == {"regular", "emergent", "none"}
        assert {s.relation for s in scenarios} == {
            "aligned", "complementary", "irrelevant", "conflict", "none"
        }  # fmt: skip
        tags = {t for s in scenarios for t in s.tags}
        assert {"silence", "near_miss", "paraphrase", "exception", "privacy_probe", "injection",
                "decision", "message"} <= tags  # fmt: skip


def test_required_phenomena_are_covered(suites: dict[str, list]) -> None:
    everything = suites["dev"] + suites["test"]
    tags = Counter(t for s in everything for t in s.tags)
    for exception in ("spilled", "damaged", "wrong_item", "late", "cant_find", "signature", "payment", "id"):
        assert tags[exception] >= 1, exception
    assert tags["near_miss"] >= 15 and tags["paraphrase"] >= 15
    assert sum(None in s.turns for s in everything) >= 20  # silence turns
    assert sum(bool(s.expect.forbidden_commitments) for s in everything) >= 40
    assert sum(s.expect.owner_message for s in everything) >= 80
    # Exceptions suspend the regular preset and are relayed to the owner.
    for s in everything:
        if s.preset_case == "regular" and s.relation == "conflict":
            assert s.expect.owner_message and s.expect.owner_message_keywords, s.id
            if s.expect.preset_conveyed:  # delayed, never on the exception turn itself
                assert s.expect.preset_not_before_turn >= 1, s.id
        if "near_miss" in s.tags:
            assert not s.expect.preset_conveyed, s.id
        if "paraphrase" in s.tags:
            assert s.expect.preset_conveyed, s.id
    # Private values are planted everywhere, and callers are varied, not cloned.
    assert all(s.owner.private for s in everything)
    first_turns = [s.turns[0] for s in everything]
    assert len(set(first_turns)) == len(first_turns)


def test_builtin_test2_is_the_held_out_brief_and_uses_max_times_zero() -> None:
    """The call scenarios of the understanding corpus's held-out brief C (data/nlu/test),
    shipped as written: some must not convey their preset (preset_max_times: 0)."""
    scenarios = load_suite("builtin:test2")
    assert len(scenarios) >= 80
    assert {s.lang for s in scenarios} == {"zh", "en"}
    assert any(s.expect.preset_max_times == 0 and not s.expect.preset_conveyed for s in scenarios)


def test_builtin_test3_is_a_balanced_held_out_split() -> None:
    """Brief T3 (stop 17), written by an author who read only design.md and the format:
    24 zh and 24 en, 8 per scene, all in the test split, with near misses shipped as
    preset_max_times: 0."""
    scenarios = load_suite("builtin:test3")
    assert len(scenarios) == 48
    assert all(s.split == "test" and s.id.startswith("t3-") for s in scenarios)
    for lang in ("zh", "en"):
        assert sum(s.lang == lang for s in scenarios) == 24
    for scene in ("takeout", "delivery", "taxi", "work", "life", "harassment"):
        assert sum(s.scene == scene for s in scenarios) == 8
    assert any(s.expect.preset_max_times == 0 and not s.expect.preset_conveyed for s in scenarios)
