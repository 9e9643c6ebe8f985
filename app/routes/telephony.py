"""Telephony: the providers' incoming-call webhooks (Twilio TwiML, Telnyx TeXML, Plivo XML),
each checked with the provider's own signature, and the provider media WebSockets."""

from __future__ import annotations

import contextlib
import hmac
import logging
from typing import Annotated
from xml.sax.saxutils import escape, quoteattr

from fastapi import APIRouter, Header, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response

from pipeline import metrics
from presets.models import normalize_line

from ..deps import ResourcesDep
from ..errors import ApiError
from ..resources import Resources
from ..stream_auth import (
    check_stream_token,
    make_stream_token,
    plivo_signature_valid,
    stream_secret,
    telnyx_signature_valid,
    twilio_signature,
)

router = APIRouter(prefix="/telephony", tags=["telephony"])
log = logging.getLogger(__name__)

_BUSY_TWIML = (
    '<?xml version="1.0" encoding="UTF-8"?><Response>'
    '<Say language="en-US">Sorry, all our lines are busy right now. Please call again in a few minutes.</Say>'
    '<Say language="zh-CN">抱歉，现在线路繁忙，请稍后再拨。</Say><Hangup/></Response>'
)
_UNKNOWN_LINE_TWIML = (
    '<?xml version="1.0" encoding="UTF-8"?><Response>'
    '<Say language="en-US">Sorry, this number is not in service.</Say>'
    '<Say language="zh-CN">抱歉，您拨打的号码暂时无法接通。</Say><Hangup/></Response>'
)


def _ws_base(public_url: str) -> str:
    base = public_url.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base.removeprefix("https://")
    return "ws://" + base.removeprefix("http://")


def _stream_url(request: Request, res: Resources, provider: str = "twilio") -> str:
    if res.settings.public_url:
        return _ws_base(res.settings.public_url) + f"/telephony/{provider}"
    if res.settings.env == "production":
        raise ApiError(503, "unavailable", "set CALLASSIST_PUBLIC_URL", headers={"Retry-After": "60"})
    # Development only: the request's own host (never X-Forwarded-Host, which anyone can send).
    scheme = "wss" if request.url.scheme == "https" else "ws"
    return f"{scheme}://{request.url.netloc}/telephony/{provider}"


def _signed_url(request: Request, res: Resources) -> str:
    """The URL the provider called, as it signed it (the public one, query included)."""
    query = f"?{request.url.query}" if request.url.query else ""
    if res.settings.public_url:
        return res.settings.public_url.rstrip("/") + request.url.path + query
    return str(request.url)


def _stream_params(
    res: Resources, provider: str, line: str, form: dict[str, str], call_key: str
) -> list[tuple[str, str]]:
    params = [("line", line), ("from_number", form.get("From", "")), ("call_sid", form.get(call_key, ""))]
    secret = stream_secret(res.settings, provider)
    if secret is not None:
        params.append(("stream_token", make_stream_token(secret, line)))
    return [(k, v) for k, v in params if v]


async def _owner_for(res: Resources, raw_line: str | None) -> tuple[str, str] | None:
    if not raw_line:
        return None
    try:
        line, _ = normalize_line(raw_line)
    except ValueError:
        return None
    owner = await res.owners.owner_for_line(line)
    return (owner, line) if owner else None


REDIRECT_ATTEMPTS = 3  # a full (or draining) instance hands a call back this many times


def _elsewhere_or_busy(request: Request, res: Resources) -> Response:
    """This instance is full or draining: send Twilio back to the service address (the
    load balancer picks another instance) a few times, then answer busy."""
    try:
        attempt = int(request.query_params.get("attempt", "0"))
    except ValueError:
        attempt = REDIRECT_ATTEMPTS
    public = res.settings.public_url
    if public and attempt < REDIRECT_ATTEMPTS:
        metrics.CALLS.labels(transport="twilio", outcome="redirected").inc()
        target = f"{public.rstrip('/')}/telephony/twilio/voice?attempt={attempt + 1}"
        twiml = (
            '<?xml version="1.0" encoding="UTF-8"?><Response>'
            f'<Redirect method="POST">{escape(target)}</Redirect></Response>'
        )
        return Response(twiml, media_type="application/xml")
    metrics.CALLS.labels(transport="twilio", outcome="busy").inc()
    return Response(_BUSY_TWIML, media_type="application/xml")


@router.post("/twilio/voice")
async def twilio_voice(
    request: Request, res: ResourcesDep, x_twilio_signature: Annotated[str | None, Header()] = None
) -> Response:
    """Twilio's incoming-call webhook: connect the call's audio to our media WebSocket."""
    form = {k: str(v) for k, v in (await request.form()).items()}
    token = res.settings.twilio_auth_token
    if token is not None:
        # Twilio signs the whole URL it called, query string included (a <Redirect> adds one).
        expected = twilio_signature(token.get_secret_value(), _signed_url(request, res), form)
        if not x_twilio_signature or not hmac.compare_digest(expected, x_twilio_signature):
            raise ApiError(403, "forbidden", "invalid X-Twilio-Signature")
    resolved = await _owner_for(res, form.get("To") or form.get("Called"))
    if resolved is None:
        return Response(_UNKNOWN_LINE_TWIML, media_type="application/xml")
    if res.voice is not None and res.voice.slots.full:
        return _elsewhere_or_busy(request, res)
    return _connect_stream(request, res, "twilio", _stream_params(res, "twilio", resolved[1], form, "CallSid"))


def _connect_stream(request: Request, res: Resources, provider: str, params: list[tuple[str, str]]) -> Response:
    """TwiML (Twilio) or TeXML (Telnyx, the same verbs): the call's audio to our WebSocket."""
    body = "".join(f"<Parameter name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in params)
    extra = ' bidirectionalMode="rtp"' if provider == "telnyx" else ""
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?><Response><Connect>'
        f"<Stream url={quoteattr(_stream_url(request, res, provider))}{extra}>{body}</Stream>"
        "</Connect></Response>"
    )
    return Response(xml, media_type="application/xml")


@router.post("/telnyx/voice")
async def telnyx_voice(
    request: Request,
    res: ResourcesDep,
    telnyx_signature_ed25519: Annotated[str | None, Header()] = None,
    telnyx_timestamp: Annotated[str | None, Header()] = None,
) -> Response:
    """Telnyx's TeXML webhook (form-encoded like Twilio's): connect the call's audio to our
    media WebSocket. With ``TELNYX_PUBLIC_KEY`` set the Ed25519 signature is checked."""
    raw = await request.body()
    key = res.settings.telnyx_public_key
    if key is not None and not telnyx_signature_valid(key, telnyx_timestamp, raw, telnyx_signature_ed25519):
        raise ApiError(403, "forbidden", "invalid telnyx-signature-ed25519 (or telnyx-timestamp out of range)")
    form = {k: str(v) for k, v in (await request.form()).items()}
    resolved = await _owner_for(res, form.get("To") or form.get("Called"))
    if resolved is None:
        return Response(_UNKNOWN_LINE_TWIML, media_type="application/xml")
    if res.voice is not None and res.voice.slots.full:
        metrics.CALLS.labels(transport="telnyx", outcome="busy").inc()
        return Response(_BUSY_TWIML, media_type="application/xml")
    return _connect_stream(request, res, "telnyx", _stream_params(res, "telnyx", resolved[1], form, "CallSid"))


def _plivo_xml(body: str) -> Response:
    return Response(f'<?xml version="1.0" encoding="UTF-8"?><Response>{body}</Response>', media_type="application/xml")


_PLIVO_UNKNOWN = (
    '<Speak language="en-US">Sorry, this number is not in service.</Speak>'
    '<Speak language="zh-CN">抱歉，您拨打的号码暂时无法接通。</Speak><Hangup/>'
)
_PLIVO_BUSY = (
    '<Speak language="en-US">Sorry, all our lines are busy right now. Please call again in a few minutes.</Speak>'
    '<Speak language="zh-CN">抱歉，现在线路繁忙，请稍后再拨。</Speak><Hangup/>'
)


@router.post("/plivo/voice")
async def plivo_voice(
    request: Request,
    res: ResourcesDep,
    x_plivo_signature_v3: Annotated[str | None, Header()] = None,
    x_plivo_signature_v3_nonce: Annotated[str | None, Header()] = None,
) -> Response:
    """Plivo's answer URL: a bidirectional ``<Stream>`` to our media WebSocket, the line and
    the stream token in ``extraHeaders``. With ``PLIVO_AUTH_TOKEN`` set the V3 signature is checked."""
    form = {k: str(v) for k, v in (await request.form()).items()}
    token = res.settings.plivo_auth_token
    if token is not None and not plivo_signature_valid(
        token.get_secret_value(), _signed_url(request, res), form, x_plivo_signature_v3_nonce, x_plivo_signature_v3
    ):
        raise ApiError(403, "forbidden", "invalid X-Plivo-Signature-V3")
    resolved = await _owner_for(res, form.get("To"))
    if resolved is None:
        return _plivo_xml(_PLIVO_UNKNOWN)
    if res.voice is not None and res.voice.slots.full:
        metrics.CALLS.labels(transport="plivo", outcome="busy").inc()
        return _plivo_xml(_PLIVO_BUSY)
    params = _stream_params(res, "plivo", resolved[1], form, "CallUUID")
    headers = ",".join(f"{k}={v}" for k, v in params if "," not in v and "=" not in v)
    stream = (
        f'<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" '
        f"extraHeaders={quoteattr(headers)}>{escape(_stream_url(request, res, 'plivo'))}</Stream>"
    )
    return _plivo_xml(stream)


def _twilio_signed_upgrade(ws: WebSocket, res: Resources) -> bool:
    token = res.settings.twilio_auth_token
    signature = ws.headers.get("x-twilio-signature")
    if token is None or not signature:
        return False
    if res.settings.public_url:
        url = _ws_base(res.settings.public_url) + ws.url.path + (f"?{ws.url.query}" if ws.url.query else "")
    else:
        url = str(ws.url)
    return hmac.compare_digest(twilio_signature(token.get_secret_value(), url, {}), signature)


def _stream_authorized(ws: WebSocket, res: Resources, provider: str, line: str | None, token: str | None) -> bool:
    secret = stream_secret(res.settings, provider)
    if secret is None:
        return True
    if provider == "twilio" and _twilio_signed_upgrade(ws, res):
        return True
    try:
        canonical = normalize_line(line or "")[0]
    except ValueError:
        return False
    return check_stream_token(secret, canonical, token)


async def _close(ws: WebSocket, code: int, reason: str) -> None:
    """Close unless the caller already went (a frame over the size limit, a hang-up):
    closing twice is not an error to log."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        await ws.close(code=code, reason=reason)


async def _media_ws(ws: WebSocket, provider: str) -> None:
    from pipeline.telephony import HandshakeError, read_start, run_telephony_call

    res: Resources = ws.app.state.resources
    await ws.accept()
    try:
        info = await read_start(ws, provider)
    except HandshakeError as exc:
        metrics.CALLS.labels(transport=provider, outcome="no_start").inc()
        log.warning("telephony handshake failed", extra={"provider": provider, "reason": exc.reason})
        await _close(ws, 1008, exc.reason)
        return
    token = info.params.get("stream_token") if isinstance(info.params, dict) else None
    if not _stream_authorized(ws, res, provider, info.line, token if isinstance(token, str) else None):
        metrics.CALLS.labels(transport=provider, outcome="unauthorized").inc()
        await _close(ws, 1008, "unauthorized")
        return
    if res.voice is None:
        await _close(ws, 1013, "voice calls are disabled")
        return
    resolved = await _owner_for(res, info.line)
    if resolved is None:
        metrics.CALLS.labels(transport=provider, outcome="unknown_line").inc()
        await _close(ws, 1008, "unknown line")
        return
    slot = res.voice.slots.take(provider)
    if slot is None:
        await _close(ws, 1013, "busy: too many calls, try again later")
        return
    owner_id, line = resolved
    try:
        # The slot is freed when the caller's media ends, before the post-call work.
        await run_telephony_call(res.voice, ws, info, owner_id=owner_id, line=line, on_media_end=slot.release)
    finally:
        slot.release()


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
