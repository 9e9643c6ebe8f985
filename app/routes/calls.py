"""Text calls (the coordinator through the API) and call records."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from pipeline.records import CallRecord
from pipeline.session import CallSession
from pipeline.text_calls import TextCallError, text_call, unlisted_owner
from presets.models import Lang, Scene, UnicodeText, normalize_line
from presets.owners import hash_api_key

from ..deps import OwnerId, ResourcesDep, authenticate
from ..errors import ApiError
from ..limits import enforce
from ..resources import Resources

router = APIRouter(prefix="/v1/calls", tags=["calls"])


class TextCallBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    line: UnicodeText | None = Field(default=None, max_length=200)
    lang: Lang | None = None
    scene_hint: Scene | None = None


class TurnBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: UnicodeText | None = Field(default=None, max_length=2000)
    silence: bool = False

    @model_validator(mode="after")
    def _one_of(self) -> TurnBody:
        has_text = self.text is not None and self.text.strip() != ""
        if self.text is not None and not has_text:
            raise ValueError('text must not be empty; send {"silence": true} for a silent turn')
        if has_text == self.silence:
            raise ValueError("send either text or silence: true")
        return self


def _call_token_key(token: str) -> str:
    return f"ca:calltoken:{hash_api_key(token)}"


async def _caller(res: Resources, call_id: str, authorization: str | None) -> str:
    """The owner of ``call_id`` if the request carries the owner's key or the call's token."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        token_key = _call_token_key(token.strip())
        bound = await res.redis.get(token_key)
        if bound is not None:
            if bound != call_id:
                raise ApiError(404, "not_found", f"no call {call_id}")
            limit = res.settings.call_token_turns_per_minute
            await enforce(res.redis, token_key.removeprefix("ca:"), limit, "requests with this call token")
            record = await res.calls.get(call_id)
            if record is None:
                raise ApiError(404, "not_found", f"no call {call_id}")
            return record.owner_id
    return await authenticate(res, authorization)


_TEXT_CALL_STATUS = {"not_found": 404, "busy": 409, "ended": 409, "not_a_text_call": 409}


@asynccontextmanager
async def _text_call(res: Resources, owner_id: str, call_id: str) -> AsyncIterator[CallSession]:
    """The live text call for this request (:func:`pipeline.text_calls.text_call`)."""
    try:
        async with text_call(res.services, owner_id, call_id) as session:
            yield session
    except TextCallError as exc:
        code = "call_ended" if exc.code == "ended" else exc.code
        headers = {"Retry-After": "1"} if exc.code == "busy" else None
        raise ApiError(_TEXT_CALL_STATUS[exc.code], code, str(exc), headers=headers) from exc


@router.post("/text", status_code=201)
async def start_text_call(
    body: TextCallBody, request: Request, res: ResourcesDep, authorization: Annotated[str | None, Header()] = None
) -> dict[str, Any]:
    """Start a text call: the owner from the API key, or from the line (as a caller would:
    anonymous, limited per address and per line, kept briefly until it proves real)."""
    owner_id: str | None = await authenticate(res, authorization) if authorization else None
    anonymous = owner_id is None
    s = res.settings
    if anonymous:  # before the line lookup, so probing for registered lines is bounded too
        address = request.client.host if request.client else "unknown"
        await enforce(res.redis, f"anon:addr:{address}", s.text_calls_per_address_per_minute, "anonymous text calls")
    line = None
    if body.line is not None:
        try:
            line, _ = normalize_line(body.line)
        except ValueError as exc:
            raise ApiError(422, "validation_error", f"line: {exc}", field="line") from exc
        line_owner = await res.owners.owner_for_line(line)
        if line_owner is None and anonymous:
            # An anonymous caller must not learn which lines are registered: a line nobody
            # registered answers like one that is (owners with a key get the 404 below).
            line_owner = await unlisted_owner(res.services, body.lang)
        if line_owner is None or (owner_id is not None and line_owner != owner_id):
            raise ApiError(404, "not_found", f"no line {line}", field="line")
        owner_id = line_owner
    if owner_id is None:
        raise ApiError(401, "unauthorized", "send an API key, or a line that reaches an owner", field="line")
    if anonymous:
        limit = s.text_calls_per_line_per_minute
        await enforce(res.redis, f"anon:line:{line}", limit, "anonymous text calls to this line")
    session = await CallSession.open(
        res.services,
        owner_id=owner_id,
        lang=body.lang,
        scene_hint=body.scene_hint,
        channel="text",
        line=line,
        anonymous=anonymous,
    )
    token = "ct_" + secrets.token_urlsafe(24)
    await res.redis.set(_call_token_key(token), session.call_id, ex=s.unproven_call_retention_s)
    return {
        "call_id": session.call_id,
        "greeting": session.greeting,
        "lang": session.record.lang,
        "call_token": token,
    }


@router.post("/{call_id}/turns")
async def call_turn(
    call_id: str,
    body: TurnBody,
    res: ResourcesDep,
    authorization: Annotated[str | None, Header()] = None,
) -> dict[str, Any]:
    """One caller turn: ``{"text": ...}`` or ``{"silence": true}``."""
    owner_id = await _caller(res, call_id, authorization)
    async with _text_call(res, owner_id, call_id) as session:
        await _within_call_limits(res, session, body.text)
        result = await session.turn(None if body.silence else body.text)
    return {
        "reply": result.reply,
        "act": result.act,
        "scene": result.scene,
        "preset_conveyed": result.preset_conveyed,
        "ended": result.ended,
        "timings": {
            "decision_ms": result.timings["decision_ms"],
            "first_token_ms": result.timings["first_token_ms"],
        },
        "caller_act": result.caller_act,
        "relation": result.relation,
        "safety_interventions": [i.model_dump() for i in result.interventions],
        "owner_said": await res.live.take_outbox(call_id) if res.live is not None else [],
    }


async def _within_call_limits(res: Resources, session: CallSession, text: str | None) -> None:
    """A text call ends at ``text_call_max_turns`` turns or ``text_call_max_chars`` of caller text."""
    s = res.settings
    said = sum(len(t.caller_text or "") for t in session.record.turns) + len(text or "")
    if len(session.record.turns) < s.text_call_max_turns and said <= s.text_call_max_chars:
        return
    await session.hangup("call_limit", outcome="limit_reached")
    raise ApiError(
        409,
        "call_limit",
        f"a text call has at most {s.text_call_max_turns} turns and {s.text_call_max_chars} characters "
        "from the caller; this call has ended",
        field="text",
    )


@router.post("/{call_id}/hangup")
async def hangup(
    call_id: str, res: ResourcesDep, authorization: Annotated[str | None, Header()] = None
) -> dict[str, Any]:
    """The caller hangs up a text call."""
    owner_id = await _caller(res, call_id, authorization)
    try:
        async with _text_call(res, owner_id, call_id) as session:
            await session.hangup("caller_hangup", outcome="caller_hangup")
    except ApiError as exc:
        if exc.code != "call_ended":  # hanging up twice is fine; someone else's call is not
            raise
    return {"call_id": call_id, "ended": True}


@router.get("")
async def list_calls(
    owner: OwnerId,
    res: ResourcesDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    before: Annotated[
        float | None, Query(description="Unix time: calls started before it", allow_inf_nan=False)
    ] = None,
) -> dict[str, Any]:
    records = await res.calls.list(owner, limit=limit, before=before)
    return {"calls": [r.listing() for r in records], "now": time.time()}


@router.get("/{call_id}", response_model_exclude={"state"})
async def get_call(call_id: str, owner: OwnerId, res: ResourcesDep, response: Response) -> CallRecord:
    """Transcript, decisions, owner record, latencies and safety interventions."""
    record = await res.calls.get(call_id)
    if record is None or record.owner_id != owner:
        raise ApiError(404, "not_found", f"no call {call_id}")
    return record
