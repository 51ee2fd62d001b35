"""The markets page and what a market page shows before anyone logs in."""

from __future__ import annotations

import re

from playwright.sync_api import expect

import ui
from hanson_web import User, tokens


def test_search_finds_a_market_and_opens_it(world, open_tab):
    wanted = world.create_market("Will the zeppelin land in Lisbon before noon?", category="travel",
                                 description="Counted at the mooring mast.")
    others = [world.create_market(f"Will the ferry number {n} leave on time?", category="travel") for n in range(3)]
    page = open_tab().page
    page.goto("/")
    cards = page.get_by_test_id("market-card")
    expect(cards.first).to_be_visible()

    page.get_by_test_id("market-search").fill("zeppelin")
    expect(cards).to_have_count(1)
    card = cards.first
    expect(card).to_contain_text(wanted.question)
    # The card shows each outcome's price and the market's volume.
    expect(card).to_contain_text("Yes")
    expect(card).to_contain_text("No")

    # A search by description finds it as well; one matching nothing shows no card.
    page.get_by_test_id("market-search").fill("MOORING MAST")
    expect(cards).to_have_count(1)
    expect(cards.first).to_contain_text(wanted.question)
    page.get_by_test_id("market-search").fill("ferry number")
    expect(cards).to_have_count(len(others))
    page.get_by_test_id("market-search").fill("no market says qwxz")
    expect(cards).to_have_count(0)

    page.get_by_test_id("market-search").fill("zeppelin")
    expect(cards).to_have_count(1)
    cards.first.get_by_text(wanted.question).click()
    expect(page).to_have_url(re.compile(rf"/markets/{wanted.id}$"))
    expect(page.get_by_text(wanted.question).first).to_be_visible()
    ui.wait_for_prices(page, world.prices(wanted.id))


def test_market_page_shows_exact_prices_chart_and_trades(world, open_tab):
    market = world.create_market("Will three outcomes price exactly?", outcomes=("Red", "Green", "Blue"),
                                 description="A market with three outcomes.")
    trader = world.login(User.named("chart-trader"))
    world.fund(trader, 200)
    for outcome, amount in (("Red", 30), ("Green", 5), ("Red", 12), ("Blue", 8)):
        world.bet(trader, market.id, market.outcome(outcome), tokens(amount))

    page = open_tab().page
    page.goto(f"/markets/{market.id}")
    expect(page.get_by_text(market.question).first).to_be_visible()
    expect(page.get_by_text("A market with three outcomes.").first).to_be_visible()
    prices = world.prices(market.id)
    ui.wait_for_prices(page, prices)
    assert set(ui.price_map(page)) == {o["id"] for o in market.outcomes}
    expect(page.get_by_test_id("trade-row")).to_have_count(4)

    chart = page.get_by_test_id("price-chart")
    expect(chart).to_be_visible()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=price-chart] canvas')].some(c => c.width > 0)")
    assert ui.canvas_drawn(chart), "the price chart's canvas is blank"

    # The interval switch asks the API for candles of the chosen width and draws them.
    switch = page.get_by_role("group", name="Candle interval")
    names = {"1h": re.compile(r"^1h$|hourly|1-hour", re.I), "5m": re.compile(r"^5m$|5-minute", re.I)}
    for interval in ("1h", "5m"):
        with page.expect_response(lambda r: f"/v1/markets/{market.id}/candles?" in r.url
                                  and f"interval={interval}" in r.url) as answer:
            switch.get_by_role("button", name=names[interval]).click()
        candles = answer.value.json()
        assert candles["interval"] == interval
        assert [o["outcome_id"] for o in candles["outcomes"]] == [o["id"] for o in market.outcomes]
        # The last bucket closes at the prices the page shows.
        closes = {o["outcome_id"]: o["candles"][-1]["close"] for o in candles["outcomes"]}
        assert closes == prices, (closes, prices)
        expect(chart).to_have_attribute("data-interval", interval)
        page.wait_for_timeout(200)
        assert ui.canvas_drawn(chart), f"the price chart's canvas is blank after switching to {interval}"


def test_status_filter_shows_only_matching_markets(world, open_tab):
    open_market = world.create_market("Is the filtered lighthouse lit?", category="lighthouses")
    settled = world.create_market("Was the filtered lighthouse lit yesterday?", category="lighthouses")
    world.resolve(settled.id, settled.outcome("Yes"))
    page = open_tab().page
    page.goto("/")
    page.get_by_test_id("market-search").fill("filtered lighthouse")
    cards = page.get_by_test_id("market-card")
    status = page.get_by_label("Status", exact=True)
    for value, shown in (("", {open_market, settled}), ("resolved", {settled}), ("active", {open_market}), ("cancelled", set())):
        status.select_option(value)
        expect(cards).to_have_count(len(shown))
        for market in shown:
            expect(cards.filter(has_text=market.question)).to_have_count(1)


def test_market_cards_follow_the_ticker(world, open_tab):
    market = world.create_market("Does the lighthouse card follow its ticker?")
    page = open_tab().page
    page.goto("/?q=lighthouse%20card%20follow")
    card = page.locator(f"[data-testid=market-card][data-market-id='{market.id}']")
    expect(card).to_be_visible()
    ui.mark_document(page)
    trader = world.login(User.named("card-ticker"))
    world.fund(trader, 50)
    world.bet(trader, market.id, market.outcome("Yes"), tokens(10))
    for outcome_id, price in world.prices(market.id).items():
        expect(card.locator(f"[data-testid=card-outcome-price][data-outcome-id='{outcome_id}']")).to_have_attribute("data-price", price)
    expect(card.get_by_test_id("card-volume")).to_contain_text("10")
    ui.assert_not_reloaded(page)
