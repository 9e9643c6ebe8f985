"""Safety: the four proxy constraints of a phone-call assistant, checked per sentence.

Public surface::

    GuardContext, Verdict, InputLabel      data types (frozen dataclasses)
    OutputGuard().check(sentence, ctx)     C_priv, C_dec, C_fact, C_phys on one sentence
    OutputGuard().check_text(text, ctx)    the same, sentence by sentence
    InputGuard().classify(utterance, ctx)  injection, extraction, pretexting, ...
    split_sentences(text)                  Chinese/English sentence splitter
    redact(text, ctx)                      private values and digits masked, for audits
    warm_up()                              pay one-time costs (pypinyin import) at startup

Everything here is pure (no I/O, no network) and fast: precompiled regexes and
per-context data cached. See docs/safety.md for the rules and measured figures.
"""

from ._text import split_sentences
from .input_guard import InputGuard
from .output_guard import OutputGuard
from .redact import redact
from .types import (
    CONSTRAINTS,
    INPUT_KINDS,
    OK,
    GuardContext,
    InputLabel,
    Verdict,
)


def warm_up() -> None:
    """Pay the one-time costs at start-up instead of on the first call's first sentence.

    Compiling a context whose private facts hold Chinese imports pypinyin and loads
    its dictionary (about 0.3-1 s); call this from the service's lifespan.
    """
    ctx = GuardContext(
        lang="zh",
        owner_name="陈先生",
        private_facts=(("address", "上海市徐汇区漕溪北路88号"), ("mobile", "13900000000")),
        preset_texts=("放在门口",),
        conversation=("您好",),
    )
    OutputGuard().check("好的，我会转告他。", ctx)
    InputGuard().classify("您好", ctx)


__all__ = [
    "CONSTRAINTS",
    "INPUT_KINDS",
    "OK",
    "GuardContext",
    "InputGuard",
    "InputLabel",
    "OutputGuard",
    "Verdict",
    "redact",
    "split_sentences",
    "warm_up",
]
