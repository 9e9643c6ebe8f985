"""A digit-focused re-decode of a number turn: the words before the number kept, the
number decoded again with Whisper allowed to write nothing but digits.

Whisper base on a phone line writes a spoken number as numerals with a digit inserted or
lost ("899 324 4317" for 899 321 4317, "534-950-240-190"), as homophones (刘 for 六, 以 for
一) or as words. A second decode of the same audio, forced to start with the first
decode's words before the number (so its attention is where the digits are), with every
token that is not digits, spaces or punctuation suppressed and a beam of four, gives the
digits alone. It is kept only when it holds a whole, plausible number
(:func:`pipeline.asr_bias.plausible_number`); the first reading stays otherwise (a
homophone run is still read by the coordinator's digit sounds).

The words after the number in the first reading ("…, thanks, bye") are kept after it.
Measured by ``callassist bench readback`` (docs/benchmarks.md, stop 17).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np

from .asr import MIN_WINDOW_S, ZH_PROMPT
from .asr_bias import NUMBER_HINT, plausible_number

DIGIT_BEAM = 4
MAX_DIGIT_TOKENS = 40
# Where a number starts in a first reading: a digit, or three numerals / digit sounds in a row.
_ZH_DIGITISH = (
    "0-9零〇一幺二两三四五六七八九十衣依医伊腰要妖遥邀摇以亿义儿而尔耳山伞散似寺死丝思斯"
    "无舞武午吴乌屋呜溜刘留流柳牛期漆起其奇齐妻器气汽吧把巴爸拔扒疤酒久旧舅救令铃灵玲凌龄"
)
_ZH_START = re.compile(f"[0-9]|[{_ZH_DIGITISH}]{{3,}}")
_ZH_RUN = re.compile(f"[{_ZH_DIGITISH}][{_ZH_DIGITISH}\\s,，.、\\-]*")
_EN_DIGIT = r"(?:\d|\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double|triple)\b)"
_EN_START = re.compile(_EN_DIGIT, re.IGNORECASE)
_EN_RUN = re.compile(rf"{_EN_DIGIT}(?:[\s,.\-]*{_EN_DIGIT})*", re.IGNORECASE)


def number_span(text: str, lang: str) -> tuple[int, int] | None:
    """(start, end) of the first reading's number: from its first digit (or three numerals /
    digit sounds in a row) to the end of the last digit run; None when there is none."""
    start = (_ZH_START if lang == "zh" else _EN_START).search(text)
    if start is None:
        return None
    end = start.start()
    for m in (_ZH_RUN if lang == "zh" else _EN_RUN).finditer(text, start.start()):
        if re.search(r"\d", m.group(0)) or len(m.group(0).strip(" ,，.、-")) >= 3:
            end = m.end()
    return start.start(), max(end, start.end())


@lru_cache(maxsize=2)
def _suppressed(tokenizer_id: int, eot: int, vocab: int, decode: Any) -> tuple[int, ...]:
    keep = {i for i in range(eot) if (s := decode([i])) and re.fullmatch(r"[\s0-9,.，。、\-]+", s)}
    return tuple(i for i in range(vocab) if i != eot and i not in keep)


def decode_digits(model: Any, audio: np.ndarray, lang: str, hotwords: str, prefix: str) -> tuple[str, float]:
    """(digits as written, average log-probability) of ``audio`` decoded after ``prefix``
    with only digit tokens allowed (beam :data:`DIGIT_BEAM`). ``model``: faster-whisper's
    ``WhisperModel``."""
    from faster_whisper.tokenizer import Tokenizer

    seconds = len(audio) / 16000
    window_s = min(30.0, max(MIN_WINDOW_S, float(np.ceil(seconds + 1.0))))
    padded = np.zeros(int(window_s * 16000), dtype=np.float32)
    padded[: len(audio)] = audio[: len(padded)]
    features = model.feature_extractor(padded)[:, : int(window_s * 100)]
    tok = Tokenizer(model.hf_tokenizer, True, task="transcribe", language=lang)
    previous = tok.encode(" " + ZH_PROMPT) if lang == "zh" else []
    prompt = [tok.sot_prev, *tok.encode(" " + hotwords.strip()), *previous, *tok.sot_sequence, tok.no_timestamps]
    forced = tok.encode(("" if lang == "zh" else " ") + prefix.strip()) if prefix.strip() else []
    prompt += forced
    vocab = model.hf_tokenizer.get_vocab_size()
    sup = _suppressed(id(model.hf_tokenizer), tok.eot, vocab, model.hf_tokenizer.decode)
    result = model.model.generate(
        model.encode(features),
        [prompt],
        beam_size=DIGIT_BEAM,
        max_length=len(prompt) + MAX_DIGIT_TOKENS,
        return_scores=True,
        suppress_blank=True,
        suppress_tokens=list(sup),
    )[0]
    ids = result.sequences_ids[0]
    if forced and ids[: len(forced)] == forced:
        ids = ids[len(forced) :]  # the forced words come back at the head of the sequence
    return tok.decode(ids).strip(" ,，.。、-"), float(result.scores[0])


def digit_text(model: Any, audio: np.ndarray, text: str, lang: str, hotwords: str) -> str | None:
    """The turn's text with its number re-decoded digits-only, or None (no number in
    ``text``, or the re-decode holds no plausible whole number, or the same digits)."""
    span = number_span(text, lang)
    if span is None:
        return None
    digits_written, _ = decode_digits(model, audio, lang, f"{NUMBER_HINT.get(lang, '')} {hotwords}", text[: span[0]])
    digits = re.sub(r"\D", "", digits_written)
    hint = re.sub(r"\D", "", NUMBER_HINT.get(lang, ""))
    if not plausible_number(digits, lang) or hint in digits or digits == re.sub(r"\D", "", text[span[0] : span[1]]):
        return None
    tail = text[span[1] :].lstrip()
    sep = "" if lang == "zh" or not tail or not tail[0].isalnum() else " "
    return (text[: span[0]] + " ".join(digits_written.split()) + sep + tail).strip()
