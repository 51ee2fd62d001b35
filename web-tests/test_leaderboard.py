"""Leaderboards in the browser: the /leaderboard page (a market's board, a provider's board in
a token) and the market page's leaderboard tab show the API's board, in its order, by profit
and by volume."""
from __future__ import annotations

from playwright.sync_api import expect

from hanson_web import User, tokens


def rows_of(page, container: str = "body") -> list[dict]:
    return page.evaluate("""sel => [...document.querySelector(sel).querySelectorAll('[data-testid=leaderboard-row]')]
        .map(r => ({ wallet_id: r.dataset.walletId, rank: Number(r.dataset.rank), profit: r.dataset.profit, volume: r.dataset.volume }))""", container)


def board(world, path: str) -> list[dict]:
    return [{k: r[k] for k in ("wallet_id", "rank", "profit", "volume")} for r in world.api.get(path)["data"]]


def test_leaderboards_show_the_apis_boards(world, open_tab):
    market = world.create_market("Who tops the leaderboard?", outcomes=("Up", "Down"))
    for name, outcome, amount in (("board-a", "Up", 20), ("board-b", "Down", 35), ("board-c", "Up", 5)):
        user = world.login(User.named(name))
        world.fund(user, 100)
        world.bet(user, market.id, market.outcome(outcome), tokens(amount))

    page = open_tab().page
    page.goto(f"/leaderboard?market_id={market.id}")
    expected = board(world, f"/v1/markets/{market.id}/leaderboard?by=profit")
    expect(page.get_by_test_id("leaderboard-row")).to_have_count(3)
    assert rows_of(page) == expected
    page.get_by_role("group", name="Rank by").get_by_role("button", name="Volume").click()
    expected = board(world, f"/v1/markets/{market.id}/leaderboard?by=volume")
    page.wait_for_function("want => document.querySelector('[data-testid=leaderboard-row]')?.dataset.walletId === want", arg=expected[0]["wallet_id"])
    assert rows_of(page) == expected

    # The provider's board in the token.
    page.goto(f"/leaderboard?provider_id={world.provider_id}")
    expected = board(world, f"/v1/providers/{world.provider_id}/leaderboard?token_id={world.token_id}&by=profit&per_page=50")
    page.get_by_test_id("leaderboard-token").select_option(world.token_id)
    expect(page.get_by_test_id("leaderboard-row")).to_have_count(len(expected))
    assert rows_of(page) == expected

    # The market page's tab.
    page.goto(f"/markets/{market.id}")
    page.get_by_role("tab", name="Leaderboard").click()
    expect(page.get_by_test_id("market-leaderboard").get_by_test_id("leaderboard-row")).to_have_count(3)
    assert rows_of(page, "[data-testid=market-leaderboard]") == board(world, f"/v1/markets/{market.id}/leaderboard?by=profit")
    page.get_by_role("tab", name="Trades").click()
    expect(page.get_by_test_id("trade-row").first).to_be_visible()
