"""Which day a text is about ("明天", "this afternoon", "on Friday"), for near misses on time:
a trigger about *tomorrow's* attendance is not met by "is she back in the office this
afternoon?". Kinds of day, generic across owners; bilingual. Pure."""

from __future__ import annotations

from .bilingual import compile_table, named_in

_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS_ZH = "一二三四五六日天"

# name -> (zh pattern, en pattern). A bare part of the day ("下午", "afternoon") is today
# only when no other day leads it ("明天下午" is tomorrow).
_DAYS: dict[str, tuple[str, str]] = {
    "today": (
        r"今天|今晚|今早|今儿|今日|当天|这会儿|(?<!明天)(?<!后天)(?<!明)(?<!天)(?<![一二三四五六日天末])(下午|上午|中午|晚上|傍晚)",
        r"\b(today|tonight|this (morning|afternoon|evening)|later on today|right now|at the moment)\b",
    ),
    "tomorrow": (r"明天|明早|明晚|明儿|明日", r"\b(tomorrow|tmrw|tmr)\b"),
    "day_after": (r"后天", r"\bday after tomorrow\b"),
    "weekend": (r"周末|礼拜六|礼拜天|星期六|星期天|星期日|周六|周日", r"\b(weekend|saturday|sunday)\b"),
    **{
        f"wd{i}": (rf"(周|星期|礼拜){_WEEKDAYS_ZH[i]}", rf"\b{_WEEKDAYS_EN[i]}\b")
        for i in range(5)  # Monday to Friday (the weekend is one kind above)
    },
}
_DAYS_RE = compile_table(_DAYS)


def days(text: str) -> frozenset[str]:
    """The days ``text`` names."""
    found = named_in(_DAYS_RE, text)
    if "day_after" in found:
        found -= {"tomorrow"}  # "the day after tomorrow" is not tomorrow
    return found


def day_clash(trigger: str, utterance: str) -> bool:
    """Both name a day and not the same one: the caller asks about another day than the
    owner's answer is for (a near miss, never the owner's answer)."""
    t, u = days(trigger), days(utterance)
    return bool(t and u and not t & u)
