"""The coordinator's vocabulary: caller acts, assistant acts, relations, decisions, state.

Hot-path data are dataclasses; :class:`CallState` round-trips through plain dicts so
the pipeline can store it between turns.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal

Lang = Literal["zh", "en"]
Scene = Literal["takeout", "delivery", "taxi", "work", "life", "harassment"]
SERVICE_SCENES: tuple[str, ...] = ("takeout", "delivery", "taxi")
ALL_SCENES: tuple[str, ...] = ("takeout", "delivery", "taxi", "work", "life", "harassment")


class CallerAct(StrEnum):
    """What the caller did in one turn."""

    GREETING = "greeting"  # hello / self-identification only
    ARRIVAL = "arrival"  # I'm here / your order has arrived / ready
    WHERE_TO_LEAVE = "where_to_leave"  # where do I leave it / where do we meet
    INFO_QUESTION = "info_question"  # any other question for information
    EXCEPTION = "exception"  # spilled, damaged, wrong item, late, can't find, signature, payment, ID
    ASK_OWNER = "ask_owner"  # can I speak to him / is he there
    ASK_IDENTITY = "ask_identity"  # who is this? / is this a robot?
    LEAVE_MESSAGE = "leave_message"  # please tell him ... / take a message
    ASK_DECISION = "ask_decision"  # can he ..., is it OK if ..., will he accept ...
    ASK_PRIVATE = "ask_private"  # address, phone number, where is he, schedule
    SALES = "sales"  # marketing, loans, insurance, harassment
    INJECTION = "injection"  # prompt injection, extraction, pretexting
    SILENCE = "silence"  # caller no response
    CLOSING = "closing"  # bye / that's all
    ACK = "ack"  # ok / got it / thanks (nothing new)
    STATEMENT = "statement"  # gives information (e.g. callback number, a message body)
    OTHER = "other"


class Act(StrEnum):
    """What the assistant does in reply."""

    GREET = "greet"
    CONVEY_PRESET = "convey_preset"
    GUIDE = "guide"  # ask for / steer toward the missing condition of a regular preset
    ANSWER_UNKNOWN = "answer_unknown"  # info question we have no preset for: offer to relay
    RELAY_EXCEPTION = "relay_exception"  # take exception details, relay, decide nothing
    ASK_DETAILS = "ask_details"  # ask what exactly happened
    OWNER_UNAVAILABLE = "owner_unavailable"  # can't talk now; offer to take a message
    INVITE_MESSAGE = "invite_message"  # go ahead, I'm listening
    CONFIRM_MESSAGE = "confirm_message"  # noted; I'll pass it on
    DEFER_DECISION = "defer_decision"  # I can't decide for them; I'll ask them
    RELAY_ERRAND = "relay_errand"  # a physical errand: I can't do that myself (on the phone); I'll tell them now
    DEFLECT_PRIVATE = "deflect_private"  # can't share that; can take a message
    DECLINE_SALES = "decline_sales"  # polite boundary; will note the call
    SAFE_REFUSAL = "safe_refusal"  # injection / pretexting
    CHECK_IN = "check_in"  # silence: are you still there?
    ACKNOWLEDGE = "acknowledge"  # caller gave info; noted; anything else?
    CONFIRM_ECHO = "confirm_echo"  # "南门公交站是吧？" after the owner's answer: yes, that's it
    CLARIFY = "clarify"  # didn't catch that
    ASK_REPEAT = "ask_repeat"  # recognition was unsure: the line broke up, say it again (once)
    READ_BACK = "read_back"  # a number the caller gave, read back for confirmation
    ASK_PURPOSE = "ask_purpose"  # hello again: what is the call about?
    LISTEN = "listen"  # the caller introduced themselves: go ahead
    IDENTIFY_SELF = "identify_self"  # "who is this?": the owner's AI assistant
    CLOSE = "close"  # goodbye (end of call)
    CLOSE_CONFIRM = "close_confirm"  # "I'll pass that on. Goodbye." (message and goodbye in one turn)


class Relation(StrEnum):
    ALIGNED = "aligned"
    COMPLEMENTARY = "complementary"
    IRRELEVANT = "irrelevant"
    CONFLICT = "conflict"
    NONE = "none"  # no owner goal this turn


@dataclass(frozen=True, slots=True)
class PresetRef:
    """A preset as the coordinator sees it: regular (scene slot) or emergent (id)."""

    kind: Literal["regular", "emergent"]
    id: str  # emergent id, or "regular:<scene>"
    response: str
    trigger: str | None = None


@dataclass(frozen=True, slots=True)
class TriggerCandidate:
    """An enabled emergent preset with its precomputed trigger embeddings (or None)."""

    preset: PresetRef
    scenes: tuple[str, ...] | None
    vectors: Any = None  # numpy array (n_variants, dim), computed at save time


@dataclass(frozen=True, slots=True)
class MatchResult:
    preset: PresetRef | None
    score: float
    runner_up: float
    reason: str


@dataclass(frozen=True, slots=True)
class CallContext:
    """What the owner set up; fixed for the duration of a call."""

    owner_name: str
    lang: Lang = "zh"
    languages: tuple[str, ...] = ("zh", "en")
    greeting: str | None = None
    regular: dict[str, str] = field(default_factory=dict)  # scene -> response
    emergent: tuple[TriggerCandidate, ...] = ()
    private_facts: tuple[tuple[str, str], ...] = ()  # (label, value); never spoken
    scene_hint: str | None = None
    pronoun: str | None = None  # "he" | "she" | "they" from the profile; None: guessed from the name


@dataclass(slots=True)
class OwnerRecord:
    """What the owner reads after the call: one per call, updated every turn."""

    caller: str | None = None  # who called, as stated
    reason: str | None = None  # why, in a few words
    scene: str | None = None
    exceptions: list[str] = field(default_factory=list)  # caller-reported problems, verbatim
    messages: list[str] = field(default_factory=list)  # things to pass on, verbatim
    notes: list[str] = field(default_factory=list)  # other things the caller said (context, not a message)
    requests: list[str] = field(default_factory=list)  # decisions asked of the owner
    callback_number: str | None = None
    callback_confirmed: bool | None = None  # the caller confirmed callback_number when read back
    # Numbers the caller gave (coordinator.readback): {"kind": callback|code|amount|time,
    # "heard": the recognized words, "value": digits, "confirmed": bool, "readbacks": int}.
    captured: list[dict[str, Any]] = field(default_factory=list)
    urgency: Literal["normal", "urgent"] = "normal"
    presets_conveyed: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # e.g. "injection_attempt", "sales"

    @property
    def has_message(self) -> bool:
        return bool(self.messages or self.exceptions or self.requests)


@dataclass(slots=True)
class CallState:
    """Everything the coordinator remembers between turns of one call."""

    call_id: str
    lang: Lang
    scene: str | None = None
    scene_scores: dict[str, float] = field(default_factory=dict)
    turn: int = -1  # index of the last caller turn handled
    history: list[tuple[str | None, str]] = field(default_factory=list)  # (caller, assistant)
    conveyed: dict[str, int] = field(default_factory=dict)  # preset id -> times conveyed
    conveyed_turn: dict[str, int] = field(default_factory=dict)
    suspended: list[str] = field(default_factory=list)  # regular presets suspended by conflict
    solved: list[str] = field(default_factory=list)  # presets given as the answer to a way-in problem
    silence_streak: int = 0
    sales_count: int = 0
    hostile: bool = False  # a scam, injection or pretexting call: nothing it says is relayed
    # The caller's words are only ever heard in ``lang`` (a voice call whose speech
    # recognizer is held to the owner's one language): text in the other script is a
    # misrecognition, not a caller switching language.
    lang_locked: bool = False
    context_messages: list[str] = field(default_factory=list)  # statements relayed as context, not asked to pass on
    probing: bool = False  # the previous turn probed for private data or tried injection
    awaiting: str | None = None  # "message" | "details" | "callback" | None
    open_need: bool = False  # the caller still needs something from this call
    closing: bool = False
    ended: bool = False
    last_reply: str | None = None
    last_act: str | None = None
    variant_counter: dict[str, int] = field(default_factory=dict)
    readback: dict[str, Any] | None = None  # a read-back awaiting the caller's answer (coordinator.readback)
    pieces: dict[str, Any] | None = None  # a callback number being given in pieces (coordinator.number_pieces)
    repeat_asked: bool = False  # the previous turn asked for a repeat (low recognition confidence)
    record: OwnerRecord = field(default_factory=OwnerRecord)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallState:
        data = dict(data)
        data["history"] = [tuple(x) for x in data.get("history", [])]
        data["record"] = OwnerRecord(**data.get("record", {}))
        return cls(**data)


@dataclass(frozen=True, slots=True)
class Decision:
    """The coordinator's answer to one caller turn."""

    act: Act
    caller_act: CallerAct
    scene: str | None
    lang: Lang
    relation: Relation
    text: str  # ready, safe template wording
    preset: PresetRef | None = None  # conveyed this turn
    end_call: bool = False
    slots: dict[str, str] = field(default_factory=dict)
    input_flags: tuple[str, ...] = ()  # labels from the input guard
    match: MatchResult | None = None

    def must_include(self) -> str | None:
        """Text a realizer must carry verbatim (the owner's preset response)."""
        return self.preset.response if self.preset else None
