#!/usr/bin/env python3
"""Screenshots of every page, desktop (1280x800) and phone (375x812), with realistic data.

Usage: python web-tests/screenshots.py [OUT_DIR] [--minutes M]   (default: docs/screenshots, 12)

Starts `hanson serve` (HANSON_BIN, default target/debug/hanson) on a fresh database, seeds a
provider with several markets that traders have bought and sold in (so the charts have a
shape), a trader holding positions (one of them won and claimable), and writes
{markets,market,portfolio,console}-{desktop,mobile}.png. The test suite runs the same code
into a temporary directory; with HANSON_SCREENSHOTS=1 it rewrites docs/screenshots instead.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass

from playwright.sync_api import Browser, expect, sync_playwright

import ui
from hanson_web import CHROMIUM, REPO, Market, Server, User, World, install_wallet, tokens

SIZES = {"desktop": {"width": 1280, "height": 800}, "mobile": {"width": 375, "height": 812}}
PAGES = ("markets", "market", "portfolio", "console")
DEFAULT_OUT = os.path.join(REPO, "docs", "screenshots")

MARKETS = [
    ("Will the home team win the cup final?", "Resolves on the final whistle, extra time included.", "sports",
     ("Home", "Away", "Draw")),
    ("Will it rain in Lisbon on Saturday?", "At least 1 mm at the airport station between 00:00 and 23:59 local time.",
     "weather", ("Yes", "No")),
    ("Who wins the city's mayoral election?", "The candidate the electoral commission certifies.", "politics",
     ("Alvarez", "Brooks", "Chen", "Someone else")),
    ("Will the new console ship before December?", "Any retail sale in any region counts.", "technology",
     ("Yes", "No")),
    ("Will the festival headliner be announced this month?", "An official announcement by the organisers.",
     "entertainment", ("Yes", "No")),
    ("Will the marathon record fall this year?", "A ratified men's or women's world record.", "sports", ("Yes", "No")),
]


@dataclass
class Seeded:
    world: World
    markets: list[Market]
    trader: User  # the user whose portfolio and market page are shown
    featured: Market


def seed(world: World, rng: random.Random | None = None, minutes: float = 0) -> Seeded:
    """Markets with a few hundred trades among several traders; the trader holds three positions.

    The trades are spread over `minutes` (the charts draw candles of a minute and more, so
    trades made within one minute draw flat lines): a few minutes for the pictures in
    docs/screenshots, none for the test that only checks every page renders."""
    rng = rng or random.Random(20)
    markets = [world.create_market(q, outcomes=o, description=d, category=c, liquidity=rng.choice([500, 1000, 2000]))
               for q, d, c, o in MARKETS]
    traders = [world.login(User.named(f"screenshot-trader-{n}")) for n in range(6)]
    for t in traders:
        world.fund(t, 5000)
    trader = world.login(User.named("screenshot-you"))
    world.fund(trader, 1000)

    # Each market: a trend plus noise, the crowd drifting toward one outcome and then another,
    # so the charts have a shape; the markets' trades interleaved in time, each in its order.
    steps = {}
    for i, market in enumerate(markets):
        count = 80 if i == 0 else 30
        favourites = [market.outcomes[rng.randrange(len(market.outcomes))]["id"] for _ in range(3)]
        steps[market.id] = []
        for n in range(count):
            favourite = favourites[n * len(favourites) // count]
            outcome = favourite if rng.random() < 0.65 else rng.choice(market.outcomes)["id"]
            steps[market.id].append((market, rng.choice(traders), outcome,
                                     rng.choice(["2", "5", "8", "12.5", "20", "35"]), rng.random() < 0.15))
    order = [market_id for market_id, planned in steps.items() for _ in planned]
    rng.shuffle(order)
    pause = minutes * 60 / max(1, len(order))
    for market_id in order:
        market, who, outcome, amount, sell = steps[market_id].pop(0)
        world.bet(who, market.id, outcome, tokens(amount))
        if sell:
            held = [h for h in world.holdings(who, market.id) if h["status"] == "active" and int(h["shares"]) > 0]
            if held:
                h = rng.choice(held)
                world.api.post(f"/v1/markets/{market.id}/sell",
                               {"session_id": who.session_id, "outcome_id": h["outcome_id"],
                                "shares_amount": str(int(h["shares"]) // 2)}, who.access_token)
        time.sleep(pause)

    featured = markets[0]
    world.bet(trader, featured.id, featured.outcome("Home"), tokens(40))
    world.bet(trader, markets[1].id, markets[1].outcome("No"), tokens(25))
    world.bet(trader, markets[5].id, markets[5].outcome("Yes"), tokens(15))
    world.resolve(markets[5].id, markets[5].outcome("Yes"))
    return Seeded(world=world, markets=markets, trader=trader, featured=featured)


EMBED_THEMES = ("light", "dark")
EMBED_SIZE = {"width": 400, "height": 320}  # the console's iframe snippet


def shoot(browser: Browser, base: str, seeded: Seeded, out_dir: str, errors: list | None = None) -> list[str]:
    """Writes the eight screenshots of the pages and two of the embed; returns their paths. Console errors go to `errors`."""
    errors = [] if errors is None else errors
    os.makedirs(out_dir, exist_ok=True)
    world, market = seeded.world, seeded.featured
    written = []
    for size, viewport in SIZES.items():
        mobile = size == "mobile"
        context = browser.new_context(base_url=base, viewport=viewport, device_scale_factor=1,
                                      is_mobile=mobile, has_touch=mobile)
        wallet = install_wallet(context, seeded.trader)
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and errors.append(f"{page.url}: {m.text}"))
        page.on("pageerror", lambda e: errors.append(f"{page.url}: uncaught: {e}"))
        for which in PAGES:
            if which == "markets":
                page.goto("/")
                expect(page.get_by_test_id("market-card")).to_have_count(len(seeded.markets) - 1)
            elif which == "market":
                page.goto(f"/markets/{market.id}")
                ui.wait_for_prices(page, world.prices(market.id))
                if page.get_by_test_id("connect-wallet").count():
                    ui.connect(page, wallet)
                ui.choose_outcome(page, market.outcome("Home"), "Home")
                page.get_by_test_id("ticket-amount").fill("25")
                expect(page.get_by_test_id("ticket-preview")).to_contain_text("2")
                page.wait_for_function(
                    "() => [...document.querySelectorAll('[data-testid=price-chart] canvas')].some(c => c.width > 0)")
            elif which == "portfolio":
                page.goto(f"/portfolio?provider_id={world.provider_id}")
                if page.get_by_test_id("connect-wallet").count():
                    ui.connect(page, wallet)
                expect(page.get_by_test_id("position-row")).to_have_count(3)
            elif which == "console":
                page.goto("/console")
                key = page.get_by_test_id("console-api-key")
                key.fill(world.api_key)
                key.press("Enter")
                expect(page.get_by_text(market.question).first).to_be_visible()
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(400)  # let transitions and the chart settle
            path = os.path.join(out_dir, f"{which}-{size}.png")
            page.screenshot(path=path, full_page=False)
            written.append(path)
        if not mobile:
            # The embeddable card, at the size of the console's snippet, in both themes.
            page.set_viewport_size(EMBED_SIZE)
            for theme in EMBED_THEMES:
                page.goto(f"/embed/markets/{market.id}?theme={theme}")
                page.wait_for_function("() => document.querySelector('[data-testid=embed-chart] svg path')")
                page.wait_for_timeout(300)
                path = os.path.join(out_dir, f"embed-{theme}.png")
                page.screenshot(path=path, full_page=False)
                written.append(path)
        context.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description="Screenshots of every page with realistic data.")
    parser.add_argument("out_dir", nargs="?", default=DEFAULT_OUT)
    parser.add_argument("--minutes", type=float, default=12, help="how long the seeded trades take (chart shape)")
    args = parser.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    server = Server().start()
    try:
        print(f"seeding trades over {args.minutes} minutes", file=sys.stderr)
        seeded = seed(World.create(server), minutes=args.minutes)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM)
            for path in shoot(browser, server.base, seeded, out_dir):
                print(path)
            browser.close()
    finally:
        server.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
