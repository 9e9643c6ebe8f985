"""Choosing the understander (``CALLASSIST_UNDERSTANDER``) and the ``llm`` one.

``rules`` and ``learned`` are pure and run inside the coordinator's decision. ``llm`` asks
an OpenAI-compatible endpoint for a JSON-schema answer before the decision, under
``CALLASSIST_NLU_DEADLINE_MS`` (default 400 ms); on a timeout, an error or a malformed
answer the turn is read by ``learned`` instead (counted in ``fallbacks``). The trigger
probabilities always come from the learned, calibrated trigger model.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from coordinator.acts import classify
from coordinator.nlu.model import EXCEPTIONS, FOCI, FORMS, INTENTS, SCENES, Reading
from coordinator.nlu.understander import LearnedUnderstander
from coordinator.types import CallContext, CallState
from coordinator.understanding import RulesUnderstander, Understander, Understanding

log = logging.getLogger(__name__)

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["intents", "exception", "focus", "form"],
    "properties": {
        "intents": {"type": "array", "minItems": 1, "items": {"enum": list(INTENTS)}},
        "exception": {"enum": list(EXCEPTIONS)},
        "focus": {"enum": list(FOCI)},
        "form": {"enum": list(FORMS)},
        "scene": {"enum": [*SCENES, None]},
    },
}
_SYSTEM = (
    "You label one caller turn of a phone call answered by an assistant. Reply with JSON only, "
    "matching the schema: intents (primary first) from {intents}; exception kind or null; "
    "the question's focus or null; form (plain, either_or, yes_no, wh); scene. "
    "The caller may speak Mandarin Chinese or English."
).format(intents=", ".join(INTENTS))


class MalformedAnswer(ValueError):
    """The endpoint's answer is not JSON matching the schema."""


def parse_answer(text: str) -> Reading:
    """A schema-valid JSON answer as a :class:`Reading` (listed labels at probability 1)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise MalformedAnswer("not JSON") from exc
    if not isinstance(data, dict):
        raise MalformedAnswer("not an object")
    intents = data.get("intents")
    if not isinstance(intents, list) or not intents or any(i not in INTENTS for i in intents):
        raise MalformedAnswer("intents")
    for key, allowed in (("exception", EXCEPTIONS), ("focus", FOCI), ("form", FORMS)):
        if data.get(key) not in allowed:
            raise MalformedAnswer(key)
    scene = data.get("scene")

    def one_hot(labels: tuple[Any, ...], value: Any) -> dict[Any, float]:
        return {label: 1.0 if label == value else 0.0 for label in labels}

    return Reading(
        intents={name: (1.0 if name in intents else 0.0) for name in INTENTS},
        exception=one_hot(EXCEPTIONS, data["exception"]),
        focus=one_hot(FOCI, data["focus"]),
        form=one_hot(FORMS, data["form"]),
        scene=one_hot(SCENES, scene) if scene in SCENES else {s: 1 / len(SCENES) for s in SCENES},
    )


class LLMUnderstander:
    """Reads the turn with a language model under a deadline; ``learned`` otherwise.

    The coordinator holds ``fallback`` as its synchronous understander, so a turn whose
    :meth:`prepare` returned None is read by ``learned`` inside the decision."""

    name = "llm"
    wants_embedding = True

    def __init__(self, client: Any, model: str, *, deadline_ms: int, fallback: LearnedUnderstander) -> None:
        self._client = client
        self._model = model
        self.deadline_s = deadline_ms / 1000
        self.fallback = fallback
        self.fallbacks: dict[str, int] = {"timeout": 0, "malformed": 0, "error": 0}
        self.answered = 0

    async def ask(self, utterance: str, context: str | None) -> Reading:
        messages = [
            {"role": "system", "content": _SYSTEM},
            {
                "role": "user",
                "content": json.dumps({"assistant_said": context, "caller": utterance}, ensure_ascii=False),
            },
        ]
        resp = await self._client.chat.completions.create(
            model=self._model,
            messages=messages,
            temperature=0,
            max_tokens=120,
            response_format={"type": "json_schema", "json_schema": {"name": "understanding", "schema": _SCHEMA}},
        )
        return parse_answer(resp.choices[0].message.content or "")

    async def prepare(
        self, utterance: str, *, state: CallState, ctx: CallContext, vec: object = None, flags: tuple[str, ...] = ()
    ) -> Understanding | None:
        """The LLM's reading of the turn, or None (the decision then uses ``learned``)."""
        started = time.perf_counter()
        try:
            reading = await asyncio.wait_for(self.ask(utterance, state.last_reply), self.deadline_s)
        except TimeoutError:
            self.fallbacks["timeout"] += 1
            return None
        except MalformedAnswer as exc:
            self.fallbacks["malformed"] += 1
            log.info("llm understander: malformed answer", extra={"field": str(exc)})
            return None
        except Exception:  # the endpoint is down or refused: the learned reading will do
            self.fallbacks["error"] += 1
            log.warning("llm understander: endpoint error", exc_info=True)
            return None
        self.answered += 1
        log.debug("llm understander answered", extra={"ms": round((time.perf_counter() - started) * 1000, 1)})
        c = classify(utterance, scene=state.scene)
        u = self.fallback.from_reading(utterance, reading, c, state=state, ctx=ctx, vec=vec, flags=flags, conf=None)
        return _with_source(u, self.name)


def _with_source(u: Understanding, source: str) -> Understanding:
    from dataclasses import replace

    return replace(u, source=source)


def make_understander(
    name: str,
    *,
    embed: Callable[[str], np.ndarray] | None = None,
    llm_base_url: str | None = None,
    llm_model: str = "default",
    llm_api_key: str = "not-needed",
    deadline_ms: int = 400,
) -> Understander | LLMUnderstander:
    """The configured understander (``rules`` | ``learned`` | ``llm``)."""
    if name == "rules":
        return RulesUnderstander()
    learned = LearnedUnderstander(embed=embed)
    if name == "learned":
        return learned
    if name == "llm":
        if not llm_base_url:
            raise ValueError("CALLASSIST_UNDERSTANDER=llm needs CALLASSIST_LLM_BASE_URL")
        from openai import AsyncOpenAI

        url = llm_base_url.split(",")[0].strip()
        client = AsyncOpenAI(base_url=url, api_key=llm_api_key, timeout=max(1.0, 2 * deadline_ms / 1000), max_retries=0)
        return LLMUnderstander(client, llm_model, deadline_ms=deadline_ms, fallback=learned)
    raise ValueError(f"unknown understander {name!r}; choose rules, learned or llm")
