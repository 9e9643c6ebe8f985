"""Asterisk in front: chan_websocket opens one WebSocket per call to ``/asterisk/media``.

The dialled line comes as the ``line`` query parameter (``v(line=...)`` in the dial
string) and resolves the owner as a SIP call would (SIP users and phone numbers).
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, WebSocket

from pipeline import metrics

from ..resources import Resources

router = APIRouter(prefix="/asterisk", tags=["telephony"])
log = logging.getLogger(__name__)


@router.websocket("/media")
async def media(ws: WebSocket) -> None:
    """One call's audio (binary frames) and control (text frames) from chan_websocket."""
    from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport

    from pipeline.sip.asterisk import AsteriskMediaSerializer
    from pipeline.sip.bridge import SIP_LINE_KINDS, resolve_line, sip_line_candidates
    from pipeline.voice import open_voice_call

    res: Resources = ws.app.state.resources
    offered = ws.scope.get("subprotocols") or []
    await ws.accept(subprotocol="media" if "media" in offered else None)
    if res.voice is None:
        await ws.close(code=1013, reason="voice calls are disabled")
        return
    raw = ws.query_params.get("line") or ""
    resolved = await resolve_line(res.owners, sip_line_candidates(raw), SIP_LINE_KINDS) if raw else None
    if resolved is None:
        metrics.CALLS.labels(transport="asterisk", outcome="unknown_line").inc()
        await ws.close(code=1008, reason="unknown line")
        return
    owner_id, line = resolved
    codec = ws.query_params.get("codec") or "ulaw"
    serializer = AsteriskMediaSerializer(codec)
    call = await open_voice_call(res.voice, owner_id=owner_id, line=line, channel="sip", transport_name="asterisk")
    call.session.record.stats["asterisk"] = {"codec": serializer.codec}
    transport = FastAPIWebsocketTransport(
        ws,
        FastAPIWebsocketParams(
            audio_in_enabled=True, audio_out_enabled=True, add_wav_header=False, serializer=serializer
        ),
    )
    record = await call.run(transport)
    record.stats["asterisk"] = {"codec": serializer.codec, "events": [e.get("event") for e in serializer.events][:20]}
    await res.voice.services.calls.save(record)
