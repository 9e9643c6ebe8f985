"""Lines are canonical and unambiguous (issue 15, item 1): one owner per reachable
address, 409 on any variant that would shadow another owner's line, so no owner can
capture SIP calls meant for another."""

from __future__ import annotations

import httpx
import pytest
from redis.asyncio import Redis

from pipeline.sip.bridge import SIP_LINE_KINDS, resolve_line, sip_line_candidates
from presets.models import normalize_line
from presets.owners import OwnerStore

from .conftest import create_owner
from .helpers import RedisProcess


async def _owner_of_sip_call(redis_url: str, user: str, host: str) -> str | None:
    r = Redis.from_url(redis_url, decode_responses=True)
    try:
        resolved = await resolve_line(OwnerStore(r), sip_line_candidates(user, host), SIP_LINE_KINDS)
    finally:
        await r.aclose()
    return None if resolved is None else resolved[0]


@pytest.mark.parametrize(
    ("first", "shadow"),
    [
        ("sip:alex", "sip:alex@127.0.0.1"),  # the README's sipp command dials alex@127.0.0.1
        ("sip:alex@127.0.0.1", "sip:alex"),
        ("sip:alex", "sip:ALEX@pbx.example"),
        ("sip:alex@pbx.example", "sip:alex@PBX.example"),
        ("+14155550100", "sip:1-415-555-0100"),
        ("sip:14155550100", "+1 (415) 555-0100"),
        ("alex-door", "sip:alex-door@127.0.0.1"),
    ],
)
async def test_variant_of_another_owners_line_is_409(
    api: httpx.AsyncClient, owner: dict[str, str], redis_server: RedisProcess, first: str, shadow: str
) -> None:
    assert (await api.put(f"/v1/lines/{first}")).status_code == 201
    mallory = await create_owner(api, redis_server.url, "Mallory")
    r = await api.put(f"/v1/lines/{shadow}", headers={"Authorization": mallory["auth"]})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["field"] == "line"
    # The first owner keeps every call to the address, and may add variants of it.
    assert (await api.put(f"/v1/lines/{shadow}")).status_code in (200, 201)
    lines = (await api.get("/v1/lines", headers={"Authorization": mallory["auth"]})).json()["lines"]
    assert lines == []


async def test_sip_call_reaches_the_owner_of_the_address(
    api: httpx.AsyncClient, owner: dict[str, str], redis_server: RedisProcess
) -> None:
    assert (await api.put("/v1/lines/sip:alex")).status_code == 201
    mallory = await create_owner(api, redis_server.url, "Mallory")
    mh = {"Authorization": mallory["auth"]}
    assert (await api.put("/v1/lines/sip:alex@127.0.0.1", headers=mh)).status_code == 409
    assert await _owner_of_sip_call(redis_server.url, "alex", "127.0.0.1") == owner["owner_id"]

    # Released, the address is free for someone else (and only then).
    assert (await api.delete("/v1/lines/sip:alex")).status_code == 204
    assert (await api.put("/v1/lines/sip:alex@127.0.0.1", headers=mh)).status_code == 201
    assert await _owner_of_sip_call(redis_server.url, "alex", "127.0.0.1") == mallory["owner_id"]
    assert (await api.put("/v1/lines/sip:alex")).status_code == 409


async def test_releasing_one_variant_keeps_the_address(
    api: httpx.AsyncClient, owner: dict[str, str], redis_server: RedisProcess
) -> None:
    assert (await api.put("/v1/lines/sip:alex")).status_code == 201
    assert (await api.put("/v1/lines/sip:alex@127.0.0.1")).status_code == 201
    assert (await api.delete("/v1/lines/sip:alex")).status_code == 204
    mallory = await create_owner(api, redis_server.url, "Mallory")
    assert (await api.put("/v1/lines/sip:alex", headers={"Authorization": mallory["auth"]})).status_code == 409


def test_sip_lines_are_canonical() -> None:
    assert normalize_line("sip:alex@PBX.Example") == ("alex@pbx.example", "sip")
    assert normalize_line("sip:415-555-0100") == ("4155550100", "sip")
    assert normalize_line("sip:alex") == ("alex", "sip")
