"""Signed webhooks: registrations, a durable delivery queue in Redis, the delivery worker.

- :mod:`.store`: registrations, deliveries, the due queue and the dead-letter lists;
- :mod:`.worker`: signing (``CallAssist-Signature``), attempts, backoff, the worker task;
- :mod:`.ssrf`: refusing URLs that reach loopback, private or link-local addresses.

Errors: :class:`~.ssrf.UrlRefused` (a ``ValueError``) for a URL that cannot be a target.
"""

from .ssrf import UrlRefused, check_url
from .store import Delivery, Webhook, WebhookStore
from .worker import SIGNATURE_HEADER, DeliveryOptions, DeliveryWorker, WebhookSink, sign, verify

__all__ = [
    "SIGNATURE_HEADER",
    "Delivery",
    "DeliveryOptions",
    "DeliveryWorker",
    "UrlRefused",
    "Webhook",
    "WebhookSink",
    "WebhookStore",
    "check_url",
    "sign",
    "verify",
]
