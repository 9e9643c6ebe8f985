"""Start a real ``callassist serve`` in a subprocess for benchmarks and demos."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningServer:
    base_url: str
    data_dir: Path
    proc: subprocess.Popen[bytes]
    env: dict[str, str]

    def cli(self, *args: str) -> str:
        """Run a ``callassist`` CLI command beside the server (same data folder)."""
        out = subprocess.run(
            [sys.executable, "-m", "app", *args],
            env=self.env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        return out.stdout.decode()


@contextmanager
def running_server(
    *, env: dict[str, str] | None = None, data_dir: Path | None = None, log_path: Path | None = None
) -> Iterator[RunningServer]:
    """A service on 127.0.0.1 with its embedded Redis in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="callassist-") as tmp:
        folder = data_dir or Path(tmp)
        port = free_port()
        full_env = {
            **os.environ,
            "CALLASSIST_DATA_DIR": str(folder),
            "CALLASSIST_LOG_LEVEL": "WARNING",
            **(env or {}),
        }
        log = open(log_path or Path(tmp) / "server.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=full_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited early with {proc.returncode}")
                try:
                    if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not become ready")
                time.sleep(0.1)
            yield RunningServer(base, folder, proc, full_env)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
