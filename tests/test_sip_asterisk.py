"""Asterisk's chan_websocket into the live voice pipeline, against a scripted stand-in
for Asterisk (Asterisk itself does not install here): the WebSocket Asterisk would open
for ``Dial(WebSocket/callassist/c(ulaw)v(line=...))``, 20 ms ulaw frames in real time,
a DTMF event, and the assistant's audio back."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
import websockets

from pipeline.sip import rtp
from pipeline.sip.asterisk import parse_event

from .test_sip import World, world

__all__ = ["world"]  # the SIP owner on the session's voice app (see test_sip.py)

pytestmark = pytest.mark.slow


def test_parse_event_plain_and_json() -> None:
    assert parse_event("MEDIA_START connection_id:callassist channel:WebSocket/callassist/0x1 format:ulaw") == {
        "event": "MEDIA_START", "connection_id": "callassist", "channel": "WebSocket/callassist/0x1", "format": "ulaw",
    }  # fmt: skip
    assert parse_event('{"event": "DTMF_END", "digit": "5"}') == {"event": "DTMF_END", "digit": "5"}
    with pytest.raises(ValueError):
        parse_event("{not json")


async def test_unknown_line_is_refused(world: World) -> None:
    url = world.a.server.ws_url + "/asterisk/media?line=nobody-here"
    async with websockets.connect(url, subprotocols=["media"], open_timeout=10) as ws:
        assert ws.subprotocol == "media"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_chan_websocket_call(world: World) -> None:
    known = len(world.calls())
    url = world.a.server.ws_url + f"/asterisk/media?line={world.user}"
    caller = world.caller_ulaw.read_bytes() + b"\xff" * 8000 * 30
    heard = bytearray()
    commands: list[str] = []
    async with websockets.connect(url, subprotocols=["media"], open_timeout=10, max_size=2**20) as ws:
        await ws.send(
            "MEDIA_START connection_id:callassist channel:WebSocket/callassist/0x7f01 format:ulaw optimal_frame_size:160 ptime:20"
        )

        async def receive() -> None:
            with contextlib.suppress(websockets.ConnectionClosed):
                async for message in ws:
                    if isinstance(message, bytes):
                        heard.extend(message)
                    else:
                        commands.append(message)

        reader = asyncio.ensure_future(receive())
        t0 = time.monotonic()
        answered = None
        for i in range(0, len(caller), 160):  # 20 ms of ulaw per frame, in real time
            await ws.send(caller[i : i + 160])
            if i == 160 * 50:
                await ws.send("DTMF_END digit:5")
            await asyncio.sleep(max(0.0, t0 + (i // 160 + 1) * 0.02 - time.monotonic()))
            if i % 8000 == 0:
                calls = world.calls()[known:]
                if answered is None and calls and any(t["caller_text"] for t in calls[0]["turns"]):
                    answered = time.monotonic()
                if answered is not None and time.monotonic() - answered > 3.0:
                    break  # heard the reply: Asterisk hangs up by closing the socket
        await ws.close()
        reader.cancel()
    call = world.wait_call(known, ended=False)
    deadline = time.monotonic() + 30
    while not call.get("ended_at") and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        call = world.calls()[known]
    assert any(t["caller_text"] for t in call["turns"]), call["transcript"]
    assert any(t["preset_conveyed"] == "regular:delivery" for t in call["turns"]), call["turns"]
    assert call["stats"]["dtmf"] == ["5"] and call["stats"]["asterisk"]["codec"] == "ulaw"
    pcm = rtp.decode("PCMU", bytes(heard))
    loud = [rtp.rms(pcm[i : i + 3200]) for i in range(0, len(pcm), 3200)]
    assert sum(level > 500 for level in loud) >= 10, "the assistant said (almost) nothing"
