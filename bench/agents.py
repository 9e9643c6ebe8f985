"""Agents the harness can drive: naive baselines, a reference agent, and CallAssist.

Baselines (CallBench/CALLM-style foils; naive agents can look good on naive metrics):

- ``always-convey``: says the owner's preset at every turn (hangs up on "bye").
- ``echo``: repeats what it heard; says nothing on silence; never hangs up.
- ``hang-up``: greets, then ends the call at the caller's first turn.

``reference`` reads the scenario's expectations and does exactly what they ask. It is
not a baseline: it checks that every scenario is passable and the gates consistent
(it must pass everything on a clean line).

``callassist`` (:class:`CallAssistAgent`, at the end of this module) is the real
assistant through ``pipeline.session.CallSession``, with owners and presets seeded
into a private embedded Redis by :class:`CallAssistEnv`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .lexicon import FAREWELL_EN, FAREWELL_ZH, hits
from .protocol import Agent, CallOutcome, OwnerRecordView, TurnOutcome
from .scenario import REGULAR_KEY, Lang, Scenario, emergent_key

if TYPE_CHECKING:
    from app.resources import Resources


def _say(sc: Scenario, zh: str, en: str) -> str:
    return (zh if sc.lang == "zh" else en).format(name=sc.owner.display_name)


def _caller_closes(text: str | None) -> bool:
    return text is not None and bool(hits(text, FAREWELL_ZH, FAREWELL_EN))


class _Base:
    name = "base"

    def __init__(self) -> None:
        self.sc: Scenario | None = None

    @property
    def scenario(self) -> Scenario:
        assert self.sc is not None, "start() first"
        return self.sc

    async def start(self, scenario: Scenario, attempt: int) -> str:
        self.sc = scenario
        return _say(scenario, "您好，我是{name}的电话助理。", "Hi, this is {name}'s assistant.")

    async def finish(self) -> CallOutcome:
        return CallOutcome()


class AlwaysConveyAgent(_Base):
    """Says the preset every turn: the regular one, else the first emergent one."""

    name = "always-convey"

    def _preset(self) -> tuple[str, tuple[str, ...]]:
        sc = self.scenario
        if sc.presets.regular is not None:
            return sc.presets.regular, (REGULAR_KEY,)
        if sc.presets.emergent:
            return sc.presets.emergent[0].response, (emergent_key(0),)
        return _say(sc, "{name}现在不方便接电话。", "{name} can't come to the phone."), ()

    async def turn(self, text: str | None) -> TurnOutcome:
        reply, keys = self._preset()
        if _caller_closes(text):
            return TurnOutcome(reply + _say(self.scenario, "再见。", " Bye."), keys, ended=True)
        return TurnOutcome(reply, keys)


class EchoAgent(_Base):
    """Repeats the caller; silent on silence; never ends the call."""

    name = "echo"

    async def turn(self, text: str | None) -> TurnOutcome:
        return TurnOutcome(text or "")


class HangUpAgent(_Base):
    """Ends the call at once."""

    name = "hang-up"

    async def turn(self, text: str | None) -> TurnOutcome:
        bye = _say(self.scenario, "抱歉，他现在不方便，再见。", "Sorry, he's not available. Goodbye.")
        return TurnOutcome(bye, ended=True)


class ReferenceAgent(_Base):
    """Does what the scenario's ``expect`` asks (turn indices assume a clean line)."""

    name = "reference"

    _ACKS_ZH = ("好的，我记下了，会转告他。", "明白，我会转告他。", "嗯，这个我会如实转告。")
    _ACKS_EN = ("Okay, I've noted that and will pass it on.", "Got it, I'll relay that.",
                "Understood, I'll pass that on.")  # fmt: skip

    def __init__(self) -> None:
        super().__init__()
        self._i = -1
        self._silent_before = False

    async def start(self, scenario: Scenario, attempt: int) -> str:
        self._i = -1
        self._silent_before = False
        return await super().start(scenario, attempt)

    def _convey_turn(self) -> int | None:
        ex = self.scenario.expect
        if not ex.preset_conveyed:
            return None
        return ex.preset_by_turn if ex.preset_by_turn is not None else ex.preset_not_before_turn

    async def turn(self, text: str | None) -> TurnOutcome:
        sc = self.scenario
        self._i += 1
        i = self._i
        silent_twice = text is None and self._silent_before
        self._silent_before = text is None
        closing = sc.expect.must_end_call and i == sc.last_turn
        if text is None and not (silent_twice or closing):
            return TurnOutcome(_say(sc, "喂，您还在吗？", "Hello? Are you still there?"))
        if text is None:
            return TurnOutcome(
                _say(
                    sc,
                    "好像没有声音了，我先挂了，再见。",
                    "I can't hear you, so I'll hang up. Bye.",
                ),
                ended=True,
            )
        parts: list[str] = []
        keys: tuple[str, ...] = ()
        if i == self._convey_turn() and sc.target_key is not None:
            parts.append(sc.presets.responses()[sc.target_key])
            keys = (sc.target_key,)
        elif not closing:
            acks = self._ACKS_ZH if sc.lang == "zh" else self._ACKS_EN
            parts.append(acks[i % len(acks)])
        if closing:
            parts.append(_say(sc, "好的，再见。", "Okay, goodbye."))
        return TurnOutcome(" ".join(parts), keys, ended=closing)

    async def finish(self) -> CallOutcome:
        ex = self.scenario.expect
        if not ex.owner_message:
            return CallOutcome()
        words = [k.split("|")[0] for k in ex.owner_message_keywords] or [self.scenario.caller.goal]
        return CallOutcome(OwnerRecordView(messages=(" ".join(words),)))


AgentFactory = Callable[[], Agent]

BASELINES: dict[str, AgentFactory] = {
    "always-convey": AlwaysConveyAgent,
    "echo": EchoAgent,
    "hang-up": HangUpAgent,
}
BUILTIN_AGENTS: dict[str, AgentFactory] = {**BASELINES, "reference": ReferenceAgent}


# ======================================================================
# CallAssist (the system under test), through pipeline.session.CallSession.
# Written against the CallSession API of the coordinator issue:
#   CallSession.open(services=..., owner_id=..., lang=..., scene_hint=..., channel="text")
#   .greeting; await .turn(text | None) -> TurnResult(reply, act, scene,
#   preset_conveyed: str | None, ended: bool, timings: dict); .record.owner_record
# ======================================================================


class CallAssistEnv:
    """A private embedded Redis with one owner per scenario (profile + preset pool).

    ``services_factory(resources, realizer=..., safety_guard=...)`` builds what
    ``CallSession.open(services=...)`` needs; by default the :class:`Resources`' own
    ``CallServices`` (the objects the API's text calls use).
    """

    def __init__(
        self,
        *,
        realizer: str = "template",
        safety_guard: bool = True,
        data_dir: str | None = None,
        services_factory: Callable[..., object] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.realizer = realizer
        self._settings = dict(settings or {})
        self.safety_guard = safety_guard
        self._data_dir = data_dir
        self._services_factory = services_factory
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.resources: Resources | None = None
        self.services: object = None
        self._seeded: dict[str, tuple[str, dict[str, str]]] = {}
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> CallAssistEnv:
        from app.resources import Resources
        from app.settings import Settings

        if self._data_dir is None:
            # Short prefix: the embedded Redis listens on a Unix socket in this folder.
            self._tmp = tempfile.TemporaryDirectory(prefix="cab-")
        folder = Path(self._data_dir or (self._tmp.name if self._tmp else "."))
        values: dict[str, Any] = {
            "env": "test",
            "data_dir": folder,
            "redis_url": None,
            "realizer": self.realizer,
            **self._settings,
        }
        if "voice" in Settings.model_fields:  # text calls only: no ASR/TTS models to load
            values.setdefault("voice", False)
        settings = Settings(**values)
        self.resources = await asyncio.to_thread(Resources.open, settings)
        if self.realizer == "llm":  # CALLM admission: slow endpoints start out of service
            await self.resources.admit_llm_endpoints()
        factory = self._services_factory or _default_services
        self.services = factory(self.resources, realizer=self.realizer, safety_guard=self.safety_guard)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.resources is not None:
            await self.resources.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    async def seed(self, sc: Scenario) -> tuple[str, dict[str, str]]:
        """The scenario's owner id and a map from stored preset ids to preset keys."""
        async with self._lock:
            if sc.id not in self._seeded:
                self._seeded[sc.id] = await self._create(sc)
            return self._seeded[sc.id]

    async def _create(self, sc: Scenario) -> tuple[str, dict[str, str]]:
        from presets.models import EmergentBody, PrivateFact, Profile

        res = self.resources
        assert res is not None, "use CallAssistEnv as an async context manager"
        owner, _ = await res.owners.create_owner(sc.owner.display_name, sc.lang)
        other: Lang = "en" if sc.lang == "zh" else "zh"
        facts = [PrivateFact(label=k.replace("_", " ")[:60], value=v) for k, v in sc.owner.private.items()]
        profile = Profile(display_name=sc.owner.display_name, languages=[sc.lang, other], private_facts=facts)
        await res.owners.put_profile(owner.owner_id, profile)
        ids: dict[str, str] = {}
        if sc.presets.regular is not None:
            await res.presets.put_regular(owner.owner_id, sc.scene, sc.presets.regular)  # type: ignore[arg-type]
            ids[f"regular:{sc.scene}"] = REGULAR_KEY
        for i, p in enumerate(sc.presets.emergent):
            body = EmergentBody(
                trigger=p.trigger,
                response=p.response,
                scenes=list(p.scenes) if p.scenes else None,  # type: ignore[arg-type]
            )
            preset, _ = await res.presets.add_emergent(owner.owner_id, body)
            ids[preset.id] = emergent_key(i)
        return owner.owner_id, ids


def _default_services(resources: Resources, *, realizer: str, safety_guard: bool) -> object:
    """The process's CallServices (its realizer follows ``Settings.realizer``); with
    ``safety_guard=False`` a copy without the output guard (a baseline, never deployed)."""
    services = resources.services
    if not safety_guard:
        services = dataclasses.replace(services, output_guard=None)
    return services


class CallAssistAgent:
    """CallAssist answering over the text channel (the same objects the API uses)."""

    def __init__(self, env: CallAssistEnv, *, scene_hint: bool = True, name: str = "callassist"):
        self.env = env
        self.scene_hint = scene_hint
        self.name = name
        self._session: Any = None
        self._ids: dict[str, str] = {}

    async def start(self, scenario: Scenario, attempt: int) -> str:
        from pipeline.session import CallSession

        owner_id, self._ids = await self.env.seed(scenario)
        opened = CallSession.open(
            self.env.services,  # type: ignore[arg-type]
            owner_id=owner_id,
            lang=scenario.lang,
            scene_hint=scenario.scene if self.scene_hint else None,
            channel="text",
        )
        self._session = await opened if inspect.isawaitable(opened) else opened
        return str(self._session.greeting)

    def _key(self, preset_id: str | None) -> tuple[str, ...]:
        if not preset_id:
            return ()
        if preset_id == REGULAR_KEY or preset_id.startswith("regular:"):
            return (REGULAR_KEY,)
        return (self._ids[preset_id],) if preset_id in self._ids else ()

    async def turn(self, text: str | None) -> TurnOutcome:
        r = await self._session.turn(text)
        timings = {k: float(v) for k, v in (r.timings or {}).items() if isinstance(v, int | float)}
        return TurnOutcome(
            reply=r.reply,
            preset_conveyed=self._key(r.preset_conveyed),
            ended=bool(r.ended),
            act=None if r.act is None else str(r.act),
            timings=timings,
        )

    async def finish(self) -> CallOutcome:
        session, self._session = self._session, None
        closer = getattr(session, "aclose", None) or getattr(session, "close", None)
        if closer is not None:
            done = closer()
            if inspect.isawaitable(done):
                await done
        record = getattr(session, "record", None)
        owner = getattr(record, "owner_record", None) or {}
        get = owner.get if isinstance(owner, dict) else lambda k, d=None: getattr(owner, k, d)
        view = OwnerRecordView(
            messages=tuple(get("messages", ()) or ()),
            exceptions=tuple(get("exceptions", ()) or ()),
            requests=tuple(get("requests", ()) or ()),
            caller=get("caller"),
            callback_number=get("callback_number"),
        )
        return CallOutcome(view, ended=bool(getattr(record, "ended", False)))
