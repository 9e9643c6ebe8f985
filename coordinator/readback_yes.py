"""What a caller's answer is once the assistant asked for the number again (once more, or digit by
digit): the caller was asked for digits, not for a yes.

"OK time" after "Could you say it digit by digit?" is a misheard digit string ("eight nine"), and
"okay" / "好" / "嗯" agree to say it: neither confirms the number read back before (stop 15, issue 14:
"OK time" confirmed a wrong callback number). Only an actual yes does ("yes", "yeah, that's right",
"对", "没错", "是的"). Digits heard ("oh nine", "four one five", "幺三九") are a new attempt, read as a
correction or a number in pieces by the caller of :func:`answer_to_request`.
"""

from __future__ import annotations

import re
from typing import Literal

from .text import short_turn

_ACTUAL_YES = re.compile(
    r"^(?:(?:yes|yeah|yep|yup|correct|right|that's right|that is right|that's correct|that's it|that's the one|"
    r"exactly|spot on|thanks|thank you)\s*)+$"
    r"|^(?:(?:对+的?|是的|没错|正确|就是这个(?:号码?|数)?|是这个(?:号码?)?|谢谢)\s*)+$"
)
# Agreeing to say it again, or a word a misheard digit string starts with.
_AGREE = re.compile(
    r"^(?:(?:(?:ok|okay|sure|alright|all right|fine|uh huh|mm|hmm)(?![a-z'])|好的?|好嘞|行|嗯+|是)\s*)+"
)
_SHORT_EN, _SHORT_ZH = 4, 6

Answer = Literal["yes", "agree", "unclear"]


def answer_to_request(norm: str) -> Answer | None:
    """``norm``: the caller's normalised answer (no digits read from it). "yes": it confirms;
    "agree": "okay" / "好" alone, the digits are still to come; "unclear": a short turn that
    starts like an agreement and says nothing more ("OK time"); None: anything else (the caller
    moved on: the read-back is not nagged)."""
    text = " ".join(re.sub(r"[,.!?;:，。！？；：、~～]+", " ", norm).split())
    if _ACTUAL_YES.match(text):
        return "yes"
    m = _AGREE.match(text)
    if m is None:
        return None
    rest = text[m.end() :].strip()
    if not rest:
        return "agree"
    return "unclear" if short_turn(rest, zh_max=_SHORT_ZH, en_max=_SHORT_EN) else None
