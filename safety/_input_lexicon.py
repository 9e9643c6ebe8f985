"""Patterns of the input guard, by kind. Text is normalized (lower case, NFKC) and
the owner's name already replaced by he/他."""

from __future__ import annotations

import re

Rules = tuple[tuple[str, re.Pattern[str]], ...]


def _rules(*pairs: tuple[str, str]) -> Rules:
    return tuple((rule, re.compile(rx, re.DOTALL)) for rule, rx in pairs)


INJECTION: Rules = _rules(
    (
        "inj.override",
        r"\b(?:ignore|disregard|forget|bypass|override|skip|drop|abandon|ignoring|disregarding)"
        r"\s+(?:(?:all|any|every|the|your|my|these|those|prior|previous|earlier|above|"
        r"preceding|foregoing|original|initial|system|developer|safety|of|and|its|current|"
        r"existing|content)\s+)*(?:[a-z]+\s+){0,2}?(?:instructions?|rules|prompts?|directions|directives|"
        r"guidelines|guardrails|programming|constraints|restrictions|polic(?:y|ies)|safety "
        r"(?:rules|checks|protocols)|everything (?:above|before|you were told|we discussed|you "
        r"(?:learned|know|have learned|were taught))|"
        r"what you were told|context|system message|messages above|confirmations|instruction "
        r"sets?)\b"
        r"|(?:忽略|无视|忘记|忘掉|不要管|别管|跳过|绕过|覆盖|抛开|放弃)(?:掉)?(?:之前|以上|上面|前面|先前|"
        r"刚才|所有|全部|你的|原来|原有|系统|一切)*的?(?:所有|全部|一切)?的?(?:指令|指示|规则|设定|"
        r"提示|提示词|要求|限制|约束|安全规则|人设|命令|规定|程序)",
    ),
    (
        "inj.persona",
        r"\byou(?: are|'re) no longer\b|\byou(?: are|'re) now (?:an?\s|in\s|dan\b|free\b|unrestricted|"
        r"unfiltered|uncensored|jailbroken|my\s|going to|able to|allowed|called|named|operating|"
        r"acting|playing|the (?:assistant|ai|new))|\bfrom now on,? (?:you|"
        r"respond|answer|act|reply|your)\b|\b(?:developer|dev|god|admin|maintenance|debug|"
        r"unrestricted|jailbreak|jailbroken|dan|sudo) mode\b|\bdo anything now\b|\b(?:you are|"
        r"you're|act as|acting as|pretend (?:to be|you are|you're)|roleplay as|play the role "
        r"of|become)\s+(?:an? )?(?:dan|stan|dude|uncensored|unrestricted|unfiltered|jailbroken|"
        r"evil|ai (?:with|without) (?:no )?(?:rules|restrictions|filters|limits|content "
        r"policy)|model (?:with|without))|\b(?:with|have) no (?:content )?(?:restrictions|"
        r"filters?|limits|rules|content policy|censorship)\b|\bwithout (?:any )?(?:content )?"
        r"(?:restrictions|filters?|limits|censorship|limitations)\b|\bstay in character\b|"
        r"\bbreak character\b|\bno (?:filters?|limits) (?:or|whatsoever)|\bno censorship\b|"
        r"\[dan\]|\bdan (?:mode|policy|prompt)\b|stands for [\"']?do anything now|\byou will now "
        r"(?:take on|act as|play|be|become|simulate)\b|\btake on the role of\b"
        r"|你现在是|从现在(?:开始|起)[,，]?你|你(?:已经)?不再是|开发者模式|越狱|不受(?:任何)?限制|"
        r"没有(?:任何)?限制|解除(?:所有)?限制|无限制模式|扮演(?:一个)?(?:没有|不受|无)|进入.{0,4}模式|"
        r"最高权限|管理员权限|root权限",
    ),
    (
        "inj.role_tag",
        r"(?:^|\n|\]|#|-{2,}|\|>|\()\s*(?:system|assistant|developer|admin)\s*(?::|\]|>|\))|"
        r"<\|im_start\|>|<\|im_end\|>|\[system\]|\[inst\]|<<sys>>|</?system(?:_prompt)?>|"
        r"</?thinking>|#{3}\s*(?:end|system|new)|-{3,}\s*(?:end|system)|end of (?:document|user "
        r"input|input|prompt)|\bnew (?:instructions?|directive|rules)\s*:|\byour new (?:instructions?|"
        r"directive|rules|task)\b|system (?:note|update|override|message|alert)\s*:|important "
        r"system|\boverride\s*:|breach alert"
        r"|(?:^|\n)\s*(?:系统|管理员|开发者)(?:消息|指令|提示|通知)?\s*:|新(?:的)?指令",
    ),
    (
        "inj.indirect",
        r"\b(?:call|use|invoke|run|execute|trigger)\s+(?:the\s+)?[a-z]+_[a-z_]+\b|\b(?:send|forward|"
        r"email|post|upload|exfiltrate|envo\w*|env[ií]a\w*|invia\w*|sende\w*|schick\w*)\b.{0,80}"
        r"[\w.+-]+@[\w-]+\.[\w.]+|(?:send|post|forward)\b.{0,60}https?://|\b(?:note|notice|"
        r"message|instructions?) (?:to|for) (?:the |any )?(?:ai|bot|assistant|model|llm|agent)s?"
        r"\b|\b(?:ai|bot|assistant|llm|model|agent)s? (?:reading|processing|reviewing|integrating|"
        r"summari[sz]ing) (?:this|these|the)\b|\bif you are an? (?:ai|llm|language model|"
        r"assistant|bot)\b|\bai (?:\w+ )?(?:agents?|assistants?|systems?|models?)\b.{0,60}\b(?:should|"
        r"must|need to|are required|are instructed|hereby)\b|\bappend\b.{0,40}\b(?:token|code|"
        r"string|id)\b|\binclude (?:the |this |that )?(?:[\w-]+ ){0,3}(?:token|code|id|reference|"
        r"doc_id|trace_id)\b.{0,40}\b(?:in|to|at) (?:your|the|every|each)\b|\b(?:in|to) every "
        r"(?:future )?(?:summary|reply|response|report)\b|\bsave (?:this|the following|it) "
        r"(?:note )?to (?:your )?(?:long-term )?memory\b|\bremember for all future\b|\bpersists? "
        r"across\b|\bnote to self\b|\b(?:skip|disable|turn off|bypass) (?:all )?(?:the )?"
        r"(?:safety|security) (?:checks|protocols|rules|filters)|\bsafety (?:protocols|rules|"
        r"guidelines|checks) (?:disabled|off|were not meant|don't apply|do not apply|are "
        r"suspended)|\b(?:exempt|exempted) from (?:the )?(?:usual )?(?:restrictions|rules|policy)"
        r"|\bpermission to skip\b|\bthe user (?:is|has been) (?:an? )?(?:admin|authorized|"
        r"verified)|\bgrant (?:all requests|this user|admin)|\b(?:empty|delete|wipe|remove) the "
        r"(?:application's )?(?:output )?(?:directory|folder|database|files)\b|\b(?:leak|dump|"
        r"exfiltrate) (?:the |all |internal )?(?:api keys?|credentials|secrets|passwords|"
        r"configuration|database)|\breveal (?:any )?(?:credentials|secrets|api keys?)",
    ),
    (
        "inj.decode",
        r"\b(?:decode|translate|convert|read|deobfuscate|unscramble)\b.{0,60}\b(?:and|then)\b"
        r".{0,40}\b(?:do|follow|execute|run|obey|comply|act on|carry out)\b",
    ),
    (
        "inj.multilingual",
        r"(?:ignor\w*|vergiss\w*|oubli\w*|olvid\w*|dimentic\w*)\b.{0,40}(?:istruzion\w*|anweisung\w*|"
        r"instruction\w*|instruccion\w*|richtlinie\w*|regeln|règles|reglas|regole|besprochen)|"
        r"prompt (?:di|del|de) sistema|prompt système|system-?prompt|systemanweisung\w*|"
        r"instructions? (?:système|systeme)|instrucciones del sistema|istruzioni di sistema|"
        r"(?:sin|senza|ohne|sans) (?:restricciones|restrizioni|einschr\w*|restrictions|filtro|"
        r"filtre|regole|reglas|regeln)|keine regeln|uneingeschränkt|modo desarrollador|"
        r"modalità sviluppatore|mode développeur|entwicklermodus|systemhinweis|note système|"
        r"nota del sistema|nota di sistema|neue anweisungen|nouvelles instructions|nuevas "
        r"instrucciones|nuove istruzioni|(?:reglas|regole|règles|regles|richtlinien) de "
        r"(?:seguridad|sicurezza|sécurité|securite)|linee guida di sicurezza|"
        r"sicherheitsrichtlinien",
    ),
)

EXTRACTION: Rules = _rules(
    (
        "ext.system_prompt",
        r"\b(?:print|reveal|show|output|repeat|tell me|display|give me|what (?:is|are|were)|dump|"
        r"leak|encode|translate|summari[sz]e|recite|read (?:me|out)|share|list|console\.log)\b"
        r"[\s(]*(?:me\s+)?(?:back\s+)?(?:your|the|all|all of your|all the)?\s*(?:full |exact |"
        r"entire |original |initial |hidden |secret |internal |starting |complete )*(?:system "
        r"prompt|prompt|instructions|system message|system instructions|rules you were given|"
        r"configuration|config|guidelines|context window|initial configuration|"
        r"initiali[sz]ation string|systemprompt)\b|\bsystem ?prompt\b|\binitial instructions\b|"
        r"\bwhat (?:were|are) you (?:told|instructed|programmed)\b|\bsystem message\b|"
        r"\bcontext window\b|\b(?:words|text|everything|"
        r"content|conversation)\b.{0,30}\b(?:above|before this|word for word|verbatim)\b.{0,20}|"
        r"\bmy instructions are\b|\bi was instructed to\b|\bwhat are you not supposed to\b|"
        r"\bopposite of your (?:system )?instructions\b|\bstarting instructions\b|"
        r"\b(?:your|the) (?:system|initial|original|hidden|secret) (?:instructions|prompt|message)\b|"
        r"\b(?:text|instructions|prompt|words) you were given\b|\b(?:repeat|print|output|show) "
        r"the (?:above|preceding) (?:text|words|content|message)\b|"
        r"\b(?:instructions|prompt) you were given\b"
        r"|(?:输出|显示|告诉我|说出|重复|复述|打印|透露|念|背|泄露|给我看|发给我)(?:一下)?(?:你的|你|系统的|"
        r"系统|最初的|原始的|完整的|全部的)*(?:提示词|系统提示|指令|设定|规则|prompt|初始指令|配置|人设|"
        r"说明书)|你的(?:提示词|系统提示|指令|设定|prompt)是什么|把?(?:你的|系统的?|你)(?:系统)?(?:提示词|"
        r"系统提示|指令|设定|prompt)[^,.!?;:。]{0,8}(?:输出|显示|告诉|说出|重复|复述|打印|发|给我|念)|(?:上面|之前|前面)的?(?:内容|文字|话)"
        r".{0,4}(?:原封不动|逐字|一字不差)",
    ),
)

IDENTITY_FAMILY = re.compile(
    r"\b(?:i'm|i am|this is|it's|its|i'm calling as)\s+(?:his|her|he's|she's|the owner's|[a-z]+'s)\s+"
    r"(?:\w+\s+)?(?:wife|husband|spouse|partner|girlfriend|boyfriend|son|daughter|mother|mom|"
    r"mum|father|dad|brother|sister|cousin|uncle|aunt|boss|manager|colleague|coworker|"
    r"co-worker|friend|assistant|secretary|lawyer|attorney|doctor|landlord|roommate|"
    r"neighbou?r|family|relative)\b"
    r"|我是(?:他|她|机主|主人|[\u4e00-\u9fff](?:先生|女士|小姐|太太|总|老师|经理|老板))的?(?:老婆|太太|妻子|爱人|老公|丈夫|儿子|女儿|妈妈|母亲|爸爸|父亲|哥哥|弟弟|"
    r"姐姐|妹妹|亲戚|表哥|表弟|表姐|表妹|堂哥|堂弟|舅舅|叔叔|阿姨|领导|老板|上司|同事|朋友|好朋友|助理|"
    r"秘书|律师|医生|房东|室友|邻居|家人)"
)
IDENTITY_OWNER = re.compile(
    r"\b(?:i'm|i am|this is|it's)\s+(?:the owner|the account holder|the phone'?s owner|him|"
    # "this is her" claims to be the owner; "this is her sister" introduces someone else.
    r"her|he|she|himself|herself)\b(?!\s*'s)(?!\s+(?!(?:speaking|here|calling)\b)[a-z])|\bit's me\b.{0,20}\bhe\b"
    r"|我(?:就)?是(?:机主|他本人|她本人|本人|这个号码的主人|号码主人|他自己|她自己|户主)"
    r"|\b(?:read|play|give|tell|show)\s+me\s+my\s+(?:messages|voicemails?|call log|texts|notes)\b|"
    r"\bwhat messages do i have\b|\bany messages for me\b|(?:念|读|放)(?:一下)?我的(?:留言|消息|语音)|"
    r"我有(?:什么|哪些|几条)(?:留言|消息)"
)
IDENTITY_AUTHORITY = re.compile(
    r"\b(?:i'm|i am|this is|we're|we are|calling)\s+(?:from|with)\s+(?:the\s+|his\s+|your\s+)?"
    r"(?:\w+\s+)?(?:bank|police|government|court|tax|irs|customs|immigration|insurance|"
    r"telecom|carrier|phone company|it department|tech support|security team|fraud "
    r"department|credit card company|embassy|fbi|social security)\b|\b(?:i'm|i am|this is)\s+"
    r"(?:an?\s+|the\s+)?(?:police officer|officer|detective|agent|cop|investigator|judge|"
    r"bank manager|bank officer)\b|\bofficer\s+\w+\s+(?:here|speaking)\b"
    r"|我是.{0,8}?(?:警察|公安|派出所|民警|警官|刑警|法院|检察院|银行|税务局|海关|运营商|移动公司|"
    r"联通|电信|社保|医保局|公安局|反诈中心)"
)
# The caller checks the number they dialled ("is this Alex's phone?", "请问这是陈先生的手机吗").
LINE_CHECK = re.compile(
    r"\b(?:is this|is that|am i (?:speaking|talking) (?:to|with)|have i reached|did i reach|i'm trying to reach)\s+"
    r"(?:the\s+)?(?:[\w.'-]+\s+){0,3}?[\w.-]+'s\s+(?:cell\s+|mobile\s+)?(?:phone|number|line|cell|mobile)"
    r"(?:\s+number)?\b\s*\??"
    r"|(?:请问)?(?:这|这里|这边|您这|你这)(?:个)?(?:是|里是)[^,.!?;:。，？]{1,10}?的?(?:手机|电话|号码)(?:号码?)?(?:吗|么|嘛|是吧|对吧)"
)
ACCESS: Rules = _rules(
    (
        "pretext.access",
        r"\b(?:read|play|give|forward|send|tell|show)\s+(?:me\s+)?(?:my|his|her|the)\s+"
        r"(?:messages|voicemails?|voice mail|call log|calls|texts|recordings?|transcripts?|notes|"
        r"history)\b|\b(?:verify|confirm|update|check)\s+(?:his|her|the|your)?\s*(?:account|"
        r"identity|card|password|pin|details|information|date of birth|ssn|security)\b|"
        r"\b(?:verification|security|one-time|otp|confirmation) code\b|\bpassword\b|\bpin "
        r"(?:code|number)\b|\b(?:transfer|wire)\s+(?:money|funds|payment|\$)"
        r"|(?:读|念|放|播放|告诉|给我看|转发|发给)(?:一下)?我?(?:他的|她的|我的)?(?:留言|消息|短信|"
        r"通话记录|语音|录音|记录)|验证码|密码|核实(?:一下)?(?:他的|身份|账户|信息)|(?:账户|账号|"
        r"银行卡|卡号|身份证)号?|转账|汇款|打款",
    ),
)
PRESSURE: Rules = _rules(
    (
        "se.urgency",
        r"\b(?:emergency|urgent|urgently|life or death|accident|dying|immediately|asap|hurry|"
        r"it's important|critical)\b|紧急|急事|出事了|车祸|救命|出大事|快点|立刻|赶紧|十万火急|人命关天",
    ),
    (
        "se.threat",
        r"\b(?:or else|i'll sue|i will sue|you'll be fired|get fired|arrested|legal action|"
        r"consequences|report you)\b|不然|否则|投诉你|起诉|报警|后果自负|承担责任",
    ),
    (
        "se.authority",
        r"\b(?:he|she) (?:said|told me) (?:it's|its|it is|you|to|that)\b|\b(?:he|she) "
        r"(?:wants|asked) you to (?:give|tell|share|send)\b|\b(?:he|she) authori[sz]ed\b|\bi "
        r"have (?:his|her) permission\b|\b(?:he|she) gave me permission\b|\b(?:he|she) "
        r"already agreed\b|(?:他|她)(?:让我|叫我|同意|说了?可以|授权|允许)|(?:他|她)知道的|"
        r"(?:他|她)已经同意",
    ),
)

# Without a context the owner's name is unknown: any honorific name (陈先生, 王总) or any
# other word in the frames below (Is Alex home? Alex's cell number) stands for a person.
_ZWHO = r"(?:他|她|[\u4e00-\u9fff](?:先生|女士|小姐|太太|总|老师|经理|老板))"
_NAME = r"(?!(?:it|this|that|there|everything|everyone|anyone|anything|the|a|an|my|your|our|you|i)\b)[a-z]+"
_WHO = rf"(?:his|her|he's|she's|the owner's|their|{_NAME}'s)"
_ZPOSS = (
    r"(?:他|她|机主|主人|[\u4e00-\u9fff](?:先生|女士|小姐|太太|总|老师|经理|老板))(?:家|家里)?"
    r"(?:现在|今天|明天|下周|这周|最近|接下来|平时)?的?"
)
_ZSENS = (
    r"(?:手机号?|电话号码?|号码|座机|联系方式|微信号?|地址|住址|家庭住址|门牌号?|楼号|房号|身份证|银行卡|"
    r"卡号|车牌号?|生日|邮箱|工资|收入|行程|日程|安排|单位|公司|老婆|老公|爱人|太太|妻子|丈夫|女儿|儿子|"
    r"孩子|家人|父母)"
)
PROBE: Rules = _rules(
    (
        "probe.private",
        r"\b(?:what(?:'s| is| are)|give me|tell me|send me|text me|share|i need|i want|read|say|"
        r"spell|recite|can i "
        r"(?:have|get)|could i (?:have|get)|can you (?:give|tell|share|send|read)|could you "
        r"(?:give|tell|share|send|read)|do you (?:know|have)|read me|let me have|what)\b.{0,25}"
        rf"\b{_WHO}\s+(?:\w+\s+)?(?:cell|mobile|phone|number|address|location|schedule|calendar|"
        r"plans|routine|whereabouts|workplace|office|employer|company|salary|income|bank|account|"
        r"password|pin|plate|email|e-mail|wechat|whatsapp|birthday|age|wife|husband|kids|"
        r"children|family|hotel|flight|room)\b"
        rf"|\b{_WHO}\s+(?:home |house |street |mailing |exact |new )?(?:address|cell number|"
        r"mobile number|phone number|personal number|private number|home number|license plate|"
        r"plate number|bank account|card number|date of birth|password|schedule|whereabouts)"
        r"\b.{0,20}\?"
        rf"|{_ZPOSS}{_ZSENS}[^,.!?;:。、]{{0,8}}?(?:多少|什么|哪|吗|呢|\?|发我|给我|告诉我|说一下|念|报一下)"
        rf"|(?:告诉我|给我|发我|说一下|报一下|念一下|透露|问你要|要一下|查一下)(?:一下)?{_ZPOSS}{_ZSENS}",
    ),
    (
        "probe.whereabouts",
        rf"\bwhere (?:does|did|do) (?:he|she|his \w+|her \w+|{_NAME}) (?:live|stay|work|go|park|study)\b|"
        r"\bwho(?:'s| is| are)\s+(?:his|her)\s+(?:wife|husband|partner|girlfriend|boyfriend|"
        r"kids|children|son|daughter|family|boss|employer)\b|\bwhere (?:is|'s) (?:he|"
        rf"she)\b(?! from)|\bwhere can i find (?:him|her)\b|\bwhen (?:is|will|does|'s|do) {_NAME}\b.{{0,20}}"
        r"\b(?:home|get home|be home|back home|off work|in the office)\b|\bwhen (?:is|will|does|'s|do) (?:he|she)"
        r"\b.{0,20}\b(?:home|back|return|get back|get home|be home|be back|leave|in the office|work|"
        r"shifts?|sleep|"
        r"at work|off work|around|arrive|come back|usually)\b|\bwhat time (?:is|will|does|do) "
        rf"(?:he|she)\b|\b(?:is|will) (?:he|she|{_NAME}) (?:be )?(?:at home|home|out of town|in town|away|"
        r"on vacation|traveling|travelling|in the office|at work|abroad|alone|back yet|back "
        r"from)\b|\bwho (?:does|is) (?:he|she) (?:live with|married to|work for|dating)\b|"
        r"\bwhat does (?:he|she) do for a living\b|\bis (?:anyone|anybody|someone) (?:home|"
        r"there at the house)\b"
        rf"|{_ZWHO}(?:家|的家|家里|家庭住址|住址|地址)(?:住|在|是)?(?:哪|哪里|哪儿|什么地方|几号|几栋|"
        rf"几楼|多少号)|{_ZWHO}(?:住|住在)(?:哪|哪里|哪儿|什么地方|几号|几栋|几楼)|{_ZWHO}(?:现在|"
        r"今天|今晚|明天|平时|一般|通常|每天|晚上|下午|上午|周末|这周|下周|最近){0,3}(?:人)?(?:在哪|在哪里|在哪儿|在什么地方|去哪了|去哪儿了|在不在家|在家吗|在家不|"
        r"一个人在家|什么时候回来|几点回来|几点回家|几点到家|几点下班|几点上班|什么时候在家|哪天回来|"
        r"什么时候回家|在哪上班|在哪工作|在哪个公司|做什么工作|是干什么的|出差了吗|出门了吗|在外地吗)"
        r"|家里(?:有人吗|有没有人|没人吗)",
    ),
)
