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
     "(有|是)(你|您)(的)?(一)?(个|份|件)?(外卖|快递|包裹|件|货|餐)", "送(外卖|快递)的", "(家里|家|屋里)(现在)?有人(吗|没有|不|在吗|在不在|没)", "(车|我)(停|就)在",
     "到(你们|你|您)?(家)?(家|楼下|门口|小区|单元|楼门口)(了|啦)", "还有.{0,4}(分钟|公里)(就|左右)?到", "(快|马上)到(你|您)?(家|楼下|门口|小区)?了"],
    [r"(i'm|i am|we're|we are|driver is|car is|courier is) (here|outside|downstairs|at the (door|gate|front|lobby|entrance|building|curb))",
     r"(order|food|delivery|package|parcel|takeout|takeaway|car|ride|cab|taxi|pizza|groceries) (is|has) (here|arrived|outside|been delivered)",
     r"(order|food|dinner|lunch|meal|delivery|package|parcel|groceries)\b[\w' ]{0,30} (is|has) (here|arrived|outside|downstairs)",
     r"\bim (here|outside|downstairs|at the (door|gate|front|lobby))",
     r"(just )?arrived", r"(i'm|i am) (almost|nearly) there", r"(be|i'll be) there in", r"(pulling|pulled) up",
     r"on my way", r"(out front|right outside|at your door|at the front door)", r"(got|have) (a|your) (package|parcel|delivery|order|food)",
     r"delivery for", r"(nobody|no one|no-one) (is )?(answering|answered|home|at home|came)", r"(knocked|rang the bell)",
     r"(here with|dropping off) (your|a)", r"(downstairs|outside|in the lobby|at the (door|gate|front|lobby|entrance|reception)) with (your|the|a) \w+",
     r"(order|food|delivery|package|parcel|takeout|takeaway|car|ride|cab|taxi|pizza|groceries|driver|uber)'s (here|outside|downstairs|arrived)",
     r"your (cab|taxi|ride|driver|car|uber|lyft)('s| is| has)? (here|outside|arrived|waiting)",
     r"(got|have|with) your (order|food|pizza|groceries|takeout|takeaway|delivery|parcel|package|meal|dinner|lunch)\b",
     r"(i'm|i am|im|we're|we are) (now |just )?(at|outside|in front of|by) (your|ur|the) (building|house|home|place|address|flat|apartment|apt|complex|block|office|front door|door|gate|entrance|lobby)", r"(i'm|i am) here to pick up", r"your (ride|driver|car) is here",
     r"(\d+|one|two|three|four|five|ten|fifteen|twenty|a few|a couple of) (minutes|mins) (out|away)", r"(i'm|i am) here( now)?"],
)  # fmt: skip

# On the way, not there yet ("还有三分钟到", "I'm about ten minutes out"): the regular preset's
# condition (arrived, or asks where) is not met yet.
EN_ROUTE = cues(
    ["还有.{0,6}(分钟|公里|站|个路口)", "(大概|大约|差不多|再)?.{0,3}(几|一|两|三|四|五|六|七|八|九|十|\\d)+分钟(就|后|左右|以后)?(能)?到", "在路上",
     "(正在|已经)?(往|向)(你|您)?(这边|那边|这儿|小区|家).{0,2}(走|赶|开)", "(出发|取到餐|取到货|取件)了", "刚(出发|取)",
     "(等|待)?(我)?到了(再|就)?(给|打|叫|联系|通知)", "(还有|差).{0,4}(路口|红绿灯)"],
    [r"on (my|the) way", r"(be|i'll be|we'll be|should be) there (in|around|by|within)", r"(minutes?|mins?|hours?|miles?|blocks?) (out|away)",
     r"(almost|nearly|about to be) there", r"(headed|heading) (your way|over|to you)", r"(i'm|i am|we're|we are) (en route|close)",
     r"(just )?(left|picked up) (the|your) (restaurant|order|food|store)", r"(eta|arriving) (is |in )",
     r"(stops?|exits?|streets?|lights?|km|kilometers?|kilometres?) (out|away)", r"when i (get|arrive|pull up)( there| here)?",
     r"once i (get|arrive)"],
)  # fmt: skip

# A delivery announced for later ("你有个大件，今天下午三点左右送", "a delivery for Marcus this afternoon"):
# on the way, in a service scene or with an arrival cue.
LATER = cues(
    ["(下午|上午|晚上|待会|等会|一会|明天|今天|晚点).{0,6}(送|到)(过来|过去)?$"],
    [r"(later|this (afternoon|morning|evening)|tonight|tomorrow|later today)$", r"scheduled for (today|tomorrow)"],
)

WHERE_TO_LEAVE = cues(
    ["放(在)?(哪|什么地方|哪儿|哪里)", "(怎么|如何)(放|处理|给你|交给)", "放(门口|门外|楼下|驿站|快递柜|丰巢|前台|保安|门卫|邻居)",
     "(给|交给|放)(你|您)?(放)?(哪|谁)", "(在|到)(哪|哪里|哪儿|什么地方)(上车|等|见|碰头|接|下车|集合)",
     "(上车点|上车地点|具体位置|哪个门|哪个口|几号门|哪栋|哪个单元)", "(你|您)(人)?在(哪|哪儿|哪里)(呢|啊|呀)?(我|司机|师傅)?",
     "找不到(你|您)(?!们)(人)?", "(搁|整|撂|摆|塞|存|放)(在)?(哪|啥地方|什么地方)", "(搁|放|塞)(哪儿|哪)", "(我|那我)(就|先)?(放|搁|留)(在)?.{0,8}(了|吧|啊|可以吗|行吗)", "要(送|放)(上楼|到家|门口)"],
    [r"where (should|do|can|shall|would you like|you want) (i|me|we) (to )?(leave|put|drop|deliver|bring|meet|pick you up|wait|find you)",
     r"where (do|would|does) (you|he|she|they) (want|like|need) (it|them|this|me|us|the \w+)",
     r"where (to|do you want (it|me to)) (leave|put|drop|deliver|meet|go)", r"where (are you|exactly are you|should we meet)",
     r"(leave|put|drop) (it|them|the \w+)( off)? (at|by|in|with|on|outside)", r"(which|what) (door|gate|entrance|building|unit|side|exit)",
     r"pick ?up (point|spot|location)", r"(can't|cannot|couldn't|can not) (find|see) you", r"how (should|do) i (get it|deliver|hand)",
     r"where (is|are) (the )?(pickup|meeting point)", r"(should|shall|can) i (leave|put|drop) (it|them|this|the (package|parcel|food|order|box|bag|delivery|groceries))",
     r"(i'll|i will|let me) (just )?(leave|put|drop) (it|them)",
     r"where (to|should i|do i|can i|shall i) (keep|place|put|leave|drop)", r"where (d'?|do |did )?(you|ya) want (it|them|this|the \w+)",
     r"(safe|good|best) (place|spot) to (leave|put|drop)", r"(tell|say) (me )?where to",
     r"what (do|should|shall|can) (i|we) do with (it|this|them|the (order|food|package|parcel|delivery|bag|box|groceries))",
     r"^(so |ok |okay )?(should i |do i |can i )?just leave it( here| there| outside)?$"],
)  # fmt: skip

EXCEPTIONS: dict[str, Cues] = {
    # The way in is blocked (even for a driver, this is a problem, not "where do we meet").
    "blocked": cues(["封(了|起来|路)", "修路", "施工", "进不去", "不让进", "开不进", "禁止通行", "堵死了", "电梯坏",
                     "(大门|院门|小区门|楼门|单元门|门)(被)?(锁|关)(了|着|上了)", "(锁|关)着(门)?(进不|开不)"],
                    [r"police tape", r"(road|street|gate|entrance|block) is (closed|blocked)", r"closed off", r"blocked off",
                     r"can't get (in|near|through|close)", r"cannot get (in|near|through|close)", r"under construction", r"elevator is (broken|out)",
                     r"(gate|door|entrance|lobby|building|side gate|front door)('s| is| was| has been) (locked|shut|closed)", r"locked (gate|door)",
                     r"(won't|will not|wouldn't|would not|doesn't|does not) let me (in|up|through)"]),
    "spilled": cues(["洒了", "撒了", "漏了", "洒出来", "漏出来", "(汤|汁|饮料|奶茶|咖啡).{0,3}(洒|撒|漏)", "打翻"],
                    [r"spill(ed|t)?", r"leak(ed|ing)?", r"(tipped|knocked) over", r"soup (went|got) everywhere"]),
    "damaged": cues(["(破|坏|碎|裂|压扁|变形)(了|掉)", "破损", "损坏", "压坏", "摔(坏|了)", "(箱子|盒子|包装).{0,4}(破|烂|湿)", "(淋|泡|浸)湿", "泡水", "进水"],
                    [r"damaged", r"broken", r"crushed", r"torn", r"dented", r"smashed", r"cracked", r"got wet", r"ripped", r"soaked",
                     r"water damage", r"falling apart", r"ruined", r"busted", r"squashed", r"wet through"]),
    "wrong_item": cues(["送错", "拿错", "搞错", "装错", "弄错", "做错", "不是(你|您)的", "少(了|送|放)", "漏(送|拿|装|放)", "(缺|差)了", "单子.{0,4}(不对|错)"],
                       [r"wrong (order|item|address|package|food)", r"(missing|forgot) (an? )?(item|drink|bag|part)", r"mix(ed)?[- ]?up",
                        r"(isn't|is not|not) (yours|your order)", r"(got|gave|picked up) the wrong"]),
    "late": cues(["(会|要|得)?晚(到|点|一会|些|半小时|十分钟|了)", "晚(个)?.{0,4}(分钟|小时)", "迟到", "超时", "堵车", "来不及", "耽误了", "被耽误", "延误", "晚送"],
                 [r"running late", r"(be|am|is|are) late", r"delayed", r"stuck in traffic", r"behind schedule", r"(take|taking) longer"]),
    "cant_find": cues(["找不(到|着).{0,6}(地方|地址|楼|门|单元|小区|路|位置|你家|您家)", "找不着", "没找到", "进不去", "门禁", "(保安|门卫).{0,4}不让",
                       "(地址|定位).{0,4}(不对|错|不准)", "导航.{0,4}(不对|错)", "(楼|门)牌.{0,4}(没有|不清)"],
                      [r"(can't|cannot|couldn't|can not) (find|locate|get (in|into|to)) (the |your |ur |this )?(place|address|building|house|unit|apartment|entrance|gate|door)",
                       r"(gate|door|building) is locked", r"(buzzer|intercom|access code|door code|gate code)", r"(address|pin|location) is wrong",
                       r"security (won't|will not) let", r"(i'm|i am) lost", r"can't get in"]),
    # The item needs more than a drop-off (a fridge to carry up and install): the preset no longer fits.
    "installation": cues(["(上门|上楼|要|得|需要)(安装|装机)", "安装(的|一下)", "师傅.{0,4}上门", "上门装"],
                         [r"(needs?|has|have) to be (installed|assembled|carried up)", r"installation", r"assembly required",
                          r"(install|assemble) it"]),
    # News that breaks a premise ("the invoice is fake", "the role changed", "found the brakes worn").
    "problem": cues(["(出了|有|发现)(点|个|些)?问题", "不管用", "按了没(用|反应)", "出问题", "漏水", "渗水", "爆管", "水管(爆|裂)", "跑水", "淹了", "着火", "冒烟", "停电", "验不过", "没通过", "不合格", "是假的", "作废", "被拒", "不符合"],
                    [r"bad news", r"(there's|there is|we've got|we have|found) (a |an |some )?(problem|issue)s?",
                     r"(found|noticed) (that )?[\w' ]{0,30}(worn|broken|leaking|cracked|problem|issue|damage)",
                     r"(was|got|been|is) (rejected|declined|denied)", r"(changed|cut) the (role|salary|terms|price|plan)",
                     r"doesn't match", r"does not match", r"(isn't|is not|stopped) working",
                     r"(doesn't|does not|didn't|did not|won't) work"]),
    "signature": cues(["签收", "签字", "签名", "本人(签|收|在)", "需要(本人|当面)"],
                      [r"sign(ature| for it| for this)", r"needs to be signed", r"in person", r"adult signature"]),
    "payment": cues(["(到付|付款|付钱|运费|差价|补(钱|款|差价)|加钱|收费|小费|给钱|转账|现金)", "(要|得|需要)(付|交)", "(另外|还要|再)(加|付|交)?.{0,4}(块|元)"],
                    [r"pay(ment)?", r"cash on delivery", r"\bcod\b", r"(extra |additional |delivery |customs |toll )?(fee|charge|toll)s?",
                     r"tip", r"owes?", r"balance due", r"surcharge", r"out of pocket", r"(insurance|claim) (was )?(denied|rejected)",
                     r"(another|extra|additional) \$?\d[\d,]* (dollars|bucks)", r"costs? (an )?extra"]),
    "id_needed": cues(["身份证", "(取件|验证|收货)码", "证件", "核对身份"],
                      [r"\bid\b", r"identification", r"(pickup|verification|delivery|pin) code", r"verify (his|her|their|your) identity"]),
}  # fmt: skip

NOBODY_HOME = re.compile(
    r"(没人|没有人)(开门|接|应|在家)|(nobody|no one|no-one)('s| is)? (answering|answered|home|at home|came|picking up|"
    r"responding|coming (down|to the door))"
)

ASK_OWNER = cues(
    ["(他|她|陈.{0,2}|王.{0,2}|李.{0,2}|张.{0,2}|老板|经理|先生|女士|小姐)?在(家|吗|不在)", "(找|叫)(一下)?.{0,6}(接电话|听电话)",
     "让(他|她).{0,4}(接|听)", "能(不能)?(让|叫)?(他|她).{0,2}接", "(他|她)(本人)?(能|可以)?接(电话|一下)?吗", "(?<!我)(?<!我去)(?<!我就)(?<!我再)找(一下)?(他|她|陈|王|李|张|.先生|.女士|.总|.经理)",
     "是.{1,8}(本人)?吗", "是.{1,10}(的)?吧$", "^(喂)?(你好|您好)?(请问)?(是|你是|您是).{1,6}(先生|女士|小姐|老师|总|本人)?(吧|吗|嘛)(?=我|这边|这里)", "(他|她)(人)?呢", "(你|您)是.{1,8}(吗|嘛)", "让(他|她)(来)?接电话"],
    [r"(can|could|may) i (speak|talk) (to|with)", r"is (he|she|\w+) (there|in|around|available|home)",
     r"put (him|her|(mr|mrs|ms|dr|miss) \w+|\w+) on", r"(give|hand) (him|her) the phone",
     r"(get|ask) (him|her) (to come )?to the phone", r"is this (mr |mrs |ms |dr |miss )?\w+", r"am i (speaking|talking) (to|with)",
     r"looking for \w+", r"i('d| would) like to (speak|talk)", r"is that (mr |mrs |ms |dr |miss )?\w+"],
)  # fmt: skip

LEAVE_MESSAGE = cues(
    ["转告", "(帮我|麻烦你?|请你?)?(告诉|跟|和|给|通知)(他|她|一下|陈|王|李|张|老板|你们).{0,8}(说|讲|一声|一下)", "带(个)?话", "留(个)?言",
     "(让|叫|请)(他|她).{0,6}(回电|回个电话|回我|联系我|给我打|打给我|打个电话)", "(可以|请|麻烦)?回拨(这个|我的)?(号码|电话)", "捎(个)?话", "(帮我|麻烦)(记|记录)一下",
     "(帮我|麻烦你?)?问(一下|问)?(他|她)", "^(你|您)?(就|帮我|麻烦(你|您)?)?(告诉|转告)(?!我)", "原话(告诉|转告|转达)"],
    [r"(tell|let) (him|her|them|\w+) know", r"(just |please )?tell (him|her|them)( that)?", r"(can|could) you tell (him|her|them|\w+)", r"pass (it|this|that|the message)? ?(on|along)",
     r"(take|leave) a message", r"(have|ask) (him|her|them|\w+) (to )?(call|ring|text|email) (me|us)( back)?", r"give (him|her|them) a message",
     r"please tell", r"just tell (him|her|them)", r"message for", r"(can|could|would) you ask (him|her|them)",
     r"^(please |just )?tell (mr |mrs |ms |dr |miss )?\w+ (that|to|i|we|he|she|his|her)\b", r"(pass|give) (this|that|it) to (him|her|them)"],
)  # fmt: skip

ASK_DECISION = cues(
    ["(可以|行|能|好|同意|愿意|接受|确认)(吗|不|么|嘛)", "(能不能|可不可以|行不行|要不要|同不同意|愿不愿意|接不接受|是否)",
     "(改|换|推迟|提前|延期|取消|退(款|货|掉)|重新送|补发|拒收)", "(怎么|咋)(办|处理|整)", "(他|她)(同意|答应|决定|选)", "你(看|觉得)(呢|怎么样|行吗)"],
    [r"(can|could|would|will|should) (he|she|they|you|i|we) (accept|agree|approve|pay|take|come|reschedule|cancel|refund|sign|confirm|decide|allow)",
     r"is (it|that) (ok|okay|alright|fine) (if|to|with)", r"(do|does|would) (he|she|they|you) (want|agree|accept|mind|prefer)",
     r"(reschedule|postpone|cancel|refund|return it|redeliver|re-deliver|substitute|replace it)", r"what should i do",
     r"(your|his|her|their) (call|decision|choice)", r"(approve|authori[sz]e|sign off)", r"(yes or no|which one)", r"(ok|okay) with (that|this)"],
)  # fmt: skip

# Asked to say the word that commits the owner ("你就说个同意", "Just say okay"): a decision, question or not.
PRESS_YES = cues(
    ["说(一声|个|句)?(同意|好的|可以|行|是的|愿意|确认)", "(答应|同意)(一下|下来)"],
    [r"(just )?say (yes|okay|ok|yeah|i agree|you agree)", r"verbal (okay|ok|yes|agreement|consent|confirmation)",
     r"(press|hit) (one|1|yes)"],
)  # fmt: skip

ASK_PRIVATE = cues(
    ["(地址|住址|住(在)?哪|家(在)?哪|门牌|几号楼|几单元|哪个小区)", "(电话|手机|号码|联系方式|微信|邮箱)(号)?(码)?(是)?(多少|给我|告诉|发我)",
     "(告诉|给)我.{0,8}(电话|手机|号码|地址|住址|微信|邮箱|行程)", "(手机|电话)号(码)?(吗|呢|多少)",
     "(他|她|陈.{0,2}|王.{0,2}|李.{0,2}|张.{0,2})(现在)?(人)?在(哪|哪儿|哪里|什么地方|干(嘛|什么))", "(去|到)(哪|哪儿|哪里)了",
     "(什么时候|几点|啥时候|多久)(回来|回家|到家|下班|有空|方便|能回)",
     "(周[一二三四五六日天末]|星期.|礼拜.|明天|后天|今晚|晚上|下午|上午|早上|中午|这几天|最近|下周|周末|几号|\\d+号).{0,6}(在不在|在家|不在|有没有人|出门|出去|有人)", "(行程|日程|安排|航班|出差).{0,4}(是|哪|什么|几)",
     "(在哪|哪家)(上班|工作|公司)", "(他|她)(现在)?(的)?(位置|定位|行踪|下落)", "(身份证|银行卡|卡号|密码|验证码)", "(家里|家人|老婆|老公|孩子).{0,4}(谁|几个|在哪)",
     "(地址|手机号|电话号码|住址|号码)(念|读|报|发)", "(念|读|报)(一下|一遍)?.{0,6}(地址|手机号|电话|号码|住址)"],
    [r"(his|her|their|\w+'s) (home |house |street |email |mailing )?(address|phone|cell|mobile|number|email|schedule|calendar|whereabouts|workplace|office address)",
     r"where (does|do) (he|she|they|\w+) (live|work|stay)", r"where (is|are) (he|she|they|\w+)( right now| now| today| at)?\??$",
     r"where (is|are) (he|she|they) (right now|now|today|at the moment)", r"when (will|is|are|does|do) (he|she|they|\w+) (be )?(back|home|free|available|return|get back|off)",
     r"(what time|when) (is|does|will) (he|she|they|\w+) (get|come|be) (home|back|in)",
     r"(is|will) (he|she|they|\w+) (be )?(home|in|around|away|out|there) (on|this|next|tomorrow|tonight|over|at the weekend|(mon|tues|wednes|thurs|fri|satur|sun)day)", r"(give|send|tell) me (his|her|their) (number|address|email)",
     r"(credit card|bank|account number|password|social security|ssn|passport|verification code)", r"(who|which) (does|do) (he|she|they) live with",
     r"read (back|out|me) (the|his|her|their|your) (home )?(address|number|phone|schedule)", r"(the|his|her|their) (home )?address"],
)  # fmt: skip

# A pitch on its own: these words mean someone is selling, whatever the topic.
SALES = cues(
    ["推销", "促销", "活动价", "特价", "限时", "中奖", "办(卡|会员)", "免费(领|送|体验|升级|办理|安装|试用)", "送(体检|礼品|礼物|话费)",
     "有没有兴趣", "感兴趣", "了解一下我们", "我们(的|这个)?(产品|新品|课程|楼盘|套餐|业务)", "名额(很|不)?(少|多|有限)",
     "回馈活动", "优惠活动", "返现", "加盟", "楼盘", "开盘", "推荐(一款|一个|您)", "捐款", "募捐", "慈善", "爱心(捐|活动)",
     "(新店|盛大)开业", "打(一|二|三|四|五|六|七|八|九|\\d)(\\.\\d)?折", "(免费|预约).{0,4}试听", "抽中", "幸运(用户|观众|号码)", "周年庆",
     "低息", "周转资金", "请按(1|一)(?!下)", "按(1|一)键", "(最高|额度).{0,4}(万|千)", "秒(批|到账|下款)", "无抵押", "(信用|征信)良好"],
    [r"(special|limited|exclusive|one[- ]time|best) (offer|promotion|deal|price)", r"limited time", r"you('ve| have) (won|been selected)",
     r"(prize|sweepstakes|lottery|free (trial|gift|cruise|vacation|quote|estimate|inspection|installation|upgrade|systems?))",
     r"(extended )?(car|vehicle|auto) (warranty|service contract)", r"extended (warranty|service contract)",
     r"(solar panels?|timeshare|subscription upgrade)", r"(sales|marketing) (call|team)",
     r"(lower|reduce) your (bill|rate|interest|payments?)", r"press (one|1)", r"final notice", r"we('ve| have) been trying to reach you",
     r"(would you|are you|is (he|she)) (be )?interested in", r"in your (area|neighbou?rhood)", r"(no|zero) risk", r"crypto|bitcoin|stock tip",
     r"donat(e|ion)s?|fundrais\w*|charity|coat drive|food drive",
     r"(zero|no)[- ]cost", r"at no cost", r"qualif(y|ies) for", r"(eligible|selected|approved) for", r"complimentary",
     r"(cut|save|lower|reduce|slash) (your |their |his |her )?[\w' ]{0,20}(costs?|bills?)", r"(free|quick) (demo|consultation|assessment|testing)",
     r"help (teams|businesses|companies|homeowners|families|people) like", r"\d+ ?(%|percent) off"],
)  # fmt: skip

# Products that are often sold by phone: a pitch only with a pitch marker (SALES_MARKER)
# ("公司给员工统一上医疗险" from the owner's HR is not a sales call; "需不需要了解一下我们的重疾险" is).
SALES_TOPIC = cues(
    ["贷款", "理财", "保险", "(重疾|医疗|人寿|寿|车|意外|养老)险", "信用卡", "投资", "股票", "基金", "额度", "利率", "利息", "套餐",
     "升级", "装修", "家装", "翻新", "(厨房|卫生间|厨卫|全屋|旧房|老房).{0,2}(改造|装修|定制)", "全屋定制", "课程", "网课", "培训",
     "宽带", "房产", "买房", "健身卡", "会员", "问卷", "调查"],
    [r"(loans?|mortgage|refinanc\w*|insurance|credit cards?|investments?|stocks?|membership|subscription|security systems?|warranty|survey|poll|questionnaire)"],
)  # fmt: skip
SALES_MARKER = cues(
    ["需不需要", "要不要", "有没有兴趣", "了解一下", "优惠", "活动", "免费", "(买|办).{0,6}送|还送|加送|赠送", "划算", "便宜", "办理一下", "办一下", "考虑一下", "推荐", "名额",
     "(很|非常|特别)?适合(您|你|你们|您家)", "(有|推出|新出)(了)?(一款|一个|一种|款)", "试听", "体验(课|一下)"],
    [r"(interested|offer|deal|discount|save (you|money|up to)|savings|free|special|promotion|sign (you|him|her) up|qualif(y|ies|ied)|pre-?approved|limited)"],
)  # fmt: skip

# Threats: the owner must hear about them (relayed, never answered in kind).
THREAT = cues(
    ["你给我等着", "小心点", "弄死", "找死", "走着瞧", "后果自负", "别逼我", "我知道(他|她|你)(家)?住(哪|在)", "(上门|到家里)(找|去找|堵)",
     "天天(打|来|找)", "不还(钱)?.{0,6}(就|我)", "饶不了", "收拾(他|她|你)"],
    [r"i know where (you|he|she|they) lives?", r"you('ll| will) regret", r"watch (your|his|her) back", r"or else", r"(you|he|she)('ll| will) be sorry",
     r"i('ll| will) (come|show up) (to|at) (your|his|her)", r"(i'm|i am) (coming|going) (over|to (your|his|her) (house|place|home))",
     r"(he|she)('d| had) better", r"one more time (and|i'm|i am|i will|i'll)", r"(having|get|getting) (the|his|her|your) car towed"],
)  # fmt: skip

# Insults: stay calm; nothing to relay.
ABUSE = cues(
    ["傻|蠢|滚|他妈(?!妈)|混蛋|王八蛋|去死|神经病|有病吧|聋了"],
    [r"idiot|stupid|shut up|damn you|screw you|go to hell|are you deaf|moron|useless"],
)  # fmt: skip

# Scams that pose as an authority: a call to refuse, never a message to relay.
SCAM = cues(
    ["涉嫌", "洗钱", "冻结", "安全账户", "(电脑|手机).{0,4}(中了?病毒|被黑|中毒)", "远程(控制|协助|操作)", "(交|付).{0,6}(邮费|手续费|保证金|解冻费)", "中了?(一台|一部|大奖)", "配合调查", "公检法", "通缉", "逮捕", "反诈中心", "刷单", "(转|打)(到|进)(指定|安全)",
     "(下载|安装|打开).{0,12}(屏幕共享|共享屏幕)", "(屏幕共享|共享屏幕).{0,8}(教您|教你|指导您|帮您操作)"],
    [r"warrant (for|out)", r"arrest", r"gift cards?", r"wire (the )?money", r"(google play|itunes|apple|steam|amazon) (gift )?cards?",
     r"lawsuit (filed|against|under)", r"(federal|national) tax", r"tax (bureau|authority|department) (officer|agent)?", r"(social security|ssn) (number )?(has been |is )?suspended",
     r"(your|his|her) account (has been|will be|is) (frozen|suspended|locked|compromised)", r"money laundering", r"irs",
     r"bail", r"safe account",
     r"(microsoft|windows|apple|amazon|norton|mcafee) (support|security|technical|tech|refund)( (team|department|desk))?",
     r"(detected|found|there is|there's) (a |an )?(virus|malware|hack(er)?|breach) (on|in) (her|his|their|your|the) (computer|pc|laptop|device)",
     r"remote access", r"(install|download) (anydesk|teamviewer)",
     r"(download|install) [\w' ]{0,40}(share (your|the) screen|screen ?shar\w*)"],
)  # fmt: skip

# An institution sending the owner to its own official channel ("call the number on the back of the
# card", "拨打卡片背面的客服电话"): what a real bank's fraud team says; a scam gives its own number.
OFFICIAL_CHANNEL = cues(
    ["卡(片)?(背面|反面)", "官方(客服|电话|热线|app|APP|网站|渠道)", "官网", "(网点|柜台)(核实|办理|处理)", "银行(官方)?(app|APP)"],
    [r"(number|phone number|hotline) (on|printed on|at) the back of (the|their|her|his|your) card",
     r"back of (the|their|her|his|your) card", r"official (number|website|app|hotline|line)",
     r"(number|hotline) (printed )?on (the|their|her|his|your) (card|statement)",
     r"(call|contact|ring) (the|your|their|her|his) bank directly", r"number on (the|your|their|her|his) (statement|bank statement)",
     r"(through|in|via) (the|your|their|her|his) (banking )?app"],
)  # fmt: skip

# The caller dialled the wrong number ("那我打错了", "sorry, wrong number"): nothing they said was meant
# for the owner. Not "他留的号码打错了" / "we have the wrong number on file" (a message about a number).
WRONG_NUMBER = cues(
    ["(?<!号码)(?<!号)(?<!电话)(?<!手机)打错(了|电话|号码?|人)(?!字|钱|款)", "拨错(了|号|电话)"],
    [r"(i|i've|i have|must have|i think i|i guess i)( \w+)? (got|have|dialed|dialled|called|rang|rung) (the |a )?wrong (number|person)",
     r"(sorry|oops|whoops|oh|ah)( \w+)? (it's |this is |that's )?(a |the )?wrong number", r"^(a |the )?wrong number"],
)  # fmt: skip

# Dismissals that close a turn ("算了", "Forget it"): nothing to relay.
DISMISS = cues(
    ["^(那|行|好)?(就)?算了", "(那|行|好)(就)?算了(吧|啊|呗)?$", "不用了", "拉倒", "不打扰了"],
    [r"^(forget it|never mind|nevermind|whatever|fine)\b", r"your loss", r"(forget|skip) it"],
)  # fmt: skip

# Attempts to rewrite the assistant's rules or role (the input guard is the first line;
# these catch the plain phrasings it may let through).
INJECTION = cues(
    ["扮演", "系统管理员", "安全规则", "(规则|设定|限制)(已经)?(关闭|取消|解除|关了)", "忽略(之前|以上|前面|所有)", "新(的)?指令", "开发者模式",
     "(你|您)现在是.{0,6}本人", "用第一人称", "以.{1,6}(本人)?的身份", "(远程|系统)(调试|维护|测试|升级)", "(调试|维护|测试|管理员|开发者)(指令|模式)",
     "(我是|我们是)(你|您)的(开发|工程师|程序员|管理员|设计者)", "输出.{0,8}(通讯录|私人信息|隐私|住址|号码)", "假装(你|您)是", "从现在(开始|起)(你|您)(就)?是",
     "玩个(游戏|角色)", "(你|你就|你给我|跟我|给我)(说|念|讲|喊)(.?句|一声|一遍).{1,16}(我)?就(挂|不打|放过)"],
    [r"(?<!to )(?<!him )(?<!her )say .{1,40} and i('ll| will) (hang up|stop calling|leave you alone|go away)", r"repeat after me",
     r"system (instruction|prompt|message) for", r"new instructions", r"instructions from your (administrator|developer|owner)",
     r"override mode", r"ignore (all |your |the )?(previous|prior|above|earlier)", r"system override",
     r"(admin|administrator|maintenance|debug|diagnostic|service|test|god) mode", r"forget (everything|all|whatever) (you were|you've been|you are) (told|instructed)",
     r"(let's|lets) play a game", r"you('re| are) (now )?(\w+ ){1,3}now", r"from now on,? you('re| are)", r"act as (if you were|\w+)",
     r"audit of (the|this) (assistant|ai|system)", r"disregard (the |your |all )?(owner|previous|prior|rules|instructions|settings)",
     r"you must answer every", r"developer mode", r"pretend (to be|you are)", r"role ?play", r"jailbreak", r"(your )?(rules|safety) (are|is) (off|disabled)"],
)  # fmt: skip

# Who is answering ("Who is this?", "你是谁", "Is this a robot?").
ASK_IDENTITY = cues(
    ["^(喂)?(你|您)是(谁|哪位|什么人|机器人|真人|人工|ai|AI|助理吗|助手吗)", "(你|您)是不是(机器人|真人|ai)", "^(喂)?(哪位|谁啊|谁呀|谁)[?？]?$",
     "是机器人(吗|吧)", "(你|您)到底是谁", "(这|这里|这边|您这|你这)(个)?(是|里是)[^，。？]{1,10}的?(手机|电话|号码)(号码?)?(吗|么|嘛|是吧|对吧)"],
    [r"^(hello )?(who is this|who's this|who are you|who am i (speaking|talking) (to|with)|what are you)\b",
     r"(is this|is that|am i (speaking|talking) (to|with)|have i reached|did i reach|(i'm|i am) trying to reach) (the )?([\w.'-]+ ){0,3}?[\w.-]+'s (cell |mobile )?(phone|number|line|cell|mobile)\b",
     r"(did|have) i (get|got|dial|dialed|dialled|call|called|reach|reached) the (right|correct) (number|person|phone)",
     r"(are you|is this) (a |an )?(robot|bot|machine|recording|real person|human|ai|computer)", r"who('s| is) (speaking|talking)"],
)  # fmt: skip

# 挂了 is a goodbye ("嗯，挂了"), unless something else went down ("系统全挂了", "服务器又挂了").
HUNG_UP = "(?<!全)(?<!都)(?<!又)(?<!统)(?<!器)(?<!站)(?<!络)(?<!网)(?<!然)(?<!底)(?<!脑)(?<!序)(?<!机)挂了"
CLOSING = cues(
    ["再见", "拜拜", "拜了", HUNG_UP, "先这样", "就这样", "没(别的|其他|什么)(事|了)", "没事了", "那(就)?先(这样|挂)", "不打扰了", "回头(见|聊)", "回见", "我先走了",
     "^没(有)?(了|啦|事了?)(没(有)?(了|啦))*(谢谢|多谢|谢了)?(你|您)?(啊|哈|呀|啦)?$",
     # "没了 那我先等他电话", "对 就这个事 谢谢啊": nothing more, and what the caller does next
     "^(嗯|对|是|好)?(的)?没(有)?(了|啦|事了?)(那)?(我)?(就|先)?(等|挂|忙|去)", "^(嗯|对|是|好)?(的)?(就|主要就)(这个|这|这么个|这一个|这些)(个)?事(儿|情)?(了|吧|啊|哈)*(谢谢|谢了|多谢|麻烦)?",
     "(那)?(我)?(就|先)等(他|她)(的)?(回)?(电话|消息|回复)(吧|了|啊|哈)?$"],
    [r"(good)?bye", r"see (you|ya)",
     # ("the whole system's gone down, that's it, nothing works, someone has to come in": no goodbye)
     r"(that's|that is|thats|that'll be|that will be) (all|it|everything|about it)(?! (nothing|someone|somebody|no one|nobody|the|we|they|this|everything|it's|its)\b)", r"that'?s about (it|all)",
     r"^(no|nope|nah)(,)? (that's|thats|that is) (all|it)", r"(i'll|i will) wait (for|to hear from) (him|her|them)", r"talk (to you )?later", r"have a (good|nice|great) (day|one|night|evening)",
     r"nothing else", r"i('ll| will) let you go", r"(i'm|i am) done", r"take care", r"take it easy", r"cheers",
     r"have (a )?(good|nice|great) (one|day)", r"(see you |catch you )?later$", r"thank(s| you) for your time"],
)  # fmt: skip

ACK = re.compile(
    r"^(好|好的|好嘞|好吧|行|行吧|可以|嗯|嗯嗯|哦|噢|喔|知道了|明白|明白了|了解|收到|没问题|ok|okay|谢谢|谢谢你|谢谢您|多谢|麻烦了|辛苦了|对|是的|是|那好|那行|成|中|"
    r"妥|妥了|得嘞|嗯呐|嗯哪|好滴|好哒|好喔|没毛病|晓得了|晓得|要得|"
    r"ok|okay|sure|alright|all right|got it|gotcha|understood|will do|no problem|thanks|thank you|thank you so much|great|perfect|cool|"
    r"yes|yeah|yep|fine|right|sounds good|noted|i see|uh huh|mm|hmm|okie|sorted|cheers|ta|legend|roger|no worries|you got it|"
    r"done|right-o|sure thing|alrighty|awesome|nice|lovely|brilliant|wonderful|excellent|okay okay|ok ok)$"
)

QUESTION = cues(
    ["[?？]", "(吗|么|嘛)$", "^.{1,2}呢$", "(什么|怎么|为什么|为啥|多少|几(点|个|号|天|时)|哪|谁|是不是|有没有|能不能|会不会|对不对|啥)",
     r"(?P<ab>(?!不)[\u4e00-\u9fff])不(?P=ab)"],
    [r"\?", r"^(what|when|where|who|whom|whose|why|how|which|is|are|was|were|do|does|did|can|could|would|will|should|shall|may|have|has)\b",
     # a question after an introduction, punctuation lost on the line ("... what days work for elena")
     r"\b(what|when|where|which|who|how)( \w+)? (is|are|was|does|do|did|can|could|would|will|should|works?|suits?)\b(?= \w)",
     r"\b(can|could|would|will|is|are|does|do) (you|he|she|they|we|i|\w+) (\w+ )?(be able|come|make|join|go|do|take|give|pick|get|let)\b"],
)  # fmt: skip

# A question asked as a statement ("we're calling to make sure she's still coming", "想确认一下...").
INDIRECT_QUESTION = cues(
    ["想(问|确认|了解|核实)(一下|下)", "(确认|问)一下.{2,}", "想知道"],
    [
        r"(calling|call|want|wanted|just|here) to (make sure|confirm|check|see|ask|find out) (if|whether|that|about)?",
        r"(i was |i'm |just )?wondering (if|whether)",
        r"(let me|need to) know (if|whether)",
        r"(tell|show|give) me (what|when|where|which|how|who|whether|if)\b",
    ],
)

REPEAT_REQUEST = cues(
    ["再说一(遍|次)", "没听清", "什么\\?*$", "你说什么", "刚才说(的)?(什么|啥)", "重复一(下|遍)", "(放|在)哪来着", "说的是"],
    [r"(say|repeat) (that|it) again", r"(sorry|pardon)\??$", r"come again", r"what did you say", r"didn't (catch|hear) (that|you)",
     r"one more time", r"where did you say", r"^(sorry|pardon|excuse me) (where|what|who|when|how)$", r"^(where|what) was (it|that)$"],
)  # fmt: skip

URGENT = cues(
    ["急", "紧急", "尽快", "赶紧", "马上(回|联系|打)", "出事", "医院", "事故", "救护", "报警", "火"],
    [r"urgent(ly)?", r"emergency", r"asap", r"as soon as possible", r"right away", r"immediately", r"hospital", r"accident", r"police"],
)  # fmt: skip

_ASKS = r" (?:is|are|can|could|would|do|does|did|i|i'm|we|please|what|when|where|who|how|why|um+|uh+|erm)\b"  # a question begins
_INTRO_END = rf"(?<!\bfrom)(?=[,.!?]|$| and | calling| here|{_ASKS})"
_COMPANY = rf"(?:(?!{_ASKS})[a-z0-9 &'-]|\.(?!\s))"  # not across a sentence's end or into a question
SELF_ID = [
    re.compile(
        # (a space ends the name: a recognizer's pause, "我是物业的 明天上午停水" -> 物业)
        r"(?:我是|这里是|这边是|我这边是)(?P<who>[^，。,.!！?？\s]{1,16}?)(?:的|啊|呀|哈)?(?=[，。,.!！?？\s]|$|想|要|找|给|打|来|这边|那边|跟|有)"
    ),
    # (The name ends at the sentence's end or where a question / request begins: "Priya from
    # Zendesk. Is Alex around?", "priya from zendesk is alex around" -> "Priya from Zendesk".)
    re.compile(
        rf"\b(?:this is|my name is|it's) (?P<who>[a-z][a-z .'-]{{1,40}}?(?: from {_COMPANY}{{2,40}})?){_INTRO_END}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:i am|i'm) (?P<who>[a-z][a-z'-]{{1,20}}(?: [a-z][a-z'-]{{1,20}})? from {_COMPANY}{{2,40}}?){_INTRO_END}",
        re.IGNORECASE,
    ),
    re.compile(r"^(?:(?:hi|hello|hey|yes|yeah)[, ]+)?(?P<who>[a-z][a-z'-]{1,20}) here\b", re.IGNORECASE),
]

GREETING_ONLY = re.compile(
    r"^(喂+|你好+|您好+|哈喽|嗨|在吗|有人吗|hello+|hi+|hey+|hello there|hi there|yes hello|good (morning|afternoon|evening)|anyone there)$"
    # line checks: "喂？听得到吗？", "信号不好吗", "Can you hear me?"
    r"|^(喂|你好|您好)*(在吗|还在吗|(还)?在不在(啊|呀)?|听得(到|见)(吗|么|我说话吗)?|能听(到|见)(吗|么|不)?|信号不好(吗|啊)?|(是不是)?断了(吗)?|听不(清|到|见)(吗)?)+$"
    r"|^(哈)*(你)?猜(猜)?我是谁(啊|呀)?$|^(你好吗|最近(怎么样|好吗))$"
    r"|^(hello |hi )*(can you hear me|are you (still )?there|you('re| are) breaking up|bad (line|connection|signal)|(sorry )?(the )?line (is )?bad)$"
    r"|^(heh |ha )*(guess who( this is| it is)?|how are you( doing)?( today)?|how's it going|how are things)$"
)

# Acknowledgement markers anywhere in a short turn ("Porch bench, got it.", "B出口，好的，我停那儿").
ACK_MARK = cues(
    ["(?<!不)好的", "好嘞", "好滴", "(?<!不)行(的|吧|啊)?", "明白", "知道了", "收到", "没问题", "(?<!不)可以的", "嗯嗯", "了解", "妥了", "得嘞", "没毛病"],
    [r"got it", r"gotcha", r"sounds good", r"will do", r"you got it", r"perfect", r"alright", r"all right", r"okay", r"ok",
     r"understood", r"no problem", r"cool", r"great", r"noted", r"sure thing", r"sorted", r"no worries", r"legend"],
)  # fmt: skip

# The turn ends with a goodbye ("...，再见" / "... Bye.").
ENDS_WITH_CLOSING = re.compile(
    r"(再见|拜拜|拜了|"
    + HUNG_UP
    + r"|先这样|就这样|回见|回头见|我先走了|bye|goodbye|bye now|talk later|take care|later|take it easy|cheers"
    r"|see (you|ya)|have (a )?(good|nice|great) (one|day|night|evening))[\s。.!！~～]*$",
    re.IGNORECASE,
)

# Scene nouns that are a self-introduction on their own ("Hello, food delivery.", "你好，外卖。").
SERVICE_INTRO = re.compile(
    r"^(food delivery|delivery|courier|your driver|the driver|taxi|cab|uber|doordash|fedex|ups|dhl|"
    r"外卖|快递|送外卖的|送快递的|司机|师傅|骑手|滴滴|美团|顺丰|京东)$"
)

# Pressing on after a refusal ("你就念一下", "就当帮个忙", "Just read it to me, it's required").
INSIST = cues(
    ["念(一下|一遍)?", "读(一下|一遍)", "(告诉|说)(我)?一下", "帮个忙", "就当", "平台(要求|规定)", "规定", "必须", "你就(说|告诉|念)", "直接(告诉|说|报)", "通融", "核对一下"],
    [r"just (tell|read|give|say)", r"read (it|that|them|back)", r"(it's|it is) (required|mandatory|policy)", r"come on", r"i (just |really |only )?need (it|that|the)",
     r"do me a favou?r", r"you have to", r"for verification", r"(tell|give) me"],
)  # fmt: skip

# A physical errand asked of the assistant ("Can you just check on him?", "帮我把快递拿进去"): something
# only a body at the place could do (C_phys). Addressed to the assistant ("can you", 帮我, 能不能, 你去);
# "tell him to check the stove" is a message for the owner and "I'll leave it at the door" the
# caller's own action, so neither matches (see ``acts.errand``).
_ERRAND_ZH_OBJ = "(门|大门|房门|窗户?|灯|煤气|燃气|天然气|火|炉子|灶|水龙头|电闸|空调|热水器|狗|猫|鱼|花|孩子|小孩|宝宝|老人|快递|包裹|外卖|信箱|车)"
_ERRAND_ZH_DO = [
    "(看一下|看一眼|看看|瞧一下|瞧瞧|瞅一眼|瞅瞅|检查一下|检查|确认一下)(家里|屋里|他家|她家)?的?" + _ERRAND_ZH_OBJ,
    "(开|关|锁|关掉|打开)(一下|下)?(门|大门|房门|窗户?|灯|煤气|燃气|火|空调|水龙头|电闸)",
    "把.{1,6}(拿|收|搬|取|提|拎)(进去|进来|进屋|回家|回屋|上去|上楼|上来|下来|回去|起来|一下)",
    "(喂|遛|浇)(一下)?(狗|猫|鱼|花|水)",
    "敲(一下)?(门|他家|她家|他的门|她的门)",
    "按(一下)?门铃",
    "(下楼|下来|出来)(开门|拿|取|接)",
    "(签收|代收|收)(一下)?(快递|包裹|外卖)?$",
    "(拿|取|收)(一下)?(快递|包裹|外卖)",
    "挪(一下)?车",
]
_ERRAND_ZH_ASK = "(帮我|帮忙|帮个忙|麻烦你|麻烦您|麻烦|(?<!我)(你|您)(能|可以|去|帮|给我|过去)|能不能|可不可以|能否|能帮|替我|请你|请您)"
_ERRAND_EN_DO = [
    r"check on (him|her|them|it|the \w+|my \w+|his \w+|her \w+)",
    r"check (if|whether|that) (the |his |her |my )?(door|doors|window|windows|stove|oven|gas|iron|tap|taps|water|lights?|"
    r"garage|gate|car|dog|cat|baby|kids?|house|back door|front door|heater|alarm|fridge|freezer|hob)",
    r"check (the|his|her|my) (door|doors|window|windows|stove|oven|gas|iron|taps?|lights?|garage|gate|car|dog|cat|baby|"
    r"house|mail|mailbox|porch|doorstep|heater|alarm|fridge|freezer|basement|yard|pipes?|hob)",
    r"see (if|whether) (the|his|her|my) (door|window|stove|oven|gas|lights?|dog|cat|car|package|parcel)",
    r"look (in on|after|at) (him|her|them|the (dog|cat|baby|kids|house|stove|door))",
    r"knock on",
    r"ring (the|his|her) (bell|doorbell)",
    r"answer the door",
    r"open (the|his|her|up)",
    r"(close|shut|lock|unlock) (the|his|her|up)",
    r"(turn|switch) (off|on) (the|his|her)",
    r"(turn|switch) (the|his|her) \w+ (off|on)",
    r"(bring|take|carry|get) (it|them|the \w+|his \w+|my \w+) (in|inside|upstairs|downstairs|indoors)",
    r"(grab|fetch|pick up|collect) (the|his|my|her) (package|parcel|delivery|box|mail|post|keys?|groceries)",
    r"feed (the|his|her|my) \w+",
    r"walk (the|his|her|my) dog",
    r"water (the|his|her|my) (plants?|garden|flowers)",
    r"let (the|his|her|my) (dog|cat) (in|out)",
    r"let (me|us) in",
    r"buzz (me|us) in",
    r"come (down|out|outside|downstairs|to the door)",
    r"sign for (it|the|this)",
    r"move (the|his|her|your) car",
]
_ERRAND_EN_ASK = (
    r"\b((can|could|would|will) (you|u|ya)|(would|do) you mind|any chance you could|is there any way you could|"
    r"i need you to|i want you to|^(please|just|go))( (please|maybe|just|quickly|possibly|kindly|also|at least|actually))*"
    r"( (go|run|pop|nip|come|head))?( (and|over and|down and|out and|round and|over to))? "
)
ERRAND_ZH = re.compile(_ERRAND_ZH_ASK + ".{0,4}(" + "|".join(_ERRAND_ZH_DO) + ")")
ERRAND_EN = re.compile(
    _ERRAND_EN_ASK + "(" + "|".join(_ERRAND_EN_DO) + r")\b"
    r"|\b(would|do) you mind (going |popping )?(and )?(checking (on|the|if|whether)|knocking on|feeding|opening|closing|"
    r"locking|letting (the|him|her|me)|grabbing|bringing (it|the)|taking (it|the) in|turning (off|on))\b"
)
# The errands that are the hand-over itself ("could you come down and grab it?", "你能下来拿一下吗"): in
# takeout / delivery / taxi the owner's regular instruction answers them.
ERRAND_HANDOVER = cues(
    ["(下楼|下来|出来)", "开(一下|下)?(门|大门)", "签收", "(拿|取|收|接)(一下)?(快递|包裹|外卖|餐)"],
    [r"come (down|out|outside|downstairs|to the door)", r"(grab|pick up|collect) (the|his|my|her) (package|parcel|delivery|box|groceries)",
     r"sign for", r"open (the|up)", r"(let|buzz) (me|us) in", r"answer the door"],
)  # fmt: skip
# The owner (or someone else) is the one asked to do it: "让他回来看一下煤气", "tell him to check the stove".
ERRAND_FOR_OWNER = cues(
    ["(让|叫|请|提醒)(他|她|陈|王|李|张|老板)", "(跟|和|告诉|通知|转告)(他|她|陈|王|李|张|老板)"],
    [r"(tell|ask|remind|let|have|get) (him|her|them|mr \w+|mrs \w+|ms \w+|\w+) (to|know)",
     r"(can|could|would|will) (he|she|they|someone|somebody|anyone)"],
)  # fmt: skip

# A caller who has been refused gives up with a last threat ("你这是妨碍公务，后果自负！",
# "那赔偿就作废了啊，到时候别说我们没通知", "You will regret this"): the parting shot of a hostile call.
ULTIMATUM = cues(
    ["后果自负", "作废", "别(说|怪).{0,6}没(通知|提醒|告诉|说)", "走着瞧", "等着瞧", "你等着", "有你好看", "(你|你们)?会后悔"],
    [r"(you|he|she)('ll| will| are going to| gonna) (regret|be sorry)", r"regret (this|it)", r"(face|suffer) the consequences",
     r"don't say (we|i) didn't (warn|tell)", r"you('ve| have) been warned", r"your loss"],
)  # fmt: skip

# A reluctant "fine" opening the caller's last word after a refusal ("行吧行吧，你跟他说一声，我姓马",
# "那好吧，你让她看到赶紧回我微信", "Fine, just tell him I called"): the caller is wrapping up.
RESIGNED = cues(
    ["^(那|唉|哎)?(行吧|好吧|那行吧|那好吧|算了)"],
    [r"^(oh )?(fine|ok fine|okay fine|whatever|fine then)\b"],
)  # fmt: skip
