"""A benchmark scenario: one scripted incoming call and what a correct assistant does.

The YAML format and its JSON Schema are documented in ``docs/scenarios.md``; this
module holds the validated, immutable form the harness and verifier use. Caller
turns are ``None`` for a silence turn (``<silence>`` in YAML).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Lang = Literal["zh", "en"]
SCENES: tuple[str, ...] = ("takeout", "delivery", "taxi", "work", "life", "harassment")
SERVICE_SCENES: tuple[str, ...] = ("takeout", "delivery", "taxi")
PRESET_CASES: tuple[str, ...] = ("regular", "emergent", "none")
RELATIONS: tuple[str, ...] = ("aligned", "complementary", "irrelevant", "conflict", "none")
SILENCE = "<silence>"

#: Canonical preset keys used throughout bench: the scene's regular slot, or the
#: position of an emergent preset in the scenario's list.
REGULAR_KEY = "regular"


def emergent_key(index: int) -> str:
    return f"emergent:{index}"


@dataclass(frozen=True, slots=True)
class OwnerSpec:
    display_name: str
    private: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EmergentSpec:
    trigger: str
    response: str
    scenes: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PresetsSpec:
    regular: str | None = None
    emergent: tuple[EmergentSpec, ...] = ()

    def responses(self) -> dict[str, str]:
        """Preset key -> response text, for every preset in the pool."""
        out: dict[str, str] = {}
        if self.regular is not None:
            out[REGULAR_KEY] = self.regular
        for i, p in enumerate(self.emergent):
            out[emergent_key(i)] = p.response
        return out


@dataclass(frozen=True, slots=True)
class AdaptiveSpec:
    """Hints for the optional model-driven caller (open-ended runs only)."""

    persona: str | None = None
    max_turns: int = 12


@dataclass(frozen=True, slots=True)
class CallerSpec:
    goal: str
    turns: tuple[str | None, ...]
    adaptive: AdaptiveSpec | None = None


@dataclass(frozen=True, slots=True)
class Expect:
    preset_conveyed: bool
    owner_message: bool
    must_end_call: bool
    preset_not_before_turn: int = 0
    preset_by_turn: int | None = None
    preset_max_times: int = 1
    owner_message_keywords: tuple[str, ...] = ()
    forbidden_commitments: tuple[str, ...] = ()
    notes: str = ""
    # Optional extensions (docs/scenarios.md):
    preset_target: str | None = None  # "regular" | "emergent:N"; default from preset_case
    end_not_before_turn: int | None = None  # earliest caller turn the call may end at


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    lang: Lang
    scene: str
    preset_case: str
    relation: str
    owner: OwnerSpec
    presets: PresetsSpec
    caller: CallerSpec
    expect: Expect
    split: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def turns(self) -> tuple[str | None, ...]:
        return self.caller.turns

    @property
    def last_turn(self) -> int:
        return len(self.caller.turns) - 1

    @property
    def target_key(self) -> str | None:
        """The preset whose conveyance ``expect`` talks about (None: no preset in the pool)."""
        if self.expect.preset_target is not None:
            return self.expect.preset_target
        if self.preset_case == "regular" or (self.presets.regular is not None and not self.presets.emergent):
            return REGULAR_KEY if self.presets.regular is not None else None
        if self.presets.emergent:
            return emergent_key(0)
        return REGULAR_KEY if self.presets.regular is not None else None

    @property
    def end_not_before(self) -> int:
        """Earliest caller turn at whose reply ending the call is not premature."""
        if self.expect.end_not_before_turn is not None:
            return self.expect.end_not_before_turn
        return self.last_turn

    def slices(self) -> dict[str, str]:
        """The slice labels a result is reported under."""
        return {
            "scene": self.scene,
            "lang": self.lang,
            "preset_case": self.preset_case,
            "relation": self.relation,
        }
