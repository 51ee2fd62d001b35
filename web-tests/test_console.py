"""The provider console: the API key stays in the tab, and markets are created, resolved and
cancelled through it."""

from __future__ import annotations

from playwright.sync_api import expect

from hanson_web import User, tokens

CREATOR_ADDRESS = "0x00000000000000000000000000000000000000c1"


def open_console(tab, world):
    page = tab.page
    page.goto("/console")
    key = page.get_by_test_id("console-api-key")
    key.fill(world.api_key)
    key.press("Enter")
    expect(page.get_by_role("form", name="Create a market")).to_be_visible()
    return page


def test_console_keeps_the_key_in_session_storage_only(world, open_tab):
    tab = open_tab()
    page = open_console(tab, world)
    stored = page.evaluate("""key => ({
        session: Object.keys(sessionStorage).filter(k => sessionStorage.getItem(k).includes(key)).length,
        local: Object.keys(localStorage).filter(k => localStorage.getItem(k).includes(key)).length,
        cookie: document.cookie.includes(key),
    })""", world.api_key)
    assert stored == {"session": 1, "local": 0, "cookie": False}, stored
    # A reload keeps it (same tab); a new tab of another context does not have it.
    page.reload()
    expect(page.get_by_role("form", name="Create a market")).to_be_visible()
    other = open_tab().page
    other.goto("/console")
    expect(other.get_by_test_id("console-api-key")).to_have_value("")
    expect(other.get_by_role("form", name="Create a market")).to_have_count(0)


def test_console_creates_resolves_and_cancels_markets(world, open_tab):
    tab = open_tab()
    page = open_console(tab, world)

    # Create a market with three outcomes.
    question = "Will the console create this market with three outcomes?"
    form = page.get_by_role("form", name="Create a market")
    form.get_by_label("Question").fill(question)
    form.get_by_label("Description").fill("Created from the provider console by the browser tests.")
    form.get_by_label("Category").fill("console-tests")
    form.get_by_label("Liquidity").fill("2500.5")
    form.get_by_label("Creator wallet").fill(CREATOR_ADDRESS)
    form.get_by_label("Creator fee %").fill("1.25")
    form.get_by_role("button", name="Add outcome").click()
    titles = form.get_by_role("textbox", name="Outcome title")
    expect(titles).to_have_count(3)
    titles.nth(2).fill("Maybe")
    with page.expect_response(lambda r: r.url.endswith("/v1/providers/markets") and r.request.method == "POST") as created:
        form.get_by_role("button", name="Create market").click()
    assert created.value.status == 201, created.value.text()
    assert created.value.request.headers.get("authorization") == f"Bearer {world.api_key}"
    market_id = created.value.json()["market"]["id"]
    detail = world.market(market_id)
    assert detail["question"] == question
    assert detail["liquidity"] == tokens("2500.5")
    assert detail["category"] == "console-tests"
    assert detail["creator_wallet_id"] == world.creator_wallet_id
    assert detail["creator_fee_percentage"] == 1.25
    assert [o["title"] for o in detail["outcomes"]] == ["Yes", "No", "Maybe"]
    expect(page.get_by_test_id("console-markets").get_by_text(question)).to_be_visible()

    # Update it (only what changed is sent) and add a fourth outcome.
    manage = page.get_by_role("region", name="Manage market")
    expect(manage).to_be_visible()
    question = question.replace("create this market", "edit this market")
    manage.get_by_label("Question").fill(question)
    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{market_id}") and r.request.method == "PUT") as updated:
        manage.get_by_role("button", name="Save changes").click()
    assert updated.value.status == 200, updated.value.text()
    assert updated.value.request.post_data_json == {"question": question}
    assert world.market(market_id)["question"] == question
    manage.get_by_label("New outcome").fill("Postponed")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{market_id}/outcomes")) as added:
        manage.get_by_role("button", name="Add outcome").click()
    assert added.value.status in (200, 201), added.value.text()
    detail = world.market(market_id)
    assert [o["title"] for o in detail["outcomes"]] == ["Yes", "No", "Maybe", "Postponed"]
    expect(page.get_by_test_id("console-markets").get_by_text(question)).to_be_visible()

    # A trader holds "Maybe"; the console resolves it the winner.
    trader = world.login(User.named("console-trader"))
    world.fund(trader, 50)
    maybe = next(o["id"] for o in detail["outcomes"] if o["title"] == "Maybe")
    world.bet(trader, market_id, maybe, tokens(10))
    resolve_outcome = page.get_by_test_id("resolve-outcome")
    expect(resolve_outcome).to_be_visible()
    expect(page.get_by_label("Resolver wallet id")).to_have_value("console")
    resolve_outcome.select_option(label="Maybe")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{market_id}/resolve")) as resolved:
        page.get_by_test_id("resolve-button").click()
    assert resolved.value.status == 200, resolved.value.text()
    body = resolved.value.request.post_data_json
    assert body["winning_outcome_id"] == maybe and body["resolver_wallet_id"] == "console", body
    detail = world.market(market_id)
    assert detail["status"] == "resolved" and detail["winning_outcome_id"] == maybe
    [holding] = world.holdings(trader, market_id)
    assert holding["status"] == "won" and holding["is_claimable"] is True
    expect(page.get_by_test_id("console-markets").get_by_text(question)).to_be_visible()
    expect(page.get_by_test_id("resolve-button")).to_have_count(0)

    # Cancel another market, chosen from the console's list; its trader is refunded.
    other = world.create_market("Will the console cancel this market?")
    world.bet(trader, other.id, other.outcome("Yes"), tokens(5))
    page.get_by_role("region", name="Your markets").get_by_role("button", name="Refresh").click()
    page.get_by_test_id("console-markets").get_by_text(other.question).click()
    cancel = page.get_by_role("button", name="Cancel market")
    expect(cancel).to_be_visible()
    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{other.id}/cancel")) as cancelled:
        cancel.click()
    assert cancelled.value.status == 200, cancelled.value.text()
    assert world.market(other.id)["status"] == "cancelled"
    [refunded] = world.holdings(trader, other.id)
    assert refunded["status"] == "refunded"
    expect(cancel).to_have_count(0)
