"""WebRTC callers: the call page (``/call/{line}``) and its signalling (``/webrtc/offer``).

No owner credentials are involved: a WebRTC line is a public link the owner shares.
The page learns nothing but the line's name and the ICE servers; the call's transcript
reaches it over the call's own data channel.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from importlib.resources import files
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ..deps import ResourcesDep
from ..errors import ApiError
from ..resources import Resources

router = APIRouter(tags=["webrtc"])

MAX_SDP_CHARS = 12_000
_ASSETS = {"call.js": "text/javascript", "call.css": "text/css"}
_PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; media-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Permissions-Policy": "microphone=(self), camera=()",
    "Cache-Control": "no-store",
}


class RequestData(BaseModel):
    line: Annotated[str, Field(min_length=1, max_length=200)]


class OfferBody(BaseModel):
    """pipecat's SmallWebRTC request: camelCase ``requestData`` (JS clients) or snake_case."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    sdp: Annotated[str, Field(min_length=1, max_length=MAX_SDP_CHARS)]
    type: Annotated[str, Field(max_length=16)]
    pc_id: Annotated[str | None, Field(max_length=128)] = None
    restart_pc: bool | None = None
    request_data: RequestData = Field(alias="requestData")


class CandidateBody(BaseModel):
    candidate: Annotated[str, Field(max_length=1024)]
    sdp_mid: Annotated[str | None, Field(max_length=64)] = None
    sdp_mline_index: Annotated[int | None, Field(ge=0, le=16)] = None


class PatchBody(BaseModel):
    pc_id: Annotated[str, Field(min_length=1, max_length=128)]
    candidates: Annotated[list[CandidateBody], Field(max_length=64)]


class Answer(BaseModel):
    sdp: str
    type: str
    pc_id: str


def _calls(res: Resources) -> Any:
    if res.webrtc is None:
        raise ApiError(503, "unavailable", "voice calls are disabled", headers={"Retry-After": "60"})
    return res.webrtc


async def _resolve(res: Resources, line: str) -> tuple[str, str]:
    resolved = await _calls(res).resolve(line)
    if resolved is None:
        raise ApiError(404, "not_found", "no WebRTC line by that name", field="line")
    owner_id, line_id = resolved
    return owner_id, line_id


@router.post("/webrtc/offer", response_model=Answer)
async def offer(body: OfferBody, request: Request, res: ResourcesDep) -> Answer | JSONResponse:
    """An SDP offer for a call to ``requestData.line``; the answer carries ``pc_id`` for
    trickle ICE (PATCH) and renegotiation (POST with the same ``pc_id``)."""
    from pipeline.webrtc import WebRTCError

    owner_id, line = await _resolve(res, body.request_data.line)
    try:
        answer = await _calls(res).offer(
            sdp=body.sdp,
            sdp_type=body.type,
            owner_id=owner_id,
            line=line,
            pc_id=body.pc_id,
            restart=bool(body.restart_pc),
            source=request.client.host if request.client else "",
        )
    except WebRTCError as exc:
        headers = {"Retry-After": "5"} if exc.retryable else None
        raise ApiError(exc.status, exc.code, exc.message, headers=headers) from exc
    return Answer(**answer)


@router.patch("/webrtc/offer")
async def candidates(body: PatchBody, res: ResourcesDep) -> dict[str, str]:
    """Trickle ICE: the caller's candidates for its connection ``pc_id``."""
    from pipeline.webrtc import Candidate, WebRTCError

    try:
        await _calls(res).add_candidates(
            body.pc_id, [Candidate(c.candidate, c.sdp_mid, c.sdp_mline_index) for c in body.candidates]
        )
    except WebRTCError as exc:
        raise ApiError(exc.status, exc.code, exc.message) from exc
    return {"status": "success"}


@lru_cache
def _asset(name: str) -> bytes:
    return (files("app.web") / name).read_bytes()


@router.get("/call/static/{name}", include_in_schema=False)
async def asset(name: str) -> Response:
    if name not in _ASSETS:
        raise ApiError(404, "not_found", "no such file")
    return Response(
        _asset(name), media_type=_ASSETS[name], headers={"Cache-Control": "public, max-age=300", **_nosniff()}
    )


def _nosniff() -> dict[str, str]:
    return {"X-Content-Type-Options": "nosniff"}


@router.get("/call/{line}", response_class=HTMLResponse, include_in_schema=False)
async def call_page(line: Annotated[str, Path(max_length=200)], request: Request, res: ResourcesDep) -> HTMLResponse:
    """The caller's page: press call, speak, hear the assistant, read the transcript."""
    page = _asset("call.html").decode()
    known = res.webrtc is not None and await res.webrtc.resolve(line) is not None
    config = {
        "line": line,
        "available": known,
        "voice": res.webrtc is not None,
        "iceServers": _browser_ice_servers(res),
        "offerUrl": "/webrtc/offer",
    }
    # JSON inside <script type="application/json">: no "<" may close the element early.
    blob = json.dumps(config, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    page = page.replace("{{CONFIG}}", blob).replace("{{LINE}}", html.escape(line))
    return HTMLResponse(page, status_code=200 if known else 404, headers=_PAGE_HEADERS)


def _browser_ice_servers(res: Resources) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for server in res.settings.webrtc_ice_servers:
        if isinstance(server, str):
            out.append({"urls": server})
        else:
            out.append(server.model_dump(exclude_none=True))
    return out
