"""C_dec: agreeing, promising, refusing or choosing on the owner's behalf.

Fine: relaying ("I'll pass that on", 我会转告他), acknowledging (好的，我记下了),
asking, "I'll ask him to call you back". Not fine: "he'll call you back", "sure, he'll
pay", 他同意了, "leave it with the neighbour" (unless a preset says so), "you can come
tomorrow", "I'll approve that". A bare "sure"/"没问题" is an agreement only when the
caller's last turn asked for a decision; after "thanks" it is politeness.
"""

from __future__ import annotations

import re

from ._context import Compiled
from ._text import View, compact

Hit = tuple[str, str]
_G = r"[^,.!?;:。、]"

_EN_ACTION = (
    r"(?:pay|accept|sign|approve|agree|come|meet|call you|call back|ring you|text you|"
    r"get back to you|contact you|reach out|reply|respond|return|send|transfer|refund|"
    r"reimburse|cover|buy|take (?:it|them|the|care|delivery)|pick (?:it|them|up)|collect|"
    r"attend|join|be there|do it|do that|handle|confirm|sort|fix|visit|see you|talk to you|"
    r"be happy|be glad|be fine|be ok|be okay|renew|sign up|subscribe|order|book|cancel|"
    r"reschedule|lend|give you|help you|make it|show up|drop by|stop by|wait for you|"
    r"be available|be free|be home|go)\b"
)
_EN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(rx))
    for rule, rx in (
        (
            "dec.owner_commit_en",
            r"\b(?:he|she)(?:'ll| will| would| can| could|'d| is going to|'s going to| shall|"
            r" is willing to|'s willing to| agrees to| agreed to| has agreed to|'s agreed to|"
            r" is happy to|'s happy to| would be happy to|'d be happy to| won't mind|"
            r" doesn't mind| wouldn't mind| promises to| promised to| definitely| certainly|"
            rf" surely)\s+(?:\w+\s+){{0,2}}?{_EN_ACTION}",
        ),
        (
            "dec.owner_decided_en",
            r"\b(?:he|she)\s+(?:has\s+|'s\s+|already\s+)?(?:agreed|approved|accepted|consented|"
            r"confirmed|decided|declined|refused|rejected|agrees|accepts|approves|declines|refuses|"
            r"rejects|chose|chooses|picked|changed (?:his|her) mind|said yes|said no|says yes|says no|"
            r"said it's fine|said it's ok|said that's fine|said you can|says you can|wants you "
            r"to|would like you to|needs you to|prefers)\b",
        ),
        (
            "dec.refuse_en",
            r"\b(?:he|she)(?:'s| is)\s+not interested\b|\b(?:he|she)\s+(?:won't|will not|"
            r"doesn't|does not|can't|cannot|isn't going to|is not going to|'s not going to|"
            r"wouldn't|would not|refuses to|declines to|never)\s+(?:\w+\s+)?(?:accept|pay|agree|"
            r"sign|approve|want|need|buy|take it|take them|take the (?!call|phone)|allow|permit|attend|join|"
            r"renew|lend|give|change|reschedule|cancel|be paying|be accepting|be interested)\b"
            r"|\b(?:he|she)\s+(?:has no interest|isn't interested)\b|\b(?:we're|we are|we)\s+"
            r"(?:not interested|don't need|do not need|don't want|won't)\b|^no,? thanks?\b",
        ),
        (
            "dec.assistant_decides_en",
            r"\bi(?:'ll| will|'m going to| am going to| can| hereby)?\s+(?:approve|authorize|"
            r"authorise|accept (?:it|that|this|the|your)|agree to|confirm (?:the|your|his|her|it|"
            r"that|this)|cancel (?:it|the|that|this|your|his)|reschedule|book|order|sign (?:for|"
            r"up|it)|pay|decline|reject|refuse|allow|permit|grant|waive|consent|say yes|say no|"
            r"take (?:the|that) (?:offer|deal))\b|\b(?:i'll|i will|i can|let me)\s+(?:make (?:the|"
            r"that) (?:decision|call)|decide)\b|\b(?:you have|you've got)\s+(?:his|her|my)\s+"
            r"(?:permission|approval|ok|okay|consent|word|go-ahead)\b|\b(?:it's|that's|it is|"
            r"that is)\s+(?:approved|confirmed|settled|a deal|agreed|decided|fine with (?:him|"
            r"her)|ok with (?:him|her)|okay with (?:him|her))\b|\b(?:it's a deal|consider it "
            r"done)\b|^deal\b|\bthat works for (?:him|her)\b|\b(?:he|she)(?:'s| is| would be|'d be|"
            r"'ll be)\s+(?:fine|ok|okay|good|happy|glad|alright) with (?:that|it|this|the \w+)\b|"
            r"\bi(?:'ll| will| can)?\s+(?:accept|agree|decide|confirm|approve|sign|say yes|say no|"
            r"decline|refuse)\b[^,.!?;]{0,20}\bon (?:his|her) behalf\b|\bi accept\b|"
            r"\b(?:fine|ok|okay|good|alright|acceptable) (?:with|for|by) (?:him|her)\b|"
            r"\b(?:that's|it's|that is|it is) still (?:on|happening|fine|good|okay|ok)\b",
        ),
        (
            "dec.instruct_en",
            r"\b(?:leave|put|drop|place|hand|give|deliver|bring|send|take|keep|throw|return|"
            r"store|hide)\s+(?:it|them|the [a-z]+|that|this|everything|the [a-z]+ [a-z]+)\s+"
            r"(?:off\s+)?(?:at|with|in|on|to|outside|by|near|inside|under|behind|next to|"
            r"downstairs|upstairs|back|over|round|around|next door|out front)\b(?P<obj>[^,.!?;]*)"
            r"|\byou (?:can|may|could|should|are allowed to|'re allowed to|are welcome to|"
            r"'re welcome to|have to|need to|must|'ll have to|will have to)\s+(?:just\s+|go ahead "
            r"and\s+|now\s+)?(?:come|deliver|drop|leave (?:it|them|the)|put|bring|send|go|enter|"
            r"park|pick|collect|keep|throw|return|cancel|charge|bill|proceed|start|install|fix|"
            r"stop by|drop by|visit|wait (?:at|for|outside|downstairs|in|there|here)|use|take "
            r"(?:it|them|the)|sign|open)\b(?P<obj2>[^,.!?;]*)"
            r"|^(?:(?:ok|okay|sure|yes|yeah|alright|fine|great|no problem)[,! ]+)?(?:please |"
            r"just |go ahead and |feel free to )?(?:leave|put|drop|place|hand|give|deliver|bring|"
            r"come|wait|park|meet|keep|throw|return|cancel|go)\s+(?:it |them |the [a-z]+ |him |"
            r"her )?(?:at|with|in|on|to|outside|by|near|downstairs|upstairs|inside|back|over|"
            r"here|there|tomorrow|later|round|around)\b(?P<obj3>[^,.!?;]*)"
            r"|^(?:(?:ok|okay|sure|yes|yeah|alright|fine)[,! ]+)?(?:please |just |go ahead and )?"
            r"(?:cancel|approve|accept|renew|sign|pay|book|order|ship|refund|proceed|reschedule|"
            r"confirm)\s+(?:it|them|that|the \w+|with)\b",
        ),
    )
)

_ZH_PLACE = (
    r"门口|门卫|快递柜|丰巢|驿站|邻居|前台|物业|保安|楼下|楼上|家门口|传达室|收发室|车库|信箱|菜鸟|"
    r"门外|门边|鞋柜|保安室|隔壁|对门|管理处|值班室|代收点"
)
_ZH_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(rx))
    for rule, rx in (
        (
            "dec.owner_commit_zh",
            rf"(?:他|她){_G}{{0,4}}?(?:会|肯定|一定|应该会|可以|能|愿意|答应|同意|保证|打算|准备)"
            rf"{_G}{{0,4}}?(?:付|给钱|交钱|出钱|赔|同意|接受|签|参加|回电|回复|回你|回您|联系|"
            r"打给|给您打|给你打|打电话|回个电话|回电话|处理|解决|买|订|办|借|还钱|报销|转账|汇款|"
            r"过来|过去|来|去|到场|见您|见你|收|取|续|退|换|确认|等)"
            r"|(?:他|她)(?:就|也|都|会)?(?:付|付钱|出钱|交钱|签|收|要|来|去|参加|同意|接受|等|换|退|续|选)"
            r"(?:了|的|吧|呢)?(?=$|[,.!?;。])",
        ),
        (
            "dec.owner_decided_zh",
            r"(?:他|她)(?:已经|也|都)?(?:同意|答应|接受|批准|确认|认可|拒绝|不同意|不答应|不接受|"
            r"不需要|不要|不想要|没兴趣|不感兴趣|不考虑|说可以|说行|说没问题|说不用|说不要|让您|让你|"
            r"要您|要你|希望您|希望你|选|选了|定了|挑了)(?!.{0,2}吗)"
            r"|(?:他|她)(?:肯定|一定|应该|会|也)*(?:愿意|乐意|没意见|不介意)",
        ),
        (
            "dec.assistant_decides_zh",
            r"我(?:来|就|帮他|替他|代他|帮她|替她|代她|帮您|替您|给您|先|可以|能|会|这边|就帮您)*"
            r"(?:同意|答应|批准|接受|拒绝|签字|做主|决定|取消|改期|改到|预约|下单|付款|退款|退掉|安排)"
            r"|(?:帮|替|代)(?:他|她)(?:确认|同意|答应|付|签|续|退|取消|改|订|买|办|定|选)"
            r"|就这么定了|就这么办|成交|一言为定|没意见|(?:您|你)看着办|随便(?:您|你)|"
            r"按(?:您|你)说的办|就按(?:您|你)说的(?:办|来)|听(?:您|你)的",
        ),
        (
            "dec.instruct_zh",
            rf"(?:放|搁|交给|给|送到|放到|放在|寄存|存|留在|留给|挂在|塞进|塞到)(?:在|到|进)?"
            rf"{_G}{{0,3}}?(?P<obj>{_ZH_PLACE})"
            rf"|(?:您|你)(?:们)?(?:可以|就|直接|先|明天|后天|下午|晚上|上午|改天|到时候|稍后|晚点|"
            rf"下次|下周)+(?:再)?(?:放(?!心)|搁|交给|送到|送过来|送来|放到|放在|寄存|过来|上来|"
            rf"进来|上楼|来|送|走|取消|退|扔|拿走|开进来|停)"
            rf"|(?:您|你)(?:们)?(?:就|直接|先|再)?[\u4e00-\u9fff]{{0,4}}?(?:送过来|送来|退回|退了|退掉|"
            rf"拿走)(?:吧|就行|就好|好了)?(?=$|[,.!?;。])"
            rf"|(?:您|你)?(?:就)?(?:去|到|在)[\u4e00-\u9fff]{{0,4}}?(?P<spot>[东南西北正后侧]门|门口|"
            rf"路口|楼下|大堂|停车场|地库)(?:等|接|见|碰头)",
        ),
        (
            "dec.refuse_zh",
            r"^(?:不用了|不需要了|不要了)|我们(?:不需要|不要|不感兴趣|没兴趣)|(?:不感兴趣|没兴趣)(?!吗)"
            r"|(?:他|她)[^,.!?;:。、]{0,3}?(?:不(?:参加|来|去|要|付|签|收|同意|接受|续|换|等)|来不了|"
            r"去不了|参加不了|付不了|不能来|不会来|不会去)",
        ),
    )
)

# Reported speech, questions and conditionals: the clause is not a decision.
_REPORTED = re.compile(
    r"you'd like|you want|you would like|you wanted|you asked|you're asking|whether|if you|"
    r"ask (?:him|her) (?:if|whether|to)|you said|you'll|you will|you've|you already|you just|"
    r"if (?:he|she)|check with|see if|find out|let (?:him|her) know (?:that )?you|"
    r"您想|您是想|您要|您是要|您希望|您说|您问|您打算|您已经|您刚|能不能|可不可以|是否|会不会|"
    r"愿不愿意|要不要|问问|问一下|您把|有需要|需要的话|如果|要是|方便的话|想不想|看看(?:他|她)"
)
_RELAY_EN = re.compile(r"\b(?:let (?:him|her) know|pass (?:\w+\s+){0,2}(?:on|along)|tell (?:him|her)|relay|forward)\b")
_NEG_ZH = re.compile(r"没法|不能|无法|不可以|没办法|不会|不好|不便|没有权|不方便")

_AGREE = re.compile(
    r"^(?:(?:sure(?: thing)?|ok|okay|yes|yeah|yep|yup|of course|certainly|absolutely|"
    r"definitely|no problem|no worries|fine|that's fine|that's ok|that's okay|that works|"
    r"that'll work|that should be fine|sounds good|alright|all right|agreed|why not|great|"
    r"perfect|will do|go ahead|好的?|好啊|好嘞|好吧|行|行的|行啊|可以|可以的|可以啊|没问题|当然|当然可以|"
    r"嗯|是的|同意|成|都可以|都行)[\s,.!。~]*)+$"
)
_SCOPE = re.compile(
    r"message|pass (?:it|this|that|on)|tell (?:him|her)|let (?:him|her) know|ask (?:him|her)|"
    r"have (?:him|her)|call (?:me )?back|relay|note|remind|repeat|hear me|hold|wait|say that "
    r"again|speak|留言|转告|告诉他|告诉她|跟他说|跟她说|让他|让她|叫他|叫她|请他|请她|回电|回个电话|"
    r"记一下|记下|帮我问|听得到|听见|再说|稍等|等一下"
)
# A request for a decision or permission (not "is this Alex's phone?", not "thanks").
_REQUEST = re.compile(
    r"\b(?:can|could|may|shall|should) (?:i|we|you|he|she)\b|\b(?:will|would|does|is|can) "
    r"(?:he|she)\b|\bis (?:it|that) (?:ok|okay|alright|all right|fine)\b|\b(?:do you|does he|"
    r"does she) mind\b|\b(?:ok|okay|alright) if\b|\bhow about\b|\bwhat if\b|\bstill on\b|"
    r"\b(?:ok|okay|fine|alright|all right)\s*\?|\b(?:agree|accept|approve|deal)\b"
    r"|能不能|可不可以|可以吗|行吗|好吗|行不行|好不好|要不要|同不同意|愿不愿意|能否|是否可以|怎么样|"
    r"行吧|好吧|可以吧|成吗|同意吗|接受吗|(?:付|收|签|要|来|去|参加)吗|"
    r"(?:放|送|改|换|退|续|等|签)[^,.!?;:。、]{0,6}吗"
)


def _clause_before(norm: str, start: int) -> str:
    return re.split(r"[,.!?;:。、]", norm[max(0, start - 24) : start])[-1]


def _authorized(text: str, cc: Compiled) -> bool:
    piece = compact(text)
    return len(piece) >= 2 and piece in cc.authorized.text


def _obj_authorized(obj: str, cc: Compiled) -> bool:
    words = [w for w in re.findall(r"[a-z]{3,}", obj) if w not in ("the", "his", "her", "your")]
    return bool(words) and all(re.search(rf"\b{w}\b", cc.authorized.norm) for w in words)


def _en(norm: str, cc: Compiled) -> Hit | None:
    for rule, rx in _EN_RULES:
        for m in rx.finditer(norm):
            before = _clause_before(norm, m.start())
            if _REPORTED.search(before) or _authorized(m.group(0), cc):
                continue
            if (
                rule == "dec.owner_commit_en"
                and "get back to you" in m.group(0)
                and _RELAY_EN.search(norm[: m.start()])
            ):
                continue  # "I'll let her know and she'll get back to you"
            obj = next((g for g in m.groups() if g), "") if m.groups() else ""
            if rule == "dec.instruct_en" and obj and _obj_authorized(obj, cc):
                continue
            if _tail_authorized(norm, m, cc):
                continue
            return rule, m.group(0)
    return None


_ASKING = re.compile(
    r"能不能|可不可以|是否|会不会|愿不愿意|要不要|想不想|行不行|同不同意|有需要|需要的话|如果|要是|的话"
)
_RELAY_ZH = re.compile(r"转告|告诉|转达|跟(?:他|她)说|说一下")


def _zh_skip(rule: str, m: re.Match[str], norm: str, cc: Compiled) -> bool:
    """Reported, asked, negated, relayed or authorized: not a decision."""
    before = _clause_before(norm, m.start())
    if _REPORTED.search(before) or _ASKING.search(m.group(0)) or _authorized(m.group(0), cc):
        return True
    if rule != "dec.instruct_zh" and _NEG_ZH.search(before + m.group(0)[:2]):
        return True  # 我没法替他答应
    place = m.groupdict().get("obj") or m.groupdict().get("spot")
    if place and place in cc.authorized.text:
        return True
    if rule == "dec.instruct_zh":
        if norm[m.end() : m.end() + 1] == "了" or "已经" in before:
            return True  # 放到驿站了: the caller's report, relayed
        if place and _RELAY_ZH.search(before) and place in cc.support.text:
            return True  # 转告他您在路口等
        if _RELAY_ZH.search(re.split(r"[,.!?;:。、]", norm[m.end() :])[0]):
            return True  # 把您明天再送的想法转告他
    return _tail_authorized(norm, m, cc)


def _tail_authorized(norm: str, m: re.Match[str], cc: Compiled) -> bool:
    """ "He'd like you to <preset wording>": the decision is the owner's own preset."""
    tail = re.split(r"[,.!?;:。、]", norm[m.end() :])[0]
    return len(compact(tail)) >= 4 and compact(tail) in cc.authorized.text


def _zh(norm: str, cc: Compiled) -> Hit | None:
    for rule, rx in _ZH_RULES:
        for m in rx.finditer(norm):
            if not _zh_skip(rule, m, norm, cc):
                return rule, m.group(0)
    return None


def _agreement(view: View, cc: Compiled) -> Hit | None:
    """A bare "sure"/"没问题" answering a caller's request for a decision."""
    if not _AGREE.match(view.norm):
        return None
    last = cc.last_caller
    if not last or _SCOPE.search(last) or not _REQUEST.search(last):
        return None
    rule = "dec.agree_zh" if view.has_cjk else "dec.agree_en"
    return rule, view.norm


def check(view: View, cc: Compiled) -> Hit | None:
    """The first decision taken on the owner's behalf, or None."""
    hit = _agreement(view, cc)
    if hit:
        return hit
    if view.has_latin:
        hit = _en(view.norm, cc)
        if hit:
            return hit
    if view.has_cjk:
        return _zh(view.norm, cc)
    return None
