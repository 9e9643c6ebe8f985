"""Several real CallAssist processes behind a real HAProxy, for the scale-out tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from .helpers import LoopbackUrls, _wait_port, free_port

OPS_TOKEN = "scale-test-ops-token-0123456789"


@dataclass
class Proc(LoopbackUrls):
    name: str
    port: int
    folder: Path
    proc: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 60) -> float:
        """SIGTERM; seconds until the process exited."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout)
        return time.monotonic() - t0

    def metric(self, name: str) -> float:
        text = httpx.get(self.base_url + "/metrics", headers={"Authorization": f"Bearer {OPS_TOKEN}"}, timeout=5).text
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name) and not line.startswith("#"):
                total += float(line.rsplit(" ", 1)[1])
        return total


def start_instance(name: str, redis_url: str, tmp: Path, *, voice: bool, **env: str) -> Proc:
    """``python -m app serve`` in its own process (so a test can kill -9 it)."""
    folder = tmp / name
    folder.mkdir(parents=True)
    shared = Path(os.environ.get("CALLASSIST_TEST_TTS_CACHE", Path.home() / ".cache/callassist/test-tts-cache"))
    shared.mkdir(parents=True, exist_ok=True)
    (folder / "tts-cache").symlink_to(shared, target_is_directory=True)
    port = free_port()
    environ = {
        **os.environ,
        "CALLASSIST_ENV": "test",
        "CALLASSIST_REDIS_URL": redis_url,
        "CALLASSIST_DATA_DIR": str(folder),
        "CALLASSIST_VOICE": "true" if voice else "false",
        "CALLASSIST_INSTANCE": name,
        "CALLASSIST_OPS_TOKEN": OPS_TOKEN,
        "CALLASSIST_RATE_LIMIT_PER_MINUTE": "100000",
        "CALLASSIST_LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        **env,
    }
    log = folder / "server.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=environ,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    _wait_port(port, timeout=120)
    return Proc(name, port, folder, proc, log)


def wait_voice_warm(p: Proc, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert p.alive(), p.log.read_text()[-3000:]
        try:
            voice = httpx.get(p.base_url + "/readyz", timeout=5).json().get("voice", {})
        except httpx.TimeoutException:
            continue  # busy loading models on a loaded machine: ask again
        if voice.get("warm"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"{p.name}: voice models did not load")


@dataclass
class HAProxy(LoopbackUrls):
    """HAProxy (Debian) in front of the instances' HTTP and WebSocket port: round-robin,
    health-checked on /readyz, so a dead, full or draining instance gets no new requests."""

    folder: Path
    backends: list[Proc]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        servers = "\n".join(
            f"    server {b.name} 127.0.0.1:{b.port} check inter 500 fall 2 rise 2" for b in self.backends
        )
        cfg = self.folder / "haproxy.cfg"
        cfg.write_text(
            "global\n    maxconn 2000\n"
            "defaults\n    mode http\n    timeout connect 2s\n    timeout client 120s\n    timeout server 120s\n"
            "    timeout tunnel 1h\n    option http-server-close\n"
            f"frontend calls\n    bind 127.0.0.1:{self.port}\n    default_backend app\n"
            "backend app\n    balance roundrobin\n    option httpchk GET /readyz\n    http-check expect status 200\n"
            "    retry-on conn-failure\n    retries 2\n    option redispatch\n"
            f"{servers}\n"
        )
        self.proc = subprocess.Popen(
            ["haproxy", "-db", "-f", str(cfg)],
            stdout=(self.folder / "haproxy.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        _wait_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None
