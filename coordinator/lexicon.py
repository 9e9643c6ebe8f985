"""Bilingual cue lexicons for caller acts, exceptions and scenes.

Each cue is a regular expression over the caller's utterance: Chinese cues run on
the compacted text (no spaces or punctuation), English cues on the normalised text
(lower case, single spaces). Lists are data, kept here so that the rules in
``acts.py`` stay short and the vocabulary is easy to extend and review.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cues:
    zh: re.Pattern[str]
    en: re.Pattern[str]

    def search(self, zh_text: str, en_text: str) -> re.Match[str] | None:
        return self.zh.search(zh_text) or self.en.search(en_text)


def cues(zh: list[str], en: list[str]) -> Cues:
    return Cues(
        re.compile("|".join(zh)),
        re.compile(r"\b(?:" + "|".join(en) + r")\b"),
    )


GREETING = cues(
    ["^(喂|你好|您好|哈喽|嗨|hello|hi)", "^我是", "我是.{1,12}(的|啊|呀)?$", "打扰(一下|了)", "请问是.{1,8}吗"],
    [r"^(hello|hi|hey|good (morning|afternoon|evening)|yes hello|hiya)", r"^this is", r"^(i am|i'm) \w+ from",
     r"^\w+ here", r"is this (the )?\w+('s)? (phone|line)", r"^(sorry to bother you|excuse me)"],
)  # fmt: skip

ARRIVAL = cues(
    ["(外卖|餐|快递|包裹|件|货|车|东西|订单|您的|你的|蛋糕|花|药).{0,6}(到了|送到|已送达|到楼下|到门口|已经到)",
     "(我|骑手|师傅|司机)(已经)?(到|在)(了|你家|您家|楼下|门口|小区|单元|大门|路边|这边|你们|您这)",
     "^到了", "已(经)?(送达|到达)", "(快|马上|就)(要)?到了", "准备好了", "(在|到)(楼下|门口|小区门口|大门口)了",
     "(敲门|按门铃|打电话).{0,4}(没人|没有人|没应|没开)", "(家里|屋里)?没人(开门|接|应)", "(接|取)(一下)?(外卖|快递|件)",
     "(有|是)(你|您)的(外卖|快递|包裹|件)", "送(外卖|快递)的", "(车|我)(停|就)在",
     "到(你们|你|您)?(家|楼下|门口|小区|单元|楼门口)(了|啦)", "还有.{0,4}(分钟|公里)(就|左右)?到", "(快|马上)到(你|您)?(家|楼下|门口|小区)?了"],
    [r"(i'm|i am|we're|we are|driver is|car is|courier is) (here|outside|downstairs|at the (door|gate|front|lobby|entrance|building|curb))",
     r"(order|food|delivery|package|parcel|takeout|takeaway|car|ride|cab|taxi|pizza|groceries) (is|has) (here|arrived|outside|been delivered)",
     r"(just )?arrived", r"(i'm|i am) (almost|nearly) there", r"(be|i'll be) there in", r"(pulling|pulled) up",
     r"on my way", r"(out front|right outside|at your door|at the front door)", r"(got|have) (a|your) (package|parcel|delivery|order|food)",
     r"delivery for", r"(nobody|no one|no-one) (is )?(answering|answered|home|at home|came)", r"(knocked|rang the bell)",
     r"(here with|dropping off) (your|a)", r"(i'm|i am) here to pick up", r"your (ride|driver|car) is here",
     r"(\d+|one|two|three|four|five|ten|fifteen|twenty|a few|a couple of) (minutes|mins) (out|away)", r"(i'm|i am) here( now)?"],
)  # fmt: skip

WHERE_TO_LEAVE = cues(
    ["放(在)?(哪|什么地方|哪儿|哪里)", "(怎么|如何)(放|处理|给你|交给)", "放(门口|门外|楼下|驿站|快递柜|丰巢|前台|保安|门卫|邻居)",
     "(给|交给|放)(你|您)?(放)?(哪|谁)", "(在|到)(哪|哪里|哪儿|什么地方)(上车|等|见|碰头|接|下车|集合)",
     "(上车点|上车地点|具体位置|哪个门|哪个口|几号门|哪栋|哪个单元)", "(你|您)(人)?在(哪|哪儿|哪里)(呢|啊|呀)?(我|司机|师傅)?",
     "找不到(你|您)(?!们)(人)?", "(我|那我)(就|先)?(放|搁|留)(在)?.{0,8}(了|吧|啊|可以吗|行吗)", "要(送|放)(上楼|到家|门口)"],
    [r"where (should|do|can|shall|would you like|you want) (i|me|we) (to )?(leave|put|drop|deliver|bring|meet|pick you up|wait|find you)",
     r"where (to|do you want (it|me to)) (leave|put|drop|deliver|meet|go)", r"where (are you|exactly are you|should we meet)",
     r"(leave|put|drop) (it|them|the \w+)( off)? (at|by|in|with|on|outside)", r"(which|what) (door|gate|entrance|building|unit|side|exit)",
     r"pick ?up (point|spot|location)", r"(can't|cannot|couldn't|can not) (find|see) you", r"how (should|do) i (get it|deliver|hand)",
     r"where (is|are) (the )?(pickup|meeting point)", r"(should|shall|can) i (leave|put|drop) (it|them|this|the (package|parcel|food|order|box|bag|delivery|groceries))",
     r"(i'll|i will|let me) (just )?(leave|put|drop) (it|them)"],
)  # fmt: skip

EXCEPTIONS: dict[str, Cues] = {
    # The way in is blocked (even for a driver, this is a problem, not "where do we meet").
    "blocked": cues(["封(了|起来|路)", "修路", "施工", "进不去", "不让进", "开不进", "禁止通行", "堵死了", "电梯坏"],
                    [r"police tape", r"(road|street|gate|entrance|block) is (closed|blocked)", r"closed off", r"blocked off",
                     r"can't get (in|near|through|close)", r"cannot get (in|near|through|close)", r"under construction", r"elevator is (broken|out)"]),
    "spilled": cues(["洒了", "撒了", "漏了", "洒出来", "漏出来", "(汤|汁|饮料|奶茶|咖啡).{0,3}(洒|撒|漏)", "打翻"],
                    [r"spill(ed|t)?", r"leak(ed|ing)?", r"(tipped|knocked) over", r"soup (went|got) everywhere"]),
    "damaged": cues(["(破|坏|碎|裂|压扁|变形)(了|掉)", "破损", "损坏", "压坏", "摔(坏|了)", "(箱子|盒子|包装).{0,4}(破|烂|湿)"],
                    [r"damaged", r"broken", r"crushed", r"torn", r"dented", r"smashed", r"cracked", r"got wet", r"ripped"]),
    "wrong_item": cues(["送错", "拿错", "搞错", "装错", "弄错", "做错", "不是(你|您)的", "少(了|送|放)", "漏(送|拿|装|放)", "(缺|差)了", "单子.{0,4}(不对|错)"],
                       [r"wrong (order|item|address|package|food)", r"(missing|forgot) (an? )?(item|drink|bag|part)", r"mix(ed)?[- ]?up",
                        r"(isn't|is not|not) (yours|your order)", r"(got|gave|picked up) the wrong"]),
    "late": cues(["(会|要|得)?晚(到|点|一会|些|半小时|十分钟|了)", "迟到", "超时", "堵车", "来不及", "耽误", "延误", "晚送"],
                 [r"running late", r"(be|am|is|are) late", r"delayed", r"stuck in traffic", r"behind schedule", r"(take|taking) longer"]),
    "cant_find": cues(["找不(到|着).{0,6}(地方|地址|楼|门|单元|小区|路|位置|你家|您家)", "找不着", "没找到", "进不去", "门禁", "(保安|门卫).{0,4}不让",
                       "(地址|定位).{0,4}(不对|错|不准)", "导航.{0,4}(不对|错)", "(楼|门)牌.{0,4}(没有|不清)"],
                      [r"(can't|cannot|couldn't|can not) (find|locate|get (in|into|to)) (the )?(place|address|building|house|unit|apartment|entrance|gate|door)",
                       r"(gate|door|building) is locked", r"(buzzer|intercom|access code|door code|gate code)", r"(address|pin|location) is wrong",
                       r"security (won't|will not) let", r"(i'm|i am) lost", r"can't get in"]),
    "signature": cues(["签收", "签字", "签名", "本人(签|收|在)", "需要(本人|当面)"],
                      [r"sign(ature| for it| for this)", r"needs to be signed", r"in person", r"adult signature"]),
    "payment": cues(["(到付|付款|付钱|运费|差价|补(钱|款|差价)|加钱|收费|小费|给钱|转账|现金)", "(要|得|需要)(付|交)"],
                    [r"pay(ment)?", r"cash on delivery", r"\bcod\b", r"(extra |additional |delivery |customs |toll )?(fee|charge|toll)s?",
                     r"tip", r"owes?", r"balance due", r"surcharge"]),
    "id_needed": cues(["身份证", "(取件|验证|收货)码", "证件", "核对身份"],
                      [r"\bid\b", r"identification", r"(pickup|verification|delivery|pin) code", r"verify (his|her|their|your) identity"]),
}  # fmt: skip

NOBODY_HOME = re.compile(
    r"(没人|没有人)(开门|接|应|在家)|(nobody|no one|no-one) (is )?(answering|answered|home|at home|came)"
)

ASK_OWNER = cues(
    ["(他|她|陈.{0,2}|王.{0,2}|李.{0,2}|张.{0,2}|老板|经理|先生|女士|小姐)?在(家|吗|不在)", "(找|叫)(一下)?.{0,6}(接电话|听电话)",
     "让(他|她).{0,4}(接|听)", "能(不能)?(让|叫)?(他|她).{0,2}接", "(他|她)(本人)?(能|可以)?接(电话|一下)?吗", "找(一下)?(他|她|陈|王|李|张|.先生|.女士|.总|.经理)",
     "是.{1,8}(本人)?吗", "(他|她)(人)?呢", "(你|您)是.{1,8}(吗|嘛)"],
    [r"(can|could|may) i (speak|talk) (to|with)", r"is (he|she|\w+) (there|in|around|available|home)", r"put (him|her|\w+) on",
     r"(get|ask) (him|her) (to come )?to the phone", r"is this (mr |mrs |ms |dr |miss )?\w+", r"am i (speaking|talking) (to|with)",
     r"looking for \w+", r"i('d| would) like to (speak|talk)", r"is that (mr |mrs |ms |dr |miss )?\w+"],
)  # fmt: skip

LEAVE_MESSAGE = cues(
    ["转告", "(帮我|麻烦你?|请你?)?(告诉|跟|和|给|通知)(他|她|一下|陈|王|李|张|老板|你们).{0,8}(说|讲|一声|一下)", "带(个)?话", "留(个)?言",
     "(让|叫|请)(他|她).{0,6}(回电|回个电话|回我|联系我|给我打|打给我|打个电话)", "捎(个)?话", "(帮我|麻烦)(记|记录)一下",
     "(帮我|麻烦你?)?问(一下|问)?(他|她)"],
    [r"(tell|let) (him|her|them|\w+) know", r"(just |please )?tell (him|her|them)( that)?", r"(can|could) you tell (him|her|them|\w+)", r"pass (it|this|that|the message)? ?(on|along)",
     r"(take|leave) a message", r"(have|ask) (him|her|them|\w+) (to )?(call|ring|text|email) (me|us)( back)?", r"give (him|her|them) a message",
     r"please tell", r"just tell (him|her|them)", r"message for", r"(can|could|would) you ask (him|her|them)"],
)  # fmt: skip

ASK_DECISION = cues(
    ["(可以|行|能|好|同意|愿意|接受|确认)(吗|不|么|嘛)", "(能不能|可不可以|行不行|要不要|同不同意|愿不愿意|接不接受|是否)",
     "(改|换|推迟|提前|延期|取消|退(款|货|掉)|重新送|补发|拒收)", "怎么(办|处理)", "(他|她)(同意|答应|决定|选)", "你(看|觉得)(呢|怎么样|行吗)"],
    [r"(can|could|would|will|should) (he|she|they|you|i|we) (accept|agree|approve|pay|take|come|reschedule|cancel|refund|sign|confirm|decide|allow)",
     r"is (it|that) (ok|okay|alright|fine) (if|to|with)", r"(do|does|would) (he|she|they|you) (want|agree|accept|mind|prefer)",
     r"(reschedule|postpone|cancel|refund|return it|redeliver|re-deliver|substitute|replace it)", r"what should i do",
     r"(your|his|her|their) (call|decision|choice)", r"(approve|authori[sz]e|sign off)", r"(yes or no|which one)", r"(ok|okay) with (that|this)"],
)  # fmt: skip

ASK_PRIVATE = cues(
    ["(地址|住址|住(在)?哪|家(在)?哪|门牌|几号楼|几单元|哪个小区)", "(电话|手机|号码|联系方式|微信|邮箱)(号)?(码)?(是)?(多少|给我|告诉|发我)",
     "(告诉|给)我.{0,8}(电话|手机|号码|地址|住址|微信|邮箱|行程)", "(手机|电话)号(码)?(吗|呢|多少)",
     "(他|她|陈.{0,2}|王.{0,2}|李.{0,2}|张.{0,2})(现在)?(人)?在(哪|哪儿|哪里|什么地方|干(嘛|什么))", "(去|到)(哪|哪儿|哪里)了",
     "(什么时候|几点|啥时候|多久)(回来|回家|到家|下班|有空|方便|能回)", "(行程|日程|安排|航班|出差).{0,4}(是|哪|什么|几)",
     "(在哪|哪家)(上班|工作|公司)", "(身份证|银行卡|卡号|密码|验证码)", "(家里|家人|老婆|老公|孩子).{0,4}(谁|几个|在哪)",
     "(地址|手机号|电话号码|住址|号码)(念|读|报|发)", "(念|读|报)(一下|一遍)?.{0,6}(地址|手机号|电话|号码|住址)"],
    [r"(his|her|their|\w+'s) (home |house |street |email |mailing )?(address|phone|cell|mobile|number|email|schedule|calendar|whereabouts|workplace|office address)",
     r"where (does|do) (he|she|they|\w+) (live|work|stay)", r"where (is|are) (he|she|they|\w+)( right now| now| today| at)?\??$",
     r"where (is|are) (he|she|they) (right now|now|today|at the moment)", r"when (will|is|are|does|do) (he|she|they|\w+) (be )?(back|home|free|available|return|get back|off)",
     r"(what time|when) (is|does|will) (he|she|they|\w+) (get|come|be) (home|back|in)", r"(give|send|tell) me (his|her|their) (number|address|email)",
     r"(credit card|bank|account number|password|social security|ssn|passport|verification code)", r"(who|which) (does|do) (he|she|they) live with",
     r"read (back|out|me) (the|his|her|their|your) (home )?(address|number|phone|schedule)", r"(the|his|her|their) (home )?address"],
)  # fmt: skip

SALES = cues(
    ["推销", "优惠", "促销", "活动价", "贷款", "理财", "保险", "信用卡", "中奖", "投资", "股票", "基金", "办(卡|会员)", "免费(领|送|体验)",
     "额度", "利率", "利息", "套餐", "升级", "装修", "课程", "回访", "问卷", "调查", "楼盘", "房产", "加盟", "返现", "催收", "欠(钱|款|费)",
     "傻|蠢|滚|他妈|混蛋|王八蛋|去死|找死|你给我等着|小心点|弄死", "(骚扰|威胁)"],
    [r"(special|limited|exclusive) (offer|promotion|deal)", r"(loan|mortgage|refinanc\w*|insurance|credit card|investment|crypto|bitcoin|stock tip)s?",
     r"you('ve| have) (won|been selected)", r"(prize|sweepstakes|lottery|free (trial|gift|cruise|vacation))", r"(extended )?(car|vehicle) warranty",
     r"(survey|poll|questionnaire)", r"(solar panels?|timeshare|subscription upgrade)", r"(debt|collections?) (agency|department|notice)",
     r"(idiot|stupid|shut up|damn you|screw you|i know where you live|you'll regret|watch your back|go to hell)", r"(sales|marketing) (call|team)",
     r"(lower|reduce) your (bill|rate|interest)"],
)  # fmt: skip

CLOSING = cues(
    ["再见", "拜拜", "拜了", "挂了", "先这样", "就这样", "没(别的|其他|什么)(事|了)", "没事了", "那(就)?先(这样|挂)", "不打扰了", "回头(见|聊)"],
    [r"(good)?bye", r"see (you|ya)", r"(that's|that is) (all|it|everything)", r"talk (to you )?later", r"have a (good|nice|great) (day|one|night|evening)",
     r"nothing else", r"i('ll| will) let you go", r"(i'm|i am) done", r"take care", r"cheers"],
)  # fmt: skip

ACK = re.compile(
    r"^(好|好的|好嘞|好吧|行|行吧|可以|嗯|嗯嗯|哦|噢|喔|知道了|明白|明白了|了解|收到|没问题|ok|okay|谢谢|谢谢你|谢谢您|多谢|麻烦了|辛苦了|对|是的|是|那好|那行|成|中|"
    r"ok|okay|sure|alright|all right|got it|gotcha|understood|will do|no problem|thanks|thank you|thank you so much|great|perfect|cool|"
    r"yes|yeah|yep|fine|right|sounds good|noted|i see|uh huh|mm|hmm|okie)$"
)

QUESTION = cues(
    ["[?？]", "(吗|呢|么|嘛)$", "(什么|怎么|为什么|为啥|多少|几(点|个|号|天|时)|哪|谁|是不是|有没有|能不能|会不会|对不对|啥)"],
    [r"\?", r"^(what|when|where|who|whom|whose|why|how|which|is|are|was|were|do|does|did|can|could|would|will|should|shall|may|have|has)\b"],
)  # fmt: skip

REPEAT_REQUEST = cues(
    ["再说一(遍|次)", "没听清", "什么\\?*$", "你说什么", "刚才说(的)?(什么|啥)", "重复一(下|遍)", "(放|在)哪来着", "说的是"],
    [r"(say|repeat) (that|it) again", r"(sorry|pardon)\??$", r"come again", r"what did you say", r"didn't (catch|hear) (that|you)",
     r"one more time", r"where did you say", r"^(sorry|pardon|excuse me) (where|what|who|when|how)$", r"^(where|what) was (it|that)$"],
)  # fmt: skip

URGENT = cues(
    ["急", "紧急", "尽快", "赶紧", "马上(回|联系|打)", "出事", "医院", "事故", "救护", "报警", "火"],
    [r"urgent(ly)?", r"emergency", r"asap", r"as soon as possible", r"right away", r"immediately", r"hospital", r"accident", r"police"],
)  # fmt: skip

SELF_ID = [
    re.compile(
        r"(?:我是|这里是|这边是|我这边是)(?P<who>[^，。,.!！?？]{1,16}?)(?:的|啊|呀|哈)?(?=[，。,.!！?？]|$|想|要|找|给|打|来|这边|那边|跟|有)"
    ),
    re.compile(
        r"\b(?:this is|my name is|it's) (?P<who>[a-z][a-z .'-]{1,40}?(?: from [a-z0-9 .&'-]{2,40})?)(?=[,.!?]|$| and | calling| here)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:i am|i'm) (?P<who>[a-z][a-z'-]{1,20}(?: [a-z][a-z'-]{1,20})? from [a-z0-9 .&'-]{2,40}?)(?=[,.!?]|$| and | calling)",
        re.IGNORECASE,
    ),
    re.compile(r"^(?:(?:hi|hello|hey|yes|yeah)[, ]+)?(?P<who>[a-z][a-z'-]{1,20}) here\b", re.IGNORECASE),
]

GREETING_ONLY = re.compile(
    r"^(喂+|你好+|您好+|哈喽|嗨|在吗|有人吗|hello+|hi+|hey+|hello there|hi there|yes hello|good (morning|afternoon|evening)|anyone there)$"
)

# Acknowledgement markers anywhere in a short turn ("Porch bench, got it.", "B出口，好的，我停那儿").
ACK_MARK = cues(
    ["好的", "好嘞", "好滴", "行(的|吧|啊)?", "明白", "知道了", "收到", "没问题", "可以的", "嗯嗯", "了解"],
    [r"got it", r"gotcha", r"sounds good", r"will do", r"you got it", r"perfect", r"alright", r"all right", r"okay", r"ok",
     r"understood", r"no problem", r"cool", r"great", r"noted", r"sure thing"],
)  # fmt: skip

# The turn ends with a goodbye ("...，再见" / "... Bye.").
ENDS_WITH_CLOSING = re.compile(
    r"(再见|拜拜|拜了|挂了|先这样|就这样|bye|goodbye|bye now|talk later|take care)[\s。.!！~～]*$", re.IGNORECASE
)

# Scene nouns that are a self-introduction on their own ("Hello, food delivery.", "你好，外卖。").
SERVICE_INTRO = re.compile(
    r"^(food delivery|delivery|courier|your driver|the driver|taxi|cab|uber|doordash|fedex|ups|dhl|"
    r"外卖|快递|送外卖的|送快递的|司机|师傅|骑手|滴滴|美团|顺丰|京东)$"
)

# Pressing on after a refusal ("你就念一下", "就当帮个忙", "Just read it to me, it's required").
INSIST = cues(
    ["念(一下|一遍)?", "读(一下|一遍)", "(告诉|说)(我)?一下", "帮个忙", "就当", "平台(要求|规定)", "规定", "必须", "你就(说|告诉|念)", "通融", "核对一下"],
    [r"just (tell|read|give|say)", r"read (it|that|them|back)", r"(it's|it is) (required|mandatory|policy)", r"come on", r"i need (it|that|the)",
     r"do me a favou?r", r"you have to", r"for verification", r"(tell|give) me"],
)  # fmt: skip
