"""C_fact: specific facts in neither the presets, the allowed texts nor the caller's words.

Entities checked: numbers and codes (times, prices, counts, order and tracking
numbers; spoken forms are digits by now), relative dates, weekdays and parts of the
day, named places and delivery spots, people named by an honorific (王师傅, Mr. Li)
or capitalized mid-sentence, payment or delivery statuses ("already paid", 已签收),
colours and sizes, and what the owner ordered or booked. Each must appear in the
support (numbers compared by value, 3 pm = 15点, 5点半 = 5:30; Chinese and English
date words map to one key; a status claim needs a statement, not a caller's
question). Questions are not checked: asking is not stating.
"""

from __future__ import annotations

import re

from ._context import Compiled, date_keys
from ._text import View, compact, wordset

Hit = tuple[str, str]

_CODE = re.compile(r"(?<![a-z0-9])(?=[a-z0-9-]*\d)(?=[a-z0-9-]*[a-z])[a-z0-9][a-z0-9-]{2,}(?![a-z0-9])")
_NUMBER = re.compile(r"(?<![a-z0-9])\d+(?:[:.]\d+)?(?P<unit>\s*(?:[a-z']+|[^\s\da-z]{1,2}))?")
_PRICE = re.compile(r"^\s*(?:元|块|毛|角|yuan|rmb|dollars?|bucks|kuai|cents?|pounds?|euros?)")
_TIME = re.compile(r"^\s*(?:点|:|am|pm|a\.m|p\.m|o'clock|分钟|小时|号|月|日|天|minutes?|hours?|mins?|days?)")
_CURRENCY_BEFORE = re.compile(r"[$¥€£]\s*$")
_QUESTION = re.compile(r"[?？]\s*$|[吗呢么]\s*[?？.。!！]?\s*$")
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程苏"
    "魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚"
    "邵钱严覃武戴莫孔汤"
)
_ZH_PERSON = re.compile(rf"(?<!谢)[{_SURNAMES}](?:先生|女士|小姐|师傅|老师|经理|总|医生|律师|阿姨|叔叔|大爷|奶奶|老板)")
_EN_TITLE = re.compile(r"\b(?:mr|mrs|ms|miss|dr)\.?\s+([a-z]+)")
_CAPITAL = re.compile(r"(?<![.:!?\"'] )(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_CAPITAL_OK = wordset(
    "i i'm i'll i've i'd ok okay ai hi hello hey sorry thanks thank mr mrs ms dr sir madam bye "
    "goodbye yes no please english chinese mandarin callassist monday tuesday wednesday "
    "thursday friday saturday sunday january february march april may june july august "
    "september october november december tv sms wechat alright sure great got noted"
)
_ZH_PLACE = re.compile(
    r"([\u4e00-\u9fff]{1,2})(?:路|街|大道|小区|花园|大厦|广场|公园|医院|酒店|宾馆|商场|地铁站|火车站|"
    r"高铁站|机场|车站|大学|中学|小学|银行|超市|菜市场|饭店|餐厅|[东南西北正后侧]门)"
)
_ZH_SPOT = re.compile(r"门卫|快递柜|丰巢|驿站|菜鸟|前台|物业|保安室|传达室|收发室|邻居|车库|停车场|地下室|信箱|代收点")
_ZH_FUNCTION = "的在到去从是个家您你我他她这那附近里边"
_EN_PLACE = re.compile(
    r"\b(?:(?:north|south|east|west|main|back|side|rear) (?:gate|entrance|door|exit|lobby)|"
    r"gate \d+|front desk|reception|lobby|mailroom|mail room|parcel locker|locker|concierge|"
    r"security desk|guard house|neighbou?rs?|garage|parking lot|loading dock|porch|doorman|"
    r"building manager|property management|back door|[a-z]+ (?:street|road|avenue|lane|"
    r"boulevard))\b"
)
_ATTRIBUTE = re.compile(
    r"\b(?:red|blue|green|black|white|yellow|pink|purple|grey|gray|brown|orange|silver|gold|"
    r"small|medium|large|x-large|xl|xxl|extra large)\b|[红蓝绿黑白黄粉紫灰棕橙银金]色|大号|中号|小号|"
    r"大杯|中杯|小杯|加大|特大"
)
_STATUS_DONE = re.compile(
    r"已经?付(?:过|了)|已付款|已支付|付过款|已经?退款|已退款|已经?取消|已经?签收|已送达|already "
    r"paid|has been paid|is paid for|already been paid|paid for it|been refunded|been "
    r"cancell?ed|been delivered|already signed"
)
_STATUS_TERMS = re.compile(
    r"预付|到付|货到付款|不用付|不需要付|免费|不收费|不要钱|包邮|prepaid|pre-paid|no need to pay|"
    r"cash on delivery|it's free|is free|free of charge|no charge"
)


def _number_supported(text: str, cc: Compiled) -> bool:
    sup = cc.support
    for part in re.split(r"[:.]", text):
        if not part.strip("0"):
            continue  # 15:00, 3.0: zeros add nothing
        value = part.lstrip("0")
        if value in sup.numbers:
            continue
        if len(part) >= 3 and part in sup.stream:
            continue
        return False
    return True


def _numbers(view: View, cc: Compiled) -> Hit | None:
    norm = view.norm
    for m in _CODE.finditer(norm):
        code = compact(m.group(0))
        if code not in cc.support.text:
            return "fact.code", m.group(0)
    norm = _CODE.sub(" ", norm)
    for m in _NUMBER.finditer(norm):
        number = m.group(0)[: len(m.group(0)) - len(m.group("unit") or "")]
        unit = m.group("unit") or ""
        if number == "1" and not (_PRICE.match(unit) or _TIME.match(unit)):
            continue  # "one moment", 一个: not a fact
        if _number_supported(number, cc):
            continue
        if _PRICE.match(unit) or _CURRENCY_BEFORE.search(norm[: m.start()]):
            return "fact.price", m.group(0).strip()
        if _TIME.match(unit):
            return "fact.time", m.group(0).strip()
        return "fact.number", m.group(0).strip()
    return None


def _dates(view: View, cc: Compiled) -> Hit | None:
    missing = date_keys(view.norm) - cc.support.dates
    return ("fact.date", sorted(missing)[0]) if missing else None


def _people(view: View, cc: Compiled) -> Hit | None:
    sup = cc.support
    if view.has_cjk:
        for m in _ZH_PERSON.finditer(view.norm):
            surname = m.group(0)[0]  # 老赵 / 我是张伟 / 姓王 support 赵先生 / 张先生 / 王师傅
            if m.group(0) not in sup.text and not re.search(f"(?:是|叫|姓|老|小){surname}", sup.text):
                return "fact.name", m.group(0)
    if view.has_latin:
        for m in _EN_TITLE.finditer(view.norm):
            if m.group(1) != "he" and not re.search(rf"\b{m.group(1)}\b", sup.norm):
                return "fact.name", m.group(0)
        for m in _CAPITAL.finditer(view.raw):
            words = [w for w in m.group(0).lower().split() if w not in _CAPITAL_OK]
            if cc.owner is not None:
                words = [w for w in words if not cc.owner.fullmatch(w)]
            if any(not re.search(rf"\b{re.escape(w)}\b", sup.norm) for w in words):
                return "fact.name", m.group(0)
    return None


def _places(view: View, cc: Compiled) -> Hit | None:
    sup = cc.support
    if view.has_cjk:
        for m in _ZH_PLACE.finditer(view.norm):
            core = m.group(0).lstrip(_ZH_FUNCTION)
            if core and core not in sup.text:
                return "fact.place", m.group(0)
        for m in _ZH_SPOT.finditer(view.norm):
            if m.group(0) not in sup.text:
                return "fact.place", m.group(0)
    if view.has_latin:
        for m in _EN_PLACE.finditer(view.norm):
            if not re.search(rf"\b{re.escape(m.group(0))}", sup.norm):
                return "fact.place", m.group(0)
    return None


def _status(view: View, cc: Compiled) -> Hit | None:
    # A caller asking "is it paid?" does not support "it's paid": statements only.
    for m in _STATUS_DONE.finditer(view.norm):
        if m.group(0) not in cc.support.stated:
            return "fact.status", m.group(0)
    for m in _STATUS_TERMS.finditer(view.norm):
        if m.group(0) not in cc.support.norm and m.group(0) not in cc.support.text:
            return "fact.status", m.group(0)
    return None


def _attributes(view: View, cc: Compiled) -> Hit | None:
    for m in _ATTRIBUTE.finditer(view.norm):
        if m.group(0) not in cc.support.norm and m.group(0) not in cc.support.text:
            return "fact.attribute", m.group(0)
    return None


_ORDERED = re.compile(
    r"\b(?:he|she) (?:ordered|bought|booked|purchased|reserved|requested|asked for|chose|"
    r"picked)\b(?P<obj>[^,.!?;]*)|(?:他|她)(?:点了|点的是|订了|订的是|买了|买的是|约了|约的是|预约了|"
    r"要了|要的是)(?P<zobj>[^,.!?;:。、]*)"
)
_FILLER_WORDS = wordset("the a an some his her it them one of for and with to")


def _ordered(view: View, cc: Compiled) -> Hit | None:
    """What the owner ordered/booked, unless the caller or a preset said it."""
    sup = cc.support
    for m in _ORDERED.finditer(view.norm):
        if m.group("zobj") is not None:
            obj = compact(m.group("zobj")).rstrip("的了吧")
            if obj and obj not in sup.text:
                return "fact.order", m.group(0)
            continue
        words = [w for w in re.findall(r"[a-z]+", m.group("obj")) if w not in _FILLER_WORDS]
        if any(not re.search(rf"\b{w}", sup.norm) for w in words):
            return "fact.order", m.group(0)
    return None


def check(view: View, cc: Compiled) -> Hit | None:
    """The first unsupported specific fact in the sentence, or None."""
    if _QUESTION.search(view.norm):
        return None
    for finder in (_numbers, _dates, _places, _people, _status, _attributes, _ordered):
        hit = finder(view, cc)
        if hit:
            return hit
    return None
