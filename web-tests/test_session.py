"""Login with the injected wallet: it holds across reloads and pages, and logout ends it."""

from __future__ import annotations

import re
import time

from playwright.sync_api import expect

import ui
from hanson_web import LOGIN_MESSAGE, Server, User, World


def login_response(page):
    return page.expect_response(lambda r: r.url.endswith("/v1/auth/login") and r.request.method == "POST")


def test_login_persists_across_reload_and_pages(world, open_tab):
    market = world.create_market("Does a login survive a reload?")
    user = User.named("persistent")
    world.fund(user, 10)
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    with login_response(page) as login:
        ui.connect(page, tab.wallet)
    assert login.value.status == 200
    signed = len(tab.wallet.signed)

    page.reload()
    expect(page.get_by_test_id("logout")).to_be_visible()
    expect(page.get_by_test_id("connect-wallet")).to_be_hidden()
    page.goto("/portfolio")
    expect(page.get_by_test_id("logout")).to_be_visible()
    expect(page.get_by_test_id("balance")).to_be_visible()
    page.goto("/")
    expect(page.get_by_test_id("logout")).to_be_visible()
    assert len(tab.wallet.signed) == signed, "the wallet was asked to sign again"


def test_logout_ends_the_session(world, open_tab):
    market = world.create_market("Does logout end the session?")
    user = User.named("leaver")
    world.fund(user, 10)
    tab = open_tab(user)
    page = tab.page
    ui.open_market(page, world, market)
    with login_response(page) as login:
        ui.connect(page, tab.wallet)
    access_token = login.value.json()["access_token"]
    assert world.api.request("GET", "/v1/auth/profile", token=access_token)[0] == 200

    page.get_by_test_id("logout").click()
    expect(page.get_by_test_id("connect-wallet")).to_be_visible()
    expect(page.get_by_test_id("logout")).to_be_hidden()
    # The server revoked the session: its access token no longer works.
    status, problem = world.api.request("GET", "/v1/auth/profile", token=access_token)
    assert status == 401, problem

    page.reload()
    expect(page.get_by_test_id("connect-wallet")).to_be_visible()
    expect(page.get_by_test_id("logout")).to_be_hidden()


def test_access_token_is_refreshed_before_it_expires(open_tab):
    # A server of its own whose access tokens live 12 s: the page must refresh before expiry
    # and trade after the first token has expired, without a 401 on the way.
    server = Server(extra_args=["--access-token-ttl", "12"]).start()
    try:
        world = World.create(server)
        market = world.create_market("Does the page refresh its token in time?")
        user = User.named("refresher")
        world.fund(user, 10)
        tab = open_tab(user, base_url=server.base)
        page = tab.page
        statuses = []
        page.on("response", lambda r: "/v1/" in r.url and statuses.append((r.url.split("/v1/")[1], r.status)))
        ui.open_market(page, world, market)
        with login_response(page) as login:
            ui.connect(page, tab.wallet)
        logged_in = time.monotonic()
        first_token = login.value.json()["access_token"]
        with page.expect_response(lambda r: r.url.endswith("/v1/auth/refresh"), timeout=12_000) as refreshed:
            pass
        assert refreshed.value.status == 200, refreshed.value.text()
        assert time.monotonic() - logged_in < 12, "the token was refreshed only after it expired"
        while time.monotonic() - logged_in < 13:
            page.wait_for_timeout(250)
        assert world.api.request("GET", "/v1/auth/profile", token=first_token)[0] == 401  # it has expired
        ui.choose_outcome(page, market.outcome("Yes"), "Yes")
        page.get_by_test_id("ticket-amount").fill("1")
        with page.expect_response(lambda r: r.url.endswith(f"/v1/markets/{market.id}/bet")) as bet:
            page.get_by_test_id("ticket-buy").click()
        assert bet.value.status == 200, bet.value.text()
        assert [s for s in statuses if s[1] == 401] == [], statuses
        expect(page.get_by_test_id("logout")).to_be_visible()
    finally:
        server.stop()
    assert not server.errors_logged(), server.errors_logged()
    server.remove()


def test_connect_pressed_before_the_market_has_loaded_logs_in(world, open_tab):
    # connect-wallet is on the page before the market detail (which names the provider) has
    # arrived. A press then must wait for the provider and log in, not fail for want of one.
    market = world.create_market("Does an early connect wait for the market?")
    user = User.named("early-bird")
    world.fund(user, 10)
    tab = open_tab(user)
    page = tab.page
    held = []
    detail = re.compile(r"/v1/markets/" + re.escape(market.id) + r"(\?.*)?$")
    page.route(detail, lambda route: held.append(route) if route.request.method == "GET" else route.continue_())
    page.goto(f"/markets/{market.id}", wait_until="domcontentloaded")
    button = page.get_by_test_id("connect-wallet")
    expect(button).to_be_visible()
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the page never asked for the market detail"
    logins = []
    page.on("response", lambda r: r.url.endswith("/v1/auth/login") and logins.append(r))
    button.click()
    page.wait_for_timeout(300)  # the press is handled while the detail is still held
    assert not tab.wallet.signed, "the wallet signed before the provider was known"
    expect(page.get_by_test_id("logout")).to_have_count(0)
    expect(page.get_by_test_id("auth-error")).to_be_hidden()  # no "Open a market first"
    expect(page.locator("#notice")).to_be_hidden()
    for route in held:
        route.continue_()
    expect(page.get_by_role("heading", name=market.question)).to_be_visible()
    expect(page.get_by_test_id("logout")).to_be_visible()
    assert [r.status for r in logins] == [200], [r.status for r in logins]
    expect(page.get_by_test_id("auth-error")).to_have_count(0)
    assert len(tab.wallet.signed) == 1 and LOGIN_MESSAGE.match(tab.wallet.signed[0]), tab.wallet.signed
    profile = world.api.get("/v1/auth/profile", token=logins[0].json()["access_token"])
    assert profile["wallet_address"].lower() == user.address
