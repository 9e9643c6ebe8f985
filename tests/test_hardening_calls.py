"""Hardening of the text-call API (issue 15): ownership before any effect, anonymous
text calls bounded per address, per line and per call."""

from __future__ import annotations

import httpx

from .conftest import create_owner
from .helpers import RedisProcess


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
