"""One JSON error shape for every 4xx/5xx: ``{"error": {"code", "message", "field"?}}``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

from presets.errors import (
    Busy,
    Conflict,
    LimitExceeded,
    NotFound,
    NotReplicated,
    PreconditionFailed,
    StoreError,
)

log = logging.getLogger(__name__)

REDIS_RETRY_AFTER_S = 2


class ApiError(Exception):
    """An error the API reports as is."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers or {}


def error_body(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        err["field"] = field
    return {"error": err}


def error_response(
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_body(code, message, field), status_code=status, headers=headers)


_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    412: "precondition_failed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
    503: "unavailable",
}


def _field_of(loc: tuple[Any, ...]) -> str | None:
    """``("body", "emergent", 0, "trigger")`` -> ``emergent[0].trigger``."""
    parts = [p for p in loc if p not in ("body", "query", "path", "header")]
    # pydantic adds the type tag of a failed union/function validator; drop them.
    parts = [p for p in parts if not (isinstance(p, str) and ("[" in p or p.startswith("function-")))]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or None


def _validation_message(err: dict[str, Any]) -> str:
    kind = err.get("type", "")
    msg = str(err.get("msg", "invalid value"))
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "field required"
    if kind == "json_invalid":
        return "body is not valid JSON"
    return msg.removeprefix("Value error, ")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.field, exc.headers)

    @app.exception_handler(StoreError)
    async def _store_error(_: Request, exc: StoreError) -> JSONResponse:
        if isinstance(exc, NotFound):
            return error_response(404, exc.code, exc.message, exc.field)
        if isinstance(exc, Conflict):
            return error_response(409, exc.code, exc.message, exc.field)
        if isinstance(exc, PreconditionFailed):
            return error_response(412, exc.code, exc.message, "If-Match", {"ETag": f'"{exc.current_version}"'})
        if isinstance(exc, Busy | NotReplicated):
            return error_response(503, exc.code, exc.message, headers={"Retry-After": "1"})
        if isinstance(exc, LimitExceeded):
            return error_response(422, exc.code, exc.message, exc.field)
        return error_response(400, exc.code, exc.message, exc.field)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        field = _field_of(tuple(first.get("loc", ())))
        message = _validation_message(first)
        if field:
            message = f"{field}: {message}"
        body = error_body("validation_error", message, field)
        body["error"]["details"] = [
            {"field": _field_of(tuple(e.get("loc", ()))), "message": _validation_message(e)} for e in errors
        ]
        return JSONResponse(body, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _STATUS_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return error_response(exc.status_code, code, message, headers=getattr(exc, "headers", None))

    async def _redis_down(_: Request, exc: Exception) -> JSONResponse:
        log.warning("redis unreachable", extra={"error": type(exc).__name__})
        return error_response(
            503,
            "unavailable",
            "storage is unreachable; retry shortly",
            headers={"Retry-After": str(REDIS_RETRY_AFTER_S)},
        )

    app.add_exception_handler(RedisConnectionError, _redis_down)
    app.add_exception_handler(RedisTimeoutError, _redis_down)
