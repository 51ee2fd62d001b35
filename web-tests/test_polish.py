"""What a first visit trips over: no "null" on any page, API amounts in token units, login from
any page of a one-provider install, no sideways scrolling for long words, rounded amounts,
exact fees, one price unit, times with their zone, an HTML 404 page, settled markets showing
their result, P&L that says what it counts, the preview's balance warning, the empty state."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from hanson_web import User, tokens

PLACEHOLDERS = re.compile(r"(?<![A-Za-z])(null|undefined|NaN)")


def assert_no_placeholder_text(page, where: str) -> None:
    text = page.evaluate("() => document.body.innerText")
    found = PLACEHOLDERS.search(text)
    assert not found, f"{where} shows {found.group(0)!r}: ...{text[max(0, found.start() - 80):found.end() + 40]!r}..."


def open_console(page, world):
    page.goto("/console")
    key = page.get_by_test_id("console-api-key")
    key.fill(world.api_key)
    key.press("Enter")
    expect(page.get_by_role("form", name="Create a market")).to_be_visible()


def test_console_shows_no_null_for_any_market_state(world, open_tab):
    open_market = world.create_market("Is the console free of placeholder text while the market is open?")
    paused = world.create_market("Is the console free of placeholder text while the market is paused?")
    world.api.post(f"/v1/providers/markets/{paused.id}/pause", {"reason": "maintenance"}, world.api_key)
    resolved = world.create_market("Is the console free of placeholder text once the market is resolved?")
    world.resolve(resolved.id, resolved.outcome("Yes"))
    cancelled = world.create_market("Is the console free of placeholder text once the market is cancelled?")
    world.cancel(cancelled.id)

    page = open_tab().page
    open_console(page, world)
    assert_no_placeholder_text(page, "the console's market list")
    for market in (open_market, paused, resolved, cancelled):
        row = page.locator(f'[data-testid=console-market][data-market-id="{market.id}"]')
        row.get_by_role("button").first.click()
        expect(page.get_by_test_id("console-selected-question")).to_have_text(market.question)
        assert_no_placeholder_text(page, f"the console managing {market.question!r}")
