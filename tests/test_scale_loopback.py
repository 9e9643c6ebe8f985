"""Scale-out, proven on loopback: two CallAssist processes, one Redis, HAProxy in front
of HTTP and WebSocket. Text calls spread over both instances (any instance serves any
turn); voice calls over the Twilio wire format; the owner joins a call held by one
instance through the other; ``kill -9`` of one instance mid-call loses no record beyond
the last turn (the survivor closes those calls as interrupted) and the other instance
keeps serving. (The tests run in file order: the later ones stop the instances.)"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator

import httpx
import pytest
from redis.asyncio import Redis

from bench.phone import PhoneCall
from pipeline.tts import PiperEngine
from presets.owners import OwnerStore

from .helpers import RedisProcess, free_port
from .scale_helpers import HAProxy, Proc, start_instance, wait_voice_warm
from .test_voice_twilio import speak

pytestmark = pytest.mark.slow

LINE = "+15550142000"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RedisProcess, list[Proc], HAProxy]]:
    import shutil

    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed")
    tmp = tmp_path_factory.mktemp("scale")
    redis = RedisProcess(tmp / "redis", free_port())
    redis.start()
    proxy_port = free_port()  # the service address every instance hands out
    env = {
        "CALLASSIST_INSTANCE_HEARTBEAT_S": "0.5",
        "CALLASSIST_INSTANCE_TTL_S": "2",
        "CALLASSIST_SILENCE_TIMEOUT_S": "8",
        "CALLASSIST_PUBLIC_URL": f"http://127.0.0.1:{proxy_port}",
        "CALLASSIST_WEBRTC_ICE_HOSTS": '["127.0.0.1"]',  # the owner's join leg, on one machine
    }
    procs = [start_instance(n, redis.url, tmp, voice=True, **env) for n in ("pod-a", "pod-b")]
    proxy = HAProxy(tmp / "haproxy", procs, port=proxy_port)
    try:
        for p in procs:
            wait_voice_warm(p)
        proxy.start()
        yield redis, procs, proxy
    finally:
        proxy.stop()
        for p in procs:
            if p.alive():
                p.proc.terminate()
                p.proc.wait(60)
        redis.stop()


async def _owner(redis_url: str) -> tuple[str, str]:
    r = Redis.from_url(redis_url, decode_responses=True)
    try:
        owner, key = await OwnerStore(r).create_owner("Alex Chen", "en")
    finally:
        await r.aclose()
    return owner.owner_id, key


async def _text_call(api: httpx.AsyncClient, i: int) -> str:
    r = await api.post("/v1/calls/text", json={"lang": "en"})
    assert r.status_code == 201, r.text
    call_id = r.json()["call_id"]
    for text in (f"Hi, this is courier number {i}.", "Where should I leave the parcel?", "Okay, thanks."):
        r = await api.post(f"/v1/calls/{call_id}/turns", json={"text": text})
        assert r.status_code in (200, 409), r.text  # 409: the call already ended (closed by "thanks")
        if r.status_code == 409:
            break
    await api.post(f"/v1/calls/{call_id}/hangup")
    return call_id


async def test_owner_joins_a_call_held_by_the_other_instance(world: tuple[RedisProcess, list[Proc], HAProxy]) -> None:
    """issue 16: the owner's console request lands on the instance that does not carry the
    call's audio; the join is relayed to the one that does (Redis), its SDP answer comes
    back, and the owner's voice reaches the caller; leave is relayed the same way."""
    import numpy as np
    import soxr
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

    from .test_webrtc import SpeechTrack

    redis, procs, proxy = world
    line = "+15550142002"
    _, key = await _owner(redis.url)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=proxy.base_url, headers=headers, timeout=30) as api:
        (await api.put(f"/v1/lines/{line}")).raise_for_status()
        call = PhoneCall(f"{proxy.ws_url}/telephony/twilio", line)
        await call.connect()
        await call.listen(max_wait_s=30)
        cid = (await api.get("/v1/calls", params={"limit": 1})).json()["calls"][0]["call_id"]
        holder = (await api.get(f"/v1/calls/{cid}")).json()["instance"]
        other = next(p for p in procs if p.name != holder)

        pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        spoken = PiperEngine().synthesize("This is Alex speaking. I will be right down.")
        at_48k = soxr.resample(np.frombuffer(spoken.pcm, np.int16).astype(np.float32) / 32768, spoken.rate, 48000)
        pc.addTransceiver(SpeechTrack((at_48k * 32767).astype(np.int16), 1.0), direction="sendrecv")
        try:
            await pc.setLocalDescription(await pc.createOffer())
            async with httpx.AsyncClient(base_url=other.base_url, headers=headers, timeout=30) as there:
                offer = {"sdp": pc.localDescription.sdp, "type": "offer"}
                r = await there.post(f"/v1/calls/{cid}/join", json=offer)
                for _ in range(3):  # "storage is unreachable; retry shortly" is a 503 a console retries
                    if r.status_code != 503:
                        break
                    await asyncio.sleep(1.0)
                    r = await there.post(f"/v1/calls/{cid}/join", json=offer)
                assert r.status_code == 200, r.text
                assert r.json()["type"] == "answer" and r.json()["pc_id"]
                await pc.setRemoteDescription(RTCSessionDescription(sdp=r.json()["sdp"], type="answer"))
                bad = await there.post(f"/v1/calls/{cid}/join", json={"sdp": "v=0 nonsense", "type": "offer"})
                assert bad.status_code == 409, bad.text  # the holder's own answer: already joined
                heard = await call.listen(max_wait_s=20, quiet_s=1.5)  # the owner's voice, via the holder
                assert heard.audio and len(heard.audio) >= 8000, "the caller did not hear the owner"
                r = await there.post(f"/v1/calls/{cid}/leave")
                assert r.status_code == 200, r.text
                again = await there.post(f"/v1/calls/{cid}/leave")
                assert again.status_code == 409 and again.json()["error"]["code"] == "not_joined", again.text
        finally:
            await pc.close()
        await call.hangup()
        await asyncio.sleep(1.0)
        record = (await api.get(f"/v1/calls/{cid}")).json()
        assert record["stats"]["owner_joins"] == 1 and record["instance"] == holder


async def test_text_and_voice_calls_spread_and_a_killed_instance_loses_nothing_beyond_the_last_turn(
    world: tuple[RedisProcess, list[Proc], HAProxy],
) -> None:
    redis, (a, b), proxy = world
    _, key = await _owner(redis.url)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=proxy.base_url, headers=headers, timeout=30) as api:
        (await api.put(f"/v1/lines/{LINE}")).raise_for_status()
        (
            await api.put("/v1/presets/regular/delivery", json={"response": "Please leave it with the front desk."})
        ).raise_for_status()
        (await api.put("/v1/profile", json={"display_name": "Alex Chen", "languages": ["en"]})).raise_for_status()

        # 40 text calls, 8 at a time, every request round-robined over both instances.
        turns_before = a.metric("callassist_turns_total") + b.metric("callassist_turns_total")
        ids: list[str] = []
        for batch in range(5):
            ids += await asyncio.gather(*(_text_call(api, batch * 8 + i) for i in range(8)))
        served = {p.name: p.metric("callassist_turns_total") for p in (a, b)}
        assert all(v > 0 for v in served.values()), served  # both instances served turns
        for call_id in ids:
            rec = (await api.get(f"/v1/calls/{call_id}")).json()
            texts = [t["caller_text"] for t in rec["turns"]]
            assert texts[:2] == [texts[0], "Where should I leave the parcel?"], rec["turns"]  # in order, none lost
            assert [t["index"] for t in rec["turns"]] == list(range(len(rec["turns"])))
            assert rec["ended_at"] is not None
            assert any(t["preset_conveyed"] == "regular:delivery" for t in rec["turns"])
        assert sum(served.values()) - turns_before >= 80

        # Voice: four calls at once through HAProxy's WebSocket path.
        voices = {"en": PiperEngine()}
        first = speak(voices, "en", "Hi, this is FedEx with a package for Alex.")
        second = speak(voices, "en", "Where should I leave it?")
        calls = [PhoneCall(f"{proxy.ws_url}/telephony/twilio", LINE) for _ in range(4)]
        for c in calls:
            await c.connect()
        await asyncio.gather(*(c.listen(max_wait_s=30) for c in calls))
        await asyncio.gather(*(c.say(first, max_wait_s=40) for c in calls))
        await asyncio.sleep(1.0)  # the turn is checkpointed in Redis

        records = {r["call_id"]: r for r in (await api.get("/v1/calls", params={"limit": 100})).json()["calls"]}
        voice_ids = [cid for cid, r in records.items() if r["channel"] == "twilio"]
        assert len(voice_ids) == 4
        full = {cid: (await api.get(f"/v1/calls/{cid}")).json() for cid in voice_ids}
        on_a = [cid for cid, r in full.items() if r["instance"] == "pod-a"]
        on_b = [cid for cid, r in full.items() if r["instance"] == "pod-b"]
        assert on_a and on_b, {cid: r["instance"] for cid, r in full.items()}
        turns_at_kill = {cid: len(full[cid]["turns"]) for cid in on_a}
        assert all(n >= 1 for n in turns_at_kill.values())

        a.kill9()
        killed = time.monotonic()
        # The calls on pod-b carry on.
        survivors = [c for c in calls if not c.closed.is_set()]
        await asyncio.sleep(0.5)
        survivors = [c for c in calls if not c.closed.is_set()]
        assert len(survivors) >= len(on_b)
        replies = await asyncio.gather(*(c.say(second, max_wait_s=40) for c in survivors))
        assert sum(1 for r in replies if r.latency_s is not None) >= len(on_b)
        for c in survivors:
            await c.hangup()

        # pod-b closes pod-a's calls as interrupted, keeping every checkpointed turn.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            got = {cid: await api.get(f"/v1/calls/{cid}") for cid in on_a}
            recs = {cid: r.json() for cid, r in got.items() if r.status_code == 200}  # a 503: poll again
            if len(recs) == len(on_a) and all(r["end_reason"] == "interrupted" for r in recs.values()):
                break
            await asyncio.sleep(0.3)
        reaped_after = time.monotonic() - killed
        assert all(r["end_reason"] == "interrupted" for r in recs.values()), {
            c: r["end_reason"] for c, r in recs.items()
        }
        assert all(len(recs[cid]["turns"]) >= turns_at_kill[cid] for cid in on_a)
        assert all(r["stats"]["interrupted"]["reaped_by"] == "pod-b" for r in recs.values())
        print(f"\nkill -9: {len(on_a)} calls on pod-a closed as interrupted {reaped_after:.1f} s later; "
              f"records lost beyond the last turn: 0")  # fmt: skip

        # New calls and every REST request now go to pod-b.
        for _ in range(4):
            r = await api.get("/v1/presets")
            assert r.status_code == 200
        more = [PhoneCall(f"{proxy.ws_url}/telephony/twilio", LINE) for _ in range(4)]
        for c in more:
            await c.connect()
        await asyncio.gather(*(c.listen(max_wait_s=30) for c in more))
        replies = await asyncio.gather(*(c.say(second, max_wait_s=40) for c in more))
        assert all(r.latency_s is not None for r in replies)
        for c in more:
            await c.hangup()
        await asyncio.sleep(1.0)
        latest = (await api.get("/v1/calls", params={"limit": 4})).json()["calls"]
        assert all(r["channel"] == "twilio" for r in latest)
        for r in latest:
            rec = (await api.get(f"/v1/calls/{r['call_id']}")).json()
            assert rec["instance"] == "pod-b" and rec["turns"], rec


async def test_sigterm_drains_without_cutting_a_call(world: tuple[RedisProcess, list[Proc], HAProxy]) -> None:
    """SIGTERM: no new calls (readyz 503, webhook redirect to the service address, media
    stream refused), the calls in progress finish normally, then the process exits."""
    redis, (_, b), proxy = world
    owner_id, key = await _owner(redis.url)
    line = "+15550142001"
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=b.base_url, headers=headers, timeout=30) as api:
        (await api.put(f"/v1/lines/{line}")).raise_for_status()
        (
            await api.put("/v1/presets/regular/delivery", json={"response": "Please leave it with the front desk."})
        ).raise_for_status()
        voices = {"en": PiperEngine()}
        first = speak(voices, "en", "Hi, this is UPS with a parcel for Alex.")
        second = speak(voices, "en", "Where should I leave it?")
        ws = f"ws://127.0.0.1:{b.port}/telephony/twilio"
        calls = [PhoneCall(ws, line) for _ in range(2)]
        for c in calls:
            await c.connect()
        await asyncio.gather(*(c.listen(max_wait_s=30) for c in calls))
        await asyncio.gather(*(c.say(first, max_wait_s=40) for c in calls))

        before = (await api.get("/readyz")).json()
        assert before["voice"]["calls"] == 2, before  # both calls are in progress here
        assert not any(c.closed.is_set() for c in calls)
        t_term = time.monotonic()
        b.proc.send_signal(signal.SIGTERM)
        for _ in range(50):  # the drain starts within a loop iteration of the signal
            r = await api.get("/readyz")
            if r.status_code == 503:
                break
            await asyncio.sleep(0.1)
        assert r.status_code == 503 and r.json()["status"] == "draining", r.text
        # A new call is not admitted here: Twilio is sent back to the service address...
        hook = await api.post("/telephony/twilio/voice", data={"To": line, "From": "+15550009999", "CallSid": "CA1"})
        assert f'<Redirect method="POST">{proxy.base_url}/telephony/twilio/voice?attempt=1</Redirect>' in hook.text
        # ...and a media stream that reaches this instance anyway is refused.
        late = PhoneCall(ws, line)
        await late.connect()
        await asyncio.wait_for(late.closed.wait(), 10)

        # The calls in progress carry on to their natural end.
        replies = await asyncio.gather(*(c.say(second, max_wait_s=40) for c in calls))
        assert all(r.latency_s is not None for r in replies)
        assert b.alive()  # still serving its calls
        for c in calls:
            await c.hangup()
        b.proc.wait(60)
        exited = time.monotonic() - t_term
        print(f"\nSIGTERM with 2 active calls: exited {exited:.1f} s later, after both calls ended")

    r = Redis.from_url(redis.url, decode_responses=True)
    try:
        import json

        ids = await r.zrevrange(f"ca:owner:{owner_id}:calls", 0, 10)
        records = [json.loads(await r.get(f"ca:call:{cid}")) for cid in ids]
    finally:
        await r.aclose()
    voice = [rec for rec in records if rec["channel"] == "twilio" and rec["turns"]]
    assert len(voice) == 2
    for rec in voice:
        assert rec["end_reason"] == "caller_hangup", rec["end_reason"]  # not cut by the shutdown
        assert [t["caller_text"] is not None for t in rec["turns"]].count(True) >= 2
