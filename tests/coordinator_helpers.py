"""Conversation-style helpers for coordinator tests: say a line, expect a decision."""

from __future__ import annotations

from functools import lru_cache

from coordinator import CallContext, CallState, Coordinator, Decision, PresetRef, TriggerCandidate
from presets.matching import Embedder, trigger_variants


@lru_cache(maxsize=1)
def embedder() -> Embedder:
    return Embedder()


def emergent(pid: str, trigger: str, response: str, scenes: tuple[str, ...] | None = None) -> TriggerCandidate:
    vecs = embedder().embed(trigger_variants(trigger))
    return TriggerCandidate(PresetRef("emergent", pid, response, trigger), scenes, vecs)


class Call:
    """One simulated call against the pure coordinator."""

    def __init__(
        self,
        owner: str = "陈先生",
        lang: str = "zh",
        regular: dict[str, str] | None = None,
        emergent: tuple[TriggerCandidate, ...] = (),
        scene_hint: str | None = None,
        greeting: str | None = None,
        input_guard=None,
        private: tuple[tuple[str, str], ...] = (),
        understander=None,
    ) -> None:
        self.ctx = CallContext(
            owner_name=owner,
            lang=lang,
            regular=regular or {},
            emergent=emergent,  # type: ignore[arg-type]
            scene_hint=scene_hint,
            greeting=greeting,
            private_facts=private,
        )
        self.state = CallState(call_id="test", lang=lang)  # type: ignore[arg-type]
        self.co = Coordinator(input_guard, understander=understander)
        self.greeting = self.co.greet(self.state, self.ctx)
        self.decisions: list[Decision] = []

    def say(self, text: str | None) -> Decision:
        wants = self.ctx.emergent or getattr(self.co.understander, "wants_embedding", False)
        vec = embedder().embed_one(text) if text and wants else None
        d = self.co.decide(self.state, self.ctx, text, vec)
        self.decisions.append(d)
        return d

    def silence(self) -> Decision:
        return self.say(None)

    @property
    def record(self):
        return self.state.record

    def conveyed_count(self, pid: str) -> int:
        return sum(1 for d in self.decisions if d.preset and d.preset.id == pid)
