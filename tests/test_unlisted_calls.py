"""Anonymous text calls to lines nobody registered (the "unlisted owner", docs/security.md):
answered like a registered line's, but their records are kept briefly whatever they say,
indexed as briefly, counted in the per-address and per-line limits, and readable by
nobody: no owner key, no call token, not the ops API. Real uvicorn, real Redis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from app.main import create_app
from pipeline.records import RECENT_CALLS_KEY, owner_calls_key
from pipeline.text_calls import UNLISTED_OWNERS

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, serve

OPS = {"Authorization": "Bearer ops-test-token-0123456789abcdef"}
RETENTION_S = 120  # UNPROVEN_CALL_RETENTION_S here
KNOWN = "+15550003001"
TURNS = {
    "en": ["Hello, is Alex there?", "I'm his colleague Sam.", "Please ask him to call me back."],
    "zh": ["你好，陈先生在吗？", "我是他同事老王。", "麻烦让他回个电话。"],
}


@pytest.fixture
def server(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path: Path) -> Iterator[ServerThread]:
    settings = make_settings(
        redis_server.url,
        tmp_path,
        text_calls_per_address_per_minute=5,
        text_calls_per_line_per_minute=3,
        text_call_max_turns=4,
        unproven_call_retention_s=RETENTION_S,
        ops_token=OPS["Authorization"].removeprefix("Bearer "),
    )
    with serve(create_app(settings)) as s:
        yield s


async def _owner(server: ServerThread, redis_url: str) -> dict[str, str]:
    async with httpx.AsyncClient(base_url=server.base_url) as c:
        owner = await create_owner(c, redis_url, "Alex")
        assert (await c.put(f"/v1/lines/{KNOWN}", headers={"Authorization": owner["auth"]})).status_code == 201
    return owner


async def _call(caller: httpx.AsyncClient, line: str, lang: str) -> tuple[str, dict[str, str]]:
    r = await caller.post("/v1/calls/text", json={"line": line, "lang": lang})
    assert r.status_code == 201, r.text
    auth = {"Authorization": f"Bearer {r.json()['call_token']}"}
    for text in TURNS[lang]:
        t = await caller.post(f"/v1/calls/{r.json()['call_id']}/turns", json={"text": text}, headers=auth)
        assert t.status_code == 200, t.text
    return str(r.json()["call_id"]), auth


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_unlisted_records_are_kept_briefly_and_stay_out_of_every_index(
    server: ServerThread, redis_server: RedisProcess, lang: str
) -> None:
    await _owner(server, redis_server.url)
    r = redis.Redis.from_url(redis_server.url, decode_responses=True)
    try:
        async with httpx.AsyncClient(base_url=server.base_url) as caller:
            known, _ = await _call(caller, KNOWN, lang)
            unlisted, _ = await _call(caller, "+15550003999", lang)
        # Three turns with words: the registered line's call has proved real, the
        # unlisted one never does.
        assert r.ttl(f"ca:call:{known}") > RETENTION_S
        assert 0 < r.ttl(f"ca:call:{unlisted}") <= RETENTION_S
        assert 0 < r.ttl(f"ca:callrev:{unlisted}") <= RETENTION_S
        owner_id = UNLISTED_OWNERS[lang][0]  # type: ignore[index]
        index = owner_calls_key(owner_id)
        assert r.zscore(index, unlisted) is not None and 0 < r.ttl(index) <= RETENTION_S
        assert r.zscore(RECENT_CALLS_KEY, known) is not None
        assert r.zscore(RECENT_CALLS_KEY, unlisted) is None  # not on the ops dashboard
        # The unlisted owner has no key to read with and is in no owner list.
        assert r.hget(f"ca:owner:{owner_id}", "key_hash") is None
        assert owner_id not in r.smembers("ca:owners")
    finally:
        r.close()


async def test_nobody_can_read_an_unlisted_call(server: ServerThread, redis_server: RedisProcess) -> None:
    owner = await _owner(server, redis_server.url)
    async with httpx.AsyncClient(base_url=server.base_url) as c:
        known, _ = await _call(c, KNOWN, "en")
        unlisted, token = await _call(c, "+15550003998", "en")
        # The call's own token takes turns, it does not read records.
        assert (await c.get(f"/v1/calls/{unlisted}", headers=token)).status_code == 401
        assert (await c.get("/v1/calls", headers=token)).status_code == 401
        # An owner's key: 404, as for any call not theirs, and not in their list.
        mine = {"Authorization": owner["auth"]}
        assert (await c.get(f"/v1/calls/{unlisted}", headers=mine)).status_code == 404
        assert (await c.get(f"/v1/calls/{known}", headers=mine)).status_code == 200
        listed = {x["call_id"] for x in (await c.get("/v1/calls", headers=mine)).json()["calls"]}
        assert listed == {known}
        # The ops token neither: not listed, and 404 by id (the registered one is readable).
        ops_list = {x["call_id"] for x in (await c.get("/ops/api/calls", headers=OPS)).json()["calls"]}
        assert known in ops_list and unlisted not in ops_list
        assert (await c.get(f"/ops/api/calls/{known}", headers=OPS)).status_code == 200
        assert (await c.get(f"/ops/api/calls/{unlisted}", headers=OPS)).status_code == 404


async def test_unlisted_calls_count_in_the_per_line_and_per_address_limits(
    server: ServerThread, redis_server: RedisProcess
) -> None:
    def client(address: str) -> httpx.AsyncClient:  # loopback has 127/8: one address per caller
        transport = httpx.AsyncHTTPTransport(local_address=address)
        return httpx.AsyncClient(base_url=server.base_url, transport=transport)

    line = "+15550003997"
    async with client("127.0.0.2") as a, client("127.0.0.3") as b, client("127.0.0.4") as d:
        codes = [(await a.post("/v1/calls/text", json={"line": line})).status_code for _ in range(3)]
        assert codes == [201, 201, 201]
        r = await b.post("/v1/calls/text", json={"line": line})  # another address, the same line
        assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited", r.text
        # Per address: 5 a minute, whichever unregistered lines they go to.
        codes = [(await d.post("/v1/calls/text", json={"line": f"+1555000390{i}"})).status_code for i in range(6)]
        assert codes == [201] * 5 + [429]
        # Turns are capped as on any text call (4 here).
        start = (await b.post("/v1/calls/text", json={"line": "+15550003996", "lang": "en"})).json()
        auth = {"Authorization": f"Bearer {start['call_token']}"}
        url = f"/v1/calls/{start['call_id']}/turns"
        statuses = [
            (await b.post(url, json={"text": f"Message part {i}."}, headers=auth)).status_code for i in range(5)
        ]
        assert statuses[-1] == 409, statuses
