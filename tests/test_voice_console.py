"""The owner console in headless Chromium (Debian's, over the DevTools protocol): it signs
in, watches a scripted Twilio-format call's transcript appear live, clicks a quick reply,
and the caller hears it; the record shows it with role ``owner``. Screenshots land in
artifacts/ (gitignored). (Named test_voice_*: voice calls feed the process's metrics, so
these run after the tests that expect none.)"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.phone import PhoneCall, pcm16_to_ulaw8k
from pipeline.tts import PiperEngine

from .conftest import create_owner
from .helpers import RedisProcess, ServerThread
from .owner_helpers import hear, running_voice_app
from .test_ops_dashboard import ARTIFACTS, Chromium, browser  # noqa: F401 (the browser fixture)

# ------------------------------------------------------------- browser ----


@pytest.fixture(scope="module")
def voice_app(
    redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, ServerThread]]:
    with running_voice_app(redis_server.url, tmp_path_factory.mktemp("console")) as pair:
        yield pair


def _click_quick(text: str) -> str:
    return f"""(() => {{
      const b = [...document.querySelectorAll('button.quick')].find(x => x.textContent.includes({text!r}));
      if (!b) return false; b.click(); return true; }})()"""


@pytest.mark.slow
async def test_console_live_call_and_quick_reply(
    browser: Chromium,  # noqa: F811
    voice_app: tuple[Any, ServerThread],
    clean_redis: RedisProcess,
) -> None:
    app, server = voice_app
    base = server.base_url
    async with httpx.AsyncClient(base_url=base, timeout=30) as api:
        owner = await create_owner(api, clean_redis.url, "Alex Chen", "en")
        api.headers["Authorization"] = owner["auth"]
        await api.put("/v1/profile", json={"display_name": "Alex Chen", "languages": ["en"]})
        await api.put("/v1/lines/+15550100031")

        browser.send("Page.navigate", {"url": f"{base}/app"})
        await asyncio.to_thread(browser.wait_for, "!!document.querySelector('#api_key')")
        browser.eval(f"document.querySelector('#api_key').value = {owner['api_key']!r}")
        browser.eval("document.querySelector('#login').submit()")
        await asyncio.to_thread(browser.wait_for, "!!document.body && document.body.dataset.ready === '1'")
        assert browser.eval("localStorage.length === 0 || !JSON.stringify(localStorage).includes('ca_')")
        await asyncio.to_thread(browser.wait_for, "document.querySelector('#live').dataset.state === 'up'")

        call = PhoneCall(f"{server.ws_url}/telephony/twilio", "+15550100031", from_number="+14155550177")
        await call.connect()
        await call.listen(max_wait_s=20)
        await asyncio.to_thread(browser.wait_for, "!!document.querySelector('li.call')")
        browser.eval("document.querySelector('li.call').click()")
        await asyncio.to_thread(browser.wait_for, "!!document.querySelector('button.quick')")

        line = PiperEngine().synthesize("Hi, this is the pharmacy. Your prescription is ready for pickup.")
        await call.say(pcm16_to_ulaw8k(line.pcm, line.rate), max_wait_s=25)
        await asyncio.to_thread(
            browser.wait_for,
            "[...document.querySelectorAll('#transcript li.caller')].some(x => /pharmacy/i.test(x.textContent))",
        )
        await asyncio.to_thread(browser.wait_for, "document.querySelectorAll('#transcript li.assistant').length >= 2")
        ARTIFACTS.mkdir(exist_ok=True)
        await asyncio.to_thread(browser.screenshot, ARTIFACTS / "console-live-call.png")

        loop = asyncio.get_running_loop()
        t0 = loop.time()
        assert browser.eval(_click_quick("call you back"))
        heard_reply = await call.listen(max_wait_s=20, since=None)
        heard = hear(app, heard_reply.audio).lower()
        assert "call you back" in heard, heard
        await asyncio.to_thread(
            browser.wait_for,
            "[...document.querySelectorAll('#transcript li.owner')].some(x => x.textContent.includes('call you back'))",
        )
        await asyncio.to_thread(browser.screenshot, ARTIFACTS / "console-quick-reply.png")
        assert loop.time() - t0 < 60
        await call.hangup()
        await asyncio.sleep(1.0)

        cid = (await api.get("/v1/calls", params={"limit": 1})).json()["calls"][0]["call_id"]
        record = (await api.get(f"/v1/calls/{cid}")).json()
        owner_lines = [e["text"] for e in record["transcript"] if e["role"] == "owner"]
        assert owner_lines == ["I'll call you back."]
        assert record["caller_number"] == "+14155550177"
        await asyncio.to_thread(browser.wait_for, "!!document.querySelector('#summary')")
        await asyncio.to_thread(browser.screenshot, ARTIFACTS / "console-ended-call.png")
        # the other tabs draw from the API
        browser.eval("document.querySelector('[data-tab=presets]').click()")
        await asyncio.to_thread(browser.wait_for, "document.querySelectorAll('#regular form').length === 3")
        browser.eval("document.querySelector('#lang').click()")
        assert browser.eval("document.querySelector('[data-tab=presets]').textContent") == "预设"
        await asyncio.to_thread(browser.screenshot, ARTIFACTS / "console-presets-zh.png")
        assert browser.console_errors() == []
    assert (await asyncio.to_thread((ARTIFACTS / "console-quick-reply.png").stat)).st_size > 10_000
