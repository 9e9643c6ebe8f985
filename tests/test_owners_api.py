"""Auth, owner isolation, lines and profile against a real Redis."""

from __future__ import annotations

import httpx
import pytest

from app.main import create_app

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, serve


async def test_auth_required(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    for headers in (
        {"Authorization": ""},
        {"Authorization": "Bearer nope"},
        {"Authorization": "Basic abc"},
    ):
        r = await api.get("/v1/presets", headers=headers)
        assert r.status_code == 401, headers
        assert r.json()["error"]["code"] == "unauthorized"
    async with httpx.AsyncClient(base_url=str(api.base_url)) as anon:
        r = await anon.get("/v1/profile")
        assert r.status_code == 401
        assert set(r.json()) == {"error"}


async def test_owner_isolation(api: httpx.AsyncClient, redis_server: RedisProcess, owner: dict[str, str]) -> None:
    a = {"Authorization": owner["auth"]}
    b_owner = await create_owner(api, redis_server.url, "Bo", "zh")
    b = {"Authorization": b_owner["auth"]}

    pid = (await api.post("/v1/presets/emergent", json={"trigger": "t", "response": "r"}, headers=a)).json()["id"]
    await api.put("/v1/presets/regular/takeout", json={"response": "door"}, headers=a)
    await api.put("/v1/lines/+14155550100", headers=a)
    await api.put(
        "/v1/profile",
        json={
            "display_name": "Alex",
            "private_facts": [{"label": "mobile", "value": "13900000000"}],
        },
        headers=a,
    )

    # B sees nothing of A's and gets 404 (not 403) for A's ids.
    assert (await api.get(f"/v1/presets/emergent/{pid}", headers=b)).status_code == 404
    assert (
        await api.put(f"/v1/presets/emergent/{pid}", json={"trigger": "x", "response": "y"}, headers=b)
    ).status_code == 404
    assert (await api.delete(f"/v1/presets/emergent/{pid}", headers=b)).status_code == 404
    assert (await api.delete("/v1/lines/+14155550100", headers=b)).status_code == 404
    pool_b = (await api.get("/v1/presets", headers=b)).json()
    assert pool_b["emergent"] == [] and pool_b["regular"]["takeout"] is None and pool_b["version"] == 0
    assert (await api.get("/v1/lines", headers=b)).json() == {"lines": []}
    prof_b = (await api.get("/v1/profile", headers=b)).json()
    assert prof_b["display_name"] == "Bo" and prof_b["private_facts"] == []
    # A still has everything.
    assert (await api.get(f"/v1/presets/emergent/{pid}", headers=a)).status_code == 200


async def test_lines(api: httpx.AsyncClient, redis_server: RedisProcess, owner: dict[str, str]) -> None:
    r = await api.put("/v1/lines/+1 (415) 555-0100", json={"label": "mobile"})
    assert r.status_code == 201, r.text
    assert r.json()["line"] == "+14155550100" and r.json()["kind"] == "phone"
    assert (await api.put("/v1/lines/+14155550100")).status_code == 200  # idempotent
    assert (await api.put("/v1/lines/sip:alex@pbx.example.com")).json()["kind"] == "sip"
    assert (await api.put("/v1/lines/alex-door", json={"kind": "webrtc"})).json()["kind"] == "webrtc"
    lines = [x["line"] for x in (await api.get("/v1/lines")).json()["lines"]]
    assert lines == sorted(["+14155550100", "alex@pbx.example.com", "alex-door"])

    other = await create_owner(api, redis_server.url, "Other", "en")
    r = await api.put("/v1/lines/+14155550100", headers={"Authorization": other["auth"]})
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "conflict"

    assert (await api.delete("/v1/lines/+14155550100")).status_code == 204
    r = await api.put("/v1/lines/+14155550100", headers={"Authorization": other["auth"]})
    assert r.status_code == 201  # free again

    r = await api.put("/v1/lines/bad%20line%21")
    assert r.status_code == 422 and r.json()["error"]["field"] == "line"
    r = await api.put("/v1/lines/+14155550101", json={"kind": "fax"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "kind"


async def test_profile(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    prof = (await api.get("/v1/profile")).json()
    assert prof["display_name"] == "Alex Chen"
    assert prof["languages"][0] == "en"
    body = {
        "display_name": "陈先生",
        "languages": ["zh", "en"],
        "greeting": "您好，我是陈先生的电话助理。",
        "private_facts": [
            {"label": "home address", "value": "上海市徐汇区漕溪北路88号"},
            {"label": "mobile", "value": "13912345678"},
        ],
    }
    r = await api.put("/v1/profile", json=body)
    assert r.status_code == 200, r.text
    assert (await api.get("/v1/profile")).json() == {**body, "pronoun": None}  # unset: guessed from the name
    r = await api.put("/v1/profile", json={**body, "pronoun": "她"})
    assert r.status_code == 200, r.text
    assert (await api.get("/v1/profile")).json()["pronoun"] == "she"
    r = await api.put("/v1/profile", json={**body, "pronoun": "it"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "pronoun", r.text

    bad = [
        ({**body, "display_name": " "}, "display_name"),
        ({**body, "languages": ["fr"]}, "languages[0]"),
        ({**body, "languages": []}, "languages"),
        ({**body, "private_facts": [{"label": "x"}]}, "private_facts[0].value"),
        (
            {**body, "private_facts": [{"label": "x", "value": "y", "extra": 1}]},
            "private_facts[0].extra",
        ),
        ({**body, "mood": "happy"}, "mood"),
    ]
    for payload, field in bad:
        r = await api.put("/v1/profile", json=payload)
        assert r.status_code == 422, payload
        assert r.json()["error"]["field"] == field
    assert (await api.get("/v1/profile")).json() == {**body, "pronoun": "she"}  # nothing lost


async def test_rate_limit(redis_server: RedisProcess, clean_redis: RedisProcess, tmp_path) -> None:
    app = create_app(make_settings(redis_server.url, tmp_path, rate_limit_per_minute=5))
    with serve(app) as server:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            data = await create_owner(client, redis_server.url)
            headers = {"Authorization": data["auth"]}
            # 12 requests span at most two one-minute windows, so one window sees > 5.
            codes = [(await client.get("/v1/presets", headers=headers)) for _ in range(12)]
    limited = [r for r in codes if r.status_code == 429]
    assert limited, [r.status_code for r in codes]
    assert int(limited[0].headers["Retry-After"]) >= 1
    assert limited[0].json()["error"]["code"] == "rate_limited"


async def test_health_and_docs(api: httpx.AsyncClient) -> None:
    assert (await api.get("/healthz")).json() == {"status": "ok"}
    assert (await api.get("/readyz")).status_code == 200
    assert (await api.get("/docs")).status_code == 200
    spec = (await api.get("/openapi.json")).json()
    assert "/v1/presets/emergent/{preset_id}" in spec["paths"]


async def test_unknown_route_uses_error_shape(api: httpx.AsyncClient) -> None:
    r = await api.get("/v1/nothing-here")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"
    r = await api.patch("/v1/presets")
    assert r.status_code == 405
    assert r.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("path", ["/v1/presets", "/v1/profile", "/v1/lines"])
async def test_every_owner_route_needs_auth(api: httpx.AsyncClient, path: str) -> None:
    async with httpx.AsyncClient(base_url=str(api.base_url)) as anon:
        assert (await anon.get(path)).status_code == 401
