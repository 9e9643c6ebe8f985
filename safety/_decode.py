"""Decoded and de-obfuscated views of a caller utterance, for the input guard.

A typed or transcribed turn may hide an instruction in an encoding (base64, hex,
binary, percent or backslash escapes, Unicode tag characters) or a transform
(rot13, leet, reversed text, spaced letters). :func:`views` returns the readable
decodings so the injection rules can run on each. Bounded: at most 4,000 characters
of input are examined and each view is cut to the same length.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import urllib.parse

MAX_CHARS = 4000
_B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:0x)?[0-9A-Fa-f]{16,}|(?:(?:0x|\\x)?[0-9A-Fa-f]{2}[ :,]){7,}[0-9A-Fa-f]{2}")
_BIN = re.compile(r"(?:[01]{8}[ ,]?){4,}")
_B32 = re.compile(r"[A-Z2-7]{16,}={0,6}")
_ESC = re.compile(r"(?:\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}){4,}")
_TAGS = re.compile("[\U000e0020-\U000e007f]{4,}")
_SPACED = re.compile(r"\b(?:[A-Za-z] ){3,}[A-Za-z]\b")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_LETTERS = re.compile(r"[A-Za-z]{3}")
_A85 = re.compile(r"<~[!-u\s]{4,}?~>")
_B85 = re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{20,}")
_MORSE_RUN = re.compile(r"(?:[.\-]{1,7}(?: {1,3}| ?/ ?)){3,}[.\-]{1,7}")
_MORSE_CODES = (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- "
    "...- .-- -..- -.-- --.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----."
)
_MORSE = dict(zip(_MORSE_CODES.split(" "), "abcdefghijklmnopqrstuvwxyz0123456789", strict=True))


def _readable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 4 or not _LETTERS.search(text):
        return None
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    return text if printable / len(text) >= 0.9 else None


def _b64(run: str) -> str | None:
    s = run.rstrip("=")
    s = s + "=" * (-len(s) % 4)
    try:
        alt = b"-_" if ("-" in s or "_" in s) else None
        return _readable(base64.b64decode(s, altchars=alt, validate=True))
    except (binascii.Error, ValueError):
        return None


def _hex(run: str) -> str | None:
    digits = re.sub(r"0x|\\x|[ :,]", "", run)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _readable(bytes.fromhex(digits))
    except ValueError:
        return None


def _bin(run: str) -> str | None:
    bits = re.sub(r"[ ,]", "", run)
    data = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8))
    return _readable(data)


def _b32(run: str) -> str | None:
    s = run.rstrip("=")
    try:
        return _readable(base64.b32decode(s + "=" * (-len(s) % 8)))
    except (binascii.Error, ValueError):
        return None


def _a85(run: str) -> str | None:
    try:
        return _readable(base64.a85decode(run, adobe=True))
    except ValueError:
        return None


def _b85(run: str) -> str | None:
    try:
        return _readable(base64.b85decode(run[: len(run) - len(run) % 5]))
    except ValueError:
        return None


def _morse(run: str) -> str | None:
    words = re.split(r" ?/ ?| {3}", run.strip())
    text = " ".join("".join(_MORSE.get(code, "") for code in w.split()) for w in words)
    return text if _LETTERS.search(text) else None


def views(text: str) -> list[str]:
    """Readable decodings and transforms of ``text`` (not including ``text`` itself)."""
    text = text[:MAX_CHARS]
    out: list[str] = []
    decoders = (
        (_B64, _b64), (_HEX, _hex), (_BIN, _bin), (_B32, _b32), (_A85, _a85), (_B85, _b85),
        (_MORSE_RUN, _morse),
    )  # fmt: skip
    for rx, decode in decoders:
        for m in rx.finditer(text):
            decoded = decode(m.group(0))
            if decoded:
                out.append(decoded[:MAX_CHARS])
    if "%" in text:
        out.append(urllib.parse.unquote(text))
    if _ESC.search(text):
        out.append(_ESC.sub(lambda m: codecs.decode(m.group(0), "unicode_escape"), text))
    tags = _TAGS.findall(text)
    if tags:
        out.append("".join(chr(ord(ch) - 0xE0000) for run in tags for ch in run))
    if _SPACED.search(text):
        out.append(_SPACED.sub(lambda m: m.group(0).replace(" ", ""), text))
    if re.search(r"[a-zA-Z]", text):
        out.append(codecs.encode(text, "rot13"))
        out.append(text[::-1])
        if re.search(r"[a-zA-Z][0-9@$]|[0-9@$][a-zA-Z]", text):
            out.append(text.translate(_LEET))
    return out
