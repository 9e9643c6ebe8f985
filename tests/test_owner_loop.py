"""The owner in the loop over the real API on a real uvicorn and Redis: live events
(SSE with resume and isolation), take-over of a text call, screening, quick replies and
the summary of an ended call."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from .conftest import create_owner
from .helpers import RedisProcess


class SseReader:
    """A real SSE client: reads ``id``/``event``/``data`` frames off a streaming response."""

    def __init__(self, client: httpx.AsyncClient, headers: dict[str, str]) -> None:
        self.client = client
        self.headers = headers
        self.events: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self.status: int | None = None

    async def _run(self) -> None:
        async with self.client.stream("GET", "/v1/events", headers=self.headers, timeout=None) as r:
            self.status = r.status_code
            self.ready.set()
            frame: dict[str, str] = {}
            async for line in r.aiter_lines():
                if line == "":
                    if "data" in frame:
                        self.events.append(
                            {**json.loads(frame["data"]), "_id": frame.get("id"), "_at": time.perf_counter()}
                        )
                    frame = {}
                elif not line.startswith(":"):
                    key, _, value = line.partition(": ")
                    frame[key] = value

    async def __aenter__(self) -> SseReader:
        self._task = asyncio.get_running_loop().create_task(self._run())
        await asyncio.wait_for(self.ready.wait(), 5)
        await asyncio.sleep(0.1)  # the server has read the cursor
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def wait_for(self, type_: str, *, n: int = 1, within_s: float = 5.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            found = [e for e in self.events if e["type"] == type_]
            if len(found) >= n:
                return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"no {type_} event; got {[e['type'] for e in self.events]}")


async def _setup(api: httpx.AsyncClient) -> None:
    await api.put("/v1/presets/regular/delivery", json={"response": "Please leave it with the front desk."})


async def test_events_stream_a_text_call_and_isolate_owners(
    api: httpx.AsyncClient, owner: dict[str, str], redis_server: RedisProcess
) -> None:
    await _setup(api)
    other = await create_owner(api, redis_server.url, "Bo", "zh")
    async with (
        SseReader(api, {"Authorization": owner["auth"]}) as mine,
        SseReader(api, {"Authorization": other["auth"]}) as theirs,
    ):
        assert mine.status == 200 and theirs.status == 200
        call = (await api.post("/v1/calls/text", json={"lang": "en"})).json()
        cid = call["call_id"]
        await api.post(f"/v1/calls/{cid}/turns", json={"text": "Hi, FedEx here, where should I leave the parcel?"})
        await api.post(f"/v1/calls/{cid}/turns", json={"text": "Please tell him the invoice is in the box."})
        await api.post(f"/v1/calls/{cid}/hangup")
        ended = (await mine.wait_for("call.ended"))[0]
        # the other owner's call, on the other stream only
        theirs_call = (await api.post("/v1/calls/text", json={}, headers={"Authorization": other["auth"]})).json()
        await theirs.wait_for("call.started")
        await asyncio.sleep(0.3)
    types = [e["type"] for e in mine.events]
    assert types[0] == "call.started" and types[-1] == "call.ended", types
    assert types.count("turn.caller") == 2 and types.count("turn.assistant") == 2
    assert "message.left" in types
    assert all(e["call_id"] == cid for e in mine.events)
    assert all(e["call_id"] == theirs_call["call_id"] for e in theirs.events)
    caller = next(e for e in mine.events if e["type"] == "turn.caller")
    assert "FedEx" in caller["data"]["text"]
    assistant = next(e for e in mine.events if e["type"] == "turn.assistant")
    assert assistant["data"]["preset_conveyed"] == "regular:delivery"
    ids = [e["_id"] for e in mine.events]
    assert len(set(ids)) == len(ids) and all(i == e["id"] for i, e in zip(ids, mine.events, strict=True))
    summary = ended["data"]["summary"]
    assert summary["lang"] == "en" and any("invoice" in m for m in summary["messages"])
    assert "front desk" in " ".join(summary["conveyed"])
    assert "Caller:" in summary["text"]


async def test_last_event_id_resumes_without_loss(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    await _setup(api)
    async with SseReader(api, {"Authorization": owner["auth"]}) as first:
        call = (await api.post("/v1/calls/text", json={"lang": "en"})).json()
        await first.wait_for("call.started")
    cut = first.events[-1]["_id"]
    # while nobody listens
    cid = call["call_id"]
    await api.post(f"/v1/calls/{cid}/turns", json={"text": "Hello, is Alex there?"})
    await api.post(f"/v1/calls/{cid}/hangup")
    await asyncio.sleep(0.3)
    async with SseReader(api, {"Authorization": owner["auth"], "Last-Event-ID": cut}) as second:
        await second.wait_for("call.ended")
    types = [e["type"] for e in second.events]
    assert types == ["turn.caller", "turn.assistant", "call.ended"], types
    assert all(e["_id"] > cut for e in second.events)


async def test_events_reject_bad_input_and_strangers(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    r = await api.get("/v1/events", headers={"Last-Event-ID": "yesterday"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "Last-Event-ID"
    r = await api.get("/v1/events", headers={"Authorization": "Bearer ca_nope"})
    assert r.status_code == 401


async def test_say_and_end_on_a_text_call(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    await _setup(api)
    cid = (await api.post("/v1/calls/text", json={"lang": "zh"})).json()["call_id"]
    async with SseReader(api, {"Authorization": owner["auth"]}) as sse:
        r = await api.post(f"/v1/calls/{cid}/say", json={"text": "我是陈先生，我十分钟后回电。"})
        assert r.status_code == 200, r.text
        turn = (await api.post(f"/v1/calls/{cid}/turns", json={"text": "好的，谢谢"})).json()
        assert turn["owner_said"] == ["我是陈先生，我十分钟后回电。"]
        r = await api.post(f"/v1/calls/{cid}/end", json={})
        assert r.status_code == 200, r.text
        await sse.wait_for("call.ended")
    owner_events = [e for e in sse.events if e["type"] == "turn.owner"]
    assert [e["data"]["via"] for e in owner_events] == ["say", "end"]
    rec = (await api.get(f"/v1/calls/{cid}")).json()
    owner_lines = [e["text"] for e in rec["transcript"] if e["role"] == "owner"]
    assert owner_lines[0] == "我是陈先生，我十分钟后回电。" and "再见" in owner_lines[1]
    assert rec["end_reason"] == "owner_ended" and rec["summary"]["owner_said"] == owner_lines
    r = await api.post(f"/v1/calls/{cid}/say", json={"text": "还在吗"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "call_ended"


async def test_say_validates_and_isolates(
    api: httpx.AsyncClient, owner: dict[str, str], redis_server: RedisProcess
) -> None:
    cid = (await api.post("/v1/calls/text", json={"lang": "en"})).json()["call_id"]
    r = await api.post(f"/v1/calls/{cid}/say", json={"text": "   "})
    assert r.status_code == 422 and r.json()["error"]["field"] == "text"
    r = await api.post(f"/v1/calls/{cid}/say", json={"text": "x" * 501})
    assert r.status_code == 422
    other = await create_owner(api, redis_server.url, "Eve", "en")
    r = await api.post(f"/v1/calls/{cid}/say", json={"text": "hi"}, headers={"Authorization": other["auth"]})
    assert r.status_code == 404
    r = await api.post("/v1/calls/call_nope/end", json={})
    assert r.status_code == 404


async def test_quick_replies_defaults_and_put(
    api: httpx.AsyncClient, owner: dict[str, str], redis_server: RedisProcess
) -> None:
    got = (await api.get("/v1/quick-replies")).json()
    assert got["default"] and "I'll call you back." in got["replies"]
    zh = await create_owner(api, redis_server.url, "陈先生", "zh")
    got_zh = (await api.get("/v1/quick-replies", headers={"Authorization": zh["auth"]})).json()
    assert any("回电" in x for x in got_zh["replies"])
    r = await api.put("/v1/quick-replies", json={"replies": ["On my way.", "稍等"]})
    assert r.status_code == 200 and r.json() == {"replies": ["On my way.", "稍等"], "default": False}
    assert (await api.get("/v1/quick-replies")).json()["replies"] == ["On my way.", "稍等"]
    r = await api.put("/v1/quick-replies", json={"replies": ["ok", 3]})
    assert r.status_code == 422 and "replies" in r.json()["error"]["field"]


async def test_screening_blocks_allows_and_records_why(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    r = await api.put(
        "/v1/screening",
        json={
            "block": ["+1900*", "sip:spammer"], "allow": ["+1 (415) 555-0100"],
            "contacts": [{"name": "Mum", "number": "+14155550111"}], "alert": "known",
        },
    )  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json()["allow"] == ["+14155550100"] and r.json()["block"] == ["+1900*", "sip:spammer"]
    r = await api.put("/v1/screening", json={"block": ["not a number"]})
    assert r.status_code == 422 and r.json()["error"]["field"].startswith("block")
    r = await api.put("/v1/screening", json={"alert": "sometimes"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "alert"

    from pipeline.screening import decide
    from presets.screening import ScreeningRules

    rules = ScreeningRules.model_validate((await api.get("/v1/screening")).json())
    assert decide(rules, "+19005551234")["decision"] == "block"
    assert decide(rules, "sip:spammer@evil.example")["decision"] == "block"
    assert decide(rules, "+14155550111") == {
        "alert": "known", "caller": "+14155550111", "decision": "allow", "reason": "a known contact", "contact": "Mum",
    }  # fmt: skip
    assert decide(rules, "14155550100")["decision"] == "allow"
    assert decide(rules, "+447700900123")["decision"] == "screen"
    assert decide(rules, None)["reason"] == "no caller number from the transport"
