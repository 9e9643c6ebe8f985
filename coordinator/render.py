"""Template rendering: pick a variant deterministically, never the previous reply."""

from __future__ import annotations

from .templates import EXCEPTION_DETAIL, GUIDE_BY_SCENE, SILENT_CLOSE, TEMPLATES
from .text import pronouns
from .types import Act, CallContext, CallState


def _variants(act: Act, lang: str, slots: dict[str, str], silent: bool) -> list[str]:
    if act == Act.CLOSE and silent:
        return SILENT_CLOSE[lang]
    variants = TEMPLATES[act][lang]
    if act == Act.GUIDE:
        index = GUIDE_BY_SCENE.get(slots.get("scene", ""), len(variants) - 1)
        return [variants[index]]
    return variants


def render(act: Act, state: CallState, ctx: CallContext, slots: dict[str, str], *, silent: bool = False) -> str:
    """Fill the next variant of ``act`` in the call's language.

    Variants rotate per act (a counter in the call state), so the same inputs always
    give the same text; a variant already said in this call is skipped while another is
    left, and one equal to the previous reply always is.
    """
    lang = state.lang
    variants = _variants(act, lang, slots, silent)
    key = f"{act.value}{':silent' if silent else ''}"
    start = state.variant_counter.get(key, 0)
    values = {
        "owner": ctx.owner_name,
        **pronouns(ctx.owner_name, lang, ctx.pronoun),
        "preset": slots.get("preset", ""),
        "detail": EXCEPTION_DETAIL[lang].get(slots.get("detail_kind") or None, EXCEPTION_DETAIL[lang][None]),
    }
    text = ""
    said = {reply for _, reply in state.history}
    # First choice: a variant not yet said in this call; then one that is not the previous reply.
    for fresh in (True, False):
        for offset in range(len(variants)):
            text = variants[(start + offset) % len(variants)].format(**values)
            if text != state.last_reply and not (fresh and text in said):
                state.variant_counter[key] = start + offset + 1
                return text
    # A single-variant act asked twice in a row: vary it rather than repeat word for word.
    state.variant_counter[key] = start + 1
    return ("嗯，" if lang == "zh" else "So, ") + text


def all_wordings(owner_name: str, lang: str) -> list[str]:
    """Every template sentence the coordinator can say for this owner (for audio caching);
    a preset-conveying template contributes its lead-in, the preset text comes separately."""
    from .templates import DISCLOSURE

    values = {"owner": owner_name, **pronouns(owner_name, lang)}  # type: ignore[arg-type]
    out: list[str] = [DISCLOSURE[lang].format(owner=owner_name), *SILENT_CLOSE[lang]]
    for variants in TEMPLATES.values():
        for variant in variants[lang]:
            if "{preset}" in variant:
                out.append(variant.split("{preset}")[0].format(**values))
            elif "{detail}" in variant:
                out.extend(variant.format(**values, detail=d) for d in EXCEPTION_DETAIL[lang].values())
            else:
                out.append(variant.format(**values))
    return list(dict.fromkeys(t for t in out if t.strip()))
