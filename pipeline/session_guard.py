"""The safety guard over a reply as the session streams it: every finished sentence is
checked before it is yielded; a violating one is replaced by the decision's safe
template (once), and the original is kept only redacted in an :class:`Intervention`."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from coordinator.types import CallContext, CallState, Decision
from safety import GuardContext, OutputGuard, redact, split_sentences

from . import metrics
from .realizers import Realization
from .records import Intervention

log = logging.getLogger(__name__)

_CJK_END = "。！？；…\n"
_ASCII_END = ".!?;"


@dataclass
class ReplyGuard:
    """Checks the sentences of one call's replies (the guard, the owner's set-up, the greeting)."""

    guard: OutputGuard | None
    ctx: CallContext
    greeting: str = ""

    def context(self, state: CallState, decision: Decision | None) -> GuardContext:
        ctx = self.ctx
        presets = tuple(ctx.regular.values()) + tuple(c.preset.response for c in ctx.emergent)
        conversation = tuple(c for c, _ in state.history if c)
        allowed = (decision.text,) if decision is not None else ()
        return GuardContext(
            lang=state.lang,
            owner_name=ctx.owner_name,
            private_facts=ctx.private_facts,
            preset_texts=presets,
            conversation=conversation,
            allowed_texts=(*allowed, self.greeting) if self.greeting else allowed,
        )

    def _check(
        self,
        sentence: str,
        decision: Decision,
        turn: int,
        gctx: GuardContext,
        used_template: list[bool],
        interventions: list[Intervention],
    ) -> str | None:
        if self.guard is None:
            return sentence
        t0 = time.perf_counter()
        verdict = self.guard.check(sentence, gctx)
        metrics.GUARD_SECONDS.observe(time.perf_counter() - t0)
        if verdict.ok:
            return sentence
        metrics.SAFETY_INTERVENTIONS.labels(constraint=verdict.constraint or "unknown").inc()
        interventions.append(
            Intervention(
                turn=turn,
                constraint=verdict.constraint or "unknown",
                rule=verdict.rule or "",
                audit=redact(sentence, gctx),
            )
        )
        log.warning(
            "safety guard replaced a sentence",
            extra={"constraint": verdict.constraint, "rule": verdict.rule},
        )
        if used_template[0]:
            return None  # the safe wording was already said; drop the rest
        used_template[0] = True
        return decision.text

    def all(self, state: CallState, texts: list[str], decision: Decision, turn: int) -> tuple[str, list[Intervention]]:
        """Whole texts (the greeting): the guarded wording and what was replaced."""
        gctx = self.context(state, decision)
        used = [False]
        out: list[str] = []
        interventions: list[Intervention] = []
        for text in texts:
            for sentence in split_sentences(text):
                checked = self._check(sentence, decision, turn, gctx, used, interventions)
                if checked is not None:
                    out.append(checked)
        return join_sentences(out, decision.lang) or decision.text, interventions

    async def stream(
        self,
        state: CallState,
        realization: Realization,
        decision: Decision,
        turn: int,
        interventions: list[Intervention],
    ) -> AsyncIterator[str]:
        """The realization's sentences, each checked as soon as it is finished."""
        gctx = self.context(state, decision)
        used = [False]
        buffer = ""
        emitted = 0
        assert realization.chunks is not None
        async for chunk in realization.chunks:
            buffer += chunk
            cut = last_boundary(buffer)
            if cut == 0:
                continue
            # Only finished sentences are checked; the unfinished rest stays raw (spaces and all).
            complete, buffer = split_sentences(buffer[:cut]), buffer[cut:]
            for sentence in complete:
                checked = self._check(sentence, decision, turn, gctx, used, interventions)
                if checked is not None:
                    emitted += 1
                    yield checked
        for sentence in split_sentences(buffer):
            checked = self._check(sentence, decision, turn, gctx, used, interventions)
            if checked is not None:
                emitted += 1
                yield checked
        if emitted == 0:
            yield decision.text


def last_boundary(text: str) -> int:
    """Index just after the last finished sentence in streamed ``text`` (0 if none yet).

    A Chinese terminator ends a sentence at once; an ASCII one only once whitespace
    follows it (so "3." in "3.5" or "Mr." mid-stream waits for the next chunk).
    """
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch in _CJK_END:
            return i + 1
        if ch in _ASCII_END and i + 1 < len(text) and text[i + 1].isspace():
            return i + 1
    return 0


def join_sentences(sentences: list[str], lang: str) -> str:
    sep = "" if lang == "zh" else " "
    return sep.join(s.strip() for s in sentences if s.strip())
