"""Who calls: kinds of caller named in a trigger ("if the school calls about pick-up") and in a
caller's self-introduction ("Hi, this is Maple Elementary"), for "who calls about what" triggers.

A trigger that describes *who* calls is matched by a caller who only says who they are, in
their own words: the school's name, not the word "school". So both sides are mapped to a
small set of kinds (school, medical, courier, ...) by bilingual keyword lists: kinds of
callers, generic across owners, never one owner's wording. Pure.
"""

from __future__ import annotations

import re

from .bilingual import compile_table, named_in

_KINDS: dict[str, tuple[str, str]] = {
    "school": (r"(学校|幼儿园|托儿所|小学|中学|初中|高中|老师|班主任|校医|教务|培训班|补习班)",
               r"\b(school|elementary|primary|kindergarten|nursery|daycare|day care|preschool|academy|teacher|"
               r"principal|headteacher|school nurse|tutor|college|university|pta)\b"),
    "medical": (r"(医院|诊所|医生|大夫|护士|药店|药房|体检|卫生(站|院|中心)|牙科|门诊|社区医|防疫)",
                r"\b(clinic|hospital|doctor|dr|gp|surgery|pharmacy|pharmacist|dentist|dental|nurse|medical|health "
                r"centre|health center|practice|vet|veterinary|optician|physio)\b"),
    "courier": (r"(快递|顺丰|京东|圆通|中通|申通|韵达|邮政|ems|菜鸟|驿站|包裹|物流|送货)",
                r"\b(courier|delivery|fedex|ups|dhl|usps|dpd|evri|hermes|royal mail|amazon|ontrac|parcel|package|"
                r"logistics|postal|post office)\b"),
    "food": (r"(外卖|骑手|美团|饿了么|送餐|餐厅|饭店|餐馆|奶茶|咖啡|面馆|披萨|烧烤|店里)",
             r"\b(restaurant|takeout|takeaway|grubhub|doordash|deliveroo|uber eats|ubereats|just eat|pizza|cafe|"
             r"coffee|kitchen|diner|bakery|wok|grill)\b"),
    "taxi": (r"(司机|滴滴|出租|网约车|打车|专车|快车|接机|包车|师傅)",
             r"\b(driver|taxi|cab|uber|lyft|minicab|chauffeur|shuttle|car service|dispatch|ride)\b"),
    "landlord": (r"(房东|物业|中介|业委会|管家|房管|租房|公寓)",
                 r"\b(landlord|landlady|property|lettings|letting agent|estate agent|building management|"
                 r"management office|superintendent|super|concierge|leasing|tenant|strata|hoa)\b"),
    "work": (r"(同事|领导|老板|经理|主管|人事|hr|公司|部门|团队|客户|项目|猎头|招聘|面试|财务|行政)",
             r"\b(colleague|coworker|co-worker|manager|boss|office|hr|human resources|people team|recruiter|"
             r"recruiting|hiring|interview|team|department|client|accounting|finance team|payroll|it desk|"
             r"it support|head office|audit)\b"),
    # (Not "billing" / 账单: any business has a billing desk, and a hospital's is no bank.)
    "bank": (r"(银行|信用卡|贷款|催收|欠款|保险|理财|证券)",
             r"\b(bank|credit card|loan|lender|mortgage|collections?|debt|insurance|insurer|account "
             r"services|finance company)\b"),
    "authority": (r"(警察|派出所|公安|法院|税务|社保|街道|居委会|政府|交警|检察)",
                  r"\b(police|officer|detective|sheriff|court|irs|hmrc|tax office|council|city hall|government|"
                  r"social security|immigration)\b"),
    "repair": (r"(维修|修理|水电|装修|安装|上门|保洁|家政|开锁|搬家|燃气)",
               r"\b(plumber|plumbing|electrician|technician|repair|contractor|handyman|installer|engineer|"
               r"cleaner|cleaning|movers|locksmith|gas company|heating)\b"),
    "family": (r"(家里人|家人|家里的人|"
               r"妈|爸|爷爷|奶奶|姥姥|姥爷|外婆|外公|哥|姐|弟|妹|老婆|老公|儿子|女儿|亲戚|舅|姨|叔|婶|邻居|朋友|同学)",
               r"\b(family|mom|mum|mother|dad|father|grandma|grandpa|granny|brother|sister|wife|husband|son|daughter|"
               r"aunt|uncle|cousin|neighbou?r|friend|roommate|flatmate)\b"),
    "business": (r"(店|商家|公司|工作室|健身房|美容|理发|酒店|宾馆|4s|车行|代驾|平台|客服)",
                 r"\b(shop|store|salon|gym|studio|hotel|venue|dealership|garage|company|customer service|"
                 r"place|agency|florist|boutique|spa)\b"),
    "sales": (r"(推销|销售|优惠|促销|活动|办卡|会员|免费领|中奖)",
              r"\b(sales|offer|promotion|special deal|discount|telemarket\w*|marketing|survey|prize|warranty)\b"),
}  # fmt: skip
_KINDS_RE = compile_table(_KINDS)

# The part of a trigger that says who calls: before "calls / rings / asks / 打电话 / 问 / 通知".
_WHO_EN = re.compile(
    r"^(?:if|when|whenever)?\s*(?P<who>.{2,40}?)\s+(?:calls?|rings?|phones?|asks?|says?|wants?|texts?|"
    r"is calling|calls back|gets in touch|reaches out|needs?|reports?|has|can't|cannot)\b",
    re.IGNORECASE,
)
_WHO_ZH = re.compile(r"^(?:如果|要是|万一|当)?(?P<who>.{1,10}?)(?:打电话|来电|打来|问|通知|说|找|联系|催|要|送|来)")
# A caller says who they are near the start of the turn.
_INTRO_SPAN = 80


def kinds(text: str) -> frozenset[str]:
    """The kinds of caller ``text`` names (any position)."""
    return named_in(_KINDS_RE, text)


def trigger_who(trigger: str) -> frozenset[str]:
    """The kinds of caller a trigger describes ("if the school calls about pick-up" -> school);
    empty when the trigger describes what is said, not who says it ("someone asks where I am")."""
    t = trigger.strip()
    m = _WHO_EN.match(t) if t.isascii() else _WHO_ZH.match(t)
    if m is None:
        return frozenset()
    who = m.group("who")
    if re.search(r"\b(someone|anyone|somebody|anybody|a caller|the caller|people|they)\b|有人|谁", who, re.IGNORECASE):
        return frozenset()
    return kinds(who)


# The owner's defence against impersonators: a trigger about callers who *claim* to be someone
# ("自称公安、检察院或者法院的人打来", "someone claims to be from the government, the police or the IRS",
# "冒充银行的", "scam calls", "诈骗电话").
_CLAIMS = re.compile(
    r"自称|冒充|假冒|假装|号称|说自己是|诈骗|骗子|骗电话"
    r"|\bclaim(?:s|ing)? to be\b|\bpretend(?:s|ing)?\b|\bimpersonat\w*|\bposing as\b"
    r"|\bsays? (?:they'?re|he'?s|she'?s|it'?s) from\b"
    r"|\bscam\w*|\bfraud\w*|\bphishing\b",
    re.IGNORECASE,
)


# A caller who says the call is not the kind a sales trigger names ("不是推销啊，就是提醒一下", "we're
# not selling anything", "this isn't a survey"): an agent's renewal reminder, an alarm company's
# emergency, an elections office. The owner's refusal would refuse them on the owner's behalf, so the
# trigger waits for a turn that does pitch (a real pitch after the denial still reads as one).
_SALES_KIND = re.compile(
    r"推销|销售|营销|广告|推广|问卷|调查|sell\w*|sales|telemarket\w*|marketing|pitch\w*|surveys?|"
    r"promot\w*|offers?\b",
    re.IGNORECASE,
)
_NOT_SALES = re.compile(
    r"不是(来)?(推销|卖东西|卖|销售|营销|做广告|广告|推广|问卷|调查|骚扰)|不(推销|卖东西)|没(有)?(要)?(推销|卖)"
    r"|\b(not|never|no one'?s|nobody'?s) (here )?(to )?(selling|trying to sell|sell(ing)? (you )?anything|a sales call|"
    r"sales|a survey|doing a survey|a pitch|marketing)\b"
    r"|\b(isn'?t|is not|this'?s not|it'?s not|it isn'?t) (a |about a )?(sales( call)?|survey|pitch|marketing)\b"
    r"|\bno(thing)? (to sell|sales pitch)\b",
    re.IGNORECASE,
)


def denies_the_kind(trigger: str, utterance: str) -> bool:
    """Does the caller say the call is not the sales (or survey) call the trigger names?"""
    return bool(_SALES_KIND.search(trigger)) and bool(_NOT_SALES.search(utterance))


def claims_trigger(trigger: str) -> bool:
    """Is the trigger about callers who claim to be someone ("自称客服说要退款的", "scam calls")?"""
    return bool(_CLAIMS.search(trigger))


def impersonator_match(trigger: str, utterance: str, *, scam: bool) -> bool:
    """Is a trigger about callers who claim to be someone met by this turn? The caller names one of
    the kinds the trigger names ("我是公安局的民警" for 公安/法院; "Officer Brooks with the Social Security
    Administration" for the government or the police), or, for a trigger that names none ("scam
    calls"), the turn reads as a scam. The owner wrote the answer for exactly these callers, so a
    scam reading does not keep it from them (it is the owner's own words; nothing private is added)."""
    if not _CLAIMS.search(trigger):
        return False
    named = kinds(trigger) - {"sales"}
    if named:
        return bool(named & caller_kinds(utterance))
    return scam


def caller_kinds(utterance: str) -> frozenset[str]:
    """The kinds of caller the turn's opening names ("Hello, this is Maple Elementary School...")."""
    return kinds(utterance[:_INTRO_SPAN])


def who_evidence(trigger: str, utterance: str) -> tuple[float, float, float]:
    """(the trigger names who calls, the caller is one of them, the caller is someone else)."""
    who = trigger_who(trigger)
    if not who:
        return 0.0, 0.0, 0.0
    said = caller_kinds(utterance)
    same = bool(who & said)
    return 1.0, float(same), float(bool(said) and not same)


# Kinds distinct enough that "the caller is one" says the trigger is met: a broad kind (work,
# business) names too many callers ("if a client calls" is not met by a colleague).
_DISTINCT = frozenset({"school", "medical", "courier", "food", "taxi", "landlord", "bank", "authority", "repair"})
# Family triggers name one relative: "if my mom calls" is not met by a sister or a neighbour.
_ROLES: dict[str, tuple[str, str]] = {
    "mother": (r"妈|母亲|娘", r"\b(mom|mum|mother|mama|mommy|mummy|ma)\b"),
    "father": (r"爸|父亲", r"\b(dad|father|papa|daddy|pop)\b"),
    "grandparent": (r"爷爷|奶奶|姥姥|姥爷|外婆|外公",
                    r"\b(grandma|grandpa|granny|grandmother|grandfather|nana|gran)\b"),
    "spouse": (r"老婆|老公|妻子|丈夫|爱人|媳妇", r"\b(wife|husband|partner)\b"),
    "sibling": (r"哥|姐|弟|妹", r"\b(brother|sister|sis|bro)\b"),
    "child": (r"儿子|女儿", r"\b(son|daughter)\b"),
    # (Also where they live, as neighbours say it: "我是楼下502的", "from downstairs", "next door".)
    "neighbour": (r"邻居|(楼下|楼上|隔壁|对门)\d*(的|那家)",
                  r"\b(neighbou?r|next door|from (up|down)stairs|(up|down)stairs (flat|apartment|unit)|"
                  r"(flat|apartment|unit) (up|down)stairs)\b"),
}  # fmt: skip
_ROLES_RE = compile_table(_ROLES)
# Trigger verbs that mean the caller must be asking for something ("if the courier asks for the code").
_ASKS = re.compile(r"^(asks?|wants?|needs?|问|要|找)$", re.IGNORECASE)
_TOPIC_LEAD_EN = re.compile(
    r"^(back\s+)?(about|regarding|re|for|to ask( about| for)?|asking( about| for)?|to say|saying|that|with|"
    r"to tell me|to)\b\s*",
    re.IGNORECASE,
)
_TOPIC_LEAD_ZH = re.compile(r"^(的|了)?(来)?(说|问|讲|关于|是|要|通知|找我)?")
_TOPIC_TAIL_ZH = re.compile(r"(的事情|的事|这件事|这事|的话|的电话|电话|了|的)$")


def _roles(text: str) -> frozenset[str]:
    return named_in(_ROLES_RE, text)


# Words that lead or qualify a name in a trigger's who-part ("If my manager Karen calls"): never the name.
_NOT_NAMES_WORDS = (
    "if when whenever my our the a an his her their mr mrs ms miss dr doctor mx sir madam i in case from at of "
    "and or anyone someone somebody boss manager colleague friend"
)
_NOT_NAMES = frozenset(_NOT_NAMES_WORDS.split())
_EN_NAME = re.compile(r"\b[A-Z][a-z]{2,14}\b")
# A Chinese name the way callers say it: a surname with a title or a familiar prefix (王经理, 李老师, 张总, 老周, 小陈).
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜"
    "崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_ZH_TITLED = re.compile(rf"(?:老|小)[{_SURNAMES}]|[{_SURNAMES}](?:总|经理|老师|医生|主任|律师|工|姐|哥|阿姨|叔)")


def trigger_names(trigger: str) -> frozenset[str]:
    """The person a trigger names as the caller ("If my manager Karen calls" -> karen, "如果王经理打电话"
    -> 王经理), lower-cased; empty when it names none. Latin names are read in Chinese triggers too
    ("如果 Karen 打电话"), so the trigger and the caller may speak different languages."""
    t = trigger.strip()
    m = _WHO_EN.match(t) if t.isascii() else _WHO_ZH.match(t)
    if m is None:
        return frozenset()
    who = m.group("who")
    names = {w.lower() for w in _EN_NAME.findall(who) if w.lower() not in _NOT_NAMES}
    if not who.isascii():
        names |= set(_ZH_TITLED.findall(who))
    return frozenset(names)


def _says_name(text: str, names: frozenset[str]) -> bool:
    """The caller's opening says they are one of ``names`` ("hi it's karen from the office", "我是王经理",
    "Karen here"), not that they are looking for them ("is Karen there?")."""
    opening = text[:_INTRO_SPAN].lower()
    for n in names:
        e = re.escape(n)
        if n.isascii():
            intro = (
                rf"(^|\b(it'?s|it is|this is|i'?m|i am|my name is) |"
                rf"^(hi|hello|hey|yes|yeah|oh)[ ,]+((it'?s|this is) )?){e}\b"
            )
            if re.search(intro, opening) or re.search(rf"\b{e}\b(,? )?(here|from|calling|speaking)\b", opening):
                return True
            if re.search(rf"(我是|我叫|这边是|这里是)\s*{e}\b", opening):
                return True
        elif re.search(rf"(我是|我叫|这边是|这里是|^(喂|你好|您好)?[，, ]*){e}|{e}(这边|啊|呀)?[，, ]", opening):
            return True
    return False


def who_and_topic(trigger: str) -> tuple[frozenset[str], frozenset[str], str, bool, frozenset[str]] | None:
    """A "who calls about what" trigger: (kinds, family roles, the topic phrase or "", the caller
    must be asking, the person it names); None when the trigger does not say who calls."""
    t = trigger.strip()
    m = _WHO_EN.match(t) if t.isascii() else _WHO_ZH.match(t)
    names = trigger_names(t)
    if m is None or not (trigger_who(t) or names):
        return None
    who = m.group("who")
    verb = t[m.end("who") : m.end()].strip()
    rest = t[m.end() :].strip(" ,，。.?？!")
    if t.isascii():
        rest = _TOPIC_LEAD_EN.sub("", rest)
    else:
        rest = _TOPIC_TAIL_ZH.sub("", _TOPIC_LEAD_ZH.sub("", rest, count=1))
    return kinds(who), _roles(who), rest, bool(_ASKS.match(verb)), names


# A trigger that is only a kind of call, a sales call ("推销电话", "sales calls", "telemarketers"):
# any pitch meets it, whatever is sold (renovation, insurance, courses).
_PITCH_ONLY = re.compile(
    r"^(?:if|when|whenever|any|a|an|the|it'?s|its|from|如果|要是|万一|是|有|接到|来|的|\s)*"
    r"(?:推销|销售|营销|电销|广告|骚扰)(?:电话|的|员|人员|来电|打来的|打来|公司)*"
    r"$|^(?:if|when|whenever|any|a|an|the|it'?s|its|from|\s)*(?:cold[- ]?|sales|telemarket\w*|marketing|spam)"
    r"(?:\s*(?:calls?|callers?|people|person|rep|reps|pitch(?:es)?|comes?|rings?|in)\b)*\s*$",
    re.IGNORECASE,
)


def pitch_only(trigger: str) -> bool:
    """Does the trigger name sales calls of any kind (and nothing more specific)?"""
    return bool(_PITCH_ONLY.match(trigger.strip(" ,，。.!！?？")))


def who_calls_match(trigger: str, utterance: str, earlier: tuple[str, ...] = (), *, asking: bool = False) -> bool:
    """Is a "who calls (about what)" trigger met by this turn?

    Who-only ("如果是孩子学校打来的", "if my mom calls"): the caller says, in this turn, that they
    are one of them (the school's name, "班主任李老师"; for family the same relative). Who and
    what ("if the school calls about pick-up"): the caller said who they are in this turn or an
    earlier one, and this turn is about that topic ("I'm calling about who's collecting Mia"),
    asking for it when the trigger says "asks"."""
    from .topics import content, same_topic, topics

    parsed = who_and_topic(trigger)
    if parsed is None:
        return False
    who, roles, topic, needs_ask, names = parsed

    def is_them(text: str) -> bool:
        opening = text[:_INTRO_SPAN]
        if names:
            return _says_name(text, names)
        if roles:
            return bool(roles & _roles(opening))
        return bool(who & _DISTINCT & caller_kinds(opening))

    if not content(topic):
        return is_them(utterance)
    if needs_ask and not asking:
        return False
    # What the caller asks, when the trigger says they ask: "I've got a scheduled pickup for Mr. Lopez.
    # Just confirming where he's headed to?" names the pick-up but asks where to, not where from.
    asked = asked_part(utterance) if needs_ask else utterance
    if needs_ask and asks_otherwise(topic, asked):
        return False  # "how long until he comes out?" against "asks where to pick him up": a near miss
    said = is_them(utterance) or any(is_them(e) for e in earlier)
    if said:
        return same_topic(topic, asked)
    # Who is not said, but the errand is theirs and nobody else's ("药店打电话说药到了" and "您订的那个
    # 药到货了"): the same kind of errand, from a distinct kind of caller, and no other caller named.
    unnamed = not names and not roles and bool(who & _DISTINCT) and not caller_kinds(utterance) - {"work", "business"}
    return unnamed and bool(topics(topic) & topics(asked)) and not any(caller_kinds(e) - who for e in earlier)


# A clause that ends with a question mark (the turn's own sentences; "Mr." splits one, harmlessly).
_ASKED_CLAUSE = re.compile(r"[^。！？!?.]+[？?]")


def asked_part(utterance: str) -> str:
    """The clauses of the turn that ask (end with a question mark); the whole turn when none does
    (a recognizer often writes a question without one: "did marcus finish the deck")."""
    parts = _ASKED_CLAUSE.findall(utterance)
    return " ".join(parts) if parts else utterance


def asks_otherwise(topic: str, asked: str) -> bool:
    """The trigger's question and the caller's ask different things (where vs how long, how much vs
    where): the question focus of presets.matching, which the rule matcher's own clash check reads."""
    from .matching import focus

    t_focus, u_focus = focus(topic), focus(asked)
    return bool(t_focus and u_focus and not t_focus & u_focus)


_RELATIVES = frozenset({"mother", "father", "grandparent", "spouse", "sibling", "child"})


def relative_claimed(trigger: str, utterance: str) -> bool:
    """Does the caller claim to be the relative the trigger is for ("家里人问我什么时候回家" and "我是他妈妈";
    "if my wife asks..." and "it's his wife")? Then the claim is the trigger's own condition: the owner
    chose to tell them, and an identity claim that would unlock nothing else unlocks this answer."""
    who = trigger_who(trigger)
    if "family" not in who:
        return False
    wanted = _roles(trigger) or _RELATIVES
    return bool(wanted & _roles(utterance[:_INTRO_SPAN]))
