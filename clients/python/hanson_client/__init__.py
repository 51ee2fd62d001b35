"""Client for the Hanson prediction-markets API.

``hanson_client.generated`` holds the typed calls and models generated from the service's
OpenAPI document (``generated.api.<tag>.<operation>``, ``generated.models``); this package adds
wallet login with refresh (``Session``), resumable event streams (``market_events``,
``user_events``, ``ticker_events``, ``subscribe``) and webhook verification
(``verify_webhook``).
"""

from .errors import HansonError, unwrap
from .generated import AuthenticatedClient, Client
from .session import Session, Signer
from .streams import Event, Subscription, ends_market_stream, market_events, settled_tick, subscribe, ticker_events, user_events
from .webhooks import WebhookVerificationError, verify_webhook

__all__ = [
    "AuthenticatedClient",
    "Client",
    "Event",
    "HansonError",
    "Session",
    "Signer",
    "Subscription",
    "WebhookVerificationError",
    "ends_market_stream",
    "settled_tick",
    "market_events",
    "subscribe",
    "ticker_events",
    "unwrap",
    "user_events",
    "verify_webhook",
]
