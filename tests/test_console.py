"""The owner console at /app over HTTP: sign-in, the session cookie's rules, the
preview from the real matcher. The browser tests are in test_voice_console.py."""

from __future__ import annotations

import httpx

from .conftest import create_owner
from .helpers import RedisProcess


async def _sign_in(api: httpx.AsyncClient, key: str) -> httpx.Response:
    return await api.post(
        "/app/login", content=f"api_key={key}", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )


async def test_sign_in_and_cookie_rules(api: httpx.AsyncClient, redis_server: RedisProcess) -> None:
    page = await api.get("/app")
    assert page.status_code == 200 and 'name="api_key"' in page.text and "登录" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert (await api.get("/app", params={"key": "ca_x"})).status_code == 400
    bad = await _sign_in(api, "ca_wrong")
    assert bad.status_code == 401 and "Unknown API key" in bad.text
    owner = await create_owner(api, redis_server.url)
    good = await _sign_in(api, owner["api_key"])
    assert good.status_code == 303 and good.headers["location"] == "/app"
    cookie = good.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert owner["api_key"] not in cookie
    page = await api.get("/app")
    assert page.status_code == 200 and 'id="calls"' in page.text  # the console itself
    assert (await api.get("/v1/calls")).status_code == 200  # the cookie opens the owner's API
    r = await api.put("/v1/quick-replies", json={"replies": ["hi"]})
    assert r.status_code == 403 and r.json()["error"]["field"] == "X-CallAssist-Console"
    r = await api.put("/v1/quick-replies", json={"replies": ["hi"]}, headers={"X-CallAssist-Console": "1"})
    assert r.status_code == 200
    for name in ("console.js", "i18n.js", "console.css"):
        assert (await api.get(f"/app/static/{name}")).status_code == 200
    assert (await api.get("/app/static/../settings.py")).status_code == 404
    # rotating the key ends console sessions made with the old one
    from redis.asyncio import Redis

    from presets.owners import OwnerStore

    r_ = Redis.from_url(redis_server.url, decode_responses=True)
    try:
        await OwnerStore(r_).rotate_key(owner["owner_id"])
    finally:
        await r_.aclose()
    assert (await api.get("/v1/calls")).status_code == 401
    api.cookies.clear()


async def test_logout_ends_the_session(api: httpx.AsyncClient, redis_server: RedisProcess) -> None:
    owner = await create_owner(api, redis_server.url)
    await _sign_in(api, owner["api_key"])
    cookie = api.cookies.get("ca_app")
    assert cookie
    await api.post("/app/logout")
    api.cookies.clear()
    r = await api.get("/v1/calls", headers={"Cookie": f"ca_app={cookie}"})
    assert r.status_code == 401
    api.cookies.clear()


async def test_preview_uses_the_real_matcher(api: httpx.AsyncClient, owner: dict[str, str]) -> None:
    await api.put("/v1/presets/regular/takeout", json={"response": "麻烦放在门口就可以了"})
    r = await api.post(
        "/v1/presets/emergent", json={"trigger": "有人问我什么时候回来", "response": "他今天会晚一点回来。"}
    )
    pid = r.json()["id"]
    hit = (await api.post("/v1/presets/preview", json={"text": "请问他什么时候回来？", "lang": "zh"})).json()
    assert hit["preset"] == pid and hit["act"] == "convey_preset" and "晚一点" in hit["reply"]
    miss = (await api.post("/v1/presets/preview", json={"text": "请问他现在在哪里？", "lang": "zh"})).json()
    assert miss["preset"] is None
    takeout = (await api.post("/v1/presets/preview", json={"text": "你好，你的外卖到了", "lang": "zh"})).json()
    assert takeout["preset"] == "regular:takeout"
    r = await api.post("/v1/presets/preview", json={"text": ""})
    assert r.status_code == 422 and r.json()["error"]["field"] == "text"
    assert (await api.get("/v1/calls")).status_code == 200  # nothing was stored as a call
    assert (await api.get("/v1/calls")).json()["calls"] == []
