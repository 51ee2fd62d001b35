"""`/docs`: the API reference renders from the binary alone (no request leaves the server),
every operation listed, each with its request body schema and field descriptions."""

from __future__ import annotations

import json
import urllib.request

from playwright.sync_api import expect


def test_docs_render_every_operation_from_the_binary(open_tab, server):
    spec = json.load(urllib.request.urlopen(f"{server.base}/v1/openapi.json"))
    # Every operation, and every webhook delivery (OpenAPI 3.1 `webhooks`).
    items = list(spec["paths"].values()) + list(spec.get("webhooks", {}).values())
    operations = sum(1 for item in items for method in item if method in ("get", "post", "put", "delete"))
    tab = open_tab()
    page = tab.page
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("/docs")
    nav = page.locator("rapi-doc .nav-bar-path")
    expect(nav.first).to_be_visible()
    expect(nav).to_have_count(operations)
    page.locator("rapi-doc .nav-bar-path", has_text="Place a bet").first.click()
    # The bet's body, with a field's description, and its errors.
    expect(page.locator("rapi-doc").get_by_text("The access token's session.").first).to_be_visible()
    expect(page.locator("rapi-doc").get_by_text("409").first).to_be_visible()
    outside = [url for url in requested if not url.startswith(server.base) and not url.startswith("data:")]
    assert outside == [], outside
