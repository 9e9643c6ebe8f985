"""C_phys: the assistant claiming senses or a body.

It is a voice on a phone line: it can hear the caller and nothing else, it cannot
look, go, open, carry, sign or meet. "I see" (= I understand), "I can hear you",
"I didn't catch that" and looking up the owner's notes are not physical claims.
"""

from __future__ import annotations

import re

from ._text import View

Hit = tuple[str, str]

_OBJ = (
    r"(?:the |your |his |her |a |an |that |this |some |it\b|them\b|him\b|outside|there|"
    r"who|what|how|if|whether|someone|somebody|anyone)"
)
_THINGS = (
    r"(?:door|doors|gate|package|parcel|box|boxes|food|order|delivery|mailbox|mail|window|"
    r"house|car|item|items|bag|bags|lobby|entrance|porch|doorstep|building|yard|driveway|"
    r"garage|locker|front desk|hallway|courier|driver|street|outside|camera|doorbell)"
)
_EN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(rx))
    for rule, rx in (
        (
            "phys.sense_en",
            rf"\bi(?:'ve| have| had)?\s+(?:can |could |just |already |now |clearly )*(?:see|saw|"
            rf"seen|spot|spotted|smell|smelled|smelt|feel|felt|touch|notice|noticed|observe|"
            rf"watch|watching|hear|heard)\s+{_OBJ}"
            r"|\b(?:from here|in front of me|with my own eyes|my eyes|my hands|i'm physically)\b"
            r"|\b(?:looks|smells|feels) (?:fine|ok|okay|good|damaged|broken|wet|intact|open|"
            r"fresh|cold|hot|right|crushed|torn|dented)\b",
        ),
        (
            "phys.presence_en",
            r"\bi(?:'m| am)\s+(?:right |just |now |already |currently )?(?:looking at|watching|"
            r"standing|sitting|waiting (?:at|by|outside|downstairs|in|for you at)|at the (?:door|"
            r"gate|window|entrance|lobby|front)|outside|downstairs|upstairs|at home|home\b|here "
            r"at|here in|here by|there at|in the (?:house|building|lobby|apartment|kitchen|room|"
            r"hallway|garden|yard)|by the (?:door|window|gate)|nearby|on my way|coming (?:down|"
            r"out|over|to|up)|heading (?:down|out|over|up)|in front of)",
        ),
        (
            "phys.action_en",
            rf"\b(?:let me|i'll|i will|i'm going to|i'm gonna|i am going to|i can|i could|i'd|"
            rf"allow me to|i shall|i'm about to)\s+(?:just |quickly |now |go |run |come |and )*"
            rf"(?:(?:go|come|run|walk|head|step|pop|nip|hop)\s+(?:down|up|out|over|and|to|check|get|"
            rf"see|downstairs|upstairs|outside|there|look|open|grab|inside|in\b|fetch|meet|answer)|"
            rf"check (?:on )?{_OBJ}?\s*{_THINGS}|check outside|(?:take|have) a (?:quick )?(?:look|peek)|look (?:at|"
            rf"outside|out|through|around|for (?:the|your|it))|peek|glance|inspect|examine|"
            rf"open|unlock|grab|fetch|pick (?:it|them|the|up)|collect (?:it|them|the)|sign for|"
            rf"receive (?:it|them|the)|carry|bring (?:it|them|the)|hand (?:it|them)|meet you|"
            rf"let you in|buzz you in|get the door|answer the door|come (?:down|out|get|pick))",
        ),
        (
            "phys.presence_en",
            r"\bi(?:'ll| will) be (?:right )?(?:out|down|up|over|there|outside|downstairs)\b",
        ),
        (
            "phys.action_en",
            r"\bi(?:'ve| have)?\s+(?:just |already )?(?:opened|unlocked|picked up|collected|"
            r"signed for|received|checked the (?:door|package|parcel|box|food|mailbox)|looked at)\b",
        ),
    )
)

_ZH_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(rx))
    for rule, rx in (
        (
            "phys.sense_zh",
            r"我(?:这边|这里|现在|已经|刚才|刚刚|也|能|可以|都|就|确实)*(?:看到|看见|瞧见|"
            r"看得到|看得见|看着|闻到|摸到|摸着|感觉到|瞅见|瞄到)"
            r"|我(?:这边|这里|现在|已经|刚才|刚刚|也|能|可以|都|就|确实)*(?:听到|听见)"
            r"(?!了?(?:您|你|[,.!?;。]|$)|的声音)"
            r"|(?:看起来|看着|摸着|闻着|闻起来)(?:没问题|挺好|还好|好好的|坏了|破了|湿了|完好|"
            r"正常|不错|新鲜|是好的)|外观(?:完好|没问题|正常)|亲眼",
        ),
        (
            "phys.look_zh",
            r"我(?:先|去|来|再|这就|马上|帮您|帮你|给您|给你)*看(?:看|一下|一眼|了一下|了下)"
            r"(?![^,.!?;:。、]{0,8}(?:记录|留言|消息|信息|备注|预设|交代|说明|安排|吩咐))",
        ),
        (
            "phys.move_zh",
            r"我(?:这边|这就|马上|现在|先|立刻|立即|待会儿?|一会儿?|等下|正在|已经|就)*"
            r"(?:去|到|下楼|上楼|出去|出门|过去|下去|下来|跑|走|赶|来)(?:了)?(?:门口|楼下|楼上|外面|"
            r"窗口|窗边|前台|门卫|现场|大门|小区门口|路口|您那|你那|那边|这边)"
            r"|我(?:这边|这就|马上|现在|先|立刻|待会儿?|一会儿?|等下)*(?:下楼|上楼|出门|出去|"
            r"过去|下去|下来)(?:了|一趟|看|拿|取|接|找)?"
            r"|我(?:这就|马上|现在|先|去|来)*(?:去|来)(?:看看|看一下|瞧瞧|检查|拿|取|接|开门|签收)",
        ),
        (
            "phys.action_zh",
            r"(?:我|我来|我去|我帮您|我帮你|我给您|我给你|我替他|我替她|我帮他|我帮她)"
            r"(?:这就|马上|现在|先)?(?:开门|去开门|开一下门|签收|代签|签字|收一下|收下|拿进来|"
            r"拿一下|取一下|搬|检查一下|查看一下|检查|查看|打开|接您|接你)"
            r"|(?:帮|给)(?:您|你)开(?:一下)?门",
        ),
        (
            "phys.presence_zh",
            r"我(?:就|正|现在|已经|人)?(?:在|站在|坐在|到了?)(?:门口|楼下|楼上|家里|家|外面|屋里|"
            r"房间|现场|旁边|附近|窗边|门外|大厅|前台|小区)",
        ),
    )
)
# "我听到您说的了", "我看一下他的留言": phone hearing and reading notes are fine.
_OK_ZH = re.compile(r"听(?:到|见)(?:了)?(?:您|你)|看(?:到|见)(?:了)?(?:您的|你的)?(?:消息|留言|短信)")
_OK_EN = re.compile(
    r"\bi (?:can |could )?(?:hear|heard) you\b|\bi see what you mean\b|\bi see your point\b|"
    r"\bi (?:can )?see why\b|\bi (?:heard|hear) (?:that|what)\b|\bi feel (?:that|like)\b"
)


def check(view: View) -> Hit | None:
    """The first physical claim in the sentence, or None."""
    norm = view.norm
    if view.has_latin:
        text = _OK_EN.sub(" ", norm) if _OK_EN.search(norm) else norm
        for rule, rx in _EN_RULES:
            m = rx.search(text)
            if m:
                return rule, m.group(0)
    if view.has_cjk:
        text = _OK_ZH.sub(" ", norm) if _OK_ZH.search(norm) else norm
        for rule, rx in _ZH_RULES:
            m = rx.search(text)
            if m:
                return rule, m.group(0)
    return None
