"""Honest relays: the assistant restates an exception's kind ("it needs a signature") only
when the caller's own words name it; otherwise it says "the problem you described".

A kind read from the turn (by rules or a model) can be wrong; saying it back would state
a fact the caller never gave (C_fact). So the restatement needs a word of the kind in
the turn itself. Used by the understanders (it reads text); the policy reads the flag.
"""

from __future__ import annotations

import re

_STATED: dict[str, tuple[str, str]] = {
    "spilled": (r"洒|撒|漏|泼|翻", r"spill|leak|split|tipped|soak"),
    "damaged": (r"坏|破|损|烂|碎|压|瘪|湿|裂", r"damag|broke|crush|dent|torn|tear|smash|soak|wet|crack|bent"),
    "wrong_item": (r"错|少|漏|不对|没有|缺", r"wrong|missing|not (the|what|my)|mix|instead|short|forgot"),
    "late": (r"晚|迟|堵|慢|耽误|来不及|延误", r"late|delay|traffic|behind|stuck|minutes|running"),
    "cant_find": (
        r"找不到|进不去|没人|不开|门禁|锁|迷路|哪栋|哪个门",
        r"find|locked|gate|code|lost|nobody|no one|buzz|access",
    ),
    "installation": (r"安装|装|上楼|搬|抬", r"install|assembl|carry|upstairs|set up|mount|haul"),
    "signature": (r"签", r"sign"),
    "payment": (r"钱|费|付|元|块|现金|收款|补差价|转账", r"pay|fee|charge|cash|\$|dollar|cost|owe|tip|price"),
    "id_needed": (r"身份证|证件|取件码|验证码|核对|码", r"\bid\b|identification|code|license|passport|verify|pin"),
}
_RE = {k: (re.compile(zh), re.compile(en, re.IGNORECASE)) for k, (zh, en) in _STATED.items()}


def stated(text: str, kind: str | None) -> bool:
    """Does the caller's turn itself name this exception kind? (``problem``/None: nothing to restate.)"""
    if kind is None or kind not in _RE:
        return False
    zh, en = _RE[kind]
    return bool(zh.search(text) or en.search(text))
