"""Verifying a webhook delivery: the Standard Webhooks signature over
``{webhook-id}.{webhook-timestamp}.{body}`` with the endpoint's ``whsec_`` secret, any of the
space-separated signatures sent while a rotated secret still applies, and a timestamp within
five minutes of now."""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

__all__ = ["WebhookVerificationError", "verify_webhook"]


def verify_webhook(secret: str, body: bytes | str, headers: Mapping[str, str]) -> dict[str, Any]:
    """The delivered event (the envelope ``{id, type, timestamp, market_id, seq, data}``) if
    ``body`` (the raw request body, exactly as received) carries a valid signature by
    ``secret``; otherwise raises WebhookVerificationError. Deduplicate by ``id``: a delivery
    may come more than once."""
    wanted = ("webhook-id", "webhook-timestamp", "webhook-signature")
    picked = {name: value for name, value in ((k.lower(), v) for k, v in headers.items()) if name in wanted}
    try:
        return Webhook(secret).verify(body, picked)
    except (ValueError, binascii.Error) as e:  # a malformed header or body
        raise WebhookVerificationError(str(e)) from e
