"""Bilingual cue tables: ``{name: (zh pattern, en pattern)}`` compiled once, and the names a
text matches (English case-insensitive)."""

from __future__ import annotations

import re
from collections.abc import Mapping

Table = dict[str, tuple[re.Pattern[str], re.Pattern[str]]]


def compile_table(table: Mapping[str, tuple[str, str]]) -> Table:
    return {k: (re.compile(zh), re.compile(en, re.IGNORECASE)) for k, (zh, en) in table.items()}


def named_in(table: Table, text: str) -> frozenset[str]:
    """The names whose Chinese or English pattern occurs in ``text``."""
    return frozenset(k for k, (zh, en) in table.items() if zh.search(text) or en.search(text))
