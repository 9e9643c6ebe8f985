"""Hardening of the text-call API (issue 15): ownership before any effect, anonymous
text calls bounded per address, per line and per call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from app.main import create_app

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, serve


async def test_other_owner_cannot_hang_up_a_live_call(
    api: httpx.AsyncClient, owner: dict[str, str], redis_server: RedisProcess
) -> None:
    cid = (await api.post("/v1/calls/text", json={"lang": "en"})).json()["call_id"]
    other = await create_owner(api, redis_server.url, "Mallory")
    h = {"Authorization": other["auth"]}

    theirs = await api.post(f"/v1/calls/{cid}/hangup", headers=h)
    unknown = await api.post("/v1/calls/call_00000000000000000000/hangup", headers=h)
    assert theirs.status_code == unknown.status_code == 404
    # Same answer for "not yours" and "unknown", apart from the id echoed back.
    assert theirs.json()["error"]["code"] == unknown.json()["error"]["code"] == "not_found"
    assert theirs.json()["error"]["message"].replace(cid, "ID") == unknown.json()["error"]["message"].replace(
        "call_00000000000000000000", "ID"
    )

    # The owner's call is untouched: still live in memory and in its record.
    t = await api.post(f"/v1/calls/{cid}/turns", json={"text": "Hi, is Alex there?"})
    assert t.status_code == 200, t.text
    rec = (await api.get(f"/v1/calls/{cid}")).json()
    assert rec["ended_at"] is None and rec["end_reason"] is None

    # The owner can still end it.
    assert (await api.post(f"/v1/calls/{cid}/hangup")).json()["ended"] is True
    rec = (await api.get(f"/v1/calls/{cid}")).json()
    assert rec["end_reason"] == "caller_hangup"


@pytest.fixture
def limited_server(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path) -> Iterator[ServerThread]:
    """The app with small anonymous-call limits, so the test stays short."""
    settings = make_settings(
        redis_server.url,
        tmp_path,
        text_calls_per_address_per_minute=5,
        text_calls_per_line_per_minute=3,
        call_token_turns_per_minute=6,
        text_call_max_turns=4,
        unproven_call_retention_s=120,
    )
    with serve(create_app(settings)) as server:
        yield server


async def _owner_with_lines(server: ServerThread, redis_url: str, *lines: str) -> dict[str, str]:
    async with httpx.AsyncClient(base_url=server.base_url) as c:
        data = await create_owner(c, redis_url, "Alex")
        for line in lines:
            assert (await c.put(f"/v1/lines/{line}", headers={"Authorization": data["auth"]})).status_code == 201
    return data


async def test_anonymous_text_calls_are_limited_per_line_and_per_address(
    limited_server: ServerThread, redis_server: RedisProcess
) -> None:
    owner = await _owner_with_lines(limited_server, redis_server.url, "+15550001", "+15550002")
    async with httpx.AsyncClient(base_url=limited_server.base_url) as caller:
        codes = [(await caller.post("/v1/calls/text", json={"line": "+15550001"})).status_code for _ in range(4)]
        assert codes == [201, 201, 201, 429]  # per line: 3 a minute
        r = await caller.post("/v1/calls/text", json={"line": "+15550002"})
        assert r.status_code == 201  # another line still answers, until the address limit
        r = await caller.post("/v1/calls/text", json={"line": "+15550009"})  # probing an unknown line counts too
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
        assert r.json()["error"]["code"] == "rate_limited"
        # The owner's own key is not an anonymous caller.
        r = await caller.post("/v1/calls/text", json={"line": "+15550001"}, headers={"Authorization": owner["auth"]})
        assert r.status_code == 201
        listed = (await caller.get("/v1/calls", headers={"Authorization": owner["auth"]})).json()["calls"]
        assert len(listed) == 5


async def test_call_token_turns_are_capped_and_rate_limited(
    limited_server: ServerThread, redis_server: RedisProcess
) -> None:
    owner = await _owner_with_lines(limited_server, redis_server.url, "+15550001")
    async with httpx.AsyncClient(base_url=limited_server.base_url) as caller:
        call = (await caller.post("/v1/calls/text", json={"line": "+15550001", "lang": "en"})).json()
        auth = {"Authorization": f"Bearer {call['call_token']}"}
        url = f"/v1/calls/{call['call_id']}/turns"
        for text in ("Hello?", "Is Alex there?", "I have a question.", "About the meeting."):
            r = await caller.post(url, json={"text": text}, headers=auth)
            assert r.status_code == 200, r.text
            if r.json()["ended"]:
                break
        r = await caller.post(url, json={"text": "One more thing."}, headers=auth)
        assert r.status_code == 409 and r.json()["error"]["code"] in ("call_limit", "call_ended")
        rec = (await caller.get(f"/v1/calls/{call['call_id']}", headers={"Authorization": owner["auth"]})).json()
        assert rec["ended_at"] is not None and len(rec["turns"]) <= 4
        # The token's request rate is bounded whatever the call's state.
        codes = [(await caller.post(url, json={"silence": True}, headers=auth)).status_code for _ in range(3)]
        assert codes[-1] == 429


async def test_anonymous_call_kept_briefly_until_it_proves_real(
    limited_server: ServerThread, redis_server: RedisProcess
) -> None:
    await _owner_with_lines(limited_server, redis_server.url, "+15550001")
    r = redis.Redis.from_url(redis_server.url)
    async with httpx.AsyncClient(base_url=limited_server.base_url) as caller:
        call = (await caller.post("/v1/calls/text", json={"line": "+15550001", "lang": "en"})).json()
        auth = {"Authorization": f"Bearer {call['call_token']}"}
        key = f"ca:call:{call['call_id']}"
        assert 0 < r.ttl(key) <= 120
        await caller.post(f"/v1/calls/{call['call_id']}/turns", json={"text": "Hello, is Alex there?"}, headers=auth)
        assert 0 < r.ttl(key) <= 120
        await caller.post(f"/v1/calls/{call['call_id']}/turns", json={"text": "I'm his colleague Sam."}, headers=auth)
        assert r.ttl(key) > 120  # two turns with words: the normal retention
    r.close()


def _shape(value: object) -> object:
    """The JSON's structure (keys and types), not its values."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(v) for v in value[:1]]
    return type(value).__name__


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_an_unknown_line_looks_like_a_known_one_to_an_anonymous_caller(
    redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path, lang: str
) -> None:
    """docs/security.md: anonymous text calls must not reveal which lines are registered.
    Same status, same body shape and the same code path (timing printed, -s); owners
    with their key still get a clear 404 naming the line."""
    import time

    settings = make_settings(redis_server.url, tmp_path, text_calls_per_address_per_minute=100)
    with serve(create_app(settings)) as server:
        owner = await _owner_with_lines(server, redis_server.url, "+15550001")
        async with httpx.AsyncClient(base_url=server.base_url) as caller:
            answers: dict[str, list[httpx.Response]] = {"known": [], "unknown": []}
            took: dict[str, list[float]] = {"known": [], "unknown": []}
            for i in range(4):
                for kind, line in (("known", "+15550001"), ("unknown", f"+1555077{i}")):
                    t0 = time.perf_counter()
                    answers[kind].append(await caller.post("/v1/calls/text", json={"line": line, "lang": lang}))
                    took[kind].append(time.perf_counter() - t0)
            known, unknown = answers["known"][0], answers["unknown"][0]
            assert known.status_code == unknown.status_code == 201, unknown.text
            assert _shape(known.json()) == _shape(unknown.json())
            assert unknown.json()["call_id"].startswith("call_") and unknown.json()["call_token"].startswith("ct_")
            assert unknown.json()["lang"] == lang and unknown.json()["greeting"]
            # The calls go on alike: turns, then hang-up, with the call token.
            turns = []
            for start in (known, unknown):
                auth = {"Authorization": f"Bearer {start.json()['call_token']}"}
                url = f"/v1/calls/{start.json()['call_id']}"
                text = "Hello, I have a parcel." if lang == "en" else "你好，有你的快递。"
                turns.append(await caller.post(url + "/turns", json={"text": text}, headers=auth))
                assert (await caller.post(url + "/hangup", headers=auth)).status_code == 200
            assert turns[0].status_code == turns[1].status_code == 200
            assert _shape(turns[0].json()) == _shape(turns[1].json())
            print(
                "anonymous start, median s:",
                {k: round(sorted(v)[len(v) // 2], 4) for k, v in took.items()},
            )
            # Owners get a clear error with their key, and the unknown line's calls are in
            # no owner's list.
            mine = await caller.post(
                "/v1/calls/text", json={"line": "+15550770"}, headers={"Authorization": owner["auth"]}
            )
            assert mine.status_code == 404 and mine.json()["error"]["field"] == "line"
            listed = (await caller.get("/v1/calls", headers={"Authorization": owner["auth"]})).json()["calls"]
            assert {c["call_id"] for c in listed} == {a.json()["call_id"] for a in answers["known"]}
