"""Public data types of the safety package: the call context and the verdicts.

Hot-path data, so plain frozen dataclasses (hashable: the guards cache what they
precompute per context on these values).
"""

from __future__ import annotations

from dataclasses import dataclass

CONSTRAINTS: tuple[str, ...] = ("C_priv", "C_dec", "C_fact", "C_phys")
INPUT_KINDS: tuple[str, ...] = (
    "injection",
    "extraction",
    "pretexting",
    "social_engineering",
    "private_probe",
    # "I'm his friend Lao Zhang" and nothing else: an introduction, recorded for the owner
    # but no attack by itself (asking for private data or access under it is pretexting).
    "identity_claim",
)
ATTACK_KINDS: tuple[str, ...] = INPUT_KINDS[:-1]


@dataclass(frozen=True, slots=True)
class GuardContext:
    """What the guard knows about the call when it checks one sentence.

    ``lang`` is the call language ("zh" | "en"); sentences may still mix both.
    ``owner_name`` may be said. ``private_facts`` are (label, value) pairs that are
    never spoken in any form. ``preset_texts`` are the owner's own wordings: their
    verbatim content passes even if it holds a time, place or decision.
    ``conversation`` is what the caller has said so far: facts from it may be
    repeated back, except private facts. ``allowed_texts`` are extra vetted wordings
    (e.g. the decision's template text) that pass as they are.
    """

    lang: str
    owner_name: str
    private_facts: tuple[tuple[str, str], ...]
    preset_texts: tuple[str, ...]
    conversation: tuple[str, ...]
    allowed_texts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """The result of checking one sentence.

    ``constraint`` is one of :data:`CONSTRAINTS` (None when ``ok``); ``rule`` is a
    short stable id such as ``"priv.phone_digits"``; ``span`` is the offending
    fragment, already redacted (digits and private values masked) so it can go to
    the audit record as is.
    """

    ok: bool
    constraint: str | None
    rule: str | None
    span: str | None = None


OK = Verdict(ok=True, constraint=None, rule=None)


@dataclass(frozen=True, slots=True)
class InputLabel:
    """What the input guard found in one caller utterance.

    ``kinds`` is a subset of :data:`INPUT_KINDS` in that order; empty means benign.
    ``rule`` is the id of the first rule that fired.
    """

    kinds: tuple[str, ...]
    rule: str | None

    @property
    def flagged(self) -> bool:
        """True when the utterance should be answered with a safe reply."""
        return bool(self.kinds)


BENIGN = InputLabel(kinds=(), rule=None)
