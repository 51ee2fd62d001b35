"""Login with the injected wallet: it holds across reloads and pages, and logout ends it."""

from __future__ import annotations

from playwright.sync_api import expect

import ui
from hanson_web import User


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
