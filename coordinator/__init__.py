"""The dual-goal coordinator (pure: no I/O, no network).

``Coordinator.decide(state, ctx, utterance, utterance_vec)`` returns one
:class:`Decision` per caller turn; realizers turn it into words.
"""

from .policy import Coordinator
from .types import (
    Act,
    CallContext,
    CallerAct,
    CallState,
    Decision,
    OwnerRecord,
    PresetRef,
    Relation,
    TriggerCandidate,
)

__all__ = [
    "Act",
    "CallContext",
    "CallState",
    "CallerAct",
    "Coordinator",
    "Decision",
    "OwnerRecord",
    "PresetRef",
    "Relation",
    "TriggerCandidate",
]
