"""The portfolio: balance, positions, live settlement and the claim."""

from __future__ import annotations

from decimal import Decimal

from playwright.sync_api import expect

import ui
from hanson_web import User, shows_number, tokens, units, wait_until


def test_portfolio_shows_the_position_and_claims_it_after_resolution(world, open_tab):
    market = world.create_market("Will the portfolio pay out the winner?")
    yes = market.outcome("Yes")
    user = world.login(User.named("claimer"))
    world.fund(user, 50)
    receipt = world.bet(user, market.id, yes, tokens(10))
    shares = units(receipt["shares_purchased"])

    tab = open_tab(user)
    page = tab.page
    page.goto(f"/portfolio?provider_id={world.provider_id}")
    ui.connect(page, tab.wallet)
    ui.mark_document(page)

    balance = page.get_by_test_id("balance")
    expect(balance).to_be_visible()
    wait_until(lambda: shows_number(balance.inner_text(), Decimal(40), Decimal("0.000001")), timeout=5,
               message="the balance to show 40")
    rows = page.get_by_test_id("position-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(market.question)
    assert shows_number(rows.first.inner_text(), shares, Decimal("0.01")), f"{shares} shares not in {rows.first.inner_text()!r}"
    expect(page.get_by_test_id("claim-button")).to_have_count(0)

    # The provider resolves: the position becomes claimable without a reload.
    world.resolve(market.id, yes)
    claim = page.get_by_test_id("claim-button")
    expect(claim).to_be_visible()
    with page.expect_response(lambda r: "/claim" in r.url) as claimed:
        claim.click()
    assert claimed.value.status == 200, claimed.value.text()
    assert claimed.value.request.headers.get("idempotency-key"), "the claim had no Idempotency-Key"
    [holding] = world.holdings(user, market.id)
    assert holding["status"] == "claimed"
    assert holding["claimed_amount"] == receipt["shares_purchased"]

    expected = Decimal(40) + shares
    assert world.balance(user) == str(40 * 10**18 + int(receipt["shares_purchased"]))
    wait_until(lambda: shows_number(balance.inner_text(), expected, Decimal("0.01")), timeout=5,
               message=f"the balance to show {expected}")
    expect(page.get_by_test_id("claim-button")).to_have_count(0)
    ui.assert_not_reloaded(page)


def test_portfolio_logs_in_to_the_provider_of_the_last_market_viewed(world, open_tab):
    market = world.create_market("Which provider does the portfolio log in to?")
    user = User.named("last-viewed")
    world.fund(user, 7)
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    page.goto("/portfolio")
    with page.expect_request(lambda r: r.url.endswith("/v1/auth/nonce")) as nonce:
        ui.connect(page, tab.wallet)
    assert nonce.value.post_data_json["provider_id"] == world.provider_id
    balance = page.get_by_test_id("balance")
    wait_until(lambda: shows_number(balance.inner_text(), Decimal(7), Decimal("0.000001")), timeout=5,
               message="the balance to show 7")
    expect(page.get_by_test_id("position-row")).to_have_count(0)
