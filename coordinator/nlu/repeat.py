"""Is a learned repeat request about the assistant's last line?

A repeat request asks to hear the last line again ("啊？几楼？", "啊 原件什么时候带？" after "原件开庭时
带上", "sorry, B2 or B3?"). The intent head reads it from surface cues (a trailing "啊？", a question
word, an assistant line before it) and cannot tell whether the question is about that line: it read
"他什么时候回来啊？" after "麻烦放在门口就可以了" as a repeat (p=0.59), and the policy repeated the
owner's answer (stop 15, issue 14). So a repeat that only the model reads stands when the turn is
about the last line: it is terse, it names what was said ("你说", "来着", "没听清", "did you say",
"again"), or it shares a content word or a number with that line. A new question with its own
subject ("他什么时候回来啊？", "what time will he be back?") is none of these.
On the corpus's 202 labelled repeat requests (train and dev) it keeps 197 (tests/test_understanding_repeat.py).
"""

from __future__ import annotations

import re

from ..lexicon import cues
from ..text import compact, normalize, short_turn, spoken_digits

# The caller refers to what was said, or to not hearing it.
NAMES_WHAT_WAS_SAID = cues(
    ["你(刚才?|刚刚)?说", "说的是", "说(啥|什么)", "来着", "没听(清|见|到)", "听不(清|见|到)", "信号不好", "再说",
     "重复", "(大|慢)声点", "什么$", "(啥|什么)(楼|站|室|架|子|格|门)"],
    [r"(you|did you|you've) (just )?(say|said)", r"say (that |it )?again", r"again\b", r"sorry", r"pardon", r"repeat",
     r"missed (that|it)", r"(didn't|did not|couldn't|can't) (catch|hear)", r"(cut|broke|breaking) (out|up)",
     r"the \w+ what", r"(what|who)$", r"are you sure", r"you mean"],
)  # fmt: skip
# Function words that say nothing of what the last line was about (hanzi bigrams; English words).
_STOP_ZH = frozenset(
    re.findall(
        "..",
        "什么时候你说我说一下那个这个不是就是可以好的请问有什" + "没有知道还是怎么哪个哪里哪儿现在一个我们你们他们",
    )
)
_STOP_EN = frozenset(
    re.findall(
        r"[a-z]+",
        """the and but for from with this that there here what when where which who how why did does said say
        again sorry please can could would will just okay yeah yes you your his her him she they them was were
        are have has not""",
    )
)


def terse(text: str) -> bool:
    """A short turn: at most 6 hanzi and 4 English words ("啊？几楼？", "nope", "没了")."""
    return short_turn(text, zh_max=6, en_max=4)


def _content(text: str) -> set[str]:
    """Hanzi bigrams, English words of 3+ letters and digit runs, less function words."""
    digits = spoken_digits(normalize(text))
    out = set(re.findall(r"\d+", digits))
    for seg in re.findall(r"[\u4e00-\u9fff]+", text):
        out |= {seg[i : i + 2] for i in range(len(seg) - 1)} - _STOP_ZH
    out |= {w for w in re.findall(r"[a-z]{3,}", normalize(text)) if w not in _STOP_EN}
    return out


def about_last_line(utterance: str, last_line: str | None) -> bool:
    """The turn can be a request to hear ``last_line`` again (see the module's docstring)."""
    if terse(utterance):
        return True
    norm = normalize(utterance)
    if NAMES_WHAT_WAS_SAID.search(compact(utterance), norm):
        return True
    return bool(last_line) and bool(_content(utterance) & _content(last_line or ""))
