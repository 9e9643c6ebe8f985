"""The FastAPI application: routes, error handlers, middleware and lifespan."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from .errors import install_error_handlers
from .middleware import (
    BodyLimitMiddleware,
    ErrorGuardMiddleware,
    SecurityHeadersMiddleware,
    install_access_log_redaction,
)
from .resources import Resources
from .routes import (
    asterisk,
    calls,
    console,
    events,
    health,
    lines,
    ops,
    presets,
    preview,
    profile,
    recordings,
    screening,
    takeover,
    telephony,
    webhooks,
    webrtc,
)
from .settings import Settings, get_settings

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    production = settings.env == "production"

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        install_access_log_redaction()  # after the server has set up its loggers
        resources = Resources.open(settings)
        app.state.resources = resources
        # Before the first request: loading them on it would stall the event loop (and
        # every Redis call waiting on it) for as long as they take.
        await asyncio.to_thread(resources.preload_models)
        await resources.admit_llm_endpoints()
        await resources.open_gateways()
        resources.services.liveness.start()  # heartbeat + reaping of dead instances' calls
        await resources.start_owner_loop()
        await resources.calls.recover_spool()  # record saves a previous process could not make
        try:
            yield
        finally:
            await resources.close_owner_loop()
            await resources.close_gateways()
            await resources.close()

    app = FastAPI(
        title="CallAssist",
        version="0.1.0",
        summary="Answers phone calls on behalf of a device owner.",
        lifespan=lifespan,
        # The schema and its pages are for development: production does not publish them.
        openapi_url=None if production else "/openapi.json",
        docs_url=None if production else "/docs",
        redoc_url=None if production else "/redoc",
    )
    app.state.settings = settings
    install_error_handlers(app)
    app.add_middleware(ErrorGuardMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(SecurityHeadersMiddleware)
    routers = (health, lines, profile, presets, calls, telephony, asterisk, webrtc, ops)
    for module in (*routers, events, takeover, webhooks, screening, preview, recordings, console):
        app.include_router(module.router)
    return app
