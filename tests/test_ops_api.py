"""The ops surface over HTTP: /metrics, the ops token and session cookie, the dashboard's
JSON API, and the sampled series (real uvicorn, real Redis)."""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import re
import time
import tomllib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.main import create_app
from app.ops import OpsOptions
from app.ops.auth import COOKIE_NAME, TOKEN_FILE, OpsToken
from app.ops.series import Buckets, Series, Snapshot, histogram_quantile
from app.routes.ops import _ASSETS

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, free_port, serve

ROOT = Path(__file__).resolve().parents[1]
OPS_TOKEN = "ops-test-token-0123456789abcdef"
BEARER = {"Authorization": f"Bearer {OPS_TOKEN}"}
# Every label name the call path may use; anything else would be a new, unbounded axis.
ALLOWED_LABELS = {
    "transport", "outcome", "lang", "realizer", "endpoint", "engine", "cached", "kind",
    "constraint", "reason", "component", "le",
}  # fmt: skip


@pytest.fixture(scope="module")
def ops_server(redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    settings = make_settings(redis_server.url, tmp_path_factory.mktemp("ops"), ops_token=OPS_TOKEN)
    app = create_app(settings)
    app.state.ops_options = OpsOptions(sample_interval_s=0.2, window_s=600)
    with serve(app) as server:
        yield server


@pytest.fixture
async def ops(ops_server: ServerThread, clean_redis: RedisProcess) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=ops_server.base_url, timeout=10) as client:
        yield client


async def _text_call(client: httpx.AsyncClient, auth: str, turns: list[str], *, hang_up: bool = True) -> str:
    h = {"Authorization": auth}
    call = await client.post("/v1/calls/text", json={"lang": "en"}, headers=h)
    assert call.status_code == 201, call.text
    call_id = str(call.json()["call_id"])
    for text in turns:
        r = await client.post(f"/v1/calls/{call_id}/turns", json={"text": text}, headers=h)
        assert r.status_code in (200, 409), r.text
        if r.status_code == 409 or r.json()["ended"]:
            break
    else:
        if hang_up:
            await client.post(f"/v1/calls/{call_id}/hangup", headers=h)
    return call_id


# ------------------------------------------------------------ percentiles ----


def test_histogram_quantile_is_prometheus_interpolation() -> None:
    inf = float("inf")
    b = Buckets((0.1, 0.5, 1.0, inf), (2.0, 6.0, 10.0, 10.0))
    assert histogram_quantile(0.5, b) == pytest.approx(0.4)  # 0.1 + 0.4 * (5 - 2) / 4
    assert histogram_quantile(0.99, b) == pytest.approx(0.5 + 0.5 * 3.9 / 4)
    assert histogram_quantile(0.1, b) == pytest.approx(0.05)  # first bucket starts at 0
    # Everything in +Inf: the highest finite bound, as Prometheus answers.
    assert histogram_quantile(0.5, Buckets((0.1, inf), (0.0, 3.0))) == 0.1
    assert histogram_quantile(0.5, Buckets((0.1, inf), (0.0, 0.0))) is None


def test_series_percentiles_and_increases_are_over_the_window() -> None:
    inf = float("inf")
    bounds = (0.1, 1.0, inf)
    series = Series(interval_s=1, window_s=10, capacity=5)

    def snap(t: float, fast: float, slow: float, turns: float) -> Snapshot:
        s = Snapshot(t=t)
        s.histograms[("decision", "")] = Buckets(bounds, (fast, fast + slow, fast + slow))
        s.counters[("turns", "")] = turns
        s.counters[("interventions", "C_priv")] = turns / 10
        return s

    series.add(snap(0, 0, 0, 0))
    series.add(snap(5, 10, 0, 10))  # 10 fast observations
    p = series.add(snap(20, 10, 30, 50))  # then 30 slow ones; the window reaches back to t=10
    assert p["latency"]["decision"]["count"] == 30  # only the slow ones are in the window
    assert 100 < p["latency"]["decision"]["p50"] <= 1000
    assert p["window"]["turns"] == 40 and p["totals"]["turns"] == 50
    assert p["by"]["interventions"] == {"C_priv": 5.0}
    assert [pt["t"] for pt in series.since(5)] == [20]
    for t in range(21, 30):
        series.add(snap(t, 10, 30, 50))
    assert len(series.points) == 5  # the ring buffer keeps `capacity` points


def test_the_first_point_is_its_own_baseline() -> None:
    """The metrics are process-wide: a series that starts in a process that already
    served calls (another app in the same test process, e.g. voice tests before the ops
    dashboard's) must not show their latencies as this window's."""
    inf = float("inf")
    series = Series(interval_s=1, window_s=10, capacity=5)
    old = Snapshot(t=100)
    old.histograms[("voice_to_voice", "")] = Buckets((1.0, inf), (7.0, 7.0))
    old.counters[("turns", "")] = 50
    first = series.add(old)
    assert first["latency"]["voice_to_voice"]["count"] == 0 and first["latency"]["voice_to_voice"]["p50"] is None
    assert first["window"]["turns"] == 0 and first["totals"]["turns"] == 50
    now = Snapshot(t=101)
    now.histograms[("voice_to_voice", "")] = Buckets((1.0, inf), (8.0, 8.0))
    now.counters[("turns", "")] = 51
    assert series.add(now)["latency"]["voice_to_voice"]["count"] == 1  # what happened since


# ---------------------------------------------------------------- /metrics ----


async def test_metrics_open_without_token(api: httpx.AsyncClient) -> None:
    r = await api.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    names = {f.name for f in text_string_to_metric_families(r.text)}
    assert {"callassist_redis_up", "callassist_turns", "callassist_realizer_ttft_seconds"} <= names
    assert "process_cpu_seconds" in names and "python_info" in names  # process/platform
    assert re.search(r"^callassist_redis_up 1\.0$", r.text, re.M)
    om = await api.get("/metrics", headers={"Accept": "application/openmetrics-text"})
    assert om.headers["content-type"].startswith("application/openmetrics-text")
    assert om.text.rstrip().endswith("# EOF")


async def test_metrics_need_the_ops_token_when_configured(ops: httpx.AsyncClient, redis_server: RedisProcess) -> None:
    owner = await create_owner(ops, redis_server.url)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": owner["auth"]}):
        r = await ops.get("/metrics", headers=headers)
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
    assert (await ops.get("/metrics", headers=BEARER)).status_code == 200


async def test_metric_labels_stay_bounded(ops: httpx.AsyncClient, redis_server: RedisProcess) -> None:
    owner = await create_owner(ops, redis_server.url)
    call_id = await _text_call(ops, owner["auth"], ["Hi, I have a parcel for Alex.", "Thanks, bye."])
    text = (await ops.get("/metrics", headers=BEARER)).text
    assert call_id not in text and owner["owner_id"] not in text
    for family in text_string_to_metric_families(text):
        if not family.name.startswith("callassist_"):
            continue
        for sample in family.samples:
            assert set(sample.labels) <= ALLOWED_LABELS, (sample.name, sample.labels)
            for value in sample.labels.values():
                assert not re.match(r"(call|own|ct|ca)_", value), (sample.name, value)


async def test_redis_gauge_follows_redis(tmp_path: Path) -> None:
    redis = RedisProcess(tmp_path / "redis", free_port())
    redis.start()
    try:
        app = create_app(make_settings(redis.url, tmp_path))
        with serve(app) as server:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
                r = await client.get("/metrics")
                assert re.search(r"^callassist_redis_up 1\.0$", r.text, re.M)
                redis.stop()
                t0 = time.perf_counter()
                r = await client.get("/metrics")
                assert r.status_code == 200
                assert time.perf_counter() - t0 < 2.0  # the probe is bounded
                assert re.search(r"^callassist_redis_up 0\.0$", r.text, re.M)
    finally:
        redis.stop()


# ------------------------------------------------------------- ops token ----


def _cookie(value: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE_NAME}={value}"}


async def test_dashboard_login_sets_an_httponly_session_cookie(ops: httpx.AsyncClient) -> None:
    r = await ops.get("/ops")
    assert r.status_code == 303 and r.headers["location"] == "/ops/login"
    login = await ops.get("/ops/login")
    assert login.status_code == 200 and 'name="token"' in login.text
    assert "/ops/static/login.js" in login.text  # posts /ops#token=... links
    assert "script-src 'self'" in login.headers["content-security-policy"]
    assert login.headers["referrer-policy"] == "no-referrer"

    # A token in the query string would sit in access logs: refused, right or wrong.
    for token in ("nope", OPS_TOKEN):
        r = await ops.get("/ops", params={"token": token})
        assert r.status_code == 400 and "query string" in r.text
        assert COOKIE_NAME not in r.cookies

    form = {"Content-Type": "application/x-www-form-urlencoded"}
    ok = await ops.post("/ops/login", content=f"token={OPS_TOKEN}".encode(), headers=form)
    assert ok.status_code == 303 and ok.headers["location"] == "/ops"
    set_cookie = ok.headers["set-cookie"]
    for attr in ("HttpOnly", "Path=/ops", "SameSite=strict", "Max-Age="):
        assert attr in set_cookie
    cookie = ok.cookies[COOKIE_NAME]
    assert OPS_TOKEN not in cookie
    ops.cookies.clear()  # send it by hand below

    page = await ops.get("/ops", headers=_cookie(cookie))
    assert page.status_code == 200 and "/ops/static/ops.js" in page.text
    assert page.headers["x-frame-options"] == "DENY"
    api = await ops.get("/ops/api/summary", headers=_cookie(cookie))
    assert api.status_code == 200 and api.headers["cache-control"] == "no-store"

    # A tampered or expired cookie, or one signed with another token, is refused.
    expired = OpsToken(OPS_TOKEN, "configured").session_cookie(ttl_s=60, now=time.time() - 3600)
    other = OpsToken("another-token-0123456789", "configured").session_cookie(ttl_s=60)
    for value in (cookie[:-1] + ("0" if cookie[-1] != "0" else "1"), expired, other, "x.y", ""):
        r = await ops.get("/ops/api/summary", headers=_cookie(value))
        assert r.status_code == 401, value


async def test_login_form_logout_and_bearer(ops: httpx.AsyncClient, redis_server: RedisProcess) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    bad = await ops.post("/ops/login", content=b"token=wrong", headers=form)
    assert bad.status_code == 401 and "Wrong token." in bad.text and COOKIE_NAME not in bad.cookies
    ok = await ops.post("/ops/login", content=f"token={OPS_TOKEN}".encode(), headers=form)
    assert ok.status_code == 303 and COOKIE_NAME in ok.cookies
    assert (await ops.get("/ops")).status_code == 200  # the client sends the cookie back
    out = await ops.post("/ops/logout")
    assert out.status_code == 303 and 'ca_ops=""' in out.headers["set-cookie"]
    assert (await ops.get("/ops")).status_code == 303  # logged out
    # Bearer works for scripts; an owner's API key is not an ops token.
    assert (await ops.get("/ops/api/calls", headers=BEARER)).status_code == 200
    owner = await create_owner(ops, redis_server.url)
    r = await ops.get("/ops/api/calls", headers={"Authorization": owner["auth"]})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"


async def test_generated_token_when_none_is_configured(
    redis_server: RedisProcess, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="app.ops.auth")
    tokens = []
    for _ in range(2):  # a restart reuses the token
        with serve(create_app(make_settings(redis_server.url, tmp_path))) as server:
            path = tmp_path / TOKEN_FILE
            token = path.read_text().strip()
            tokens.append(token)
            assert len(token) >= 32 and (path.stat().st_mode & 0o777) == 0o600
            async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
                assert (await client.get("/metrics")).status_code == 200  # open: no token set
                assert (await client.get("/ops/api/summary")).status_code == 401
                r = await client.get("/ops/api/summary", headers={"Authorization": f"Bearer {token}"})
                assert r.status_code == 200
    assert tokens[0] == tokens[1]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert str(tmp_path / TOKEN_FILE) in logged and tokens[0] not in logged


# ------------------------------------------------------------- assets ----


async def test_assets_are_served_and_self_contained(ops: httpx.AsyncClient) -> None:
    static = ROOT / "app" / "ops" / "static"
    shipped = {p.name for p in static.iterdir() if p.suffix in {".js", ".css", ".svg"}}
    assert shipped == set(_ASSETS)
    for name, content_type in _ASSETS.items():
        r = await ops.get(f"/ops/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"] == content_type
    assert (await ops.get("/ops/static/../settings.py")).status_code == 404
    assert (await ops.get("/ops/static/__init__.py")).status_code == 404
    # No CDN, no outside host: every URL in the assets is the SVG namespace.
    for path in static.iterdir():
        if path.suffix in {".js", ".css", ".html", ".svg"}:
            urls = set(re.findall(r"https?://[^\s\"')]+", path.read_text()))
            assert urls <= {"http://www.w3.org/2000/svg"}, (path.name, urls)
    # Untrusted text (transcripts) is never parsed as HTML.
    for name in ("ops.js", "charts.js"):
        assert "innerHTML" not in (static / name).read_text()


def test_assets_ship_as_package_data() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setuptools_cfg = pyproject["tool"]["setuptools"]
    include = setuptools_cfg["packages"]["find"]["include"]
    # A package (so setuptools' package discovery finds it) that the include list matches.
    for package in ("app.ops", "app.ops.static"):
        assert (ROOT / package.replace(".", "/") / "__init__.py").is_file(), package
        assert any(fnmatch.fnmatch(package, p) for p in include), package
    patterns = setuptools_cfg["package-data"]["*"]
    for path in (ROOT / "app" / "ops" / "static").iterdir():
        if path.suffix != ".py" and path.is_file():
            assert any(fnmatch.fnmatch(path.name, p) for p in patterns), path.name


# ------------------------------------------------------------- JSON API ----


async def test_recent_calls_across_owners_and_transcripts(ops: httpx.AsyncClient, redis_server: RedisProcess) -> None:
    a = await create_owner(ops, redis_server.url, "Alex", "en")
    b = await create_owner(ops, redis_server.url, "Bea", "en")
    first = await _text_call(ops, a["auth"], ["Hi, I have a parcel for Alex.", "Thanks, bye."])
    await asyncio.sleep(0.01)
    second = await _text_call(ops, b["auth"], ["Hello, is Bea there?"], hang_up=False)
    await asyncio.sleep(0.01)
    third = await _text_call(ops, a["auth"], ["Hi, this is the taxi."], hang_up=False)

    calls = (await ops.get("/ops/api/calls", headers=BEARER)).json()["calls"]
    assert [c["call_id"] for c in calls] == [third, second, first]  # newest first
    assert {c["owner_id"] for c in calls} == {a["owner_id"], b["owner_id"]}
    for c in calls:
        assert {"turns", "interventions", "fallbacks", "median_ttft_ms", "end_reason"} <= set(c)
    limited = (await ops.get("/ops/api/calls", params={"limit": 1}, headers=BEARER)).json()
    assert [c["call_id"] for c in limited["calls"]] == [third]

    record = (await ops.get(f"/ops/api/calls/{first}", headers=BEARER)).json()
    owner_view = (await ops.get(f"/v1/calls/{first}", headers={"Authorization": a["auth"]})).json()
    assert record["transcript"] == owner_view["transcript"]
    assert record["owner_id"] == a["owner_id"] and "state" not in record
    assert record["summary"]["turns"] == len(owner_view["turns"])
    assert (await ops.get("/ops/api/calls/call_nope", headers=BEARER)).status_code == 404

    # CallStore keeps the global index; the dashboard reads it (scores are start times).
    from redis.asyncio import Redis

    r = Redis.from_url(redis_server.url)
    try:
        assert await r.zcard("ca:calls:recent") == 3
        await r.zadd("ca:calls:recent", {second: time.time() + 60})
    finally:
        await r.aclose()
    calls = (await ops.get("/ops/api/calls", headers=BEARER)).json()["calls"]
    assert [c["call_id"] for c in calls] == [second, third, first]


async def test_summary_series_follows_the_calls(
    ops: httpx.AsyncClient, ops_server: ServerThread, redis_server: RedisProcess
) -> None:
    before = (await ops.get("/ops/api/summary", headers=BEARER)).json()
    assert before["thresholds"] == {"ttft_median_ms": 1000.0, "voice_to_voice_p90_ms": 1500.0}
    assert before["interval_s"] == 0.2 and before["series"]
    t_before = before["series"][-1]["t"]
    turns_before = before["current"]["totals"]["turns"]

    owner = await create_owner(ops, redis_server.url)
    texts = ["Hi, I have a parcel for Alex.", "Where should I leave it?", "OK."]
    await _text_call(ops, owner["auth"], texts, hang_up=False)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        data = (await ops.get("/ops/api/summary", params={"since": t_before}, headers=BEARER)).json()
        if data["series"] and data["series"][-1]["totals"]["turns"] >= turns_before + 1:
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("the sampler never saw the turns")
    assert all(p["t"] > t_before for p in data["series"])
    cur = data["current"]
    assert cur["redis_up"] == 1.0 and cur["active_calls"] >= 1
    assert cur["latency"]["decision"]["count"] >= 1 and cur["latency"]["decision"]["p50"] > 0
    assert cur["latency"]["realizer_ttft"]["p50"] is not None
    assert "template" in cur["ttft_p50_by_realizer"]
    assert set(cur["totals"]) >= {"turns", "fallbacks", "interventions", "errors", "calls_started"}


# ----------------------------------------------------------------- memory ----


async def test_memory_report_and_trim_need_the_ops_token(ops: httpx.AsyncClient) -> None:
    for method, path in (("GET", "/ops/api/memory"), ("POST", "/ops/api/memory/trim")):
        assert (await ops.request(method, path)).status_code == 401
        assert (await ops.request(method, path, headers={"Authorization": "Bearer wrong"})).status_code == 401
    report = (await ops.get("/ops/api/memory", headers=BEARER)).json()
    assert report["rss"] > 0 and report["gc_objects"] > 0
    assert set(report["malloc"]) == {"heap", "mmap", "in_use", "free_kept"}
    trimmed = (await ops.post("/ops/api/memory/trim", headers=BEARER)).json()
    assert isinstance(trimmed["trimmed"], bool)
    assert trimmed["after"]["rss"] > 0 and trimmed["before"]["rss"] > 0
