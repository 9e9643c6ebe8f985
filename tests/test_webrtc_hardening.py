"""WebRTC slots (issue 15, item 6): junk SDP is refused before it takes a slot, and one
address holds a bounded number of calls (offers that never connect free theirs fast)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiortc import RTCConfiguration, RTCPeerConnection
from redis.asyncio import Redis

from pipeline.records import CallStore
from pipeline.session import CallServices
from pipeline.voice import VoiceOptions, VoiceResources
from pipeline.webrtc import CONNECT_TIMEOUT_S, WebRTCCalls, WebRTCError, check_offer, set_host_addresses
from presets.owners import OwnerStore
from presets.pool import PresetStore

from .helpers import RedisProcess


@pytest.fixture
async def calls(clean_redis: RedisProcess) -> AsyncIterator[WebRTCCalls]:
    set_host_addresses(["127.0.0.1"])
    redis = Redis.from_url(clean_redis.url, decode_responses=True)
    owners = OwnerStore(redis)
    services = CallServices(redis=redis, owners=owners, presets=PresetStore(redis), calls=CallStore(redis, 3600))
    voice = VoiceResources(services, None, None, VoiceOptions())  # type: ignore[arg-type]
    webrtc = WebRTCCalls(voice, owners, max_calls=4, max_calls_per_address=2)
    yield webrtc
    await webrtc.close()
    await redis.aclose()


async def _real_offer() -> str:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver("audio", direction="sendrecv")
    await pc.setLocalDescription(await pc.createOffer())
    sdp = pc.localDescription.sdp
    await pc.close()
    return sdp


@pytest.mark.parametrize(
    "junk",
    [
        "garbage",
        "v=0",
        "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n",  # no media at all
        "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=rtpmap:0 PCMU/8000\r\n",
        "v=0\r\nnot an sdp line\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n",
    ],
)
async def test_junk_sdp_is_refused_before_taking_a_slot(calls: WebRTCCalls, junk: str) -> None:
    with pytest.raises(WebRTCError) as err:
        await calls.offer(sdp=junk, sdp_type="offer", owner_id="own_x", line="alex-door", source="10.0.0.9")
    assert err.value.status == 400 and err.value.message.startswith("sdp: ")
    assert calls.active == 0


async def test_calls_per_address_are_capped(calls: WebRTCCalls) -> None:
    sdp = await _real_offer()
    check_offer(sdp)  # a browser's (aiortc's) offer passes
    for _ in range(2):
        answer = await calls.offer(sdp=sdp, sdp_type="offer", owner_id="own_x", line="alex-door", source="10.0.0.9")
        assert answer["type"] == "answer"
    with pytest.raises(WebRTCError) as err:
        await calls.offer(sdp=sdp, sdp_type="offer", owner_id="own_x", line="alex-door", source="10.0.0.9")
    assert err.value.status == 429 and err.value.retryable
    # Another caller still gets through.
    await calls.offer(sdp=sdp, sdp_type="offer", owner_id="own_x", line="alex-door", source="10.0.0.10")
    assert calls.active == 3
    assert CONNECT_TIMEOUT_S <= 10  # an offer that never connects gives its slot back within this
