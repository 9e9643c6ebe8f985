"""Real servers for tests: a redis-server process and a uvicorn server in a thread."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from app.embedded_redis import find_redis_server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"port {port} did not open")


@dataclass
class RedisProcess:
    """A real redis-server on 127.0.0.1 with AOF on, in its own folder.

    ``appendfsync everysec``, as deployed (docker-compose, docs/scaling.md): ``always``
    fsyncs every write, and on a busy CI disk one fsync can outlast the app's 0.5 s Redis
    timeout (the likely cause of a 503 seen in CI). Tests stop Redis with SIGTERM,
    which flushes the AOF, so nothing a test relies on is lost."""

    folder: Path
    port: int
    proc: subprocess.Popen[bytes] | None = None
    appendfsync: str = "everysec"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                find_redis_server(), "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.folder), "--appendonly", "yes", "--appendfsync", self.appendfsync,
                "--save", "", "--daemonize", "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        _wait_port(self.port)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()  # SIGTERM: redis flushes the AOF and exits
        self.proc.wait(timeout=10)
        self.proc = None


class LoopbackUrls:
    """``base_url`` / ``ws_url`` of anything listening on 127.0.0.1:``port``."""

    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"


class ServerThread(LoopbackUrls):
    """A real uvicorn server running an app on 127.0.0.1 in a background thread."""

    def __init__(self, app: FastAPI, port: int | None = None) -> None:
        self.port = port or free_port()
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws_max_size=1024 * 1024,
            lifespan="on",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("test server failed to start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@contextmanager
def serve(app: FastAPI) -> Iterator[ServerThread]:
    server = ServerThread(app)
    server.start()
    try:
        yield server
    finally:
        server.stop()
