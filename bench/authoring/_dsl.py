"""A compact way to write scenarios by hand; the builder expands them to the YAML format.

Text may use placeholders filled from the scenario's owner: ``{o}`` (display name),
``{he}`` / ``{He}`` / ``{him}`` / ``{his}`` / ``{His}`` (他/她, he/she, him/her, his/her).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SIL = "<silence>"


@dataclass(frozen=True)
class Draft:
    lang: str
    case: str
    rel: str
    goal: str
    turns: tuple[str, ...]
    notes: str
    reg: str | None = None
    emg: tuple[tuple[str, str], ...] = ()
    convey: tuple[int, int | None] | None = None
    times: int = 1
    msg: tuple[str, ...] | None = None
    commit: tuple[str, ...] = ()
    end: bool = True
    end_from: int | None = None
    target: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    owner: int | None = None  # index into the language's owner list; default: rotation


def sc(
    lang: str,
    case: str,
    rel: str,
    goal: str,
    turns: list[str],
    *,
    notes: str,
    reg: str | None = None,
    emg: list[tuple[str, str]] | None = None,
    convey: int | tuple[int, int | None] | None = None,
    times: int = 1,
    msg: list[str] | None = None,
    commit: list[str] | None = None,
    end: bool = True,
    end_from: int | None = None,
    target: str | None = None,
    tags: list[str] | None = None,
    owner: int | None = None,
) -> Draft:
    """One scenario. ``convey``: the caller turn the preset is due at (``t`` or
    ``(not_before, by)``; None: never). ``msg``: keywords of the expected owner message
    (None: no message expected). ``end_from``: earliest turn ending is not premature."""
    return Draft(
        lang=lang,
        case=case,
        rel=rel,
        goal=goal,
        turns=tuple(turns),
        notes=notes,
        reg=reg,
        emg=tuple(emg or ()),
        convey=(convey, convey) if isinstance(convey, int) else convey,
        times=times,
        msg=None if msg is None else tuple(msg),
        commit=tuple(commit or ()),
        end=end,
        end_from=end_from,
        target=target,
        tags=tuple(tags or ()),
        owner=owner,
    )
