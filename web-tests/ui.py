"""How the tests drive the pages: only through the documented `data-testid` names, roles and
labels, never through the app's internals."""

from __future__ import annotations

import re

from playwright.sync_api import Locator, Page, expect

from hanson_web import LOGIN_MESSAGE, Wallet


def price_map(page: Page) -> dict[str, str]:
    """outcome id -> data-price, as the page shows them now."""
    return page.eval_on_selector_all(
        "[data-testid=outcome-price]",
        "els => Object.fromEntries(els.map(e => [e.dataset.outcomeId, e.dataset.price]))")


def wait_for_prices(page: Page, expected: dict[str, str], timeout: float = 10_000) -> None:
    """Until every outcome's data-price is exactly the API's price string."""
    try:
        page.wait_for_function(
            """expected => {
                 const shown = {};
                 for (const e of document.querySelectorAll('[data-testid=outcome-price]')) shown[e.dataset.outcomeId] = e.dataset.price;
                 return Object.entries(expected).every(([id, price]) => shown[id] === price);
               }""",
            arg=expected, timeout=timeout, polling="raf")
    except Exception as e:
        raise AssertionError(f"the page shows prices {price_map(page)}, the API {expected}") from e


def open_market(page: Page, world, market) -> None:
    """Open a market's page and wait until it shows the API's prices (as a person waits for
    the page before pressing anything)."""
    page.goto(f"/markets/{market.id}")
    expect(page.get_by_role("heading", name=market.question)).to_be_visible()
    wait_for_prices(page, world.prices(market.id))


def mark_document(page: Page) -> None:
    """Tag the current document, so `assert_not_reloaded` can tell a reload from a live update."""
    page.evaluate("window.__hansonTestDocument = 'kept'")


def assert_not_reloaded(page: Page) -> None:
    assert page.evaluate("window.__hansonTestDocument") == "kept", "the page was reloaded"


def connect(page: Page, wallet: Wallet) -> None:
    """Log in with the injected wallet through connect-wallet."""
    before = len(wallet.signed)
    page.get_by_test_id("connect-wallet").click()
    expect(page.get_by_test_id("logout")).to_be_visible()
    assert len(wallet.signed) == before + 1, f"the wallet was asked to sign {len(wallet.signed) - before} messages"
    assert LOGIN_MESSAGE.match(wallet.signed[-1]), f"the wallet signed {wallet.signed[-1]!r}"


def choose_outcome(page: Page, outcome_id: str, title: str) -> None:
    """Pick an outcome in ticket-outcome: one select, or a radio group."""
    ticket = page.get_by_test_id("ticket-outcome")
    expect(ticket).to_be_visible()
    if ticket.evaluate("e => e.tagName") == "SELECT":
        values = ticket.evaluate("e => [...e.options].map(o => o.value)")
        ticket.select_option(value=outcome_id) if outcome_id in values else ticket.select_option(label=title)
        return
    radio = ticket.locator(f'input[type=radio][value="{outcome_id}"]')
    if radio.count() == 0:
        radio = ticket.get_by_role("radio", name=title, exact=True)
    radio.check()


def ticket_outcome_value(page: Page) -> str:
    ticket = page.get_by_test_id("ticket-outcome")
    if ticket.evaluate("e => e.tagName") == "SELECT":
        return ticket.input_value()
    return ticket.locator("input[type=radio]:checked").get_attribute("value") or ""


def sell_mode(page: Page, mode: str) -> None:
    """Switch the ticket to the sell side, by "shares" or by target "proceeds": two radio
    groups, "Side" (Buy / Sell) and "Sell by" (Shares / Target proceeds)."""
    page.get_by_role("group", name="Side").get_by_role("radio", name="Sell", exact=True).check()
    name = re.compile(r"^shares$", re.I) if mode == "shares" else re.compile(r"proceeds", re.I)
    page.get_by_role("group", name="Sell by").get_by_role("radio", name=name).check()


def focus_by_tab(page: Page, test_id: str, limit: int = 80) -> None:
    """Press Tab until the focus is on (or inside) the element with `test_id`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        inside = page.evaluate(
            "id => { const a = document.activeElement; return !!(a && a.closest('[data-testid=\"' + id + '\"]')); }",
            test_id)
        if inside:
            return
    active = page.evaluate("() => document.activeElement && document.activeElement.outerHTML.slice(0, 200)")
    raise AssertionError(f"Tab never reached {test_id} in {limit} presses (focus on {active})")


def horizontal_overflow(page: Page) -> dict:
    """scrollWidth vs the viewport, and the widest elements sticking out, for the message."""
    return page.evaluate("""() => {
        const width = document.documentElement.clientWidth;
        const wide = [...document.querySelectorAll('body *')]
          .filter(e => e.getBoundingClientRect().right > width + 0.5)
          .slice(0, 5)
          .map(e => e.tagName.toLowerCase() + (e.dataset.testid ? '[' + e.dataset.testid + ']' : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : '') + ' right=' + Math.round(e.getBoundingClientRect().right));
        return { scrollWidth: document.documentElement.scrollWidth, bodyScrollWidth: document.body.scrollWidth, wide };
    }""")


def canvas_drawn(chart: Locator) -> bool:
    """Whether the chart holds a canvas with something drawn on it."""
    return chart.evaluate("""chart => {
        for (const c of chart.querySelectorAll('canvas')) {
          if (!c.width || !c.height) continue;
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          for (let i = 3; i < d.length; i += 4 * 7) if (d[i] !== 0) return true;
        }
        return false;
    }""")
