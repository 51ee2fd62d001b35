"""The embeddable market card (`/embed/markets/{id}`), framed by a page of another site: it
shows the question, the API's exact prices live (from the ticker), a small chart and a link to
the market page,
in a light or a dark theme, under 60 KB; and no other page may be framed."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import expect

from hanson_web import User, tokens, wait_until


class HostSite:
    """Another site (http://localhost:<its own port>, so another origin and another site than
    the server's 127.0.0.1) serving one page that frames `src`."""

    def __init__(self):
        self.pages: dict[str, str] = {}
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = site.pages.get(self.path, "not here").encode()
                self.send_response(200 if self.path in site.pages else 404)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://localhost:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def frame(self, path: str, src: str) -> str:
        self.pages[path] = f'<!doctype html><title>A blog</title><link rel="icon" href="data:,"><h1>A blog post</h1><iframe src="{src}" width="400" height="320"></iframe>'
        return self.base + path

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def host_site():
    site = HostSite()
    yield site
    site.close()


def test_the_embed_is_live_inside_another_sites_iframe(world, open_tab, host_site):
    market = world.create_market("Will the embedded card follow the market live?", outcomes=("Yes", "No", "Draw"))
    yes = market.outcome("Yes")
    trader = world.login(User.named("embed-trader"))
    world.fund(trader, 100)
    world.bet(trader, market.id, yes, tokens(5))

    tab = open_tab()
    page = tab.page
    sizes = []
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("requestfinished", lambda r: sizes.append((r.url, r.sizes())) if "/ticker" not in r.url else None)
    page.goto(host_site.frame("/post", f"{world.server.base}/embed/markets/{market.id}"))
    card = page.frame_locator("iframe")
    expect(card.get_by_test_id("embed-question")).to_have_text(market.question)
    expect(card.get_by_test_id("embed-question")).to_have_attribute("href", f"{world.server.base}/markets/{market.id}")
    expect(card.get_by_test_id("embed-link")).to_have_attribute("href", f"{world.server.base}/markets/{market.id}")

    def shown_prices():
        return card.locator("[data-testid=embed-price]").evaluate_all(
            "els => Object.fromEntries(els.map(e => [e.dataset.outcomeId, e.dataset.price]))")

    wait_until(lambda: shown_prices() == world.prices(market.id), message="the API's prices in the card")
    expect(card.get_by_test_id("embed-chart").locator("svg path")).to_have_count(3)
    expect(card.get_by_test_id("embed-live")).to_have_attribute("data-state", "live")

    # A bet moves the card's prices without a reload: the card follows the market's ticker.
    assert f"{world.server.base}/v1/markets/{market.id}/ticker" in requests, requests
    world.bet(trader, market.id, market.outcome("Draw"), tokens(20))
    wait_until(lambda: shown_prices() == world.prices(market.id), message="the prices after a bet")
    expect(card.get_by_test_id("embed-volume")).to_have_text("25 USDC volume")

    # Everything the card loaded, as sent (gzip), stays under 60 KB.
    page.wait_for_load_state("networkidle")
    loaded = [(url, s["responseBodySize"] + s["responseHeadersSize"]) for url, s in sizes if url.startswith(world.server.base)]
    total = sum(n for _, n in loaded)
    assert 0 < total < 60 * 1024, f"{total} bytes: {loaded}"

    # The light theme by default, the dark one when asked.
    light = card.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")
    page.goto(host_site.frame("/dark", f"{world.server.base}/embed/markets/{market.id}?theme=dark"))
    dark_card = page.frame_locator("iframe")
    expect(dark_card.get_by_test_id("embed-question")).to_be_visible()
    dark = dark_card.locator("body").evaluate("b => getComputedStyle(b).backgroundColor")
    assert (light, dark) == ("rgb(255, 255, 255)", "rgb(11, 18, 32)"), (light, dark)


def test_no_other_page_may_be_framed(world, open_tab, host_site):
    market = world.create_market("Is the market page itself kept out of frames?")
    tab = open_tab()
    tab.allow_error(r"violates the following Content Security Policy directive: \"frame-ancestors 'none'\"")
    page = tab.page
    page.goto(host_site.frame("/page", f"{world.server.base}/markets/{market.id}"))
    page.wait_for_timeout(500)
    frame = page.frames[1]
    assert frame.url in ("about:blank", "chrome-error://chromewebdata/") or "Loading market" not in frame.content(), frame.url
    assert page.frame_locator("iframe").get_by_test_id("market-question").count() == 0


def test_the_embed_shows_a_settlement_live(world, open_tab):
    market = world.create_market("Will the embedded card show the winner when it resolves?")
    yes = market.outcome("Yes")
    page = open_tab().page
    page.goto(f"/embed/markets/{market.id}?theme=dark")
    expect(page.get_by_test_id("embed-live")).to_have_attribute("data-state", "live")
    world.resolve(market.id, yes)
    expect(page.get_by_test_id("embed-result")).to_have_text("Yes won.")
    expect(page.get_by_test_id("embed-price").first).to_have_text("Won")
    expect(page.get_by_test_id("embed-live")).to_have_text("Settled")
