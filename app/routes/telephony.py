"""Telephony: Twilio's incoming-call webhook (TwiML) and the provider media WebSockets."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
from typing import Annotated
from xml.sax.saxutils import quoteattr

from fastapi import APIRouter, Header, Request, WebSocket
from fastapi.responses import Response

from pipeline import metrics
from presets.models import normalize_line

from ..deps import ResourcesDep
from ..errors import ApiError
from ..resources import Resources

router = APIRouter(prefix="/telephony", tags=["telephony"])
log = logging.getLogger(__name__)

_UNKNOWN_LINE_TWIML = (
    '<?xml version="1.0" encoding="UTF-8"?><Response>'
    '<Say language="en-US">Sorry, this number is not in service.</Say>'
    '<Say language="zh-CN">抱歉，您拨打的号码暂时无法接通。</Say><Hangup/></Response>'
)


def twilio_signature(auth_token: str, url: str, params: dict[str, str]) -> str:
    """Twilio's X-Twilio-Signature: HMAC-SHA1 over the URL plus sorted POST params."""
    data = url + "".join(k + params[k] for k in sorted(params))
    digest = hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def _stream_url(request: Request, res: Resources) -> str:
    base = res.settings.public_url
    if base:
        base = base.rstrip("/")
        ws = (
            "wss://" + base.removeprefix("https://")
            if base.startswith("https://")
            else "ws://" + base.removeprefix("http://")
        )
        return ws + "/telephony/twilio"
    proto = request.headers.get("x-forwarded-proto", request.url.scheme)
    host = request.headers.get("x-forwarded-host", request.headers.get("host", request.url.netloc))
    return f"{'wss' if proto in ('https', 'wss') else 'ws'}://{host}/telephony/twilio"


async def _owner_for(res: Resources, raw_line: str | None) -> tuple[str, str] | None:
    if not raw_line:
        return None
    try:
        line, _ = normalize_line(raw_line)
    except ValueError:
        return None
    owner = await res.owners.owner_for_line(line)
    return (owner, line) if owner else None


@router.post("/twilio/voice")
async def twilio_voice(
    request: Request, res: ResourcesDep, x_twilio_signature: Annotated[str | None, Header()] = None
) -> Response:
    """Twilio's incoming-call webhook: connect the call's audio to our media WebSocket."""
    form = {k: str(v) for k, v in (await request.form()).items()}
    token = res.settings.twilio_auth_token
    if token is not None:
        url = (res.settings.public_url.rstrip("/") + request.url.path) if res.settings.public_url else str(request.url)
        expected = twilio_signature(token.get_secret_value(), url, form)
        if not x_twilio_signature or not hmac.compare_digest(expected, x_twilio_signature):
            raise ApiError(403, "forbidden", "invalid X-Twilio-Signature")
    to = form.get("To") or form.get("Called")
    resolved = await _owner_for(res, to)
    if resolved is None:
        return Response(_UNKNOWN_LINE_TWIML, media_type="application/xml")
    _, line = resolved
    params = [
        ("line", line),
        ("from_number", form.get("From", "")),
        ("call_sid", form.get("CallSid", "")),
    ]
    body = "".join(f"<Parameter name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in params if v)
    twiml = (
        '<?xml version="1.0" encoding="UTF-8"?><Response><Connect>'
        f"<Stream url={quoteattr(_stream_url(request, res))}>{body}</Stream>"
        "</Connect></Response>"
    )
    return Response(twiml, media_type="application/xml")


async def _media_ws(ws: WebSocket, provider: str) -> None:
    from pipeline.telephony import HandshakeError, read_start, run_telephony_call

    res: Resources = ws.app.state.resources
    await ws.accept()
    if res.voice is None:
        await ws.close(code=1013, reason="voice calls are disabled")
        return
    try:
        info = await read_start(ws, provider)
    except HandshakeError as exc:
        metrics.CALLS.labels(transport=provider, outcome="no_start").inc()
        log.warning("telephony handshake failed", extra={"provider": provider, "reason": exc.reason})
        await ws.close(code=1008, reason=exc.reason)
        return
    resolved = await _owner_for(res, info.line)
    if resolved is None:
        metrics.CALLS.labels(transport=provider, outcome="unknown_line").inc()
        await ws.close(code=1008, reason="unknown line")
        return
    owner_id, line = resolved
    await run_telephony_call(res.voice, ws, info, owner_id=owner_id, line=line)


@router.websocket("/twilio")
async def twilio_ws(ws: WebSocket) -> None:
    """Twilio Media Streams (connected, start, media, dtmf, mark, stop; clear on barge-in)."""
    await _media_ws(ws, "twilio")


@router.websocket("/telnyx")
async def telnyx_ws(ws: WebSocket) -> None:
    await _media_ws(ws, "telnyx")


@router.websocket("/plivo")
async def plivo_ws(ws: WebSocket) -> None:
    await _media_ws(ws, "plivo")
