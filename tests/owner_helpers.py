"""Shared by the owner-in-the-loop voice tests: a voice app on a real uvicorn, an owner
client, what the caller heard (Whisper on the received audio)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from app.main import create_app
from bench.phone import ulaw8k_to_pcm16

from .conftest import create_owner, make_settings
from .helpers import ServerThread, serve


@contextmanager
def running_voice_app(redis_url: str, tmp: Path, **overrides: object) -> Iterator[tuple[Any, ServerThread]]:
    """The app with voice on, once its models are warm."""
    from .test_voice_twilio import _wait_voice_ready

    settings = make_settings(redis_url, tmp, voice=True, **{"silence_timeout_s": 8.0, **overrides})
    app = create_app(settings)
    with serve(app) as server:
        asyncio.run(_wait_voice_ready(server.base_url))
        yield app, server


@asynccontextmanager
async def english_owner(server: ServerThread, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client signed in as a new English-speaking owner, Alex Chen."""
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as c:
        owner = await create_owner(c, redis_url, "Alex Chen", "en")
        c.headers["Authorization"] = owner["auth"]
        await c.put("/v1/profile", json={"display_name": "Alex Chen", "languages": ["en"]})
        yield c


def hear(app: Any, ulaw: bytes) -> str:
    """What the caller heard: the received 8 kHz mu-law, transcribed by the app's Whisper."""
    import soxr

    pcm = np.frombuffer(ulaw8k_to_pcm16(ulaw), dtype=np.int16).astype(np.float32) / 32768.0
    return str(app.state.resources.voice.recognizer.transcribe_sync(soxr.resample(pcm, 8000, 16000), "en").text)


async def latest_call_id(client: httpx.AsyncClient) -> str:
    for _ in range(100):
        calls = (await client.get("/v1/calls", params={"limit": 1})).json()["calls"]
        if calls:
            return str(calls[0]["call_id"])
        await asyncio.sleep(0.1)
    raise AssertionError("no call")
