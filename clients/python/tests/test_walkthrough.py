"""The README's walkthrough through the Python client, against a live ``hanson serve``:
provider and token by the CLI, deposits, a market, a wallet login with a real EIP-191
signature, a preview, a bet, a sell, holdings, resolve, claim, a clean audit, and the market's
events replayed from ``Last-Event-ID: 0``."""

from datetime import UTC, datetime

from conftest import ONE, USER_ADDRESS, Server, sign

from hanson_client import AuthenticatedClient, Client, Session, market_events, unwrap
from hanson_client.generated.api.auth import profile
from hanson_client.generated.api.money import treasury_deposit, wallet_deposit
from hanson_client.generated.api.provider import create_market, resolve
from hanson_client.generated.api.public import bet_preview, market_detail, search_markets, sell_preview
from hanson_client.generated.api.trading import claim, holdings, place_bet, sell
from hanson_client.generated.models import (
    BetInput,
    BetPreviewInput,
    ClaimInput,
    CreateMarketInput,
    MarketFilters,
    Metadata,
    OutcomeInput,
    ResolveInput,
    SearchRequestHoldingsFilters,
    SearchRequestMarketFilters,
    SellBodyByProceeds,
    SellInputByProceeds,
    StringMap,
    TreasuryDepositInput,
    WalletTransferInput,
)


def test_the_readme_walkthrough_from_a_fresh_start_to_a_settled_market(server: Server):
    provider = server.cli("provider", "create", "--name", "Acme Games")
    token_id = server.cli("token", "create", "--symbol", "USDC", "--name", "USD Coin", "--decimals", "18")["token_id"]
    ops = AuthenticatedClient(base_url=server.base, token=provider["api_key"])
    anyone = Client(base_url=server.base)

    deposit = unwrap(treasury_deposit.sync_detailed(client=ops, body=TreasuryDepositInput(token_id=token_id, amount=str(5000 * ONE), reference="bank-tx-1")))
    assert deposit.balance_after == str(5000 * ONE)
    creator = unwrap(wallet_deposit.sync_detailed(client=ops, body=WalletTransferInput(
        wallet_address="0x00000000000000000000000000000000000000c1", token_id=token_id, amount="1", reference="seed-1")))
    created = unwrap(create_market.sync_detailed(client=ops, body=CreateMarketInput(
        question="Will the home team win?", description="Resolves on the final whistle.",
        pricing_method="lmsr", token_id=token_id,
        min_bet_amount="1000", max_bet_amount=str(100 * ONE), liquidity=str(1000 * ONE),
        starts_at=datetime(2020, 1, 1, tzinfo=UTC), ends_at=datetime(2030, 1, 1, tzinfo=UTC),
        creator_wallet_id=creator.wallet_id, creator_fee_percentage=1, platform_fee_percentage=1,
        metadata=Metadata.from_dict({"category": "sports", "resolution_source": "league.example.com"}),
        outcomes=[OutcomeInput(title="Yes", outcome_index=0), OutcomeInput(title="No", outcome_index=1)],
    )))
    market_id = created.market.id
    found = unwrap(search_markets.sync_detailed(client=anyone, body=SearchRequestMarketFilters(filters=MarketFilters(category="sports"))))
    assert [m.id for m in found.data] == [market_id]

    # A user logs in with a wallet: the signer callback signs the nonce's message.
    session = Session.login(server.base, provider["provider_id"], USER_ADDRESS, sign)
    user = session.client()
    me = unwrap(profile.sync_detailed(client=user))
    assert me.wallet_address == USER_ADDRESS
    assert me.session_id == session.session_id

    # Trading.
    funded = unwrap(wallet_deposit.sync_detailed(client=ops, body=WalletTransferInput(
        wallet_address=USER_ADDRESS, token_id=token_id, amount=str(50 * ONE), reference="user-dep-1")))
    assert funded.balance_after == str(50 * ONE)
    market = unwrap(market_detail.sync_detailed(market_id, client=anyone))
    yes = market.outcomes[0].id
    amount = str(10 * ONE)
    preview = unwrap(bet_preview.sync_detailed(client=anyone, body=BetPreviewInput(outcome_id=yes, amount=amount)))
    body = BetInput(session_id=session.session_id, outcome_id=yes, amount=amount)
    bet = unwrap(place_bet.sync_detailed(market_id, client=user, body=body, idempotency_key="walkthrough-bet-1"))
    # The preview runs the trade's own code on the same state: the same shares, the same fee.
    assert bet.shares_purchased == preview.estimated_shares
    assert bet.transaction_fee == preview.estimated_fee
    assert bet.net_amount == preview.net_amount
    assert int(bet.transaction_fee) == -(-10 * ONE * 2 // 100)
    assert bet.balance_after == str(40 * ONE)
    # The same Idempotency-Key runs once: the retry answers the stored receipt.
    replay = place_bet.sync_detailed(market_id, client=user, body=body, idempotency_key="walkthrough-bet-1")
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.parsed == bet

    target = str(2 * ONE)
    sale_preview = unwrap(sell_preview.sync_detailed(client=anyone, body=SellInputByProceeds(outcome_id=yes, target_proceeds=target)))
    sale = unwrap(sell.sync_detailed(market_id, client=user, body=SellBodyByProceeds(session_id=session.session_id, outcome_id=yes, target_proceeds=target)))
    assert sale.shares_sold == sale_preview.estimated_shares
    assert sale.net_proceeds == sale_preview.estimated_net_proceeds
    assert int(sale.net_proceeds) >= 2 * ONE
    assert sale.balance_after == str(40 * ONE + int(sale.net_proceeds))

    positions = unwrap(holdings.sync_detailed(client=user, body=SearchRequestHoldingsFilters()))
    assert len(positions.data) == 1
    position = positions.data[0]
    shares = int(bet.shares_purchased) - int(sale.shares_sold)
    assert position.shares == str(shares)

    # The provider resolves "Yes"; the user claims 1 wei per share.
    resolution = unwrap(resolve.sync_detailed(market_id, client=ops, body=ResolveInput(
        winning_outcome_id=yes, resolver_wallet_id="ops", resolution_source="league.example.com",
        resolution_data=StringMap.from_dict({"score": "2-1"}))))
    assert resolution.payout_ratio == "1"
    assert resolution.winning_pool == str(shares)
    claimed = unwrap(claim.sync_detailed(position.id, client=user, body=ClaimInput(session_id=session.session_id)))
    assert claimed.claimed_amount == str(shares)
    assert claimed.balance_after == str(40 * ONE + int(sale.net_proceeds) + shares)
    assert server.status("audit") == 0, "hanson audit finds every invariant holding"

    # The market's events replay in order from its creation to its resolution, where the
    # subscription ends by itself.
    with market_events(server.base, market_id, last_event_id="0") as stream:
        events = list(stream)
    assert [e.type for e in events] == ["market.created", "trade.created", "trade.created", "market.resolved"]
    assert [e.id for e in events] == ["1", "2", "3", "4"]
    assert [e.data["seq"] for e in events] == [1, 2, 3, 4]
    assert events[1].data["data"]["trade"]["id"] == bet.bet_id
    assert events[2].data["data"]["trade"]["id"] == sale.transaction_id
    assert events[3].data["data"]["winning_outcome_id"] == yes
    assert stream.last_event_id == "4"
