"""The ops token: what guards ``/ops`` (always) and ``/metrics`` (when configured).

It is separate from owner API keys: an owner key never opens ``/ops``, the ops token
never opens an owner's API.

- ``CALLASSIST_OPS_TOKEN`` set: that is the token (production refuses a placeholder or
  one under 16 characters, see :mod:`app.settings`); ``/metrics`` then wants
  ``Authorization: Bearer <token>`` too.
- Unset (development, test): a random token is generated once into
  ``<data_dir>/ops-token`` (mode 0600) and reused on later starts; the log names the
  file, never the token. ``/metrics`` stays open, as Prometheus endpoints usually are.

The dashboard's browser session is a cookie holding ``<expiry>.<HMAC-SHA256(token,
expiry)>``: stateless, it expires on its own, it does not carry the token, and changing
the token ends every session.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..settings import Settings

log = logging.getLogger(__name__)

COOKIE_NAME = "ca_ops"
TOKEN_FILE = "ops-token"
_MIN_LEN = 16


@dataclass(frozen=True)
class OpsToken:
    value: str = field(repr=False)
    source: Literal["configured", "generated"]
    path: Path | None = None  # where a generated token is kept

    @property
    def guards_metrics(self) -> bool:
        return self.source == "configured"

    def matches(self, candidate: str | None) -> bool:
        if not candidate:
            return False
        # Compare digests: constant time, and safe for non-ASCII input.
        a = hashlib.sha256(candidate.strip().encode()).digest()
        b = hashlib.sha256(self.value.encode()).digest()
        return hmac.compare_digest(a, b)

    def _mac(self, expiry: int) -> str:
        msg = f"callassist-ops-session:{expiry}".encode()
        return hmac.new(self.value.encode(), msg, hashlib.sha256).hexdigest()

    def session_cookie(self, *, ttl_s: int, now: float | None = None) -> str:
        expiry = int((time.time() if now is None else now) + ttl_s)
        return f"{expiry}.{self._mac(expiry)}"

    def session_valid(self, cookie: str | None, *, now: float | None = None) -> bool:
        if not cookie:
            return False
        expiry_s, _, mac = cookie.partition(".")
        if not expiry_s.isdigit() or not mac:
            return False
        expiry = int(expiry_s)
        if expiry < (time.time() if now is None else now):
            return False
        return hmac.compare_digest(mac.encode(), self._mac(expiry).encode())


def resolve_ops_token(settings: Settings) -> OpsToken:
    """The configured token, else the one generated into the data directory."""
    configured = settings.ops_token.get_secret_value().strip() if settings.ops_token else ""
    if configured:
        return OpsToken(configured, "configured")
    path = settings.data_dir / TOKEN_FILE
    token = _read_token(path)
    if token is None:
        token = _create_token(path)
    log.warning(
        "CALLASSIST_OPS_TOKEN is not set: /ops takes the generated token kept in %s",
        path,
        extra={"path": str(path)},
    )
    return OpsToken(token, "generated", path)


def _read_token(path: Path) -> str | None:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return token if len(token) >= _MIN_LEN else None


def _create_token(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    try:
        # Atomic and first-wins: two workers starting together end up with one token.
        os.link(tmp, path)
    except FileExistsError:
        existing = _read_token(path)
        if existing is not None:
            token = existing
        else:
            os.replace(tmp, path)
            return token
    finally:
        tmp.unlink(missing_ok=True)
    return token
