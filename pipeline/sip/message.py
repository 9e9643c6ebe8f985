"""SIP messages (RFC 3261 section 7): parse a datagram, build requests and responses.

Only what a user agent server needs: start line, headers (compact forms, folding,
comma-separated Via), body by Content-Length. Anything malformed raises
:class:`SipParseError`; the server answers it with 400 instead of crashing.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

MAX_MESSAGE_BYTES = 16 * 1024  # UDP SIP over 1300 bytes should have gone over TCP anyway
MAX_HEADERS = 100
SIP_VERSION = "SIP/2.0"

_COMPACT = {
    "v": "via",
    "f": "from",
    "t": "to",
    "i": "call-id",
    "m": "contact",
    "l": "content-length",
    "c": "content-type",
    "k": "supported",
    "s": "subject",
    "e": "content-encoding",
}
_CANONICAL = {
    "call-id": "Call-ID",
    "cseq": "CSeq",
    "www-authenticate": "WWW-Authenticate",
    "max-forwards": "Max-Forwards",
}
_TOKEN = re.compile(r"^[A-Za-z0-9.!%*_+`'~-]+$")
_REQUEST_LINE = re.compile(r"^([A-Za-z0-9.!%*_+`'~-]+) (\S+) SIP/2\.0$")
_STATUS_LINE = re.compile(r"^SIP/2\.0 ([1-6][0-9][0-9]) ?(.*)$")
_TAG = re.compile(r";\s*tag=([^;>\s]+)", re.IGNORECASE)
_URI = re.compile(r"<([^>]*)>")
_CSEQ = re.compile(r"^\s*([0-9]{1,10})\s+([A-Za-z0-9.!%*_+`'~-]+)\s*$")

REASONS = {
    100: "Trying",
    180: "Ringing",
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
    416: "Unsupported URI Scheme",
    420: "Bad Extension",
    481: "Call/Transaction Does Not Exist",
    483: "Too Many Hops",
    486: "Busy Here",
    487: "Request Terminated",
    488: "Not Acceptable Here",
    500: "Server Internal Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "Version Not Supported",
}


class SipParseError(ValueError):
    """The datagram is not a well-formed SIP message; ``status`` is the answer to send."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


def canonical(name: str) -> str:
    low = name.strip().lower()
    low = _COMPACT.get(low, low)
    return _CANONICAL.get(low, "-".join(p.capitalize() for p in low.split("-")))


@dataclass
class SipMessage:
    """A request (``method`` set) or a response (``status`` set)."""

    method: str | None = None
    uri: str | None = None
    status: int | None = None
    reason: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    @property
    def is_request(self) -> bool:
        return self.method is not None

    def get(self, name: str) -> str | None:
        key = canonical(name)
        for k, v in self.headers:
            if k == key:
                return v
        return None

    def get_all(self, name: str) -> list[str]:
        """Every value of a header, with comma-separated lists split (Via, Route, ...)."""
        key = canonical(name)
        out: list[str] = []
        for k, v in self.headers:
            if k == key:
                out.extend(split_list(v) if key in _LIST_HEADERS else [v])
        return out

    def set(self, name: str, value: str) -> None:
        key = canonical(name)
        self.headers = [(k, v) for k, v in self.headers if k != key]
        self.headers.append((key, value))

    def add(self, name: str, value: str) -> None:
        self.headers.append((canonical(name), value))

    @property
    def call_id(self) -> str:
        return self.get("Call-ID") or ""

    @property
    def cseq(self) -> tuple[int, str]:
        m = _CSEQ.match(self.get("CSeq") or "")
        if not m:
            raise SipParseError("bad CSeq")
        return int(m.group(1)), m.group(2).upper()

    @property
    def top_via(self) -> str:
        vias = self.get_all("Via")
        return vias[0] if vias else ""

    @property
    def branch(self) -> str:
        return param(self.top_via, "branch") or ""

    @property
    def from_tag(self) -> str | None:
        return tag_of(self.get("From") or "")

    @property
    def to_tag(self) -> str | None:
        return tag_of(self.get("To") or "")

    def encode(self) -> bytes:
        if self.method is not None:
            start = f"{self.method} {self.uri} {SIP_VERSION}"
        else:
            start = f"{SIP_VERSION} {self.status} {self.reason}"
        lines = [start]
        lines.extend(f"{k}: {v}" for k, v in self.headers if k != "Content-Length")
        lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + self.body


_LIST_HEADERS = {"Via", "Route", "Record-Route", "Allow", "Supported", "Require", "Contact"}


def split_list(value: str) -> list[str]:
    """Split a comma-separated header value, respecting quotes and <...>."""
    out: list[str] = []
    depth = 0
    quoted = False
    start = 0
    for i, ch in enumerate(value):
        if ch == '"' and (i == 0 or value[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch == "<":
            depth += 1
        elif not quoted and ch == ">":
            depth = max(0, depth - 1)
        elif ch == "," and not quoted and depth == 0:
            out.append(value[start:i].strip())
            start = i + 1
    tail = value[start:].strip()
    if tail:
        out.append(tail)
    return out


def param(value: str, name: str) -> str | None:
    """A ``;name=value`` parameter of a header value (``""`` for a flag like ``;rport``)."""
    for part in value.split(";")[1:]:
        key, _, val = part.strip().partition("=")
        if key.strip().lower() == name.lower():
            return val.strip().strip('"')
    return None


def tag_of(value: str) -> str | None:
    # The tag is a header parameter: after the closing '>' when the URI is bracketed.
    tail = value[value.rfind(">") + 1 :] if ">" in value else value
    m = _TAG.search(tail)
    return m.group(1) if m else None


def uri_of(value: str) -> str:
    """The URI in a name-addr (``"Bob" <sip:bob@host>;tag=1``) or addr-spec header value."""
    m = _URI.search(value)
    if m:
        return m.group(1).strip()
    return value.split(";", 1)[0].strip()


@dataclass(frozen=True)
class SipUri:
    scheme: str
    user: str | None
    host: str
    port: int | None
    params: dict[str, str]


def parse_uri(uri: str) -> SipUri:
    """``sip:user@host:port;params`` (and ``sips:``/``tel:``); raises SipParseError."""
    scheme, sep, rest = uri.partition(":")
    scheme = scheme.lower()
    if not sep or scheme not in ("sip", "sips", "tel"):
        raise SipParseError("unsupported URI scheme", 416)
    if scheme == "tel":
        number = rest.split(";", 1)[0]
        return SipUri("tel", number, "", None, {})
    rest = rest.split("?", 1)[0]
    main, *raw_params = rest.split(";")
    params: dict[str, str] = {}
    for p in raw_params:
        k, _, v = p.partition("=")
        params[k.strip().lower()] = v.strip()
    user: str | None = None
    if "@" in main:
        user, _, main = main.rpartition("@")
        user = user.split(":", 1)[0]  # drop a password
    host, port = main, None
    if main.startswith("["):
        end = main.find("]")
        host = main[: end + 1]
        tail = main[end + 1 :]
        if tail.startswith(":"):
            port = _port(tail[1:])
    elif ":" in main:
        host, _, p = main.rpartition(":")
        port = _port(p)
    if not host:
        raise SipParseError("URI without a host")
    return SipUri(scheme, user or None, host, port, params)


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise SipParseError("bad port in URI")
    return int(text)


def parse(data: bytes) -> SipMessage:
    """Parse one SIP message from a UDP datagram."""
    if len(data) > MAX_MESSAGE_BYTES:
        raise SipParseError("message too large", 413)
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        head, sep, body = data.partition(b"\n\n")
        if not sep:
            raise SipParseError("no end of headers")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SipParseError("headers are not UTF-8") from exc
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)  # RFC 3261 7.5: tolerate leading CRLFs
    if not lines:
        raise SipParseError("empty message")
    msg = _start_line(lines[0])
    unfolded: list[str] = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and unfolded:
            unfolded[-1] += " " + line.strip()
        elif line:
            unfolded.append(line)
    if len(unfolded) > MAX_HEADERS:
        raise SipParseError("too many headers")
    for line in unfolded:
        name, colon, value = line.partition(":")
        name = name.strip()
        if not colon or not name or not _TOKEN.match(name):
            raise SipParseError("malformed header line")
        msg.headers.append((canonical(name), value.strip()))
    length = msg.get("Content-Length")
    if length is not None:
        if not length.isdigit():
            raise SipParseError("bad Content-Length")
        n = int(length)
        if n > len(body):
            raise SipParseError("body shorter than Content-Length")
        body = body[:n]
    msg.body = body
    if msg.is_request:
        _check_request(msg)
    return msg


def _start_line(line: str) -> SipMessage:
    line = line.strip()
    m = _REQUEST_LINE.match(line)
    if m:
        return SipMessage(method=m.group(1).upper(), uri=m.group(2))
    m = _STATUS_LINE.match(line)
    if m:
        return SipMessage(status=int(m.group(1)), reason=m.group(2))
    parts = line.split(" ")
    if len(parts) == 3 and parts[2].upper().startswith("SIP/") and parts[2].upper() != SIP_VERSION:
        raise SipParseError("unsupported SIP version", 505)
    raise SipParseError("malformed start line")


def _check_request(msg: SipMessage) -> None:
    for name in ("Via", "From", "To", "Call-ID", "CSeq"):
        if not msg.get(name):
            raise SipParseError(f"missing {name}")
    _, method = msg.cseq
    if method != msg.method:
        raise SipParseError("CSeq method does not match the request")
    if not msg.branch:
        # RFC 2543 peers have no branch; we rely on it for transactions.
        raise SipParseError("Via without a branch")
    mf = msg.get("Max-Forwards")
    if mf is not None and not mf.strip().isdigit():
        raise SipParseError("bad Max-Forwards")


def new_tag() -> str:
    return secrets.token_hex(6)


def new_branch() -> str:
    return "z9hG4bK" + secrets.token_hex(8)


def response_to(
    req: SipMessage,
    status: int,
    *,
    to_tag: str | None = None,
    extra: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    reason: str | None = None,
) -> SipMessage:
    """A response copying Via, From, To (tagged), Call-ID, CSeq and Record-Route."""
    res = SipMessage(status=status, reason=reason or REASONS.get(status, "Unknown"))
    for k, v in req.headers:
        if k in ("Via", "From", "Call-ID", "CSeq") or (k == "Record-Route" and 100 < status < 300):
            res.headers.append((k, v))
    to = req.get("To") or ""
    if to_tag and tag_of(to) is None and status > 100:
        to = f"{to};tag={to_tag}"
    res.headers.insert(_after(res, "From"), ("To", to))
    for k, v in extra or []:
        res.add(k, v)
    res.body = body
    return res


def _after(msg: SipMessage, name: str) -> int:
    for i, (k, _) in enumerate(msg.headers):
        if k == name:
            return i + 1
    return len(msg.headers)


def partial_headers(data: bytes) -> list[tuple[str, str]]:
    """Best-effort header lines of a message that failed to parse (for a 400 answer)."""
    try:
        text = data[:MAX_MESSAGE_BYTES].decode("utf-8", "replace")
    except Exception:
        return []
    out: list[tuple[str, str]] = []
    for line in text.replace("\r\n", "\n").split("\n")[1:MAX_HEADERS]:
        if not line.strip():
            break
        name, colon, value = line.partition(":")
        if colon and _TOKEN.match(name.strip()):
            key = canonical(name)
            if key in ("Via", "From", "To", "Call-ID", "CSeq"):
                out.append((key, value.strip()))
    return out


def stamp_via(res: SipMessage, source: tuple[str, int]) -> None:
    """RFC 3581: fill ``rport`` and ``received`` in the top Via the answer goes back on."""
    for i, (k, v) in enumerate(res.headers):
        if k != "Via":
            continue
        vias = split_list(v)
        top = vias[0]
        if param(top, "rport") == "":
            top = top.replace(";rport", f";received={source[0]};rport={source[1]}", 1)
            res.headers[i] = (k, ", ".join([top, *vias[1:]]))
        return
