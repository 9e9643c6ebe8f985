"""Browser pages the app serves itself (``/ops``, ``/app``): their security headers and
packaged static files. No CDN: every asset comes from a package folder."""

from __future__ import annotations

import html
from functools import lru_cache
from importlib import resources as importlib_resources

from fastapi import Response

from .errors import ApiError

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


class StaticPages:
    """The files of one package folder: HTML pages (with an optional error message put
    where the page says ``<!--error-->``) and assets of known types."""

    def __init__(self, package: str, assets: dict[str, str]) -> None:
        self.package = package
        self.assets = assets
        self.read = lru_cache(maxsize=32)(self._read)

    def _read(self, name: str) -> bytes:
        return importlib_resources.files(self.package).joinpath(name).read_bytes()

    def html(self, name: str, *, status: int = 200, error: str | None = None) -> Response:
        body = self.read(name)
        if error:
            body = body.replace(b"<!--error-->", f'<p class="error" role="alert">{html.escape(error)}</p>'.encode())
        headers = {**SECURITY_HEADERS, "Cache-Control": "no-store"}
        return Response(body, status_code=status, media_type="text/html; charset=utf-8", headers=headers)

    def asset(self, name: str) -> Response:
        if name not in self.assets:
            raise ApiError(404, "not_found", f"no asset {name}")
        headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        return Response(self.read(name), media_type=self.assets[name], headers=headers)
