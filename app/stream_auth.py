"""Who may open a telephony media WebSocket.

- Twilio signs the WebSocket upgrade like a webhook (``X-Twilio-Signature``: HMAC-SHA1
  with the account's auth token over the ``wss://`` URL, no parameters).
- Our own TwiML hands the stream a short-lived token (``<Parameter name="stream_token">``):
  ``v1.<expiry>.<HMAC-SHA256(secret, line|expiry)>``, bound to the called line, valid for
  :data:`STREAM_TOKEN_TTL_S`. Telnyx and Plivo streams carry it as a custom parameter
  when ``CALLASSIST_MEDIA_STREAM_SECRET`` is set (``callassist stream-token --line``).

With neither secret configured (development) streams are open, as before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

from .settings import Settings

STREAM_TOKEN_TTL_S = 120


def twilio_signature(auth_token: str, url: str, params: dict[str, str]) -> str:
    """Twilio's X-Twilio-Signature: HMAC-SHA1 over the URL plus sorted POST params."""
    data = url + "".join(k + params[k] for k in sorted(params))
    digest = hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def stream_secret(settings: Settings, provider: str) -> str | None:
    """The key stream tokens for ``provider`` are signed with; None: streams are open."""
    if settings.media_stream_secret is not None:
        return settings.media_stream_secret.get_secret_value()
    if provider == "twilio" and settings.twilio_auth_token is not None:
        # Derived, so the auth token itself never signs anything but what Twilio checks.
        key = settings.twilio_auth_token.get_secret_value().encode()
        return hmac.new(key, b"callassist-stream-token", hashlib.sha256).hexdigest()
    return None


def make_stream_token(secret: str, line: str, *, now: float | None = None, ttl_s: int = STREAM_TOKEN_TTL_S) -> str:
    expiry = int((time.time() if now is None else now) + ttl_s)
    mac = hmac.new(secret.encode(), f"{line}|{expiry}".encode(), hashlib.sha256).hexdigest()
    return f"v1.{expiry}.{mac}"


def check_stream_token(secret: str, line: str, token: str | None, *, now: float | None = None) -> bool:
    if not token:
        return False
    version, _, rest = token.partition(".")
    expiry_s, _, mac = rest.partition(".")
    if version != "v1" or not expiry_s.isdigit() or len(expiry_s) > 12:
        return False
    if int(expiry_s) < (time.time() if now is None else now):
        return False
    expected = hmac.new(secret.encode(), f"{line}|{expiry_s}".encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac.encode(), expected.encode())
