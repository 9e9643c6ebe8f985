"""``callassist bench owner``: the owner-in-the-loop figures, on loopback, against a real
``callassist serve`` (embedded Redis) in a subprocess.

- SSE latency: a text call's turn sent -> its ``turn.caller`` event read off ``GET
  /v1/events`` (includes the HTTP request; an upper bound of "recognized -> event");
- hang-up -> first webhook delivery attempt at a loopback receiver (p50/p99);
- say -> first audio frame of the owner's words at the caller of a live Twilio-format
  call (with ``--say`` > 0; loads the voice models);
- deliveries lost across a restart: the receiver fails, the service is restarted with
  deliveries pending, the receiver recovers; every expected delivery must arrive once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request, Response

from .server import RunningServer, free_port, running_server
from .stats import summary_ms


@dataclass
class Receiver:
    """A webhook receiver on loopback that checks every signature."""

    status: int = 204
    secret: str = ""
    arrivals: list[tuple[float, dict[str, Any], str]] = field(default_factory=list)  # (time, body, delivery id)
    bad_signatures: int = 0
    refused: int = 0
    port: int = field(default_factory=free_port)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/hook")
        async def hook(request: Request) -> Response:
            now = time.time()
            body = await request.body()
            if self.status >= 300:
                self.refused += 1
                return Response(status_code=self.status)
            parts = dict(
                p.split("=", 1) for p in request.headers.get("callassist-signature", "").split(",") if "=" in p
            )
            mac = hmac.new(self.secret.encode(), parts.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(mac, parts.get("v1", "")):
                self.bad_signatures += 1
            self.arrivals.append((now, json.loads(body), request.headers.get("callassist-delivery", "")))
            return Response(status_code=self.status)

        return app

    @contextlib.contextmanager
    def serve(self) -> Iterator[None]:
        server = uvicorn.Server(uvicorn.Config(self.app(), host="127.0.0.1", port=self.port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.01)
        try:
            yield
        finally:
            server.should_exit = True
            thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


class Sse:
    """Reads ``GET /v1/events`` and notes when each event arrived."""

    def __init__(self, base_url: str, key: str) -> None:
        self.base_url = base_url
        self.key = key
        self.seen: list[tuple[float, dict[str, Any]]] = []
        self.task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        async with (
            httpx.AsyncClient(base_url=self.base_url, timeout=None) as c,
            c.stream("GET", "/v1/events", headers={"Authorization": f"Bearer {self.key}"}) as r,
        ):
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    self.seen.append((time.perf_counter(), json.loads(line[6:])))

    async def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())
        await asyncio.sleep(0.5)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def wait(self, pred: Any, within_s: float = 10.0) -> float:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            for at, e in self.seen:
                if pred(e):
                    return at
            await asyncio.sleep(0.001)
        raise TimeoutError("event not seen")


LINES = [
    "Hi, this is FedEx, I have a parcel for Alex.",
    "Please tell him the invoice is inside the box, and call me back on 415 555 0123.",
]


def _is_turn(e: dict[str, Any], call_id: str, n: int) -> bool:
    return bool(e["type"] == "turn.caller" and e["call_id"] == call_id and e["data"]["turn"] == n)


async def _text_phase(server: RunningServer, key: str, receiver: Receiver, calls: int) -> dict[str, Any]:
    h = {"Authorization": f"Bearer {key}"}
    sse = Sse(server.base_url, key)
    await sse.start()
    event_lat: list[float] = []
    hook_lat: list[float] = []
    async with httpx.AsyncClient(base_url=server.base_url, headers=h, timeout=10) as c:
        for _ in range(calls):
            cid = (await c.post("/v1/calls/text", json={"lang": "en"})).json()["call_id"]
            for n, text in enumerate(LINES):
                t0 = time.perf_counter()
                await c.post(f"/v1/calls/{cid}/turns", json={"text": text})
                at = await sse.wait(
                    lambda e, cid=cid, n=n: (
                        e["type"] == "turn.caller" and e["call_id"] == cid and e["data"]["turn"] == n
                    )
                )
                event_lat.append(at - t0)
            t_hang = time.time()
            await c.post(f"/v1/calls/{cid}/hangup")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                hit = [a for a, b, _ in receiver.arrivals if b["call_id"] == cid and b["type"] == "call.ended"]
                if hit:
                    hook_lat.append(hit[0] - t_hang)
                    break
                await asyncio.sleep(0.002)
    await sse.stop()
    return {"sse_turn_event": summary_ms(event_lat), "hangup_to_first_webhook_attempt": summary_ms(hook_lat)}


async def _say_phase(server: RunningServer, key: str, says: int) -> dict[str, Any]:
    from .phone import PhoneCall

    h = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=server.base_url, headers=h, timeout=30) as c:
        for _ in range(600):
            if (await c.get("/readyz")).json().get("voice", {}).get("warm"):
                break
            await asyncio.sleep(0.5)
        await c.put("/v1/lines/+15550109999")
        call = PhoneCall(server.base_url.replace("http://", "ws://") + "/telephony/twilio", "+15550109999")
        await call.connect()
        await call.listen(max_wait_s=30)
        cid = (await c.get("/v1/calls", params={"limit": 1})).json()["calls"][0]["call_id"]
        lat: list[float] = []
        for i in range(says):
            t0 = time.monotonic()
            await c.post(f"/v1/calls/{cid}/say", json={"text": f"This is Alex, message number {i + 1}."})
            reply = await call.listen(max_wait_s=20, since=t0)
            if reply.latency_s is not None:
                lat.append(reply.latency_s)
        await call.hangup()
    return {"say_to_first_audio": summary_ms(lat), "says": says, "heard": len(lat)}


async def _restart_phase(data_dir: Path, env: dict[str, str], calls: int) -> dict[str, Any]:
    receiver = Receiver(status=503)
    with receiver.serve():
        with running_server(env=env, data_dir=data_dir) as server:
            owner = json.loads(server.cli("owner", "create", "--name", "bench", "--lang", "en"))
            h = {"Authorization": f"Bearer {owner['api_key']}"}
            async with httpx.AsyncClient(base_url=server.base_url, headers=h, timeout=10) as c:
                hook = (await c.post("/v1/webhooks", json={"url": receiver.url, "events": ["call.ended"]})).json()
                receiver.secret = hook["secret"]
                for _ in range(calls):
                    cid = (await c.post("/v1/calls/text", json={"lang": "en"})).json()["call_id"]
                    await c.post(f"/v1/calls/{cid}/turns", json={"text": LINES[0]})
                    await c.post(f"/v1/calls/{cid}/hangup")
                await asyncio.sleep(1.0)  # several failing attempts each
        refused = receiver.refused
        receiver.status = 204
        with running_server(env=env, data_dir=data_dir):
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len({d for _, _, d in receiver.arrivals}) < calls:  # noqa: ASYNC110
                await asyncio.sleep(0.1)  # the receiver runs in another thread
    delivered = {d for _, _, d in receiver.arrivals}
    return {
        "expected": calls, "failed_attempts_before_restart": refused, "delivered_after_restart": len(delivered),
        "lost": calls - len(delivered), "duplicates": len(receiver.arrivals) - len(delivered),
        "bad_signatures": receiver.bad_signatures,
    }  # fmt: skip


def run_owner_bench(*, calls: int, says: int, restart_calls: int) -> dict[str, Any]:
    env = {
        "CALLASSIST_WEBHOOK_ALLOW_PRIVATE": "true",
        "CALLASSIST_WEBHOOK_RETRY_BASE_S": "0.2",
        "CALLASSIST_RATE_LIMIT_PER_MINUTE": "100000",
        "CALLASSIST_VOICE": "true" if says else "false",
    }
    result: dict[str, Any] = {"calls": calls}
    receiver = Receiver()
    with receiver.serve(), running_server(env=env) as server:
        owner = json.loads(server.cli("owner", "create", "--name", "bench", "--lang", "en"))
        hook = httpx.post(
            server.base_url + "/v1/webhooks",
            json={"url": receiver.url, "events": ["call.ended"]},
            headers={"Authorization": f"Bearer {owner['api_key']}"},
        ).json()
        receiver.secret = hook["secret"]
        result.update(asyncio.run(_text_phase(server, owner["api_key"], receiver, calls)))
        result["bad_signatures"] = receiver.bad_signatures
        if says:
            result.update(asyncio.run(_say_phase(server, owner["api_key"], says)))
    with tempfile.TemporaryDirectory(prefix="callassist-restart-") as tmp:
        restart_env = {**env, "CALLASSIST_VOICE": "false"}
        result["restart"] = asyncio.run(_restart_phase(Path(tmp), restart_env, restart_calls))
    print(json.dumps(result, indent=2))
    return result
