"""The provider console: the API key stays in the tab, and markets are created, resolved and
cancelled through it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import expect

from hanson_web import Server, User, World, tokens, wait_until

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
    # Resolve and cancel ask first; each question is answered yes.
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))

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
    # The panel re-renders from the refreshed market; typing before that would be lost.
    expect(page.get_by_test_id("console-selected-question")).to_have_text(question)
    manage.get_by_label("New outcome").fill("Postponed")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{market_id}/outcomes")) as added:
        manage.get_by_role("button", name="Add outcome").click()
    assert added.value.status in (200, 201), added.value.text()
    detail = world.market(market_id)
    assert [o["title"] for o in detail["outcomes"]] == ["Yes", "No", "Maybe", "Postponed"]
    expect(page.get_by_test_id("console-outcomes").get_by_test_id("console-outcome")).to_have_count(4)
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
    assert body["dispute_window_seconds"] == 0 and len(asked) == 1 and "Maybe" in asked[0], (body, asked)
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
    assert len(asked) == 2, asked
    assert world.market(other.id)["status"] == "cancelled"
    [refunded] = world.holdings(trader, other.id)
    assert refunded["status"] == "refunded"
    expect(cancel).to_have_count(0)


def test_console_pauses_resumes_and_resolves_with_a_dispute_window(world, open_tab):
    tab = open_tab()
    page = open_console(tab, world)
    market = world.create_market("Will the console pause and then resolve with a window?")
    trader = world.login(User.named("window-trader"))
    world.fund(trader, 50)
    world.bet(trader, market.id, market.outcome("Yes"), tokens(5))
    page.get_by_role("region", name="Your markets").get_by_role("button", name="Refresh").click()
    page.get_by_test_id("console-markets").get_by_text(market.question).click()

    # Pause with a reason: trading answers 409 market_paused; the console says since when.
    pause = page.get_by_test_id("pause-button")
    expect(pause).to_be_visible()
    page.get_by_test_id("pause-reason").fill("Checking the score feed")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{market.id}/pause")) as paused:
        pause.click()
    assert paused.value.status == 200, paused.value.text()
    assert paused.value.request.headers.get("idempotency-key"), "the pause had no Idempotency-Key"
    detail = world.market(market.id)
    assert detail["trading_paused"] is True and detail["paused_reason"] == "Checking the score feed", detail
    expect(page.get_by_test_id("console-paused")).to_contain_text("Checking the score feed")
    status, refused = world.api.request("POST", "/v1/markets/bet-preview", {"outcome_id": market.outcome("Yes"), "amount": tokens(1)})
    assert status == 409 and refused["code"] == "market_paused", refused

    # The market page shows it paused, and its ticket does not trade.
    viewer = open_tab().page
    viewer.goto(f"/markets/{market.id}")
    expect(viewer.get_by_test_id("market-notice")).to_contain_text("paused")
    expect(viewer.get_by_test_id("market-notice")).to_contain_text("Checking the score feed")
    expect(viewer.get_by_test_id("ticket-buy")).to_be_disabled()

    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{market.id}/resume")) as resumed:
        page.get_by_test_id("resume-button").click()
    assert resumed.value.status == 200, resumed.value.text()
    assert world.market(market.id)["trading_paused"] is False
    expect(viewer.get_by_test_id("market-notice")).to_be_hidden()
    # The console has drawn the market again (its forms anew) before they are filled in.
    expect(page.get_by_test_id("pause-button")).to_be_visible()

    # Resolve with a 60-minute window, confirmed first: final_at is shown, and it may be resolved again.
    asked: list[str] = []
    answer = {"yes": True}
    page.on("dialog", lambda d: (asked.append(d.message), d.accept() if answer["yes"] else d.dismiss()))
    page.get_by_test_id("resolve-outcome").select_option(label="Yes")
    page.get_by_test_id("resolve-window").fill("60")
    with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/markets/{market.id}/resolve")) as resolved:
        page.get_by_test_id("resolve-button").click()
    assert resolved.value.status == 200, resolved.value.text()
    assert resolved.value.request.post_data_json["dispute_window_seconds"] == 3600
    assert len(asked) == 1 and "dispute window" in asked[0], asked
    final_at = resolved.value.json()["final_at"]
    detail = world.market(market.id)
    assert detail["resolution_pending"] is True and detail["final_at"] == final_at, detail
    expect(page.get_by_test_id("console-final-at")).to_be_visible()
    expect(page.get_by_test_id("resolve-button")).to_have_text("Resolve again")
    expect(viewer.get_by_test_id("market-notice")).to_contain_text("final at")

    # A question answered no sends nothing and changes nothing.
    answer["yes"] = False
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/cancel") else None)
    page.get_by_role("button", name="Cancel market").click()
    expect(page.get_by_test_id("cancel-error")).to_contain_text("Not confirmed")
    assert len(asked) == 2 and sent == [], (asked, sent)
    assert world.market(market.id)["status"] == "resolved"


class _Receiver:
    """A webhook endpoint on 127.0.0.1: answers 200 and keeps every request it got."""

    def __init__(self):
        self.requests: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                receiver.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks/hanson"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_console_manages_webhooks_and_shows_deliveries(open_tab):
    # A server of its own that may deliver to http://127.0.0.1 (--webhook-allow-private).
    server = Server(extra_args=["--webhook-allow-private"]).start()
    receiver = _Receiver()
    try:
        world = World.create(server)
        tab = open_tab(base_url=server.base)
        page = open_console(tab, world)
        section = page.get_by_role("region", name="Webhooks")
        expect(section).to_be_visible()

        # Create an endpoint for the receiver, subscribed to every event.
        section.get_by_test_id("webhook-url").fill(receiver.url)
        section.get_by_test_id("webhook-description").fill("browser tests")
        expect(section.get_by_test_id("webhook-type-all")).to_be_checked()
        with page.expect_response(lambda r: r.url.endswith("/v1/providers/webhooks") and r.request.method == "POST") as created:
            section.get_by_test_id("webhook-create").click()
        assert created.value.status == 201, created.value.text()
        endpoint = created.value.json()
        assert endpoint["url"] == receiver.url and endpoint["event_types"] == ["*"], endpoint

        # The secret is shown once: on the page now, and nowhere after a reload or in the API.
        secret_el = section.get_by_test_id("webhook-secret")
        expect(secret_el).to_be_visible()
        secret = secret_el.inner_text().strip()
        assert secret.startswith("whsec_") and secret == endpoint["secret"], secret
        row = section.get_by_test_id("webhook-row").filter(has_text=receiver.url)
        expect(row).to_have_count(1)
        expect(row).to_have_attribute("data-webhook-id", endpoint["id"])
        expect(row.get_by_test_id("webhook-state")).to_have_text("Enabled")
        listed = world.api.get("/v1/providers/webhooks", world.api_key)["data"]
        assert [w["id"] for w in listed] == [endpoint["id"]], listed
        assert "secret" not in listed[0] or not listed[0]["secret"], listed[0]
        section.get_by_test_id("webhook-secret-done").click()
        expect(secret_el).to_be_hidden()
        page.reload()
        row = page.get_by_test_id("webhook-row").filter(has_text=receiver.url)
        expect(row).to_have_count(1)
        assert secret not in page.content(), "the secret is shown again after a reload"

        # A test event from the UI reaches the receiver, signed as Standard Webhooks say.
        row.get_by_test_id("webhook-deliveries").click()
        expect(row.get_by_text("No deliveries.")).to_be_visible()
        with page.expect_response(lambda r: r.url.endswith(f"/v1/providers/webhooks/{endpoint['id']}/test")) as sent:
            row.get_by_test_id("webhook-test").click()
        assert 200 <= sent.value.status < 300, sent.value.text()
        wait_until(lambda: any(b"webhook.test" in r["body"] for r in receiver.requests), timeout=15,
                   message="the receiver to get the webhook.test event")
        tests = [r for r in receiver.requests if json.loads(r["body"]).get("type") == "webhook.test"]
        assert len(tests) == 1, [r["body"] for r in receiver.requests]
        got = tests[0]
        assert got["path"] == "/hooks/hanson", got["path"]
        headers = got["headers"]
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            assert headers.get(name), f"no {name} header: {headers}"
        signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + got["body"]
        key = base64.b64decode(secret.removeprefix("whsec_"))
        expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        assert expected in headers["webhook-signature"].split(" "), (headers["webhook-signature"], expected)

        # The deliveries list shows it as succeeded (refreshed until the attempt is recorded).
        delivery = row.get_by_test_id("delivery-row")
        for _ in range(100):
            if delivery.count() == 1 and delivery.get_attribute("data-status") == "succeeded":
                break
            row.get_by_test_id("delivery-refresh").click()
            page.wait_for_timeout(100)
        expect(delivery).to_have_count(1)
        expect(delivery).to_have_attribute("data-status", "succeeded")
        expect(delivery).to_contain_text("webhook.test")
        expect(delivery).to_contain_text("200")
        api_deliveries = world.api.get(f"/v1/providers/webhooks/{endpoint['id']}/deliveries", world.api_key)["data"]
        assert [(d["event_type"], d["status"], d["last_status_code"]) for d in api_deliveries] == [("webhook.test", "succeeded", 200)], api_deliveries
        assert api_deliveries[0]["event_id"] == headers["webhook-id"], (api_deliveries[0], headers["webhook-id"])
        expect(delivery).to_have_attribute("data-delivery-id", api_deliveries[0]["id"])

        # Disable it from the UI: the API says so.
        row.get_by_test_id("webhook-toggle").click()
        row = page.get_by_test_id("webhook-row").filter(has_text=receiver.url)
        expect(row).to_have_attribute("data-enabled", "false")
        expect(row.get_by_test_id("webhook-state")).to_have_text("Disabled")
        listed = world.api.get("/v1/providers/webhooks", world.api_key)["data"]
        assert [(w["id"], w["enabled"]) for w in listed] == [(endpoint["id"], False)], listed

        # Delete it from the UI: the API lists no endpoint.
        row.get_by_test_id("webhook-delete").click()
        expect(page.get_by_test_id("webhook-row")).to_have_count(0)
        expect(page.get_by_test_id("webhook-list")).to_contain_text("No endpoints yet.")
        assert world.api.get("/v1/providers/webhooks", world.api_key)["data"] == []
        status, _ = world.api.request("GET", f"/v1/providers/webhooks/{endpoint['id']}", token=world.api_key)
        assert status == 404, status
        assert len([r for r in receiver.requests if b"webhook.test" in r["body"]]) == 1, "the test event was delivered more than once"
    finally:
        receiver.close()
        server.stop()
    errors = server.errors_logged()
    assert not errors, "hanson serve logged errors:\n" + "\n".join(errors[:20])
    audit = server.audit()
    assert audit.returncode == 0, f"hanson audit failed:\n{audit.stdout}{audit.stderr}"
    server.remove()


def test_console_downloads_the_exports(world, open_tab):
    import urllib.request

    def server_export(what: str, fmt: str) -> bytes:
        request = urllib.request.Request(f"{world.server.base}/v1/providers/exports/{what}?format={fmt}")
        request.add_header("authorization", f"Bearer {world.api_key}")
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read()

    tab = open_tab()
    page = open_console(tab, world)
    for what, fmt, name in [("trades", "csv", "trades.csv"), ("ledger", "ndjson", "ledger.ndjson")]:
        page.get_by_test_id("export-format").select_option(fmt)
        with page.expect_download() as info:
            page.get_by_test_id(f"export-{what}").click()
        download = info.value
        assert download.suggested_filename == name
        with open(download.path(), "rb") as f:
            got = f.read()
        # The ledger only grows between the two reads in this session's world: compare its start.
        expected = server_export(what, fmt)
        assert got == expected[: len(got)] and got, (what, got[:200], expected[:200])
        if what == "trades":
            assert got.startswith(b"id,market_id,outcome_id,wallet_id,wallet_address,transaction_type,amount,shares,price,fee,net_amount,created_at\r\n")
