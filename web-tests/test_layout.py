"""Every page, logged in and out, on a desktop and at 375 px: no console error, a favicon, no
horizontal scrolling."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

import ui
from conftest import DESKTOP, MOBILE
from hanson_web import User, tokens

PAGES = ["markets", "market", "portfolio", "console", "leaderboard"]


@pytest.fixture(scope="module")
def layout_market(world):
    market = world.create_market("Will the layout hold at every width, even with a rather long question like this one?",
                                 outcomes=("Yes, comfortably", "No, it overflows", "It depends on the font"))
    trader = world.login(User.named("layout-trader"))
    world.fund(trader, 100)
    for title, amount in (("Yes, comfortably", 20), ("No, it overflows", 7), ("It depends on the font", 3)):
        world.bet(trader, market.id, market.outcome(title), tokens(amount))
    return market, trader


def visit(tab, world, market, which: str) -> None:
    """Open `which` as a person would see it: logged in where a page is about the wallet."""
    page = tab.page
    if which == "markets":
        page.goto("/")
        expect(page.get_by_test_id("market-card").first).to_be_visible()
    elif which == "market":
        page.goto(f"/markets/{market.id}")
        ui.wait_for_prices(page, world.prices(market.id))
        ui.connect(page, tab.wallet)
        ui.choose_outcome(page, market.outcomes[0]["id"], market.outcomes[0]["title"])
        page.get_by_test_id("ticket-amount").fill("1.5")
        expect(page.get_by_test_id("ticket-preview")).to_contain_text("1")
    elif which == "portfolio":
        page.goto(f"/portfolio?provider_id={world.provider_id}")
        ui.connect(page, tab.wallet)
        expect(page.get_by_test_id("position-row").first).to_be_visible()
    elif which == "console":
        page.goto("/console")
        key = page.get_by_test_id("console-api-key")
        key.fill(world.api_key)
        key.press("Enter")
        expect(page.get_by_text(market.question).first).to_be_visible()
    elif which == "leaderboard":
        page.goto(f"/leaderboard?market_id={market.id}")
        expect(page.get_by_test_id("leaderboard")).to_be_visible()
    page.wait_for_load_state("networkidle") if which != "market" else page.wait_for_timeout(300)


@pytest.mark.parametrize("which", PAGES)
def test_page_has_no_console_errors_and_a_favicon(which, world, open_tab, layout_market):
    market, trader = layout_market
    tab = open_tab(trader)
    visit(tab, world, market, which)
    page = tab.page
    icon = page.evaluate("() => { const l = document.querySelector('link[rel~=icon]'); return l ? l.href : '/favicon.ico'; }")
    response = page.request.get(icon)
    assert response.status == 200, f"favicon {icon}: {response.status}"
    assert response.headers.get("content-type", "").startswith("image/"), response.headers
    assert len(response.body()) > 0
    # The open_tab fixture fails the test on any console error or uncaught exception.


@pytest.mark.parametrize("which", PAGES)
def test_page_fits_375px_without_horizontal_scrolling(which, world, open_tab, layout_market):
    market, trader = layout_market
    tab = open_tab(trader, viewport=MOBILE, is_mobile=True, has_touch=True)
    visit(tab, world, market, which)
    overflow = ui.horizontal_overflow(tab.page)
    assert overflow["scrollWidth"] <= MOBILE["width"], f"{which} at 375 px scrolls sideways: {overflow}"
