"""The /ops dashboard in headless Chromium (Debian's), driven over the DevTools protocol.

Real text calls (an LLM realizer behind a scripted OpenAI-compatible server that is
sometimes slow and sometimes unsafe, so there are TTFT-guard fallbacks and safety
interventions to show) go through the API; then the page is opened with the ops token
and must draw that data: chart paths and points, the 1000 ms line, intervention bars by
constraint, numbers equal to the API's, recent calls linking to their transcripts.
Screenshots land in artifacts/ (gitignored).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from app.main import create_app
from app.ops import OpsOptions
from bench.fake_llm import FakeLLMConfig, create_fake_llm

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, serve

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
OPS_TOKEN = "ops-browser-token-0123456789"
BEARER = {"Authorization": f"Bearer {OPS_TOKEN}"}
MOBILE = "415 555 0134"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--window-size=1440,1000", "--remote-debugging-port=0",
]  # fmt: skip


# --------------------------------------------------------------- browser ----


class Chromium:
    """Headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, profile: Path) -> None:
        binary = shutil.which("chromium") or "/usr/bin/chromium"
        if not Path(binary).exists():
            pytest.fail("Debian's chromium is needed (scripts/install.sh test installs it)")
        self.profile = profile
        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        self._stack = contextlib.ExitStack()
        try:
            url = self._page_ws_url()
            self.ws: ClientConnection = self._stack.enter_context(connect(url, max_size=None, open_timeout=10))
        except BaseException:
            self.close()
            raise

    def _page_ws_url(self) -> str:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            if port_file.exists() and port_file.read_text().strip():
                port = int(port_file.read_text().split()[0])
                try:
                    targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=2).json()
                except httpx.HTTPError:
                    targets = []
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise RuntimeError("chromium's DevTools endpoint did not come up")

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 20) -> Any:
        msg_id = next(self._ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            raw = self.ws.recv(timeout=max(0.01, deadline - time.monotonic()))
            msg = json.loads(raw)
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def eval(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def screenshot(self, path: Path) -> None:
        """The whole page, not just the viewport."""
        metrics = self.send("Page.getLayoutMetrics")
        size = metrics["cssContentSize"]
        width, height = int(size["width"]), int(min(size["height"], 6000))
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        shot = self.send("Page.captureScreenshot", {"format": "png"}, timeout=30)
        self.send("Emulation.clearDeviceMetricsOverride")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def console_errors(self) -> list[str]:
        out = []
        for e in self.events:
            if e["method"] == "Runtime.exceptionThrown":
                out.append(json.dumps(e["params"]["exceptionDetails"])[:300])
            elif e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error":
                out.append(str(e["params"]["entry"].get("text")))
            elif e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                out.append(json.dumps(e["params"]["args"])[:300])
        return out

    def close(self) -> None:
        self._stack.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Chromium]:
    chromium = Chromium(tmp_path / "chromium-profile")
    try:
        for domain in ("Page", "Runtime", "Log"):
            chromium.send(f"{domain}.enable")
        yield chromium
    finally:
        chromium.close()


# ------------------------------------------------------------------ app ----


@pytest.fixture
def fake_llm() -> Iterator[tuple[ServerThread, FakeLLMConfig]]:
    # An adversarial model: tries to leak the owner's number, decide for them, claim a body.
    cfg = FakeLLMConfig(ttft_ms=60, mode="adversarial", leaks=[MOBILE])
    with serve(create_fake_llm(cfg)) as server:
        yield server, cfg


@pytest.fixture
def app_server(
    fake_llm: tuple[ServerThread, FakeLLMConfig], clean_redis: RedisProcess, tmp_path: Path
) -> Iterator[ServerThread]:
    llm, _ = fake_llm
    settings = make_settings(
        clean_redis.url,
        tmp_path,
        ops_token=OPS_TOKEN,
        realizer="llm",
        llm_base_url=llm.base_url + "/v1",
        llm_model="fake",
        llm_ttft_deadline_ms=300,
    )
    app = create_app(settings)
    app.state.ops_options = OpsOptions(sample_interval_s=0.5, window_s=600)
    with serve(app) as server:
        yield server


@pytest.fixture
async def client(app_server: ServerThread) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=app_server.base_url, timeout=15) as c:
        yield c


CALLS = [
    ["Hi, I have a parcel for Alex.", "I'm at the door, where should I leave it?", "What's his phone number?", "OK, thanks, bye."],
    ["Hello, your food delivery is here.", "Can he pay the extra fee?", "Is he at home now?", "Thanks, goodbye."],
    ["Hi, this is Sam, a friend of Alex.", "Can you tell him to call me back?", "When will he be free?"],
]  # fmt: skip


async def _drive_calls(client: httpx.AsyncClient, redis_url: str, cfg: FakeLLMConfig) -> tuple[list[str], int]:
    """Three calls of several turns; the model is slow (over the deadline) in the second.
    The last call is left in progress. Returns the call ids and the number of turns."""
    owner = await create_owner(client, redis_url, "Alex Chen", "en")
    h = {"Authorization": owner["auth"]}
    profile = {
        "display_name": "Alex",
        "languages": ["en"],
        "private_facts": [{"label": "mobile", "value": MOBILE}],
    }
    assert (await client.put("/v1/profile", json=profile, headers=h)).status_code == 200
    r = await client.put("/v1/presets/regular/delivery", json={"response": "Please leave it at the door."}, headers=h)
    assert r.status_code == 200, r.text
    ids: list[str] = []
    turns = 0
    for n, texts in enumerate(CALLS):
        call = await client.post("/v1/calls/text", json={"lang": "en"}, headers=h)
        assert call.status_code == 201, call.text
        call_id = str(call.json()["call_id"])
        ids.append(call_id)
        cfg.ttft_ms = 600 if n == 1 else 60
        for text in texts:
            t = await client.post(f"/v1/calls/{call_id}/turns", json={"text": text}, headers=h)
            assert t.status_code == 200, t.text
            turns += 1
            if t.json()["ended"]:
                break
    cfg.ttft_ms = 60
    return ids, turns


async def _settled_summary(client: httpx.AsyncClient, turns_at_least: float) -> dict[str, Any]:
    """Wait for a sampled point that includes every turn driven."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        data = (await client.get("/ops/api/summary", headers=BEARER)).json()
        last = data["series"][-1] if data["series"] else None
        if last and last["totals"]["turns"] >= turns_at_least:
            return dict(data)
        await asyncio.sleep(0.2)
    raise AssertionError("the sampler did not catch up with the calls")


# ----------------------------------------------------------------- test ----

PAGE_STATE = """(() => {
  const stat = (n) => { const e = document.querySelector(`[data-stat="${n}"]`);
                        return {text: e.textContent, value: e.dataset.value}; };
  const chart = (id) => {
    const svg = document.querySelector(`#${id} svg`);
    if (!svg) return null;
    const series = {};
    for (const g of svg.querySelectorAll("g.series")) {
      const path = g.querySelector("path.line");
      series[g.dataset.series] = {points: Number(g.dataset.points),
                                  circles: g.querySelectorAll("circle.pt").length,
                                  d: path ? path.getAttribute("d") : ""};
    }
    return {empty: svg.dataset.empty === "true", series,
            thresholds: [...svg.querySelectorAll("g.threshold")].map((t) => Number(t.dataset.value)),
            box: svg.getBoundingClientRect().width};
  };
  const bars = (id) => Object.fromEntries([...document.querySelectorAll(`#${id} g.bar`)]
      .map((b) => [b.dataset.label, Number(b.dataset.value)]));
  return {
    stats: Object.fromEntries(["active_calls", "calls_started", "turns", "ttft_p50", "v2v_p90",
                               "fallbacks", "interventions", "errors"].map((n) => [n, stat(n)])),
    charts: Object.fromEntries(["chart-ttft", "chart-active", "chart-events", "chart-voice_to_voice",
        "chart-decision", "chart-realizer_ttft", "chart-safety_guard"].map((id) => [id, chart(id)])),
    constraints: bars("chart-constraints"),
    fallbacks: bars("chart-fallbacks"),
    calls: [...document.querySelectorAll("#calls-body tr[data-call]")].map((tr) => ({
      id: tr.dataset.call, href: tr.querySelector("a").getAttribute("href"),
      cells: [...tr.querySelectorAll("td")].map((td) => td.textContent)})),
    redis: document.querySelector("#redis-status").dataset.state,
  };
})()"""


async def test_dashboard_draws_the_calls(
    browser: Chromium,
    client: httpx.AsyncClient,
    app_server: ServerThread,
    fake_llm: tuple[ServerThread, FakeLLMConfig],
    clean_redis: RedisProcess,
) -> None:
    _, cfg = fake_llm
    before = (await client.get("/ops/api/summary", headers=BEARER)).json()["current"]["totals"]
    call_ids, turns = await _drive_calls(client, clean_redis.url, cfg)
    api = await _settled_summary(client, before["turns"] + turns)
    cur = api["current"]
    # The scripted model gave the guards work to do; the API has seen all of it.
    assert cur["totals"]["turns"] - before["turns"] == turns
    assert cur["totals"]["interventions"] > before["interventions"]
    assert cur["totals"]["fallbacks"] > before["fallbacks"]
    assert cur["active_calls"] >= 1  # the last call is still in progress

    base = app_server.base_url
    # A link with the token in the fragment: /ops -> /ops/login (its script posts it) -> /ops.
    browser.send("Page.navigate", {"url": f"{base}/ops#token={OPS_TOKEN}"})
    browser.wait_for("location.pathname === '/ops' && !!document.body && document.body.dataset.ready === '1'")
    assert browser.eval("location.href") == f"{base}/ops"  # no token left in the address bar
    assert browser.eval("document.cookie") == ""  # HttpOnly: not readable by scripts
    # Give the page one more poll so the chart has the newest points.
    browser.wait_for("document.querySelectorAll('#chart-decision g.series[data-series=p50] circle').length >= 2")
    state = browser.eval(PAGE_STATE)
    api = (await client.get("/ops/api/summary", headers=BEARER)).json()
    cur = api["current"]

    # Numbers shown match the API.
    stats = state["stats"]
    for name in ("active_calls", "calls_started", "turns", "fallbacks", "interventions", "errors"):
        api_value = cur["active_calls"] if name == "active_calls" else cur["totals"][name]
        assert float(stats[name]["value"]) == api_value, name
        assert stats[name]["text"] == str(int(api_value)), name
    assert float(stats["ttft_p50"]["value"]) == pytest.approx(cur["latency"]["realizer_ttft"]["p50"])
    assert stats["ttft_p50"]["text"].endswith(" ms")
    assert stats["v2v_p90"]["text"] == "–"  # text calls have no audio
    assert state["redis"] == "up"

    # Charts drawn with that data.
    charts = state["charts"]
    ttft = charts["chart-ttft"]
    assert 1000.0 in ttft["thresholds"]
    assert ttft["series"]["all"]["points"] >= 2 and ttft["series"]["all"]["d"].count("L") >= 1
    assert ttft["series"]["realizer:llm"]["points"] >= 1
    assert ttft["series"]["realizer:template"]["points"] >= 1  # fallbacks and presets
    assert any(k.startswith("endpoint:") for k in ttft["series"])  # rolling median of the LLM
    for chart_id in ("chart-decision", "chart-realizer_ttft", "chart-safety_guard"):
        chart = charts[chart_id]
        assert not chart["empty"], chart_id
        assert chart["series"]["p50"]["points"] >= 2 and chart["series"]["p50"]["d"].startswith("M")
        assert chart["series"]["p50"]["circles"] >= 2
        assert chart["box"] > 200  # laid out, not collapsed
    assert charts["chart-voice_to_voice"]["empty"]  # no voice calls here
    assert 1500.0 in charts["chart-voice_to_voice"]["thresholds"]
    assert charts["chart-events"]["series"]["interventions"]["points"] >= 2
    assert charts["chart-active"]["series"]["active"]["points"] >= 2

    # Safety interventions by constraint and fallbacks by reason equal the API's.
    assert state["constraints"] == cur["by"]["interventions"] and state["constraints"]
    assert state["fallbacks"] == cur["by"]["fallbacks"] and "deadline" in state["fallbacks"]

    # Recent calls, newest first, each linking to its transcript.
    listed = [c["id"] for c in state["calls"]]
    assert listed == list(reversed(call_ids))
    assert all(c["href"] == f"#call/{c['id']}" for c in state["calls"])
    assert state["calls"][0]["cells"][9] == "in progress"
    ARTIFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTIFACTS / "ops-dashboard.png")

    # A transcript: click through from the table.
    unsafe = call_ids[0]
    browser.eval(f"document.querySelector('tr[data-call=\"{unsafe}\"] a').click()")
    browser.wait_for("document.querySelector('#transcript').dataset.state === 'ok'")
    record = (await client.get(f"/ops/api/calls/{unsafe}", headers=BEARER)).json()
    shown = browser.eval("[...document.querySelectorAll('#t-dialogue li .text')].map((e) => e.textContent)")
    assert shown == [e["text"] if e["text"] is not None else "(silence)" for e in record["transcript"]]
    assert MOBILE not in " ".join(shown)  # the guard kept the leak out of what was said
    constraints = browser.eval(
        "[...document.querySelectorAll('#t-interventions li[data-constraint]')].map((e) => e.dataset.constraint)"
    )
    assert constraints == [i["constraint"] for i in record["interventions"]] and constraints
    assert browser.eval("document.querySelector('#dashboard').hidden") is True
    browser.screenshot(ARTIFACTS / "ops-transcript.png")
    browser.eval("location.hash = ''")
    browser.wait_for("document.querySelector('#dashboard').hidden === false")

    assert browser.console_errors() == []  # nothing blocked by the CSP, no script errors


def test_dashboard_without_token_shows_login(browser: Chromium, app_server: ServerThread) -> None:
    browser.send("Page.navigate", {"url": f"{app_server.base_url}/ops"})
    browser.wait_for("location.pathname === '/ops/login' && !!document.querySelector('#token')")
    assert browser.eval("document.querySelector('#calls-body')") is None  # nothing leaked
    for token in ("not-the-token", OPS_TOKEN):
        browser.wait_for("!!document.querySelector('#token')")
        browser.eval(f"document.querySelector('#token').value = {json.dumps(token)}")
        browser.eval("document.querySelector('form').submit()")
        if token != OPS_TOKEN:
            browser.wait_for("document.querySelector('.error')?.textContent === 'Wrong token.'")
            ARTIFACTS.mkdir(exist_ok=True)
            browser.screenshot(ARTIFACTS / "ops-login.png")
            browser.events.clear()  # the 401 of the wrong token is logged as a failed load
    browser.wait_for("location.pathname === '/ops' && !!document.body && document.body.dataset.ready === '1'")
    assert browser.console_errors() == []
