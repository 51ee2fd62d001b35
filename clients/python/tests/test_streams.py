"""The stream helpers against a live server: a market stream that loses its connection resumes
with Last-Event-ID and misses nothing and repeats nothing; it ends by itself after the market's
final event; the user stream; refusals end a subscription; a refresh rotates the refresh token.
And the SSE parser at the edges of the format."""

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from conftest import ONE, USER_ADDRESS, Server, sign, start_server

from hanson_client import AuthenticatedClient, HansonError, Session, market_events, subscribe, ticker_events, unwrap, user_events
from hanson_client.generated.api.auth import profile
from hanson_client.generated.api.money import treasury_deposit, wallet_deposit
from hanson_client.generated.api.provider import create_market, resolve
from hanson_client.generated.api.trading import place_bet
from hanson_client.generated.models import (
    BetInput,
    CreateMarketInput,
    OutcomeInput,
    ResolveInput,
    TreasuryDepositInput,
    WalletTransferInput,
)
from hanson_client.sse import RawEvent, read_events


@pytest.fixture(scope="module")
def world(server: Server):
    provider = server.cli("provider", "create", "--name", "Streams")
    token_id = server.cli("token", "create", "--symbol", "USDC", "--name", "USD Coin", "--decimals", "18")["token_id"]
    ops = AuthenticatedClient(base_url=server.base, token=provider["api_key"])
    unwrap(treasury_deposit.sync_detailed(client=ops, body=TreasuryDepositInput(token_id=token_id, amount=str(10_000 * ONE), reference="t-1")))
    unwrap(wallet_deposit.sync_detailed(client=ops, body=WalletTransferInput(wallet_address=USER_ADDRESS, token_id=token_id, amount=str(10 * ONE), reference="u-1")))
    return server, provider, token_id, ops


def new_market(ops: AuthenticatedClient, token_id: str) -> tuple[str, str]:
    creator = unwrap(wallet_deposit.sync_detailed(client=ops, body=WalletTransferInput(
        wallet_address="0x00000000000000000000000000000000000000c1", token_id=token_id, amount="1", reference=str(uuid.uuid4()))))
    created = unwrap(create_market.sync_detailed(client=ops, body=CreateMarketInput(
        question="Will it stream?", token_id=token_id, liquidity=str(100 * ONE), starts_at=datetime(2020, 1, 1, tzinfo=UTC),
        ends_at=datetime(2030, 1, 1, tzinfo=UTC), creator_wallet_id=creator.wallet_id,
        outcomes=[OutcomeInput(title="Yes", outcome_index=0), OutcomeInput(title="No", outcome_index=1)])))
    return created.market.id, created.outcomes[0].id


class _CutStream(httpx.SyncByteStream):
    """A body that breaks off after its first complete event, as a dropped connection would."""

    def __init__(self, inner: httpx.SyncByteStream):
        self.inner = inner

    def __iter__(self) -> Iterator[bytes]:
        buffer = b""
        for chunk in self.inner:
            buffer += chunk
            end = buffer.find(b"\n\n")
            if end >= 0:
                yield buffer[: end + 2]
                raise httpx.ReadError("the connection dropped")

    def close(self) -> None:
        self.inner.close()


class DroppingTransport(httpx.HTTPTransport):
    """Drops the first response's connection after one event; records each Last-Event-ID sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request.headers.get("last-event-id"))
        response = super().handle_request(request)
        if len(self.sent) > 1:
            return response
        return httpx.Response(response.status_code, headers=response.headers, stream=_CutStream(response.stream), extensions=response.extensions)


def test_a_dropped_market_stream_resumes_after_the_last_event_seen_then_ends_after_the_resolution(world):
    server, provider, token_id, ops = world
    market_id, yes = new_market(ops, token_id)
    session = Session.login(server.base, provider["provider_id"], USER_ADDRESS, sign)
    user = session.client()

    def bet():
        return unwrap(place_bet.sync_detailed(market_id, client=user, body=BetInput(session_id=session.session_id, outcome_id=yes, amount=str(ONE))))

    bet()
    bet()
    transport, drops, events = DroppingTransport(), [], []
    third = None
    with market_events(server.base, market_id, last_event_id="0", retry=0.05, on_disconnect=drops.append,
                       client=httpx.Client(transport=transport)) as stream:
        for event in stream:
            events.append(event)
            if event.id == "3":
                # Live after the replay: a third trade, then the resolution that ends the stream.
                third = bet()
                unwrap(resolve.sync_detailed(market_id, client=ops, body=ResolveInput(winning_outcome_id=yes, resolver_wallet_id="ops")))
    assert transport.sent == ["0", "1"]
    assert len(drops) == 1 and isinstance(drops[0], httpx.ReadError)
    assert [e.id for e in events] == ["1", "2", "3", "4", "5"]
    assert [e.type for e in events] == ["market.created", "trade.created", "trade.created", "trade.created", "market.resolved"]
    assert events[3].data["data"]["trade"]["id"] == third.bet_id


def test_without_a_resume_point_the_market_stream_starts_with_a_snapshot(world):
    server, _, token_id, ops = world
    market_id, _ = new_market(ops, token_id)
    with market_events(server.base, market_id) as stream:
        first = next(stream)
    assert first.type == "snapshot" and first.id == "1"
    assert first.data["seq"] == 1 and first.data["market"]["id"] == market_id


def test_the_ticker_the_state_now_then_a_tick_listing_the_trade_then_the_settled_state_that_ends_it(world):
    server, provider, token_id, ops = world
    market_id, yes = new_market(ops, token_id)
    session = Session.login(server.base, provider["provider_id"], USER_ADDRESS, sign)
    user = session.client()
    ticks = []
    with ticker_events(server.base, market_id) as stream:
        first = next(stream)
        ticks.append(first)
        assert first.type == "ticker" and first.data["market_id"] == market_id and first.data["status"] == "active"
        assert [p["price"] for p in first.data["prices"]] == ["0.500000000000000000", "0.500000000000000000"]
        bet = unwrap(place_bet.sync_detailed(market_id, client=user, body=BetInput(session_id=session.session_id, outcome_id=yes, amount=str(ONE))))
        for tick in stream:
            ticks.append(tick)
            if any(t["id"] == bet.bet_id for t in tick.data["trades"]):
                break
        unwrap(resolve.sync_detailed(market_id, client=ops, body=ResolveInput(winning_outcome_id=yes, resolver_wallet_id="ops")))
        ticks.extend(stream)
    last = ticks[-1]
    assert last.data["status"] == "resolved"
    assert last.data["total_volume"] == str(ONE)
    assert int(last.id) == last.data["seq"]


def test_the_user_stream_a_snapshot_then_the_wallets_own_changes(world):
    server, provider, token_id, ops = world
    session = Session.login(server.base, provider["provider_id"], USER_ADDRESS, sign)
    with user_events(server.base, session) as stream:
        assert next(stream).type == "snapshot"
        funded = unwrap(wallet_deposit.sync_detailed(client=ops, body=WalletTransferInput(
            wallet_address=USER_ADDRESS, token_id=token_id, amount="7", reference="user-stream-1")))
        seen = {}
        for event in stream:
            seen[event.type] = event
            if event.type == "deposit.completed":
                break
    assert seen["balance.updated"].data["data"] == {"token_id": token_id, "balance": funded.balance_after}
    assert seen["deposit.completed"].data["data"]["id"] == funded.id


def test_a_refused_stream_ends_the_subscription_with_the_problem(server: Server):
    with pytest.raises(HansonError) as refused, subscribe(server.base, "/v1/markets/no-such-market/events") as stream:
        next(stream)
    assert refused.value.status == 404 and refused.value.code == "not_found"


def test_a_refresh_rotates_the_refresh_token_and_keeps_the_session():
    for short in start_server("--access-token-ttl", "2"):
        provider = short.cli("provider", "create", "--name", "Short tokens")
        session = Session.login(short.base, provider["provider_id"], USER_ADDRESS, sign)
        user = session.client()
        token, refresh_token = session.access_token(), session.refresh_token
        # Half of the 2 s lifetime is the margin: past it, the next request refreshes first.
        time.sleep(1.1)
        assert unwrap(profile.sync_detailed(client=user)).session_id == session.session_id
        assert session.access_token() != token
        assert session.refresh_token != refresh_token
        # Concurrent callers take turns (a spent refresh token would revoke the session).
        threads = [threading.Thread(target=session.refresh) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(2.1)
        unwrap(profile.sync_detailed(client=user))
        # The async client takes its token from the same session.
        assert asyncio.run(profile.asyncio_detailed(client=session.client())).status_code == 200
        session.logout()
        assert profile.sync_detailed(client=user).status_code == 401


def test_the_sse_parser_split_chunks_crlf_comments_multiline_data_retry_and_a_cut_off_event():
    assert list(read_events([b"ev", b"ent: a\r", b"\nid: 7\r\ndata: {\"x\"", b":1}\r\n\r\n"])) == [RawEvent("a", '{"x":1}', "7")]
    assert list(read_events([b": ping\n\n", b"data: one\ndata: two\nretry: 250\n\n"])) == [RawEvent("message", "one\ntwo", None, 250)]
    assert list(read_events([b"data:no space\r\r", b"event: cut\ndata: lost"])) == [RawEvent("message", "no space")]
    # U+2028 inside a JSON string is not a line end; a split multi-byte character is whole.
    text = "data: {\"q\": \"a\u2028b \u00e9\"}\n\n".encode()
    assert list(read_events([text[:17], text[17:]])) == [RawEvent("message", "{\"q\": \"a\u2028b \u00e9\"}")]
