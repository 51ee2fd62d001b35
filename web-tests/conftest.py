"""Fixtures: one real `hanson serve` per test session, Debian's Chromium, and browser tabs that
fail their test on any console error."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright, expect

from hanson_web import CHROMIUM, Server, User, Wallet, World, install_wallet

DESKTOP = {"width": 1280, "height": 800}
MOBILE = {"width": 375, "height": 812}

expect.set_options(timeout=10_000)


@pytest.fixture(scope="session")
def server():
    server = Server().start()
    yield server
    server.stop()
    # Whatever the browsers bought, sold, claimed or cancelled, the books still balance, and
    # the server logged no error.
    audit = server.audit()
    assert audit.returncode == 0, f"hanson audit failed:\n{audit.stdout}{audit.stderr}"
    errors = server.errors_logged()
    assert not errors, "hanson serve logged errors:\n" + "\n".join(errors[:20])
    server.remove()  # kept when a check above failed


@pytest.fixture(scope="session")
def world(server) -> World:
    return World.create(server)


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


@dataclass
class Tab:
    """A page in its own browser context, with the wallet it holds (if any) and what it logged."""
    page: Page
    context: BrowserContext
    wallet: Wallet | None
    errors: list[str] = field(default_factory=list)
    # "Failed to load resource" lines for these statuses are API errors the app shows the
    # user, which the web app's rules allow; a test that provokes one says so.
    allowed_statuses: set[int] = field(default_factory=set)
    # Lines a test expects by what it does (a connection refused while it restarts the server).
    allowed_patterns: list[str] = field(default_factory=list)

    def allow_http_error(self, status: int) -> None:
        self.allowed_statuses.add(status)

    def allow_error(self, pattern: str) -> None:
        self.allowed_patterns.append(pattern)

    def unexpected_errors(self) -> list[str]:
        def allowed(line: str) -> bool:
            m = re.search(r"Failed to load resource: the server responded with a status of (\d+)", line)
            if m and int(m.group(1)) in self.allowed_statuses:
                return True
            return any(re.search(p, line) for p in self.allowed_patterns)
        return [e for e in self.errors if not allowed(e)]


@pytest.fixture
def open_tab(browser: Browser, server: Server):
    """open_tab(user=None, viewport=DESKTOP) -> Tab; each test's tabs must log no console error."""
    tabs: list[Tab] = []

    def open_tab(user: User | None = None, viewport=None, base_url: str | None = None, **context_options) -> Tab:
        context = browser.new_context(base_url=base_url or server.base, viewport=viewport or DESKTOP, **context_options)
        wallet = install_wallet(context, user) if user else None
        page = context.new_page()
        tab = Tab(page=page, context=context, wallet=wallet)
        watch(tab, page)
        context.on("page", lambda p: watch(tab, p))
        tabs.append(tab)
        return tab

    yield open_tab

    problems = []
    for tab in tabs:
        problems += tab.unexpected_errors()
        tab.context.close()
    assert not problems, "console errors:\n" + "\n".join(problems)


def watch(tab: Tab, page: Page) -> None:
    def on_console(message):
        if message.type == "error":
            location = message.location or {}
            tab.errors.append(f"{page.url}: console.error: {message.text} ({location.get('url', '')}:{location.get('lineNumber', '')})")

    page.on("console", on_console)
    page.on("pageerror", lambda error: tab.errors.append(f"{page.url}: uncaught: {error}"))
