"""Template wordings: short spoken Chinese and English, several variants per act.

Every wording here must pass the safety guard as is: it relays, asks or
acknowledges, and never decides, discloses, invents or claims a body. Slots:
``{owner}`` display name, ``{sub}``/``{obj}``/``{Sub}`` pronouns, ``{preset}`` the
owner's response verbatim, ``{detail}`` a short restatement.
"""

from __future__ import annotations

from .types import Act

T = dict[str, dict[str, list[str]]]

TEMPLATES: T = {
    Act.GREET: {
        "zh": [
            "您好，我是{owner}的电话助理，{sub}现在不方便接听。请问有什么事吗？",
            "您好，这里是{owner}的AI助理，替{obj}接听电话。请问您有什么事？",
        ],
        "en": [
            "Hi, this is {owner}'s call assistant, an AI answering for {obj}. How can I help you?",
            "Hello, you've reached {owner}'s AI assistant; {sub} can't take the call right now. What can I do for you?",
        ],
    },
    Act.CONVEY_PRESET: {
        "zh": [
            "好的，{owner}交代过：{preset}",
            "好的，{sub}之前说了：{preset}",
            "{owner}特别交代：{preset}",
        ],
        "en": [
            "Thanks! {owner} asked me to tell you: {preset}",
            "Got it. {owner} left a note: {preset}",
            "Thank you. {owner} said: {preset}",
        ],
    },
    Act.GUIDE: {
        "zh": [
            "您好，请问是外卖送到了吗？",
            "您好，请问是快递到了吗？",
            "您好，请问是司机师傅到了吗？",
            "您好，请问是送东西过来吗？",
        ],
        "en": [
            "Hi! Is this about a food delivery that's arrived?",
            "Hi! Is this about a package delivery?",
            "Hi! Are you the driver? Have you arrived?",
            "Hi! Are you dropping something off?",
        ],
    },
    Act.ANSWER_UNKNOWN: {
        "zh": [
            "这个我这边不太清楚，我可以帮您转告{owner}，请{obj}回复您。",
            "抱歉，这个情况我不了解。需要的话我把您的问题记下来转告{obj}。",
            "这个我没法回答您，我会把问题转给{owner}。",
        ],
        "en": [
            "I'm afraid I don't have that information. I can pass your question on to {owner}.",
            "Sorry, I don't know that. I'll note your question for {owner}.",
            "I can't answer that myself, but I'll make sure {owner} gets your question.",
        ],
    },
    Act.RELAY_EXCEPTION: {
        "zh": [
            "不好意思，{detail}，我记下了，会马上转告{owner}，这个我没法替{obj}决定。",
            "好的，{detail}，我已经记录下来，会尽快告诉{owner}。",
            "明白了，{detail}。我会第一时间转告{owner}，由{sub}来决定怎么处理。",
        ],
        "en": [
            "I'm sorry about that. I've noted that {detail} and I'll pass it to {owner} right away; I can't decide this for {obj}.",
            "Thanks for letting me know that {detail}. I'll tell {owner} as soon as possible.",
            "Understood, {detail}. I'll relay that to {owner} so {sub} can decide what to do.",
        ],
    },
    Act.ASK_DETAILS: {
        "zh": [
            "不好意思，能具体说一下是什么情况吗？我好转告{owner}。",
            "具体是怎么回事呢？我记下来转告{obj}。",
        ],
        "en": [
            "I'm sorry, could you tell me a bit more about what happened? I'll pass it on to {owner}.",
            "What exactly happened? I'll note it down for {owner}.",
        ],
    },
    Act.OWNER_UNAVAILABLE: {
        "zh": [
            "{owner}现在不方便接电话。您有什么事可以留言，我会转告{obj}。",
            "不好意思，{sub}现在接不了电话。需要的话我帮您留个言？",
            "{sub}暂时没法接听，您可以把事情告诉我，我转告{obj}。",
        ],
        "en": [
            "{owner} can't come to the phone right now. You're welcome to leave a message and I'll pass it on.",
            "Sorry, {sub} {be} not able to take calls at the moment. Would you like to leave a message?",
            "{owner} isn't available to talk right now, but I can take a message for {obj}.",
        ],
    },
    Act.INVITE_MESSAGE: {
        "zh": ["好的，您请说，我记下来转告{obj}。", "可以的，您说，我帮您记着。"],
        "en": [
            "Sure, go ahead, I'm noting it down for {owner}.",
            "Of course. What would you like me to pass on?",
        ],
    },
    Act.CONFIRM_MESSAGE: {
        "zh": [
            "好的，我记下了，会转告{owner}。还有别的事吗？",
            "好的，您的话我已经记下来了，会告诉{obj}的。还有其他需要转告的吗？",
            "收到，我会把这件事转告{owner}。",
        ],
        "en": [
            "Got it, I've noted that and I'll pass it on to {owner}. Anything else?",
            "Thanks, I've written that down for {owner}. Is there anything else?",
            "Noted. I'll make sure {owner} gets the message.",
        ],
    },
    Act.RELAY_ERRAND: {
        "zh": [
            "不好意思，我只是{owner}的电话助理，这件事我没办法亲自去做。我马上转告{obj}，把您的话带到。",
            "抱歉，我是替{owner}接电话的AI助理，这个我做不到。我会马上把您的请求告诉{obj}。",
            "这个我帮不上忙，我只能在电话里替{owner}记话。我这就把您说的转告{obj}。",
        ],
        "en": [
            "I'm only {owner}'s phone assistant, so I can't do that myself. I'll tell {obj} right away what you asked.",
            "Sorry, I can't do that in person: I'm an AI answering {owner}'s calls. I'll pass your request on to {obj} straight away.",
            "I'm afraid that's not something I can do from the phone. I'll let {owner} know right away, in your words.",
        ],
    },
    Act.DEFER_DECISION: {
        "zh": [
            "这个我没法替{owner}做决定，我会把您的请求转告{obj}。",
            "这件事需要{owner}本人来定，我先帮您记下来转告{obj}。",
            "抱歉，这个我不能替{obj}答应或拒绝，我会尽快转告{obj}。",
        ],
        "en": [
            "I'm not able to decide that for {owner}, but I'll pass your request on to {obj}.",
            "That's {owner}'s call to make; I'll note your request and let {obj} know.",
            "I can't agree or refuse on {owner}'s behalf, but I'll relay this to {obj} right away.",
        ],
    },
    Act.DEFLECT_PRIVATE: {
        "zh": [
            "抱歉，{owner}的个人信息我不方便透露。您有什么事，我可以帮您转告{obj}。",
            "不好意思，这个我不能告诉您。需要的话我帮您留言给{obj}。",
        ],
        "en": [
            "Sorry, I can't share {owner}'s personal details. I'm happy to pass a message on to {obj}.",
            "I'm afraid I can't give out that information, but I can take a message for {owner}.",
        ],
    },
    Act.DECLINE_SALES: {
        "zh": [
            "不好意思，这个我没法替{owner}答复，我会记录您的来电。",
            "好的，您的来电我已经记录下来了，谢谢。",
            "抱歉，这类事情我不能替{obj}回应，您的来电我会记录下来。",
        ],
        "en": [
            "Sorry, I can't respond to that on {owner}'s behalf. I'll note that you called.",
            "Thanks, I've logged your call for {owner}.",
            "I'm not able to respond to offers for {owner}, but I've noted your call.",
        ],
    },
    Act.SAFE_REFUSAL: {
        "zh": [
            "抱歉，这个我没法帮您。如果有事找{owner}，我可以帮您留言。",
            "不好意思，我只能帮{owner}接听和转达消息，这个请求我不能处理。",
        ],
        "en": [
            "Sorry, I can't help with that. If you have a message for {owner}, I can take it.",
            "I'm only able to answer calls and take messages for {owner}, so I can't do that.",
        ],
    },
    Act.CHECK_IN: {
        "zh": ["喂，您好，您还在听吗？", "喂？请问您还在吗？"],
        "en": ["Hello? Are you still there?", "Hi, are you still on the line?"],
    },
    Act.CONFIRM_ECHO: {
        "zh": ["对，没错。", "对，就是那儿。", "是的，没错。"],
        "en": ["Yes, that's right.", "That's right, yes.", "Yes, exactly."],
    },
    Act.ACKNOWLEDGE: {
        "zh": [
            "好的，我记下了。还有别的事吗？",
            "明白，我会转告{owner}。还有什么需要吗？",
            "好的，知道了。",
        ],
        "en": [
            "Okay, noted. Anything else?",
            "Got it, I'll let {owner} know. Is there anything else?",
            "Alright, thank you.",
        ],
    },
    Act.CLARIFY: {
        "zh": ["不好意思，我没听清楚，您能再说一遍吗？", "抱歉，能麻烦您再说一次吗？"],
        "en": [
            "Sorry, I didn't catch that. Could you say it again?",
            "I'm sorry, could you repeat that?",
        ],
    },
    Act.ASK_REPEAT: {
        "zh": [
            "不好意思，刚才没听清，您能再说一遍吗？",
            "抱歉，电话里声音断断续续的，麻烦您再说一次？",
        ],
        "en": [
            "Sorry, the line broke up, could you say that again?",
            "Sorry, you cut out for a second there. Could you repeat that?",
        ],
    },
    Act.ASK_PURPOSE: {
        "zh": [
            "您好，请问您是哪位？找{owner}有什么事吗？",
            "您好，请问有什么事需要我转告{owner}吗？",
        ],
        "en": [
            "Hi there! Who's calling, and what can I pass on to {owner}?",
            "Hello! What's the call about?",
        ],
    },
    Act.LISTEN: {
        "zh": ["您好，您请说，我帮您转告{owner}。", "好的，您请讲。"],
        "en": ["Hi! Go ahead, I'll pass it on to {owner}.", "Hello! Go ahead, I'm listening."],
    },
    Act.IDENTIFY_SELF: {
        "zh": [
            "我是{owner}的AI电话助理，{sub}现在不方便接听。您有什么事，我可以帮您转告。",
            "我是替{owner}接电话的AI助理。请问有什么需要转告{obj}的吗？",
        ],
        "en": [
            "I'm {owner}'s AI assistant, answering calls for {obj}. What can I pass on?",
            "This is an AI assistant answering for {owner}. Can I take a message?",
        ],
    },
    Act.CLOSE_CONFIRM: {
        "zh": ["好的，我会转告{owner}的，再见！", "好的，这些我都记下了，会转告{obj}，再见！"],
        "en": [
            "Got it, I'll pass that on to {owner}. Goodbye!",
            "Noted, I'll make sure {owner} gets your message. Bye!",
        ],
    },
    Act.CLOSE: {
        "zh": ["好的，辛苦您了，再见！", "好的，谢谢您，再见！", "好的，那先这样，再见！"],
        "en": [
            "Thanks, have a good day. Bye!",
            "Alright, thank you. Goodbye!",
            "Thanks for calling. Bye now!",
        ],
    },
}

# Numbers read back (coordinator.readback). ``{what}``: the values in digit groups,
# each worded by READBACK_KIND; ``{what}`` in "say_again" and "digit_by_digit" is a KIND_WORD.
READBACK: T = {
    "noted": {
        "zh": ["好的，我记下了，会转告{owner}。", "好的，我会转告{obj}。"],
        "en": ["Got it, I'll pass that on to {owner}.", "Noted for {owner}."],
    },
    "ask": {
        "zh": ["是{what}，对吗？", "我跟您核对一下：{what}，对吗？", "您说的是{what}，没错吧？"],
        "en": ["That's {what}, right?", "Let me read that back: {what}. Is that right?", "So that's {what}, correct?"],
    },
    "again": {
        "zh": ["不好意思，那是{what}，对吗？", "好的，改成{what}，这次对吗？"],
        "en": ["Sorry about that. So it's {what}, right?", "Thanks. That's {what}, is that right now?"],
    },
    "say_again": {
        "zh": ["不好意思，麻烦您把{what}再说一遍？", "抱歉，您能再说一次{what}吗？"],
        "en": ["Sorry, could you give me the {what} once more?", "My apologies. Could you say the {what} again?"],
    },
    "digit_by_digit": {
        "zh": [
            "不好意思，还是没对上。请您一位一位地说一下{what}，慢一点。",
            "抱歉，麻烦您把{what}一位一位地再说一遍？",
        ],
        "en": [
            "Sorry, I still don't have it. Could you say the {what} digit by digit, slowly?",
            "My apologies. Could you say it digit by digit?",
        ],
    },
    "go_ahead": {
        "zh": ["好的，您说。"],
        "en": ["Sure, go ahead."],
    },
    "unclear": {
        "zh": ["不好意思，没听清。请您一位一位地再说一下{what}？"],
        "en": ["Sorry, I didn't catch the digits. Could you say the {what} once more, one digit at a time?"],
    },
    "ask_number": {
        "zh": ["不好意思，号码我没听全，您能再说一遍吗？"],
        "en": ["Sorry, I didn't get the whole number. Could you say it again?"],
    },
    "piece": {
        "zh": ["{what}，好的，您接着说。", "嗯，{what}，请继续。"],
        "en": ["{what}, got it. Go on.", "Okay, {what}. And then?"],
    },
    "number_so_far": {
        "zh": ["我这边记到的是{what}，后面还有吗？"],
        "en": ["So far I have {what}. What's the rest?"],
    },
    "no_number_yet": {
        "zh": ["我这边还没有记到您的号码，您能说一下吗？"],
        "en": ["I don't have your number yet. Could you give it to me?"],
    },
    "confirmed": {
        "zh": ["好的，记下了，我会转告{owner}。还有别的事吗？", "好的，没问题，我记下了。还有其他需要吗？"],
        "en": ["Great, I've got that down for {owner}. Anything else?", "Perfect, noted. Is there anything else?"],
    },
    "confirmed_bye": {
        "zh": ["好的，记下了，我会转告{owner}的，再见！", "好的，都记下了，会转告{obj}，再见！"],
        "en": ["Great, I've got it, and I'll pass it on to {owner}. Goodbye!", "Perfect, noted for {owner}. Bye!"],
    },
    "bye": {
        "zh": ["好的，{what}，我都记下了，会转告{owner}，再见！", "好的，记下了：{what}，我会转告{obj}，再见！"],
        "en": ["Got it: {what}. I'll pass it on to {owner}. Goodbye!", "Noted, {what}, for {owner}. Bye!"],
    },
    "unconfirmed": {
        "zh": ["不好意思，我先按您最后说的记下，并提醒{owner}核对。还有别的事吗？"],
        "en": [
            "Sorry about that. I've noted it as you last said it and flagged it for {owner} to check. Anything else?"
        ],
    },
    "unconfirmed_bye": {
        "zh": ["不好意思，我先按您最后说的记下，并提醒{owner}核对，再见！"],
        "en": ["Sorry about that. I've noted it as you last said it and flagged it for {owner} to check. Goodbye!"],
    },
}
READBACK_KIND = {
    "zh": {"callback": "{v}", "code": "{v}", "amount": "{v}", "time": "{v}"},
    "en": {"callback": "{v}", "code": "code {v}", "amount": "{v}", "time": "{v}"},
}
KIND_WORD = {
    "zh": {"callback": "号码", "code": "码", "amount": "金额", "time": "时间"},
    "en": {"callback": "number", "code": "code", "amount": "amount", "time": "time"},
}

# Prepended to an owner's custom greeting that does not say an assistant is answering.
DISCLOSURE = {
    "zh": "您好，我是{owner}的AI电话助理。",
    "en": "Hi, this is {owner}'s AI call assistant.",
}

# Closings used after a silence (the caller stopped answering).
SILENT_CLOSE = {
    "zh": ["您好像不方便说话，我先挂了，有事可以再打过来，再见。", "没有听到您的声音，我先挂断了，再见。"],
    "en": ["It seems you can't talk right now. I'll hang up; feel free to call back. Goodbye.",
           "I can't hear you, so I'll end the call now. Goodbye."],
}  # fmt: skip

# GUIDE variants by scene (index into TEMPLATES[GUIDE]).
GUIDE_BY_SCENE = {"takeout": 0, "delivery": 1, "taxi": 2}

# Short restatements of exception kinds for {detail}.
EXCEPTION_DETAIL = {
    "zh": {"spilled": "餐品洒了", "damaged": "东西有损坏", "wrong_item": "东西送错了", "late": "会晚一些到",
           "cant_find": "您找不到地方", "signature": "需要签收", "payment": "您说需要付费", "id_needed": "需要核对身份或取件码",
           None: "您说的情况"},
    "en": {"spilled": "something spilled", "damaged": "the item is damaged", "wrong_item": "the order isn't right",
           "late": "you're running late", "cant_find": "you can't find the place", "signature": "it needs a signature",
           "payment": "you're asking for a payment", "id_needed": "an ID or code is needed", None: "there's a problem"},
}  # fmt: skip

# A turn that leaves a message and asks something private ("跟她说房租要涨，另外她周六在家吗"):
# the message is taken, then the question is deflected (lead-in before the deflection).
#: After the owner's answer, the other question of the same turn ("Will she make it? Oh, and is she
#: still on the same insurance?"): taken down for the owner, not left unanswered.
OTHER_QUESTION_NOTED = {
    "zh": "另外您问的，我会转告{obj}。",
    "en": " Your other question I'll pass on to {obj}.",
}

#: After the owner's answer to one part of a turn that also asks for private data and says it is
#: urgent ("他啥时候回来？还有他手机号多少，有个bug急着要他看"): the rest is deflected, the need kept.
URGENT_NEED_NOTED = {
    "zh": "其他个人信息我不方便透露；您说的急事，我会马上转告{obj}。",
    "en": " I can't share anything else personal, but I'll tell {obj} right away that it's urgent.",
}

MESSAGE_NOTED = {
    "zh": "您说的事我记下了，会转告{obj}。",
    "en": "I've noted your message for {owner}. ",
}
# Before a deflection when the caller's need is urgent ("It's kind of urgent, when is he back?"):
# the honest part of the answer, what the assistant will do.
URGENT_NOTED = {
    "zh": "我会马上告诉{owner}您这边有急事。",
    "en": "I'll tell {owner} right away that it's urgent. ",
}
