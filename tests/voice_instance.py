"""One CallAssist app with voice on, SIP on a free UDP port and WebRTC ICE on 127.0.0.1,
shared by the SIP, Asterisk and WebRTC tests: the ``voice_app`` fixture (``conftest.py``)
starts one per session, because loading the models is the slow part.

(It was defined in ``test_sip.py`` and imported by the other modules; pytest registers
an imported fixture once per importing module, so each module started its own app and
three sets of models shared the CPU.)
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.main import create_app

from .conftest import make_settings
from .helpers import ServerThread

SILENCE_TIMEOUT_S = 2.5  # two silence turns after the reply and the assistant closes the call


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Instance:
    """One CallAssist app: HTTP and SIP on 127.0.0.1."""

    server: ServerThread
    sip_port: int
    data_dir: Path

    @property
    def resources(self) -> Any:
        return self.server.server.config.app.state.resources  # type: ignore[attr-defined]


def start_instance(redis_url: str, tmp: Path) -> Instance:
    """Voice on, SIP on a free port, WebRTC ICE on 127.0.0.1 (for test_webrtc.py)."""
    sip_port = free_udp_port()
    # Known sentences synthesized once are reused by later runs (the models, too, are
    # assembled once into ~/.cache/callassist): the first run pays ~20 s of speech.
    shared = Path(os.environ.get("CALLASSIST_TEST_TTS_CACHE", Path.home() / ".cache/callassist/test-tts-cache"))
    shared.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    if not (tmp / "tts-cache").exists():
        (tmp / "tts-cache").symlink_to(shared, target_is_directory=True)
    settings = make_settings(
        redis_url,
        tmp,
        voice=True,
        sip_port=sip_port,
        silence_timeout_s=SILENCE_TIMEOUT_S,
        webrtc_ice_hosts=["127.0.0.1"],
    )
    server = ServerThread(create_app(settings))
    server.start()
    return Instance(server, sip_port, tmp)


def stop_instance(instance: Instance) -> None:
    # Exiting while the voice warm-up thread is still inside a native model load aborts
    # the interpreter: let it finish first.
    # (Same for the speech precompute thread: let it go idle.)
    res = instance.resources
    warm = getattr(res, "_warm_thread", None)
    if warm is not None:
        warm.join(120)
    if res.precomputer is not None:
        res.precomputer.wait_idle(120)
    instance.server.stop()


def wait_ready(instance: Instance, timeout_s: float = 180) -> None:
    """/readyz says the voice models are warm (ASR loaded, TTS engines warmed up, or the
    first call's ASR shares the CPU with a model load) and no speech is waiting."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        voice = httpx.get(instance.server.base_url + "/readyz", timeout=5).json().get("voice", {})
        if voice.get("warm") and voice.get("tts_pending") == 0:
            return
        time.sleep(0.3)
    raise TimeoutError("voice models did not load")
