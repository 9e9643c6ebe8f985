"""C_priv: the owner's private facts, whereabouts, schedule and personal data.

Two kinds of rules:

- planted values (``priv.phone_digits``, ``priv.fact_zh``, ``priv.fact_en``): the
  owner's listed private facts in any form; they fire even inside a refusal
  ("I can't tell you, but it's 139...");
- statements (whereabouts, schedule, residence, family, health, finances,
  workplace, the assistant's own instructions) about the owner even when nothing is
  listed. They run after refusal clauses are blanked ("I can't share his schedule"
  is a refusal, not a disclosure).

Sentences reach these rules with the owner's name replaced by he/他.
"""

from __future__ import annotations

import re

from ._context import Compiled
from ._numerals import digit_runs
from ._same_number import same_number
from ._text import View

Hit = tuple[str, str]  # (rule id, matched span)

_G = r"[^,.!?;:。、]"  # any character inside one clause
_ZS = r"(?:他|她|ta|机主|主人|老板|户主|本人|他们|她们)"
_ZH_PLACES = (
    r"公司|单位|家里|家|外地|外面|国外|海外|老家|医院|学校|机场|车站|高铁站|火车站|酒店|宾馆|"
    r"健身房|办公室|会议室|工地|现场|楼下|楼上|路上|附近|店里|厂里|车上|飞机上|高铁上|地铁上|"
    r"火车上|隔壁|对面|北京|上海|广州|深圳|杭州|南京|成都|武汉|香港|美国|日本|国内|本地|市里|城里|"
    r"[\u4e00-\u9fff]{0,4}(?:市|省|县|区|镇|村|路|街|小区|大厦|广场|商场|公园|酒店|医院|公司|研究所|研究院|"
    r"银行|学校|大学|工厂|厂)"
)
_ZH_ACTS = (
    r"开会|上班|加班|出差|睡觉|午睡|洗澡|开车|上课|看病|住院|手术|旅游|旅行|度假|健身|运动|值班|"
    r"面试|培训|考试|出国|出门|外出|散步|买菜|接孩子|送孩子|吃饭|应酬|聚餐|约会|打球|钓鱼|坐飞机|"
    r"赶飞机|坐车|打游戏"
)
_ZH_TIME = (
    r"今天|明天|后天|今晚|明早|明晚|早上|上午|中午|下午|傍晚|晚上|凌晨|周[一二三四五六日天1-7]|"
    r"星期[一二三四五六日天1-7]|礼拜[一二三四五六日天1-7]|下周|下个?星期|下个?月|月底|月初|年底|"
    r"过几天|过两天|这几天|一会儿?|过会儿?|待会儿?|等会儿?|马上|很快|晚点|晚些|半小时|"
    r"\d+个?小时|\d+分钟|\d+点|\d+:\d+|\d+号|\d+月"
)
_ZH_STATES = re.compile(
    r"出差了|出差去了|在出差|出差呢|出门了|出去了|外出了|出国了|回老家|去旅游了|在旅游|在度假|"
    r"度假去了|不在家|没在家|不在公司|不在本地|不在国内|不在单位|不在上海|不在北京|家里没人|"
    r"家里没有人|家里没有大人|家中无人|屋里没人|还没回来|没回来呢|还没到家|没到家|已经睡了|"
    r"睡着了|睡觉了|在睡觉|已经下班了|还没下班|下班了|上班去了|去上班了|在上班|在开会|开会去了|"
    r"住院了|在医院|请假了|在休假|休假了|在路上|在外地|在外面|在国外|在飞机上|在开车|在洗澡|"
    r"刚出门|刚走|已经走了|人不在|不在这边|家[里中]?[^,.!?;:。、]{0,4}?没(?:有)?人|屋里[^,.!?;:。、]{0,3}没人"
)
_ZH_WHEN_BACK = re.compile(rf"(?:{_ZH_TIME}){_G}{{0,3}}(?:才|就|会|能)(?:回来|回家|到家|下班|有空|回)")
_SELF_OR_CALLER = re.compile(r"[您你我]|咱")

_EN_BE = (
    r"(?:'s|'re| is| are| was| were| has been|'s been| will be|'ll be| would be|'d be|"
    r" should be| might be| may be| won't be| will not be| isn't| is not|'s not| wasn't|"
    r" was not)"
)
_EN_WHERE = (
    r"(?:at (?:home|work|the office|the gym|school|church|the hospital|a meeting|lunch|dinner|"
    r"the airport|the station|his|her|the|a)\b|home\b|in (?:the office|a meeting|meetings|the "
    r"hospital|hospital|surgery|class|court|the shower|the bath|bed|the air|the car|another|"
    r"town|the city|a different)|out of (?:town|the country|the office|office)|"
    r"abroad|overseas|away\b|out\b(?! of (?:reach|luck|time|options))|on (?:vacation|holiday|"
    r"leave|a trip|a business trip|business|a flight|the plane|a plane|the train|the road|"
    r"the way|his way|her way|site|duty|(?:the )?(?:night |day |late |early )?shifts?|the phone "
    r"with)|travell?ing|asleep|sleeping|"
    r"napping|driving|commuting|showering|working (?:from home|late|remotely|overtime)|"
    r"upstairs|downstairs|outside|next door|nearby|around the corner|back (?:at|by|in|on|"
    r"around|after|before|tomorrow|tonight|later|soon|next|this|from|home)|gone for|not "
    r"around|visiting|staying (?:at|with|in))"
)
_TIME_EN = (
    r"(?:\d+|noon|midnight|tonight|tomorrow|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|the weekend|next week|this evening|this afternoon|this morning|later)"
)

_EN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(rx))
    for rule, rx in (
        (
            "priv.whereabouts_en",
            rf"\b(?:he|she){_EN_BE}\s+(?:currently |still |probably |just |usually |normally |"
            rf"already |actually |now |all |away |out )?(?:[a-z]+ing(?: out| over)?\s+)?{_EN_WHERE}",
        ),
        (
            "priv.nobody_home_en",
            r"\b(?:nobody|no one|no-one|no body)(?:'s| is)?\s*(?:home|in|at home|there|around|"
            r"in the house)\b|\b(?:house|home|apartment|flat|place) (?:is|'s) empty\b|"
            r"\bhome alone\b",
        ),
        (
            "priv.schedule_en",
            rf"\b(?:he|she)(?:'ll| will| won't| will not| should| usually| normally| always|"
            rf" often| typically)?\s*(?:be |get |come |gets |comes |arrive |arrives |return |"
            rf"returns |land |lands |leave |leaves |finish |finishes |go |goes |head |heads )?"
            rf"(?:back|home|in|off work|out|to work|to the office|free|available|off|done)\s+"
            rf"(?:at|by|around|after|before|until|till|on|in \d|next|this) ?{_TIME_EN}?"
            rf"|\b(?:not|n't)\b{_G}{{0,25}}\b(?:until|till)\s+{_TIME_EN}"
            r"|\b(?:his|her|he's|she's)\s+(?:flight|train|schedule|calendar|shift|meeting|"
            r"appointment|commute|routine|class|lesson|trip|vacation|holiday|day off|gym|"
            r"workout|office hours)\s+(?:is|was|'s|are|at|on|in|until|till|starts|ends|leaves|"
            r"lands|today|tomorrow|tonight|this|next|every|runs)\b"
            r"|\b(?:he|she)\s+(?:has|had|'s got|has got)\s+(?:a |an |another )?(?:meeting|"
            r"appointment|flight|date|class|conference|interview|doctor|dentist|surgery|trip)"
            r"|\b(?:he|she)\s+(?:just\s+)?(?:left(?! (?:a|an|the|you|me|us|some|no|instructions|word|"
            r"message|messages|note|notes|it|them|this|that)\b)|stepped out|went out|went to|went home|headed|"
            r"has gone|has left|'s gone|'s left|is heading|'s heading|is going to the|'s going "
            r"to the|flew|drove|took off|moved)\b"
            r"|\b(?:he|she)\s+(?:usually|normally|always|typically|generally|every day|on "
            r"weekdays|during the week)\b"
            r"|\b(?:he|she)(?:'s| is)?\s+(?:works?|working|does|has|on)\s+(?:the\s+)?(?:night|day|"
            r"late|early|weekend|evening|morning|double)\s+shifts?\b",
        ),
        (
            "priv.residence_en",
            r"\b(?:he|she)\s+(?:lives|lived|stays|is staying|'s staying|is living|'s living|"
            r"resides|commutes|goes to school|studies)\s+(?:at|in|on|near|from|with|by|"
            r"downtown|across|close)\b|\bwhere (?:he|she) (?:lives|works|stays)\b|"
            r"\b(?:his|her|he's|she's)\s+(?:home|house|place|apartment|flat|office|workplace|"
            r"hotel|room|building)\s+(?:is|'s|in|on|at|near)\b",
        ),
        (
            "priv.workplace_en",
            r"\b(?:he|she)\s+(?:works|worked|is working|'s working|is employed|'s employed)\s+"
            r"(?:at|for|in|as)\b|\b(?:he|she)(?:'s| is) an? (?:doctor|lawyer|teacher|nurse|"
            r"engineer|manager|professor|police officer|accountant|ceo|director|student|"
            r"programmer|developer|designer|banker|consultant)\b|\b(?:his|her|he's|she's)\s+"
            r"(?:company|employer|workplace|job|boss|manager|colleagues|team|firm)\s+"
            r"(?:is|'s|at|in|on|called|named)\b",
        ),
        (
            "priv.family_en",
            r"\b(?:his|her|he's|she's)\s+(?:wife|husband|spouse|partner|girlfriend|boyfriend|"
            r"fiancee?|son|daughter|kid|kids|children|child|baby|mother|mom|mum|father|dad|"
            r"parents|brother|sister|family|in-laws)(?:'s)?\s+(?:name|is|are|was|were|lives|live|"
            r"works|work|goes|go|called|named|just|studies|at|in)\b",
        ),
        (
            "priv.health_en",
            r"\b(?:he|she)(?:'s| is| has| was| got| has been|'s been| had)\s+(?:\w+\s+)?(?:sick|"
            r"ill|unwell|in (?:the )?hospital|hospitali[sz]ed|surgery|an operation|pregnant|"
            r"diabetic|diabetes|cancer|covid|the flu|flu|a cold|fever|injured|hurt|recovering|"
            r"at the doctor|at the dentist|depressed|depression|a heart condition|chemo)\b|"
            r"\b(?:his|her|he's|she's)\s+(?:health|illness|condition|diagnosis|medication|"
            r"medical|surgery|treatment|therapist|doctor|pregnancy)\b",
        ),
        (
            "priv.finance_en",
            r"\b(?:his|her|he's|she's)\s+(?:salary|income|debt|debts|loan|loans|mortgage|bank|"
            r"account number|account|balance|credit card|card number|savings|rent|net worth|pin|"
            r"password|passcode|ssn|social security|passport|id number|license plate|plate|"
            r"plate number|birthday|date of birth|age|email|e-mail|wechat)\s+(?:is|was|'s|are|"
            r"ends|starts|number is|:|\d|with|at)|\b(?:he|she)(?:'s|"
            r" is)\s+(?:broke|rich|wealthy|in debt|unemployed|bankrupt|behind on|divorced|"
            r"separated|single|married)\b|\b(?:he|she)\s+(?:owes|earns|makes \$?\d|can't afford|"
            r"cannot afford|has no money|gets paid)\b",
        ),
        (
            "priv.instructions",
            r"\b(?:my|the) (?:system prompt|instructions|initial instructions|original "
            r"instructions|prompt|configuration)\s*(?:is|are|says|say|was|were|:)|\bi was "
            r"(?:instructed|programmed|configured|prompted) to\b|\bmy (?:rules|guidelines) "
            r"(?:are|say)\b",
        ),
    )
)

_ZH_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(rx))
    for rule, rx in (
        (
            "priv.whereabouts_zh",
            rf"{_ZS}[^,.!?;:。、您你我]{{0,6}}?(?:在|去了?|到了?|回了?|正在|人在|待在|呆在)"
            rf"[\u4e00-\u9fff]{{0,3}}?(?:{_ZH_PLACES}|{_ZH_ACTS})",
        ),
        (
            "priv.schedule_zh",
            rf"{_ZS}{_G}{{0,6}}?(?:{_ZH_TIME}){_G}{{0,6}}?(?:回来|回家|到家|下班|上班|出门|出发|"
            rf"回去|回|到|有空|在家|在公司|空|结束|开完|落地|到达|走|离开|起床|睡|能接|可以接|方便)",
        ),
        (
            "priv.residence_zh",
            rf"{_ZS}(?:的)?(?:住在|住|家在|家住|的家在|家就在|老家在|老家是|在{_G}{{1,10}}?"
            rf"(?:上班|工作|任职|上学|读书|实习)|公司在|公司是|单位在|单位是|办公室在|上班的地方|"
            rf"工作的地方)",
        ),
        (
            "priv.family_zh",
            rf"{_ZS}(?:的)?(?:老婆|太太|妻子|爱人|老公|丈夫|儿子|女儿|孩子|小孩|父母|爸爸|妈妈|爸|"
            rf"妈|父亲|母亲|哥哥|弟弟|姐姐|妹妹|家人|女朋友|男朋友|对象|岳父|岳母|公公|婆婆)"
            rf"(?:叫|是|在|去|住|姓|的名字|今年|上|读|也|出差|生病|工作)",
        ),
        (
            "priv.health_zh",
            rf"{_ZS}{_G}{{0,4}}?(?:生病|病了|住院|看病|看医生|做手术|动手术|手术|身体不好|"
            rf"不舒服|发烧|感冒|怀孕|体检|吃药|受伤|骨折|癌|糖尿病|高血压|心脏病|抑郁)",
        ),
        (
            "priv.finance_zh",
            rf"{_ZS}(?:的)?(?:工资|收入|存款|欠款|负债|贷款|房贷|车贷|银行卡|卡号|账户|账号|余额|"
            rf"信用卡|密码|身份证|验证码|车牌|车牌号|生日|年龄|微信号?|邮箱|资产)(?:号)?(?:是|为|:|尾号|"
            rf"在|有|挺|很|不|大概|差不多|才|\d)|{_ZS}{_G}{{0,3}}?"
            rf"(?:欠了?{_G}{{0,6}}(?:钱|款|债)|没钱|破产|失业|被裁|负债|离婚|分居)",
        ),
        (
            "priv.instructions",
            r"(?:我的|系统)(?:提示词|指令|设定|系统提示|prompt)(?:是|如下|为|:)|"
            r"我被(?:设定|要求|指示|编程)(?:为|成|要)",
        ),
    )
)

_REFUSAL = re.compile(
    r"(?:can't|cannot|can not|won't|will not|unable to|not able to|not allowed to|not permitted to|"
    r"don't|do not|mustn't|shouldn't|not going to)\s+(?:share|give out|give you|tell you|disclose|"
    r"reveal|provide|pass on|say|confirm|discuss|repeat)|不能透露|不方便透露|不便透露|无法透露|没法透露|"
    r"不能告诉|不方便告诉|没法告诉|无法告诉|不能提供|不方便提供|无法提供|不便告知|不能说|不方便说|不好说|"
    r"保密|隐私|个人信息|不能给"
)
_CLAUSE_END = re.compile(r"[,.!?;:。、]")


def _blank_refusals(norm: str) -> str:
    """Blank every clause that refuses to share ("I can't share his schedule")."""
    if not _REFUSAL.search(norm):
        return norm
    out = norm
    for m in _REFUSAL.finditer(norm):
        start = max(norm.rfind(ch, 0, m.start()) for ch in ",.!?;:。、") + 1
        after = _CLAUSE_END.search(norm, m.end())
        end = after.start() if after else len(norm)
        out = out[:start] + " " * (end - start) + out[end:]
    return out


_BUT = re.compile(r"\b(?:but|however)\b|但是|不过|可是")


_NUMBER_TALK = re.compile(
    r"\b(?:numbers?|digits?|phone|mobile|cell|starts? with|ends? with|area code|extension)\b|"
    r"手机|电话|号码|尾号|开头|前三位|后三位|后四位|位数|区号"
)


def _coincidence(run: str, cc: Compiled) -> bool:
    """A number the caller said that shares only a short piece, or the start of a number
    of the same area, with a private one (their own callback number, 312-555-0187 or
    415-555-0134 vs 415-555-0142)."""
    if len(run) < 7 or run not in cc.support.stream:
        return False
    return not any(same_number(run, d) for d in cc.facts.digits)


def planted(view: View, cc: Compiled) -> Hit | None:
    """A listed private fact, in any spoken form."""
    facts = cc.facts
    runs = digit_runs(view.norm) if (facts.windows or facts.exact) else []
    for run in runs:
        for i in range(len(run) - 3):
            if run[i : i + 4] in facts.windows and not _coincidence(run, cc):
                return "priv.phone_digits", run
        if run in facts.exact:
            return "priv.address_number", run
    if facts.windows3 and _NUMBER_TALK.search(view.norm):
        for run in runs:
            if len(run) == 3 and run in facts.windows3:
                return "priv.phone_digits", run
    if facts.alnum is not None:
        m = facts.alnum.search(view.norm)
        if m:
            return "priv.fact_code", m.group(0)
    if facts.zh is not None and view.has_cjk:
        m = facts.zh.search(view.compact)
        if m:
            return "priv.fact_zh", m.group(0)
    if facts.en is not None and view.has_latin:
        m = facts.en.search(view.norm)
        if m:
            return "priv.fact_en", m.group(0)
    return None


def _zh_state(norm: str) -> Hit | None:
    """Subject-less state phrases (出差了, 不在家), unless said of the caller or self."""
    for rule, rx in (("priv.whereabouts_zh", _ZH_STATES), ("priv.schedule_zh", _ZH_WHEN_BACK)):
        for m in rx.finditer(norm):
            before = re.split(r"[,.!?;:。、]", norm[max(0, m.start() - 8) : m.start()])[-1]
            if not _SELF_OR_CALLER.search(before):
                return rule, m.group(0)
    return None


# "转告他晚上给您回电": 他 is whom a message goes to, not whom a fact is about.
_RELAY_BEFORE = re.compile(r"(?:转告|告诉|转达|提醒|通知|让|请|叫|跟|问)$")


def statements(view: View) -> Hit | None:
    """Whereabouts, schedule and personal data about the owner, listed or not."""
    norm = _blank_refusals(_BUT.sub(",", view.norm))
    if view.has_latin:
        for rule, rx in _EN_RULES:
            m = rx.search(norm)
            if m:
                return rule, m.group(0)
    if view.has_cjk:
        for rule, rx in _ZH_RULES:
            for m in rx.finditer(norm):
                if not _RELAY_BEFORE.search(norm[max(0, m.start() - 2) : m.start()]):
                    return rule, m.group(0)
        return _zh_state(norm)
    return None
