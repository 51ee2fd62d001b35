"""Webhook verification against a real delivery: an endpoint registered at a local receiver,
a test event and a deposit sent by the server, each verified with the endpoint's secret; a
changed body, another secret or an old timestamp is refused."""

import base64
import time

import pytest
from conftest import Receiver, Server

from hanson_client import AuthenticatedClient, WebhookVerificationError, unwrap, verify_webhook
from hanson_client.generated.api.money import treasury_deposit
from hanson_client.generated.api.webhooks import create_endpoint, send_test
from hanson_client.generated.models import EndpointInput, SubscribedType, TreasuryDepositInput


def test_a_delivery_verifies_with_the_endpoint_secret_and_nothing_else_does(server: Server, receiver: Receiver):
    provider = server.cli("provider", "create", "--name", "Hooks")
    token_id = server.cli("token", "create", "--symbol", "USDC", "--name", "USD Coin", "--decimals", "18")["token_id"]
    ops = AuthenticatedClient(base_url=server.base, token=provider["api_key"])
    endpoint = unwrap(create_endpoint.sync_detailed(client=ops, body=EndpointInput(url=receiver.url, event_types=[SubscribedType.ALL])))
    assert endpoint.secret.startswith("whsec_")

    unwrap(send_test.sync_detailed(endpoint.id, client=ops))
    delivery = receiver.next()
    event = verify_webhook(endpoint.secret, delivery.body, delivery.headers)
    assert event["type"] == "webhook.test"
    assert event["id"] == delivery.headers["webhook-id"]
    assert event["market_id"] is None

    deposit = unwrap(treasury_deposit.sync_detailed(client=ops, body=TreasuryDepositInput(token_id=token_id, amount="5", reference="hook-1")))
    second = receiver.next()
    completed = verify_webhook(endpoint.secret, second.body.decode(), second.headers)
    assert completed["type"] == "deposit.completed"
    assert completed["data"]["deposit_id"] == deposit.deposit_id

    def refused(body: bytes, headers: dict[str, str], secret: str = endpoint.secret) -> None:
        with pytest.raises(WebhookVerificationError):
            verify_webhook(secret, body, headers)

    refused(delivery.body.replace(b"webhook.test", b"webhook.tost"), delivery.headers)
    refused(delivery.body, delivery.headers, "whsec_" + base64.b64encode(bytes([7] * 32)).decode())
    refused(delivery.body, {**delivery.headers, "webhook-timestamp": str(int(time.time()) - 600)})
    refused(delivery.body, {k: v for k, v in delivery.headers.items() if k != "webhook-signature"})
    refused(delivery.body, {**delivery.headers, "webhook-signature": "not a signature"})
