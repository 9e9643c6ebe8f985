"""Preset pool REST API against a real Redis: CRUD, versions, If-Match, limits, validation."""

from __future__ import annotations

import asyncio

import httpx
import pytest

pytestmark = pytest.mark.usefixtures("owner")


async def test_empty_pool_shape(api: httpx.AsyncClient) -> None:
    r = await api.get("/v1/presets")
    assert r.status_code == 200
    assert r.json() == {
        "version": 0,
        "regular": {"takeout": None, "delivery": None, "taxi": None},
        "emergent": [],
    }
    assert r.headers["ETag"] == '"0"'


async def test_regular_round_trip(api: httpx.AsyncClient) -> None:
    r = await api.put("/v1/presets/regular/takeout", json={"response": "麻烦放在门口就可以了"})
    assert r.status_code == 200, r.text
    assert r.json()["regular"]["takeout"]["response"] == "麻烦放在门口就可以了"
    assert r.headers["ETag"] == '"1"'
    pool = (await api.get("/v1/presets")).json()
    assert pool["version"] == 1
    assert pool["regular"]["takeout"]["response"] == "麻烦放在门口就可以了"
    assert pool["regular"]["delivery"] is None

    r = await api.delete("/v1/presets/regular/takeout")
    assert r.status_code == 204
    assert r.headers["ETag"] == '"2"'
    assert (await api.get("/v1/presets")).json()["regular"]["takeout"] is None
    assert (await api.delete("/v1/presets/regular/takeout")).status_code == 404


@pytest.mark.parametrize("scene", ["work", "life", "harassment", "pizza"])
async def test_regular_only_for_service_scenes(api: httpx.AsyncClient, scene: str) -> None:
    r = await api.put(f"/v1/presets/regular/{scene}", json={"response": "hi"})
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["field"] == "scene"
    assert "takeout, delivery and taxi" in err["message"]


async def test_emergent_crud(api: httpx.AsyncClient) -> None:
    r = await api.post(
        "/v1/presets/emergent",
        json={
            "trigger": "someone asks where he is",
            "response": "He's busy; leave a message.",
            "scenes": ["work", "life"],
        },
    )
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    assert r.headers["Location"] == f"/v1/presets/emergent/{pid}"
    got = (await api.get(f"/v1/presets/emergent/{pid}")).json()
    assert got["trigger"] == "someone asks where he is"
    assert got["scenes"] == ["work", "life"]
    assert got["enabled"] is True

    r = await api.put(
        f"/v1/presets/emergent/{pid}",
        json={"trigger": "asks where he is", "response": "He can't talk now.", "enabled": False},
    )
    assert r.status_code == 200, r.text
    assert r.json()["enabled"] is False
    assert r.json()["scenes"] is None
    pool = (await api.get("/v1/presets")).json()
    assert pool["version"] == 2
    assert [p["id"] for p in pool["emergent"]] == [pid]

    assert (await api.delete(f"/v1/presets/emergent/{pid}")).status_code == 204
    assert (await api.get(f"/v1/presets/emergent/{pid}")).status_code == 404
    assert (await api.delete(f"/v1/presets/emergent/{pid}")).status_code == 404
    assert (await api.put(f"/v1/presets/emergent/{pid}", json={"trigger": "a", "response": "b"})).status_code == 404


async def test_if_match(api: httpx.AsyncClient) -> None:
    r = await api.put("/v1/presets/regular/taxi", json={"response": "在小区南门等"}, headers={"If-Match": '"0"'})
    assert r.status_code == 200
    # Stale version -> 412, the pool is unchanged and the current ETag is returned.
    r = await api.put("/v1/presets/regular/taxi", json={"response": "北门"}, headers={"If-Match": "0"})
    assert r.status_code == 412
    assert r.json()["error"]["code"] == "precondition_failed"
    assert r.headers["ETag"] == '"1"'
    assert (await api.get("/v1/presets")).json()["regular"]["taxi"]["response"] == "在小区南门等"
    r = await api.post(
        "/v1/presets/emergent",
        json={"trigger": "t", "response": "r"},
        headers={"If-Match": 'W/"1"'},
    )
    assert r.status_code == 201
    r = await api.delete("/v1/presets/regular/taxi", headers={"If-Match": "1"})
    assert r.status_code == 412
    r = await api.delete("/v1/presets/regular/taxi", headers={"If-Match": "*"})
    assert r.status_code == 204
    r = await api.put("/v1/presets/regular/taxi", json={"response": "x"}, headers={"If-Match": "abc"})
    assert r.status_code == 400
    assert r.json()["error"]["field"] == "If-Match"


async def test_concurrent_writes_bump_version_once_each(api: httpx.AsyncClient) -> None:
    results = await asyncio.gather(
        *(api.post("/v1/presets/emergent", json={"trigger": f"trigger {i}", "response": f"r {i}"}) for i in range(20))
    )
    assert all(r.status_code == 201 for r in results)
    versions = sorted(int(r.headers["ETag"].strip('"')) for r in results)
    assert versions == list(range(1, 21))
    pool = (await api.get("/v1/presets")).json()
    assert pool["version"] == 20
    assert len(pool["emergent"]) == 20


async def test_concurrent_if_match_only_one_wins(api: httpx.AsyncClient) -> None:
    results = await asyncio.gather(
        *(
            api.put(
                "/v1/presets/regular/delivery",
                json={"response": f"r{i}"},
                headers={"If-Match": "0"},
            )
            for i in range(8)
        )
    )
    codes = sorted(r.status_code for r in results)
    assert codes == [200] + [412] * 7


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        ({"trigger": "", "response": "r"}, "trigger", "empty"),
        ({"trigger": "   \n\t ", "response": "r"}, "trigger", "empty"),
        ({"trigger": "t", "response": "  "}, "response", "empty"),
        ({"trigger": "x" * 201, "response": "r"}, "trigger", "200"),
        ({"trigger": "t", "response": "y" * 501}, "response", "500"),
        ({"trigger": "t", "response": "r", "colour": "red"}, "colour", "unknown field"),
        ({"trigger": 42, "response": "r"}, "trigger", "string"),
        ({"trigger": "t", "response": ["r"]}, "response", "string"),
        ({"trigger": "t", "response": "r", "enabled": "yes"}, "enabled", "bool"),
        ({"trigger": "t", "response": "r", "scenes": ["moon"]}, "scenes[0]", "takeout"),
        ({"trigger": "t", "response": "r", "scenes": "work"}, "scenes", "list"),
        ({"trigger": "t", "response": "r", "scenes": []}, "scenes", "at least 1"),
        ({"trigger": "t", "response": "r", "scenes": ["work", "work"]}, "scenes", "repeat"),
        ({"response": "r"}, "trigger", "required"),
        ({"trigger": "a\x00b", "response": "r"}, "trigger", "control"),
    ],
)
async def test_emergent_validation(api: httpx.AsyncClient, body: dict[str, object], field: str, fragment: str) -> None:
    r = await api.post("/v1/presets/emergent", json=body)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["code"] == "validation_error"
    assert err["field"] == field
    assert fragment.lower() in err["message"].lower()
    # Nothing was written.
    assert (await api.get("/v1/presets")).json()["version"] == 0


async def test_limits_at_exact_boundaries(api: httpx.AsyncClient) -> None:
    r = await api.post("/v1/presets/emergent", json={"trigger": "触" * 200, "response": "答" * 500})
    assert r.status_code == 201, r.text


async def test_invalid_json_body(api: httpx.AsyncClient) -> None:
    r = await api.put(
        "/v1/presets/regular/takeout",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 422
    assert "error" in r.json()
    r = await api.put("/v1/presets/regular/takeout", json=["response"])
    assert r.status_code == 422


async def test_body_over_16_kib(api: httpx.AsyncClient) -> None:
    big = {"trigger": "t", "response": "r", "pad": "x" * (17 * 1024)}
    r = await api.post("/v1/presets/emergent", json=big)
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "payload_too_large"

    async def chunks():  # no Content-Length: counted as it streams
        for _ in range(20):
            yield b"x" * 1024

    r = await api.post("/v1/presets/emergent", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413


async def test_at_most_100_emergent(api: httpx.AsyncClient) -> None:
    for i in range(100):
        r = await api.post("/v1/presets/emergent", json={"trigger": f"t{i}", "response": "r"})
        assert r.status_code == 201
    r = await api.post("/v1/presets/emergent", json={"trigger": "one more", "response": "r"})
    assert r.status_code == 422
    assert "100" in r.json()["error"]["message"]
    assert (await api.get("/v1/presets")).json()["version"] == 100
