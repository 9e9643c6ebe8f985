"""What every call in the process shares (:class:`CallServices`), and the error a turn
on an ended call raises (:class:`CallEnded`). The per-call object is
:class:`pipeline.session.CallSession`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from coordinator import Coordinator
from presets.matching import Embedder
from presets.owners import OwnerStore
from presets.pool import PresetStore
from safety import InputGuard, OutputGuard

from .context import ContextLoader
from .events import EventLog
from .realizers import Realizer, TemplateRealizer
from .records import CallStore


@dataclass
class CallServices:
    """Process-wide objects every call shares."""

    redis: Redis
    owners: OwnerStore
    presets: PresetStore
    calls: CallStore
    realizer: Realizer = field(default_factory=TemplateRealizer)
    embedder: Embedder = field(default_factory=Embedder)
    input_guard: InputGuard = field(default_factory=InputGuard)
    output_guard: OutputGuard | None = field(default_factory=OutputGuard)  # None: guard off (baseline only)
    loader: ContextLoader | None = None
    liveness: Any = None  # pipeline.liveness.InstanceLiveness: which instance holds a voice call
    understander: Any = None  # pipeline.understanders.make_understander(); None: rules
    events: EventLog | None = None  # owner events; None: none are written
    screening: Any = None  # pipeline.screening.Screener: decides on each call's caller

    def __post_init__(self) -> None:
        if self.loader is None:
            self.loader = ContextLoader(self.redis, self.owners, self.presets)
        guard = self.input_guard
        sync = getattr(self.understander, "fallback", self.understander)  # llm: learned inside the decision
        self.coordinator = Coordinator(lambda utt, ctx: guard.classify(utt).kinds, understander=sync)


class CallEnded(Exception):
    def __init__(self, call_id: str) -> None:
        super().__init__(f"call {call_id} has ended")
        self.call_id = call_id
