"""Signed webhooks: register, list, delete; each one's deliveries and dead letters."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pipeline.events import EVENT_TYPES
from pipeline.webhooks import UrlRefused, WebhookStore, check_url
from pipeline.webhooks.store import MAX_WEBHOOKS

from ..deps import OwnerId, ResourcesDep
from ..errors import ApiError
from ..resources import Resources

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"])


class WebhookBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    url: str = Field(min_length=8, max_length=2000)
    events: list[str] = Field(min_length=1, max_length=len(EVENT_TYPES) + 1)

    @field_validator("events")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        for name in value:
            if name != "*" and name not in EVENT_TYPES:
                raise ValueError(f"unknown event {name!r}; one of {', '.join(EVENT_TYPES)} or *")
        return value


def _store(res: Resources) -> WebhookStore:
    assert res.webhooks is not None
    return res.webhooks


@router.post("", status_code=201)
async def create_webhook(body: WebhookBody, owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    """-> 201 ``{"id", "secret", ...}``; the secret is shown only here."""
    try:
        await check_url(body.url, allow_private=res.settings.webhook_allow_private)
    except UrlRefused as exc:
        raise ApiError(422, "validation_error", f"url: {exc}", field="url") from exc
    store = _store(res)
    if await store.count(owner) >= MAX_WEBHOOKS:
        raise ApiError(409, "limit_exceeded", f"at most {MAX_WEBHOOKS} webhooks per owner")
    hook = await store.create(owner, url=body.url, events=body.events)
    return {**hook.public(), "secret": hook.secret}


@router.get("")
async def list_webhooks(owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    return {"webhooks": [h.public() for h in await _store(res).for_owner(owner)]}


@router.delete("/{webhook_id}", status_code=204)
async def delete_webhook(webhook_id: str, owner: OwnerId, res: ResourcesDep) -> Response:
    if not await _store(res).delete(owner, webhook_id):
        raise ApiError(404, "not_found", f"no webhook {webhook_id}")
    return Response(status_code=204)


@router.get("/{webhook_id}/deliveries")
async def deliveries(
    webhook_id: str,
    owner: OwnerId,
    res: ResourcesDep,
    state: Annotated[Literal["pending", "delivered", "dead"] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    """Newest first, each with every attempt; ``?state=dead`` is the dead-letter list."""
    store = _store(res)
    if await store.get(owner, webhook_id) is None:
        raise ApiError(404, "not_found", f"no webhook {webhook_id}")
    return {"deliveries": [d.public() for d in await store.deliveries(webhook_id, state=state, limit=limit)]}


@router.post("/{webhook_id}/deliveries/{delivery_id}/replay")
async def replay(webhook_id: str, delivery_id: str, owner: OwnerId, res: ResourcesDep) -> dict[str, Any]:
    """Send a dead-lettered delivery again (a fresh 24 h of retries)."""
    store = _store(res)
    d = await store.get_delivery(delivery_id)
    if d is None or d.owner_id != owner or d.webhook_id != webhook_id:
        raise ApiError(404, "not_found", f"no delivery {delivery_id}")
    if d.state != "dead":
        raise ApiError(409, "conflict", f"delivery {delivery_id} is {d.state}, not dead")
    d = await store.replay(d)
    if res.deliveries is not None:
        res.deliveries.wake.set()
    return d.public()
