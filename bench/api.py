"""``callassist bench api``: preset API throughput and latency on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import httpx

from .server import running_server
from .stats import summary_ms


async def _phase(
    clients: int,
    seconds: float,
    request: Callable[[httpx.AsyncClient, int], Awaitable[int]],
    base_url: str,
    headers: dict[str, str],
) -> dict[str, float]:
    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds

    async def worker(i: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=10) as client:
            n = 0
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                status = await request(client, i * 1_000_000 + n)
                latencies.append(time.perf_counter() - t0)
                if status >= 400:
                    errors += 1
                n += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    elapsed = time.perf_counter() - t0
    return {
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "errors": errors,
        **summary_ms(latencies),
    }


async def _bench(base_url: str, api_key: str, clients: int, seconds: float) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {api_key}"}

    async def get_pool(client: httpx.AsyncClient, _: int) -> int:
        return (await client.get("/v1/presets")).status_code

    async def put_regular(client: httpx.AsyncClient, n: int) -> int:
        body = {"response": f"Please leave it at the door ({n})"}
        return (await client.put("/v1/presets/regular/takeout", json=body)).status_code

    async with httpx.AsyncClient(base_url=base_url, headers=headers) as c:
        await c.put("/v1/presets/regular/takeout", json={"response": "leave it at the door"})
        for i in range(10):
            await c.post(
                "/v1/presets/emergent",
                json={"trigger": f"asks about topic {i}", "response": f"answer {i}"},
            )
    return {
        "clients": clients,
        "seconds_per_phase": seconds,
        "GET /v1/presets": await _phase(clients, seconds, get_pool, base_url, headers),
        "PUT /v1/presets/regular/takeout": await _phase(clients, seconds, put_regular, base_url, headers),
    }


def run_api_bench(*, clients: int, seconds: float) -> dict[str, object]:
    # The rate limit is per key; a benchmark key must not be throttled.
    env = {"CALLASSIST_RATE_LIMIT_PER_MINUTE": "100000000"}
    with running_server(env=env) as server:
        owner = json.loads(server.cli("owner", "create", "--name", "bench", "--lang", "en"))
        result = asyncio.run(_bench(server.base_url, owner["api_key"], clients, seconds))
    print(json.dumps(result, indent=2))
    return result
