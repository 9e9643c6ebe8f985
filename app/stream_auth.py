"""Who may open a telephony media WebSocket, and the providers' webhook signatures.

- Twilio signs its webhooks and the WebSocket upgrade (``X-Twilio-Signature``: HMAC-SHA1
  with the account's auth token over the URL plus the sorted POST parameters).
- Telnyx signs its webhooks with the account's Ed25519 key: ``telnyx-signature-ed25519``
  (base64) over ``<telnyx-timestamp>|<raw body>``; we check it with the account's public
  key and refuse timestamps more than :data:`SIGNATURE_TOLERANCE_S` away.
- Plivo signs its webhooks with ``X-Plivo-Signature-V3`` (HMAC-SHA256 with the auth token
  over the URL, its sorted query, the sorted POST parameters and
  ``X-Plivo-Signature-V3-Nonce``; several comma-separated signatures may be sent).
- Our own webhook answers hand the stream a short-lived token (a TwiML / TeXML
  ``<Parameter name="stream_token">``, Plivo's ``extraHeaders``):
  ``v1.<expiry>.<HMAC-SHA256(secret, line|expiry)>``, bound to the called line, valid for
  :data:`STREAM_TOKEN_TTL_S`; ``callassist stream-token --line`` prints one for a stream
  started by other means (Telnyx Call Control ``custom_parameters``).

With no secret configured (development) webhooks and streams are open, as before.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from urllib.parse import parse_qs, urlsplit, urlunsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .settings import Settings

STREAM_TOKEN_TTL_S = 120
SIGNATURE_TOLERANCE_S = 300  # a signed webhook older (or newer) than this is a replay


def twilio_signature(auth_token: str, url: str, params: dict[str, str]) -> str:
    """Twilio's X-Twilio-Signature: HMAC-SHA1 over the URL plus sorted POST params."""
    data = url + "".join(k + params[k] for k in sorted(params))
    digest = hmac.new(auth_token.encode(), data.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def telnyx_signature_valid(
    public_key_b64: str, timestamp: str | None, body: bytes, signature: str | None, *, now: float | None = None
) -> bool:
    """Telnyx's ``telnyx-signature-ed25519`` over ``timestamp|body``, within the tolerance."""
    if not timestamp or not signature or not timestamp.isdigit() or len(timestamp) > 12:
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > SIGNATURE_TOLERANCE_S:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_b64))
        key.verify(base64.b64decode(signature, validate=True), timestamp.encode() + b"|" + body)
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True


def _sorted_query(query: dict[str, list[str]]) -> str:
    return "&".join(f"{k}={v}" for k in sorted(query) for v in sorted(query[k]))


def plivo_signature_v3(auth_token: str, url: str, params: dict[str, str], nonce: str) -> str:
    """Plivo's ``X-Plivo-Signature-V3`` of a POST to ``url`` with form ``params``."""
    parts = urlsplit(url)
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    query = _sorted_query(parse_qs(parts.query, keep_blank_values=True))
    if query or params:
        base += "?" + query
    if query and params:
        base += "."
    base += "".join(k + params[k] for k in sorted(params))
    digest = hmac.new(auth_token.encode(), f"{base}.{nonce}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def plivo_signature_valid(
    auth_token: str, url: str, params: dict[str, str], nonce: str | None, header: str | None
) -> bool:
    if not nonce or not header:
        return False
    expected = plivo_signature_v3(auth_token, url, params, nonce)
    return any(hmac.compare_digest(expected, s.strip()) for s in header.split(","))


def stream_secret(settings: Settings, provider: str) -> str | None:
    """The key stream tokens for ``provider`` are signed with; None: streams are open."""
    if settings.media_stream_secret is not None:
        return settings.media_stream_secret.get_secret_value()
    provider_token = {"twilio": settings.twilio_auth_token, "plivo": settings.plivo_auth_token}.get(provider)
    if provider_token is not None:
        # Derived, so the auth token itself never signs anything but what the provider checks.
        key = provider_token.get_secret_value().encode()
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
