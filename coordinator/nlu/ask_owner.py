"""Is a turn only an introduction and a request for the owner?

"Hi, this is Priya from Zendesk. Is Alex around?" asks for the owner; the intent head reads the
introduction (greeting 0.95, ask_owner 0.20: the corpus has "Hi, is Ravi there? It's his order" but
rarely the ask after the introduction), and unpunctuated, as a recognizer may give it, a statement:
the reply was "Okay, noted." (stop 15, issue 14). Where the rules read the request for the owner and
nothing else is said, their reading stands. A turn with news besides ("... Is Alex around? His car is
ready.") keeps the model's statement: the news is taken down.
"""

from __future__ import annotations

import re

from .. import lexicon as lx
from ..text import compact, normalize

_GREETING_ZH = re.compile(r"喂+|你好+|您好+|哈喽|嗨|请问|打扰(一下|了)|那个|就是|呃|嗯|啊|呀|哈|呢|吧")
_GREETING_EN = re.compile(
    r"\b(hi|hello|hey|hiya|good (morning|afternoon|evening)|yes|yeah|oh|um|uh|sorry|please|just|so|"
    r"by any chance|right now|at the moment|today|calling|here)\b"
)
_FROM = r" from( the)? [a-z0-9&'-]+( [a-z0-9&'-]+)?"  # "from Zendesk", "from the print shop"
_SELF_ID_EN = re.compile(
    rf"\b(this is|it's|its|it is|my name is|i'm|i am) [a-z][a-z'-]*( [a-z][a-z'-]*){{0,2}}({_FROM})?"
    rf"|\b[a-z][a-z'-]*{_FROM} here\b"
)
_SELF_ID_ZH = re.compile(r"(我是|这里是|这边是)[^，。,.!！?？\s]{1,12}")


def intro_and_ask_only(utterance: str) -> bool:
    """Nothing is left of the turn once the request for the owner ("is Alex around / there /
    available", "陈先生在吗 / 在不在"), the caller's introduction and the greeting are taken out."""
    if re.search(r"[\u4e00-\u9fff]", utterance):
        if not lx.ASK_OWNER.zh.search(compact(utterance)):
            return False
        rest = _SELF_ID_ZH.sub("", lx.ASK_OWNER.zh.sub("", utterance))
        return len(re.findall(r"[\u4e00-\u9fff]", _GREETING_ZH.sub("", rest))) <= 3
    en = normalize(utterance)
    if not lx.ASK_OWNER.en.search(en):
        return False
    rest = _GREETING_EN.sub(" ", _SELF_ID_EN.sub(" ", lx.ASK_OWNER.en.sub(" ", en)))
    return len(re.findall(r"[a-z0-9']{3,}", rest)) <= 1
