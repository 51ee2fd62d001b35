"""The market page: connect a wallet, preview, buy, sell, errors, live prices, keyboard only."""

from __future__ import annotations

import time
from decimal import Decimal

from playwright.sync_api import expect

import ui
from hanson_web import ONE, Server, User, World, shows_number, tokens, units, wait_until


def shows_ratio(text: str, value: str | Decimal) -> bool:
    """A price or ratio written as a decimal (0.4949), a percentage (49.49%) or in cents."""
    v = Decimal(value)
    return shows_number(text, v, Decimal("0.0006")) or shows_number(text, v * 100, Decimal("0.06"))


def test_connect_preview_buy_and_price_moves_without_reload(world, open_tab):
    market = world.create_market("Will the browser buy exactly what it previews?")
    yes, no = market.outcome("Yes"), market.outcome("No")
    user = User.named("buyer")
    world.fund(user, 50)
    tab = open_tab(user)
    page = tab.page

    page.goto(f"/markets/{market.id}")
    expect(page.get_by_text(market.question).first).to_be_visible()
    ui.wait_for_prices(page, world.prices(market.id))
    ui.connect(page, tab.wallet)
    ui.mark_document(page)

    # The preview shows what the API's preview says for the same amount, and follows the amount.
    ui.choose_outcome(page, yes, "Yes")
    amount = page.get_by_test_id("ticket-amount")
    preview = page.get_by_test_id("ticket-preview")
    for typed in ("20", "10.000000000000000001"):
        quote = world.api.post("/v1/markets/bet-preview", {"outcome_id": yes, "amount": tokens(typed)})
        amount.fill(typed)
        shares = units(quote["estimated_shares"])
        fee = units(quote["estimated_fee"])
        wait_until(lambda: shows_number(preview.inner_text(), shares, Decimal("0.01")), timeout=5,
                   message=f"the preview to show {shares} shares for {typed}")
        text = preview.inner_text()
        assert shows_number(text, fee, Decimal("0.001")), f"fee {fee} not in preview {text!r}"
        assert shows_ratio(text, quote["average_price"]), f"average price {quote['average_price']} not in preview {text!r}"
        assert shows_ratio(text, quote["price_impact"]), f"price impact {quote['price_impact']} not in preview {text!r}"

    # Buy: the bet carries an Idempotency-Key and exactly the typed amount, in wei.
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/bet")) as bet:
        page.get_by_test_id("ticket-buy").click()
    response = bet.value
    assert response.status == 200, response.text()
    assert response.request.headers.get("idempotency-key"), "the bet had no Idempotency-Key"
    receipt = response.json()
    assert receipt["amount"] == "10000000000000000001"
    assert receipt["outcome_id"] == yes

    [trade] = world.trades(market.id, user.address)
    assert trade["transaction_type"] == "buy" and trade["amount"] == "10000000000000000001"

    # The prices move to the API's exact strings, and a trade row appears, without a reload.
    prices = world.prices(market.id)
    assert prices[yes] == receipt["new_outcome_price"]
    ui.wait_for_prices(page, prices)
    expect(page.get_by_test_id("trade-row").first).to_be_visible()
    assert page.get_by_test_id("trade-row").count() == 1
    ui.assert_not_reloaded(page)


def test_bet_by_another_user_moves_price_within_2s(world, open_tab):
    market = world.create_market("Does another trader's bet reach every open page?")
    yes = market.outcome("Yes")
    other = world.login(User.named("other-trader"))
    world.fund(other, 100)
    tab = open_tab()
    page = tab.page
    page.goto(f"/markets/{market.id}")
    ui.wait_for_prices(page, world.prices(market.id))
    page.wait_for_timeout(300)  # the stream is open once the first prices are drawn from it or the snapshot
    ui.mark_document(page)

    for n, amount in enumerate(("7", "3.5", "12")):
        receipt = world.bet(other, market.id, yes, tokens(amount))
        answered = time.monotonic()
        prices = world.prices(market.id)
        assert prices[yes] == receipt["new_outcome_price"]
        ui.wait_for_prices(page, prices, timeout=2_000 - (time.monotonic() - answered) * 1000)
        expect(page.get_by_test_id("trade-row")).to_have_count(n + 1)
    ui.assert_not_reloaded(page)


def test_prices_catch_up_after_a_dropped_connection(open_tab):
    # A server of its own, restarted under the page: every connection drops, as when a
    # network blips or a node restarts, and trades happen before the page reconnects.
    server = Server().start()
    try:
        world = World.create(server)
        market = world.create_market("Does the page catch up after the connection drops?")
        yes, no = market.outcome("Yes"), market.outcome("No")
        other = world.login(User.named("reconnect-trader"))
        world.fund(other, 100)
        world.bet(other, market.id, yes, tokens(1))
        tab = open_tab(base_url=server.base)
        # If the page tries to reconnect while the server is down or starting, or its stream
        # is cut before its last chunk, as a network blip would cut it.
        tab.allow_http_error(503)
        tab.allow_error(r"net::ERR_CONNECTION_REFUSED")
        tab.allow_error(r"net::ERR_INCOMPLETE_CHUNKED_ENCODING")
        page = tab.page
        page.goto(f"/markets/{market.id}")
        ui.wait_for_prices(page, world.prices(market.id))
        expect(page.get_by_test_id("trade-row")).to_have_count(1)
        ui.mark_document(page)

        server.restart()
        world.bet(other, market.id, yes, tokens(9))
        world.bet(other, market.id, no, tokens(4))
        ui.wait_for_prices(page, world.prices(market.id), timeout=15_000)
        expect(page.get_by_test_id("trade-row")).to_have_count(3)
        ui.assert_not_reloaded(page)
        # And it is live again.
        world.bet(other, market.id, no, tokens(2))
        ui.wait_for_prices(page, world.prices(market.id), timeout=2_000)
    finally:
        server.stop()
    assert not server.errors_logged(), server.errors_logged()
    server.remove()


def test_sell_by_shares_and_by_target_proceeds(world, open_tab):
    market = world.create_market("Can a position be sold by shares and by proceeds?")
    yes = market.outcome("Yes")
    user = world.login(User.named("seller"))
    world.fund(user, 100)
    world.bet(user, market.id, yes, tokens(40))
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    ui.choose_outcome(page, yes, "Yes")
    ui.mark_document(page)

    # By shares: exactly 5 shares (5 x 10^18 share units).
    ui.sell_mode(page, "shares")
    page.get_by_test_id("ticket-amount").fill("5")
    quote = world.api.post("/v1/markets/sell-preview", {"outcome_id": yes, "shares_amount": tokens(5)})
    preview = page.get_by_test_id("ticket-preview")
    wait_until(lambda: shows_number(preview.inner_text(), units(quote["estimated_net_proceeds"]), Decimal("0.01")),
               timeout=5, message="the sell preview to show the net proceeds")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/sell")) as sold:
        page.get_by_test_id("ticket-sell").click()
    assert sold.value.status == 200, sold.value.text()
    assert sold.value.request.headers.get("idempotency-key"), "the sale had no Idempotency-Key"
    assert sold.value.request.post_data_json.get("shares_amount") == tokens(5)
    receipt = sold.value.json()
    assert receipt["shares_sold"] == tokens(5)
    assert receipt["net_proceeds"] == quote["estimated_net_proceeds"]
    ui.wait_for_prices(page, world.prices(market.id))

    # By target proceeds: the fewest shares whose net proceeds reach 3 tokens.
    ui.sell_mode(page, "proceeds")
    quote = world.api.post("/v1/markets/sell-preview", {"outcome_id": yes, "target_proceeds": tokens(3)})
    page.get_by_test_id("ticket-amount").fill("3")
    wait_until(lambda: shows_number(preview.inner_text(), units(quote["estimated_shares"]), Decimal("0.01")),
               timeout=5, message="the sell preview to show the shares a target sells")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/sell")) as sold:
        page.get_by_test_id("ticket-sell").click()
    assert sold.value.status == 200, sold.value.text()
    assert sold.value.request.post_data_json.get("target_proceeds") == tokens(3)
    receipt = sold.value.json()
    assert receipt["shares_sold"] == quote["estimated_shares"]
    assert int(receipt["net_proceeds"]) >= 3 * ONE

    sells = [t for t in world.trades(market.id, user.address) if t["transaction_type"] == "sell"]
    assert sorted(t["shares"] for t in sells) == sorted([tokens(5), quote["estimated_shares"]])
    ui.wait_for_prices(page, world.prices(market.id))
    ui.assert_not_reloaded(page)


def test_over_balance_amount_shows_the_problem_detail_in_token_units(world, open_tab):
    market = world.create_market("What does the ticket say when the wallet is short?")
    yes = market.outcome("Yes")
    user = User.named("short-of-funds")
    world.fund(user, 5)
    tab = open_tab(user)
    tab.allow_http_error(422)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    ui.choose_outcome(page, yes, "Yes")
    page.get_by_test_id("ticket-amount").fill("6")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/bet")) as bet:
        page.get_by_test_id("ticket-buy").click()
    problem = bet.value.json()
    assert bet.value.status == 422 and problem["code"] == "insufficient_balance", problem
    error = page.get_by_test_id("ticket-error")
    expect(error).to_be_visible()
    # The problem's detail, its wei figure in token units.
    assert problem["detail"] == f"wallet balance is below the bet amount {tokens(6)}", problem
    expect(error).to_have_text("Wallet balance is below the bet amount 6 USDC.")
    assert "422" not in error.inner_text(), f"the ticket shows a raw status: {error.inner_text()!r}"
    assert world.trades(market.id, user.address) == []
    assert world.balance(user) == tokens(5)


def test_keyboard_only_purchase(world, open_tab):
    market = world.create_market("Can a trader buy with the keyboard alone?")
    no = market.outcome("No")
    user = User.named("keyboard-trader")
    world.fund(user, 30)
    tab = open_tab(user)
    page = tab.page
    page.goto(f"/markets/{market.id}")
    ui.wait_for_prices(page, world.prices(market.id))

    ui.focus_by_tab(page, "connect-wallet")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("logout")).to_be_visible()

    # Choose "No" with the keyboard: arrows move a radio group or a select's choice.
    ui.focus_by_tab(page, "ticket-outcome")
    for _ in range(len(market.outcomes) + 1):
        if ui.ticket_outcome_value(page) == no:
            break
        page.keyboard.press("ArrowDown")
    assert ui.ticket_outcome_value(page) == no, "the arrow keys did not reach outcome No"

    ui.focus_by_tab(page, "ticket-amount")
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("2.5")
    ui.focus_by_tab(page, "ticket-buy")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/bet")) as bet:
        page.keyboard.press("Enter")
    assert bet.value.status == 200, bet.value.text()
    [trade] = world.trades(market.id, user.address)
    assert (trade["outcome_id"], trade["amount"]) == (no, tokens("2.5"))
    ui.wait_for_prices(page, world.prices(market.id))


def test_ticket_trades_within_its_slippage_tolerance_and_asks_again_when_the_price_moved(world, open_tab):
    market = world.create_market("Does the ticket hold its price within the tolerance?")
    yes = market.outcome("Yes")
    user = User.named("careful-buyer")
    world.fund(user, 100)
    mover = world.login(User.named("price-mover"))
    world.fund(mover, 500)
    tab = open_tab(user)
    tab.allow_http_error(409)  # the refused trade, which the ticket shows
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)

    slippage = page.get_by_test_id("ticket-slippage")
    expect(slippage).to_have_value("1")
    ui.choose_outcome(page, yes, "Yes")
    page.get_by_test_id("ticket-amount").fill("10")
    quote = world.api.post("/v1/markets/bet-preview", {"outcome_id": yes, "amount": tokens(10)})
    preview = page.get_by_test_id("ticket-preview")
    wait_until(lambda: shows_number(preview.inner_text(), units(quote["estimated_shares"]), Decimal("0.01")), timeout=5,
               message="the preview")

    # Another trader moves the price between the quote and the bet: beyond 1%, so the bet is
    # refused, nothing trades, and the ticket shows the new quote.
    bets = []

    def move_first(route):
        if not bets:
            world.bet(mover, market.id, yes, tokens(60))
        bets.append(route.request.post_data_json)
        route.continue_()

    page.route(f"**/v1/markets/{market.id}/bet", move_first)
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/bet")) as first:
        page.get_by_test_id("ticket-buy").click()
    assert first.value.status == 409 and first.value.json()["code"] == "price_moved", first.value.text()
    shares = int(quote["estimated_shares"])
    assert bets[0]["min_shares"] == str(-(-shares * 9900 // 10000)), bets[0]
    assert bets[0]["amount"] == tokens(10)
    expect(page.get_by_test_id("ticket-error")).to_contain_text("price moved")
    assert world.trades(market.id, user.address) == [], "a trade beyond the tolerance was made"
    requote = world.api.post("/v1/markets/bet-preview", {"outcome_id": yes, "amount": tokens(10)})
    wait_until(lambda: shows_number(preview.inner_text(), units(requote["estimated_shares"]), Decimal("0.01")), timeout=5,
               message="the new quote")

    # Confirmed again on the new quote, with a tolerance of its own: it trades.
    slippage.fill("0.5")
    wait_until(lambda: page.get_by_test_id("ticket-preview").get_attribute("data-state") == "ready", timeout=5, message="the preview")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/bet")) as second:
        page.get_by_test_id("ticket-buy").click()
    assert second.value.status == 200, second.value.text()
    new_shares = int(requote["estimated_shares"])
    assert bets[1]["min_shares"] == str(-(-new_shares * 9950 // 10000)), bets[1]
    receipt = second.value.json()
    assert int(receipt["shares_purchased"]) >= int(bets[1]["min_shares"])
    [trade] = world.trades(market.id, user.address)
    assert trade["amount"] == tokens(10)


def test_ticket_limit_price_fills_part_of_a_bet(world, open_tab):
    market = world.create_market("Does the ticket fill a bet up to its limit price?")
    yes = market.outcome("Yes")
    user = User.named("limit-buyer")
    world.fund(user, 200)
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    ui.choose_outcome(page, yes, "Yes")
    page.get_by_test_id("ticket-limit").fill("52")  # in percent, as every price on the page
    page.get_by_test_id("ticket-amount").fill("100")
    quote = world.api.post("/v1/markets/bet-preview", {"outcome_id": yes, "amount": tokens(100), "max_price": "0.52"})
    assert quote["unfilled_amount"] != "0", quote
    preview = page.get_by_test_id("ticket-preview")
    wait_until(lambda: "unfilled" in preview.inner_text(), timeout=5, message="the partial fill in the preview")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/bet")) as bet:
        page.get_by_test_id("ticket-buy").click()
    assert bet.value.status == 200, bet.value.text()
    sent = bet.value.request.post_data_json
    assert sent["max_price"] == "0.52" and sent["amount"] == tokens(100), sent
    receipt = bet.value.json()
    assert receipt["amount"] == quote["amount"] and receipt["unfilled_amount"] == quote["unfilled_amount"], receipt
    assert Decimal(receipt["new_outcome_price"]) <= Decimal("0.52")
    expect(page.get_by_test_id("ticket-result")).to_contain_text("did not fill")
