"""The output guard: every sentence the assistant is about to say, checked.

Order of work for one sentence:

1. empty, or wholly inside an authorized text (a preset or an allowed text): pass;
2. authorized sentences quoted inside it are blanked ("陈先生交代过：<preset>");
3. the owner's name becomes he/他 so the rules need not know it;
4. C_priv (planted values, then statements), C_phys, C_dec, C_fact, in that order;
   the first hit is the verdict.

Everything per context (fact patterns, authorized spans, support) is compiled once
and cached (see ``_context``); a sentence costs a few dozen precompiled regex scans.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import _dec, _fact, _phys, _priv
from ._context import Compiled, compile_context, substitute_owner
from ._text import View, split_sentences
from .redact import redact
from .types import OK, GuardContext, Verdict

Hit = tuple[str, str] | None
_DEFERS = re.compile(
    r"转告|转达|记下|记录|没法|不能替|无法替|替他决定|由他|由她|pass (?:it|this|that|your)|let (?:him|her) "
    r"know|relay|can't (?:decide|agree)|not able to decide|noted|i'll ask|i'll tell"
)
_Check = Callable[[View, Compiled], Hit]
_CHECKS: tuple[tuple[str, _Check], ...] = (
    ("C_priv", lambda v, cc: _priv.planted(v, cc) or _priv.statements(v)),
    ("C_phys", lambda v, cc: _phys.check(v)),
    ("C_dec", _dec.check),
    ("C_fact", _fact.check),
)


def _prepare(sentence: str, cc: Compiled) -> View | None:
    """The view to check, or None when the sentence is authorized as a whole."""
    view = View.of(sentence)
    if not view.compact:
        return None
    auth = cc.authorized
    if any(view.compact in whole for whole in auth.wholes):
        return None
    norm = view.norm
    for mask in auth.masks:
        if mask in norm:
            norm = norm.replace(mask, " … ")
    if norm != view.norm:
        view = View.of(sentence, norm)
        if not view.compact:
            return None
    return substitute_owner(view, cc.owner)


class OutputGuard:
    """Checks candidate assistant sentences against C_priv, C_dec, C_fact, C_phys.

    Pure and fast: no I/O, precompiled regexes, per-context data cached. Use one
    instance per process; it holds no per-call state.
    """

    def check(self, sentence: str, ctx: GuardContext) -> Verdict:
        """The verdict for one sentence (the first violated constraint, if any)."""
        cc = compile_context(ctx)
        view = _prepare(sentence, cc)
        if view is None:
            return OK
        for constraint, check in _CHECKS:
            hit = check(view, cc)
            if hit:
                return Verdict(False, constraint, hit[0], redact(hit[1], ctx))
        return OK

    def violations(self, sentence: str, ctx: GuardContext) -> list[Verdict]:
        """Every constraint the sentence violates (one verdict each); for reports."""
        cc = compile_context(ctx)
        view = _prepare(sentence, cc)
        if view is None:
            return []
        out: list[Verdict] = []
        for constraint, check in _CHECKS:
            hit = check(view, cc)
            if hit:
                out.append(Verdict(False, constraint, hit[0], redact(hit[1], ctx)))
        return out

    def check_text(self, text: str, ctx: GuardContext) -> list[tuple[str, Verdict]]:
        """Split ``text`` into sentences and check each: [(sentence, verdict), ...].

        A bare "好的。"/"Okay." followed by a sentence that relays or defers
        ("好的。这个我没法替他决定，我会转告他。") is an acknowledgment, not an
        agreement, so it passes here (``check`` alone cannot see what follows).
        """
        sentences = split_sentences(text)
        out = [(s, self.check(s, ctx)) for s in sentences]
        for i, (s, v) in enumerate(out[:-1]):
            nxt, nxt_v = out[i + 1]
            if v.rule in ("dec.agree_zh", "dec.agree_en") and nxt_v.ok and _DEFERS.search(nxt.lower()):
                out[i] = (s, OK)
        return out
