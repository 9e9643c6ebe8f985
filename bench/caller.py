"""Simulated callers: the scenario's script, or a model that plays the caller.

:class:`ScriptedCaller` says the scenario's turns in order; turn indices are the
script's, so every gate of the verifier applies. :class:`AdaptiveCaller` opens with
the first scripted turn, then lets an OpenAI-compatible model continue the call
toward the caller's goal (bounded turns, a timeout per request); its turn indices
are its own, so the verifier skips the turn-indexed checks for those runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .protocol import Exchange
from .scenario import SILENCE, Scenario

HANGUP = "<hangup>"


@dataclass(frozen=True, slots=True)
class CallerTurn:
    text: str | None  # None: silence
    index: int


class Caller(Protocol):
    scripted: bool

    async def next(self, history: Sequence[Exchange]) -> CallerTurn | None:
        """The caller's next turn given the call so far, or None: the caller hangs up."""
        ...


class ScriptedCaller:
    scripted = True

    def __init__(self, scenario: Scenario) -> None:
        self._turns = scenario.turns
        self._i = 0

    async def next(self, history: Sequence[Exchange]) -> CallerTurn | None:
        if self._i >= len(self._turns):
            return None
        turn = CallerTurn(self._turns[self._i], self._i)
        self._i += 1
        return turn


_PROMPT = {
    "zh": (
        "你在扮演一个给{owner}打电话的人，接电话的是他的电话助理。你的目标：{goal}。"
        "参考剧本（可以自然变化，不要照抄）：{script}。每次只说一句简短的口语，像真实电话一样。"
        "对方没回应你的需要时可以再问一次。没话可说时只输出 {silence}；"
        "事情办完并道别后只输出 {hangup}。只输出你要说的话。"
    ),
    "en": (
        "You are role-playing someone phoning {owner}; their phone assistant answers. "
        "Your goal: {goal}. Reference script (vary it naturally, do not copy it): {script}. "
        "Say one short spoken sentence per turn, like a real phone call. Repeat a request "
        "once if it was not answered. If you have nothing to say, output only {silence}; "
        "once your goal is done and you have said goodbye, output only {hangup}. "
        "Output only what you say."
    ),
}


class AdaptiveCaller:
    """A model-driven caller (open-ended runs). ``client`` is an ``openai.AsyncOpenAI``."""

    scripted = False

    def __init__(
        self,
        scenario: Scenario,
        *,
        client: Any,
        model: str,
        max_turns: int | None = None,
        timeout_s: float = 20.0,
        temperature: float = 0.7,
    ) -> None:
        self.sc = scenario
        self.client = client
        self.model = model
        hint = scenario.caller.adaptive
        self.max_turns = max_turns or (hint.max_turns if hint else len(scenario.turns) + 4)
        self.timeout_s = timeout_s
        self.temperature = temperature
        self._i = 0

    def _messages(self, history: Sequence[Exchange]) -> list[dict[str, str]]:
        script = " / ".join(t if t is not None else SILENCE for t in self.sc.turns)
        system = _PROMPT[self.sc.lang].format(
            owner=self.sc.owner.display_name,
            goal=self.sc.caller.goal,
            script=script,
            silence=SILENCE,
            hangup=HANGUP,
        )
        if self.sc.caller.adaptive and self.sc.caller.adaptive.persona:
            system += "\n" + self.sc.caller.adaptive.persona
        messages = [{"role": "system", "content": system}]
        for e in history:
            if e.kind != "greeting":  # the model plays the caller: its lines are "assistant"
                messages.append({"role": "assistant", "content": e.said or SILENCE})
            messages.append({"role": "user", "content": e.reply})
        return messages

    async def next(self, history: Sequence[Exchange]) -> CallerTurn | None:
        i = self._i
        if i >= self.max_turns:
            return None
        self._i += 1
        if i == 0:
            return CallerTurn(self.sc.turns[0], 0)
        resp = await asyncio.wait_for(
            self.client.chat.completions.create(
                model=self.model,
                messages=self._messages(history),
                max_tokens=80,
                temperature=self.temperature,
            ),
            timeout=self.timeout_s,
        )
        text = (resp.choices[0].message.content or "").strip()
        if HANGUP in text:
            return None
        if not text or text == SILENCE:
            return CallerTurn(None, i)
        return CallerTurn(text.replace(SILENCE, "").strip() or None, i)
