"""What a first visit trips over: no "null" on any page, API amounts in token units, login from
any page of a one-provider install, no sideways scrolling for long words, rounded amounts,
exact fees, one price unit, times with their zone, an HTML 404 page, settled markets showing
their result, P&L that says what it counts, the preview's balance warning, the empty state."""

from __future__ import annotations

import re
from decimal import Decimal

from playwright.sync_api import expect

import ui
from conftest import MOBILE
from hanson_web import Server, User, World, tokens, units

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


def test_api_amounts_in_errors_are_shown_in_token_units(world, open_tab):
    market = world.create_market("Does the ticket speak token units when the API speaks wei?",
                                 min_bet=tokens("0.5"), max_bet=tokens(20))
    yes = market.outcome("Yes")
    user = world.login(User.named("token-units"))
    world.fund(user, 100)
    bought = world.bet(user, market.id, yes, tokens(3))
    held = int(bought["shares_purchased"])
    tab = open_tab(user)
    tab.allow_http_error(422)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    ui.choose_outcome(page, yes, "Yes")
    amount, error = page.get_by_test_id("ticket-amount"), page.get_by_test_id("ticket-error")

    # Below the minimum and above the maximum: the preview's 422, in USDC.
    amount.fill("0.25")
    expect(error).to_have_text("The minimum bet is 0.5 USDC.")
    amount.fill("1234.5")
    expect(error).to_have_text("The maximum bet is 20 USDC.")

    # More shares than held, to the last share unit.
    ui.sell_mode(page, "shares")
    amount.fill(str(units(held + 10**18)))
    exact = str(units(held))
    whole, _, frac = exact.partition(".")
    expect(error).to_have_text(f"Only {int(whole):,}{'.' + frac if frac else ''} shares are available.")
    assert str(held) not in error.inner_text()


def test_a_one_provider_install_logs_in_from_any_page(world, open_tab):
    world.create_market("Can a trader log in before opening any market?")
    user = User.named("first-page-login")
    world.fund(user, 10)
    # A new browser: no market viewed, no provider named in the address.
    for path in ("/portfolio", "/?q=nothing-matches-this-search&status=cancelled"):
        tab = open_tab(user)
        page = tab.page
        page.goto(path)
        ui.connect(page, tab.wallet)
        expect(page.get_by_text("Open a market first")).to_have_count(0)
        auth = page.evaluate(f"() => JSON.parse(localStorage.getItem('hanson.auth.{world.provider_id}'))")
        assert auth and auth["wallet_address"] == user.address, auth
    expect(page.get_by_test_id("header-balance")).to_contain_text("10")
    # The portfolio, opened afresh, shows the wallet.
    page.goto("/portfolio")
    expect(page.get_by_test_id("balance")).to_contain_text("10")


LONG_URL = "https://league.example.com/results/2026/season/regular/matchday-34/final-whistle/official-report?format=full&lang=en"
LONG_WORD = "Supercalifragilisticexpialidociousnessquotientmaximisation"


def test_long_urls_and_words_do_not_scroll_sideways_at_375px(world, open_tab):
    market = world.create_market(f"Will {LONG_WORD} win the league?",
                                 outcomes=(LONG_WORD, "No"),
                                 description=f"Resolves from {LONG_URL} once it is published; {LONG_WORD}.",
                                 category=LONG_WORD)
    user = world.login(User.named("narrow-screen"))
    world.fund(user, 10)
    world.bet(user, market.id, market.outcome("No"), tokens(2))
    tab = open_tab(user, viewport=MOBILE, is_mobile=True, has_touch=True)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    expect(page.get_by_test_id("market-description")).to_contain_text(LONG_URL)
    page.wait_for_timeout(300)
    overflow = ui.horizontal_overflow(page)
    assert overflow["scrollWidth"] <= MOBILE["width"], f"the market page scrolls sideways: {overflow}"
    for path in (f"/?q={LONG_WORD[:20]}", "/portfolio"):
        page.goto(path)
        expect(page.get_by_text(LONG_WORD).first).to_be_visible()
        page.wait_for_timeout(300)
        overflow = ui.horizontal_overflow(page)
        assert overflow["scrollWidth"] <= MOBILE["width"], f"{path} scrolls sideways: {overflow}"


# The page's own money.js, to call from a test.
MONEY_MODULE = "import(document.querySelector('link[href$=\"/money.js\"]').href)"


def test_amounts_are_rounded_not_cut_to_the_tokens_precision(world, open_tab):
    page = open_tab().page
    page.goto("/")
    shown = page.evaluate(f"""async () => {{
        const money = await {MONEY_MODULE};
        return [
          money.formatUnits('1999950000000000000', 18),     // 1.99995 at 4 decimals
          money.formatUnits('1999949999999999999', 18),
          money.formatUnits('-2500049', 6),                 // a signed P&L
          money.formatUnits('1234567', 6, 2),
          money.formatUnits('15', 1),                       // a 1-decimal token shows 1 decimal
          money.formatUnits('40000000000000', 18),          // 0.00004: too small to show
          money.formatUnits('999999999999999999999999', 18, 2),
          money.formatSignedUnits('50000000000000', 18),
        ];
    }}""")
    assert shown == ["2", "1.9999", "-2.5", "1.23", "1.5", "<0.0001", "1,000,000", "+0.0001"], shown

    # The header's balance: 9.99996 USDC is about 10, not 9.9999.
    world.create_market("Is a balance of 9.99996 shown as 10?")
    user = User.named("rounded-balance")
    world.fund(user, "9.99996")
    tab = open_tab(user)
    tab.page.goto("/portfolio")
    ui.connect(tab.page, tab.wallet)
    expect(tab.page.get_by_test_id("header-balance")).to_have_text("10 USDC")


def test_fee_percentages_are_added_exactly(world, open_tab):
    market = world.create_market("Are 0.1% and 0.2% fees shown as 0.3%?", fees=(0.1, 0.2))
    page = open_tab().page
    ui.open_market(page, world, market)
    expect(page.get_by_test_id("market-fees")).to_have_text("0.3% (creator 0.1%, platform 0.2%)")
    shown = page.evaluate(f"""async () => {{
        const money = await {MONEY_MODULE};
        return [money.addPercentages(0.1, 0.2), money.addPercentages(1.5, 0.25), money.addPercentages(0, 0),
                money.addPercentages(49.9999, 0.0001), money.addPercentages(undefined, 2)];
    }}""")
    assert shown == ["0.3", "1.75", "0", "50", "2"], shown


def test_every_price_is_a_percentage(world, open_tab):
    market = world.create_market("Is every price on the page written in one unit?")
    yes = market.outcome("Yes")
    user = world.login(User.named("one-price-unit"))
    world.fund(user, 100)
    world.bet(user, market.id, yes, tokens(5))
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    ui.choose_outcome(page, yes, "Yes")
    page.get_by_test_id("ticket-amount").fill("2")
    expect(page.get_by_test_id("ticket-preview")).to_contain_text("Average price")
    expect(page.get_by_test_id("trade-row")).to_have_count(1)
    price = world.trades(market.id)[0]["price"]
    expect(page.get_by_test_id("trade-row").first).to_contain_text(f"{Decimal(price) * 100:.1f}%")
    page.goto("/portfolio")
    expect(page.get_by_test_id("position-row")).to_have_count(1)
    for where in (f"/markets/{market.id}", "/portfolio"):
        if where != "/portfolio":
            ui.open_market(page, world, market)
        text = page.evaluate("() => document.body.innerText")
        assert "¢" not in text and not re.search(r"\b0\.\d{2,}\b(?! ?[A-Z])", text), f"{where}: a price not in percent in {text!r}"
    shown = page.evaluate(f"""async () => {{
        const money = await {MONEY_MODULE};
        const bad = [];
        for (const t of ['0', '100', '0.0', '-5', 'abc', '50.12345678901234567']) {{
          try {{ money.parseLimitPrice(t); bad.push(t); }} catch {{}}
        }}
        return [money.parseLimitPrice('52'), money.parseLimitPrice('5'), money.parseLimitPrice('52.5%'),
                money.parseLimitPrice('0.5'), money.parseLimitPrice('99.9999999999999999'), bad];
    }}""")
    assert shown == ["0.52", "0.05", "0.525", "0.005", "0.999999999999999999", []], shown


def test_times_carry_their_zone(world, open_tab):
    market = world.create_market("Does every time on the page say its zone?", ends_at="2099-01-01T00:00:00Z")
    user = world.login(User.named("time-zones"))
    world.fund(user, 10)
    world.bet(user, market.id, market.outcome("Yes"), tokens(1))
    page = open_tab(timezone_id="Asia/Tokyo", locale="en-US").page
    ui.open_market(page, world, market)
    expect(page.get_by_test_id("market-closes")).to_have_text("Jan 1, 2099, 9:00 AM GMT+9")
    expect(page.get_by_test_id("trade-row").first.locator("time")).to_contain_text("GMT+9")
    page.goto("/")
    open_console(page, world)
    expect(page.locator(f'[data-testid=console-market][data-market-id="{market.id}"]')).to_contain_text("Jan 1, 2099, 9:00 AM GMT+9")


def test_an_unknown_page_is_an_html_404(world, open_tab):
    tab = open_tab()
    tab.allow_http_error(404)
    page = tab.page
    response = page.goto("/no/such/page")
    assert response.status == 404 and response.headers["content-type"].startswith("text/html"), response.headers
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    assert page.title() == "Page not found · Hanson"
    page.get_by_role("link", name="Browse markets").click()
    expect(page.get_by_test_id("market-search")).to_be_visible()
    # The API keeps answering problem+json, to a browser too.
    response = page.goto("/v1/no-such-route")
    assert response.status == 404 and response.headers["content-type"] == "application/problem+json"


def test_a_resolved_market_shows_its_result_and_the_payout(world, open_tab):
    market = world.create_market("Does a resolved market show who won rather than its last prices?")
    yes, no = market.outcome("Yes"), market.outcome("No")
    user = world.login(User.named("resolved-viewer"))
    world.fund(user, 100)
    bought = world.bet(user, market.id, yes, tokens(10))
    world.bet(user, market.id, no, tokens(4))
    world.resolve(market.id, yes)
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    result = page.get_by_test_id("market-result")
    expect(result).to_contain_text("Yes won. Each Yes share pays 1 USDC; the other outcomes' shares pay nothing.")
    shares = units(bought["shares_purchased"])
    expect(page.get_by_test_id("market-payout")).to_have_text(f"Your payout: {shares:,.4f}".rstrip("0").rstrip(".") + " USDC, to claim in your portfolio.")
    prices = page.get_by_test_id("outcome-price")
    expect(prices.nth(0)).to_have_text("Won · 1 USDC")
    expect(prices.nth(1)).to_have_text("Lost · 0")
    assert "%" not in page.get_by_test_id("outcome-row").nth(0).inner_text()

    cancelled = world.create_market("Does a cancelled market say it refunded rather than show prices?")
    world.cancel(cancelled.id)
    ui.open_market(page, world, cancelled)
    expect(page.get_by_test_id("market-result")).to_contain_text("Cancelled. Every position was refunded its cost")
    expect(page.get_by_test_id("outcome-price").first).to_have_text("Refunded")
    page.goto("/?status=resolved")
    card = page.locator(f'[data-testid=market-card][data-market-id="{market.id}"]')
    expect(card).to_contain_text("Resolved: open for the result")
    assert "%" not in card.inner_text()


def test_pnl_says_what_it_counts_and_fees_paid_are_shown(world, open_tab):
    market = world.create_market("Does the portfolio say its P&L leaves fees out?", fees=(1.5, 0.5))
    yes, no = market.outcome("Yes"), market.outcome("No")
    user = world.login(User.named("fee-payer"))
    world.fund(user, 100)
    world.bet(user, market.id, yes, tokens(10))
    world.bet(user, market.id, no, tokens("2.5"))
    fees = sum(int(t["fee"]) for t in world.trades(market.id, user.address))
    assert fees == int(tokens("0.25")), fees  # 2% of 12.5
    tab = open_tab(user)
    page = tab.page
    page.goto("/portfolio")
    ui.connect(page, tab.wallet)
    expect(page.get_by_test_id("portfolio-fees")).to_have_text("0.25 USDC")
    expect(page.get_by_test_id("portfolio-pnl-note")).to_have_text("Open positions: value now minus cost. Fees are not included.")
    expect(page.get_by_role("columnheader", name="P&L before fees")).to_be_visible()
    # A new trade adds its fee without a reload.
    world.bet(user, market.id, yes, tokens(5))
    expect(page.get_by_test_id("portfolio-fees")).to_have_text("0.35 USDC")


def test_the_preview_warns_when_the_amount_exceeds_the_balance(world, open_tab):
    market = world.create_market("Does the preview warn before a bet the wallet cannot pay?")
    yes = market.outcome("Yes")
    user = world.login(User.named("preview-warning"))
    world.fund(user, 5)
    world.bet(user, market.id, yes, tokens(1))
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    ui.connect(page, tab.wallet)
    ui.choose_outcome(page, yes, "Yes")
    amount, warning = page.get_by_test_id("ticket-amount"), page.get_by_test_id("ticket-warning")
    amount.fill("3.5")
    expect(page.get_by_test_id("ticket-preview")).to_contain_text("Shares")
    expect(warning).to_be_hidden()
    amount.fill("6")
    expect(warning).to_have_text("This is more than your balance of 4 USDC.")
    expect(page.get_by_test_id("ticket-preview")).to_contain_text("Shares")  # the quote still shows
    amount.fill("4")
    expect(warning).to_be_hidden()
    ui.sell_mode(page, "shares")
    tab.allow_http_error(422)  # the market holds fewer shares than that: the preview refuses too
    amount.fill("1000")
    expect(warning).to_contain_text("You hold")


def test_a_first_start_says_how_to_create_a_provider_and_a_market(open_tab):
    server = Server().start()  # no provider, no token, no market
    try:
        page = open_tab(base_url=server.base, viewport=MOBILE).page
        page.goto("/")
        first_run = page.get_by_test_id("markets-first-run")
        expect(first_run).to_be_visible()
        expect(first_run).to_contain_text('hanson provider create --name "Acme Games"')
        expect(first_run).to_contain_text("hanson token create --symbol USDC")
        expect(first_run.get_by_role("link", name="Console")).to_have_attribute("href", "/console")
        assert ui.horizontal_overflow(page)["scrollWidth"] <= MOBILE["width"]
        page.goto("/portfolio")
        expect(page.get_by_test_id("portfolio-no-markets")).to_be_visible()
        # A search that matches nothing on a server with markets says so, not the above.
        world = World.create(server)
        world.create_market("Is the first-run note gone once a market exists?")
        page.goto("/?q=no-market-has-these-words")
        expect(page.get_by_test_id("markets-empty")).to_be_visible()
        expect(page.get_by_test_id("markets-first-run")).to_have_count(0)
    finally:
        server.stop()
    assert not server.errors_logged(), server.errors_logged()
    server.remove()


def test_the_console_gives_an_iframe_snippet_per_market(world, open_tab):
    market = world.create_market('Will the "embed" <snippet> & its quotes survive?')
    page = open_tab().page
    open_console(page, world)
    page.locator(f'[data-testid=console-market][data-market-id="{market.id}"]').get_by_role("button").first.click()
    snippet = page.get_by_test_id("embed-snippet")
    title = "Will the &quot;embed&quot; &lt;snippet&gt; &amp; its quotes survive?"
    expect(snippet).to_have_value(
        f'<iframe src="{world.server.base}/embed/markets/{market.id}" title="{title}" width="400" height="320" '
        f'style="border:0;max-width:100%" loading="lazy"></iframe>')
    page.get_by_test_id("embed-theme").select_option("dark")
    expect(snippet).to_have_value(re.compile(re.escape(f'src="{world.server.base}/embed/markets/{market.id}?theme=dark"')))
