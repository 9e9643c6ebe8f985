"""Scene inference: takeout, delivery, taxi, work, life or harassment, from what is said.

Each turn adds cue evidence to running scores that decay, so the scene can change
mid-call when the evidence does; a hint (e.g. from the line's use) is a prior.
"""

from __future__ import annotations

import re

from .text import compact, normalize

_DECAY = 0.6
_HINT_PRIOR = 1.5
_MIN_SCORE = 0.9

_SCENE_CUES: dict[str, tuple[list[str], list[str]]] = {
    "takeout": (
        ["外卖", "美团", "饿了么", "骑手", "送餐", "餐到", "饭到", "奶茶", "咖啡", "披萨", "汉堡", "盒饭", "打包", "点的餐",
         "点的(饭|菜|东西)", "餐品", "汤", "外送"],
        [r"takeout", r"take-out", r"takeaway", r"doordash", r"uber ?eats", r"grubhub", r"deliveroo", r"food", r"meal",
         r"pizza", r"burger", r"sushi", r"restaurant", r"(your|the) order", r"dinner order", r"lunch order", r"drinks?", r"coffee", r"soup"],
    ),
    "delivery": (
        ["快递", "包裹", "顺丰", "京东", "圆通", "中通", "申通", "韵达", "邮政", "EMS", "驿站", "快递柜", "丰巢", "签收", "件",
         "取件码", "到付", "物流"],
        [r"package", r"parcel", r"courier", r"ups", r"fedex", r"dhl", r"usps", r"amazon", r"shipment", r"tracking",
         r"signature", r"sign for", r"mail ?room", r"locker", r"box"],
    ),
    "taxi": (
        ["司机", "师傅", "打车", "滴滴", "网约车", "出租车", "快车", "专车", "上车", "接(你|您)", "车牌", "车到了", "上车点", "乘客", "尾号"],
        [r"driver", r"ride", r"uber(?! ?eats)", r"lyft", r"taxi", r"cab", r"pick ?(you )?up", r"pickup", r"car", r"passenger",
         r"license plate", r"airport"],
    ),
    "work": (
        ["公司", "会议", "开会", "项目", "同事", "客户", "老板", "领导", "经理", "报告", "方案", "合同", "加班", "上班", "部门",
         "面试", "报价", "邮件", "文件", "出差", "财务", "人事", ".总"],
        [r"meeting", r"project", r"colleague", r"client", r"boss", r"manager", r"report", r"proposal", r"contract",
         r"office", r"deadline", r"interview", r"invoice", r"quote", r"email", r"presentation", r"team", r"conference call",
         r"work", r"hr"],
    ),
    "life": (
        ["妈", "爸", "爷爷", "奶奶", "姥姥", "朋友", "同学", "邻居", "物业", "房东", "吃饭", "聚会", "孩子", "学校", "老师",
         "医院", "体检", "生日", "周末", "家里", "修(水管|空调|电)", "维修", "家政", "宠物", "小区"],
        [r"mom", r"mum", r"dad", r"mother", r"father", r"grandma", r"friend", r"neighbou?r", r"landlord", r"dinner",
         r"party", r"kids?", r"school", r"teacher", r"doctor", r"dentist", r"appointment", r"birthday", r"weekend",
         r"plumber", r"repair", r"building management", r"cousin", r"aunt", r"uncle", r"church", r"gym"],
    ),
    "harassment": (
        ["推销", "优惠", "贷款", "理财", "保险", "信用卡", "中奖", "投资", "股票", "基金", "办卡", "免费领", "额度", "利率",
         "催收", "欠款", "楼盘", "加盟", "返现", "骚扰", "傻|滚|他妈|混蛋|去死"],
        [r"loan", r"insurance", r"credit card", r"investment", r"crypto", r"offer", r"promotion", r"you('ve| have) won",
         r"prize", r"warranty", r"survey", r"debt", r"collections", r"solar", r"timeshare", r"idiot", r"shut up",
         r"limited time", r"special deal"],
    ),
}  # fmt: skip

_COMPILED = {
    scene: (
        [re.compile(p) for p in zh],
        [re.compile(r"\b" + p + r"\b") for p in en],
    )
    for scene, (zh, en) in _SCENE_CUES.items()
}


def scene_evidence(utterance: str) -> dict[str, float]:
    """Cue counts per scene for one utterance (each distinct cue counts once)."""
    zh = compact(utterance)
    en = normalize(utterance)
    out: dict[str, float] = {}
    for scene, (zh_cues, en_cues) in _COMPILED.items():
        hits = sum(1 for p in zh_cues if p.search(zh)) + sum(1 for p in en_cues if p.search(en))
        if hits:
            out[scene] = float(hits)
    return out


def update_scene(
    scores: dict[str, float], utterance: str, hint: str | None, previous: str | None = None
) -> tuple[dict[str, float], str | None]:
    """Decay the running scores, add this turn's evidence, return (scores, scene).

    A scene, once established, stays until another scene's evidence overtakes it.
    """
    new = {k: v * _DECAY for k, v in scores.items()}
    for scene, hits in scene_evidence(utterance).items():
        new[scene] = new.get(scene, 0.0) + hits
    return new, current_scene(new, hint, previous)


def current_scene(scores: dict[str, float], hint: str | None, previous: str | None = None) -> str | None:
    combined = dict(scores)
    if hint:
        combined[hint] = combined.get(hint, 0.0) + _HINT_PRIOR
    if not combined:
        return previous
    best = max(sorted(combined), key=lambda k: combined[k])
    if previous and combined.get(previous, 0.0) >= combined[best]:
        return previous
    if combined[best] >= _MIN_SCORE or (previous and combined[best] > combined.get(previous, 0.0)):
        return best
    return previous
