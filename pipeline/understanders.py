"""Choosing the understander (``CALLASSIST_UNDERSTANDER``) and the ``llm`` one.

``rules`` and ``learned`` are pure and run inside the coordinator's decision. ``llm`` asks
an OpenAI-compatible endpoint for a JSON-schema answer before the decision, under
``CALLASSIST_NLU_DEADLINE_MS`` (default 400 ms); on a timeout, an error or a malformed
answer the turn is read by ``learned`` instead (counted in ``fallbacks``). The trigger
probabilities always come from the learned, calibrated trigger model.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from coordinator.acts import classify
from coordinator.nlu.model import EXCEPTIONS, FOCI, FORMS, INTENTS, SCENES, Reading
from coordinator.nlu.understander import LearnedUnderstander
from coordinator.types import CallContext, CallState
from coordinator.understanding import RulesUnderstander, Understander, Understanding

from . import metrics

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


_EARLY_MAX = 4  # speculative transcripts kept per call (a turn re-transcribed as it grows)


class EarlyEmbeddings:
    """One call's caller-turn embeddings, computed before the turn is committed.

    A voice call offers each speculative transcript (:meth:`offer`, at the VAD stop, long
    before a statement's 0.9 s pause has passed); its e5 vector is computed then in a
    worker thread. At the decision, :meth:`vector` takes the one whose text equals the
    committed text (``hit``) or, when the final transcript differs or nothing was
    offered, computes it inline as a text call does (``miss``). Counted in
    ``callassist_understanding_precomputed_total{outcome}`` once anything was offered
    (text calls are never counted: they have nothing to precompute)."""

    def __init__(self, embed: Callable[[str], np.ndarray]) -> None:
        self._embed = embed
        self._jobs: OrderedDict[str, asyncio.Future[np.ndarray]] = OrderedDict()
        self.offered = 0
        self.outcomes = {"hit": 0, "miss": 0}

    def offer(self, text: str | None) -> asyncio.Future[np.ndarray] | None:
        """Start embedding ``text`` in a worker thread; returns the job (None: empty text)."""
        key = (text or "").strip()
        if not key:
            return None
        if key in self._jobs:
            return self._jobs[key]
        job = asyncio.get_running_loop().run_in_executor(None, self._embed, key)
        job.add_done_callback(_consume)  # a failure counts as a miss; never "never retrieved"
        self._jobs[key] = job
        self.offered += 1
        while len(self._jobs) > _EARLY_MAX:
            self._jobs.popitem(last=False)
        return job

    async def vector(self, text: str) -> tuple[np.ndarray, str | None]:
        """The turn's vector and how it was obtained: ``hit``, ``miss`` or None (nothing
        offered on this call: computed inline). Earlier offers of the turn are dropped."""
        job = self._jobs.pop(text, None)
        self._jobs.clear()
        vec = None
        if job is not None:
            with contextlib.suppress(Exception):
                vec = await job
        outcome = None if not self.offered else ("hit" if vec is not None else "miss")
        if outcome is not None:
            self.outcomes[outcome] += 1
            metrics.UNDERSTANDING_PRECOMPUTED.labels(outcome=outcome).inc()
        if vec is None:
            vec = await asyncio.to_thread(self._embed, text)
        return vec, outcome


def _consume(job: asyncio.Future[np.ndarray]) -> None:
    if not job.cancelled():
        job.exception()


_WARM_CALLS = {
    "zh": ("外卖到了，放哪里？", "我是学校的，今天谁来接孩子？", "好的，谢谢，再见"),
    "en": ("Hi, it's the courier, where should I leave it?", "It's the school, who picks Leo up today?", "ok bye"),
}
_WARM_TRIGGERS = {"zh": "学校打电话问接孩子", "en": "the school calls about pick-up"}


def warm_up(coordinator: Any, embed: Callable[[str], np.ndarray]) -> float:
    """Pay at start-up what the first caller turn would otherwise wait for: the e5 model,
    the learned heads, the lexicons' and matchers' compiled patterns, the trigger-pair
    features (lazily loaded; the first turn of a process took 3.5 s in bench decisions).
    Runs a short scripted call per language on throwaway state; returns the seconds."""
    from coordinator.types import PresetRef, TriggerCandidate
    from presets.matching import trigger_variants

    started = time.perf_counter()
    for lang, turns in _WARM_CALLS.items():
        trigger = _WARM_TRIGGERS[lang]
        vecs = np.stack([embed(v) for v in trigger_variants(trigger)])
        ref = PresetRef("emergent", "warm-up", "OK.", trigger)
        ctx = CallContext(
            owner_name="Alex", lang=lang, languages=(lang,), regular={"takeout": "OK."},  # type: ignore[arg-type]
            emergent=(TriggerCandidate(ref, None, vecs),),
        )  # fmt: skip
        state = CallState(call_id="warm-up", lang=lang)  # type: ignore[arg-type]
        coordinator.greet(state, ctx)
        for text in turns:
            if state.ended:
                break
            coordinator.decide(state, ctx, text, embed(text))
    return time.perf_counter() - started
