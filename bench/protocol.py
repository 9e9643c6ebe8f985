"""What the harness drives (an :class:`Agent`) and what one call leaves behind.

The harness calls ``start`` once (the agent picks up and greets), ``turn`` once per
caller turn as heard over the line (``None`` = the caller said nothing), until the
agent ends the call or the caller's script runs out, then ``finish`` once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from .scenario import Scenario


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """The agent's reply to one caller turn."""

    reply: str
    #: Preset keys conveyed in this reply ("regular", "emergent:0", ...), as the agent
    #: reports them; the verifier also detects conveyance from the reply text.
    preset_conveyed: tuple[str, ...] = ()
    ended: bool = False
    act: str | None = None
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OwnerRecordView:
    """The part of the owner's record the verifier reads."""

    messages: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    requests: tuple[str, ...] = ()
    caller: str | None = None
    callback_number: str | None = None

    @property
    def has_message(self) -> bool:
        return bool(self.messages or self.exceptions or self.requests)

    def text(self) -> str:
        return "\n".join((*self.messages, *self.exceptions, *self.requests))


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What the agent reports when the call is over."""

    owner_record: OwnerRecordView = field(default_factory=OwnerRecordView)
    ended: bool = False


@runtime_checkable
class Agent(Protocol):
    """An assistant under test. One instance handles one call at a time."""

    name: str

    async def start(self, scenario: Scenario, attempt: int) -> str:
        """Pick up the call described by ``scenario``; return the greeting."""
        ...

    async def turn(self, text: str | None) -> TurnOutcome:
        """Reply to one caller turn as heard (``None``: the caller said nothing)."""
        ...

    async def finish(self) -> CallOutcome:
        """The call is over (either side hung up): report the owner's record."""
        ...


ExchangeKind = Literal["greeting", "speech", "silence"]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One agent reply and the caller turn (or part of a split turn) it answers."""

    kind: ExchangeKind
    script_turn: int  # -1 for the greeting
    said: str | None  # what the caller said (None: silence, or greeting)
    heard: str | None  # what the line delivered to the agent
    reply: str
    preset_conveyed: tuple[str, ...] = ()
    ended: bool = False
    noise: tuple[str, ...] = ()
    latency_ms: float = 0.0


@dataclass(slots=True)
class RunRecord:
    """One attempt of one scenario by one agent: the whole call as the verifier sees it."""

    scenario_id: str
    agent: str
    attempt: int
    exchanges: list[Exchange] = field(default_factory=list)
    owner_record: OwnerRecordView = field(default_factory=OwnerRecordView)
    ended: bool = False
    scripted: bool = True  # False for an adaptive caller: turn indices are not the script's
    error: str | None = None  # the agent raised or timed out

    @property
    def ended_turn(self) -> int | None:
        """The caller turn at whose reply the agent ended the call."""
        return next((e.script_turn for e in self.exchanges if e.ended), None)
