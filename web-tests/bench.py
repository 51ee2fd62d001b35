#!/usr/bin/env python3
"""Browser benchmark of the web app, in Debian's Chromium. Prints one JSON object per line.

Usage: python web-tests/bench.py [--part bytes,latency,chart] [--trades N] [--seed api|sql]
                                 [--points N] [--loads N] [--latency-trades N]

  bytes    JS + CSS bytes each page loads, as sent (gzip), per page. Target < 150 KB.
  latency  a bet placed with fetch from inside the market page, 100 times: from the bet's
           HTTP response to the moment the page's data-price shows the bet's new price, both
           read from the page's own performance.now() (a MutationObserver records when each
           price appears). p99 target < 250 ms.
  chart    a market with a million price points behind it: from navigation start to the
           price chart drawn (a price-chart with a candle window loaded and a canvas with
           pixels on it), median of --loads cold loads (a new browser context each) and of as
           many warm ones. Target < 500 ms. Seeding:
             --seed api (default): --trades real bets (default 1,000,000) through the HTTP
               API from several processes of keep-alive clients with many wallets; each bet
               records one price point per outcome, so 1,000,000 bets on a 2-outcome market
               leave 2,000,000 points. Takes minutes.
             --seed sql: --points price points (default 1,000,000) written straight into
               the SQLite file as crates/hanson-bench's price_history scenario does (spread
               over 30 days, then the candles rebuilt with the service's own
               price_candles_backfill.sql), with the server stopped meanwhile.

Starts its own `hanson serve` (HANSON_BIN, default target/debug/hanson; use a release build
for figures) on a fresh SQLite database for each part.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import sqlite3
import statistics
import sys
import threading
import time
import uuid

from playwright.sync_api import sync_playwright

from hanson_web import CHROMIUM, REPO, Api, Market, Server, User, World, tokens

TARGET_BYTES = 150 * 1024
TARGET_LATENCY_MS = 250
TARGET_CHART_MS = 500


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(values: list[float], p: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


# (c) bytes ---------------------------------------------------------------------------------------

def bench_bytes(browser, args) -> None:
    server = Server().start()
    try:
        world = World.create(server)
        market = world.create_market("How many bytes does a page load?")
        user = world.login(User.named("bytes"))
        world.fund(user, 10)
        world.bet(user, market.id, market.outcome("Yes"), tokens(1))
        pages = {
            "markets": "/",
            "market": f"/markets/{market.id}",
            "portfolio": f"/portfolio?provider_id={world.provider_id}",
            "console": "/console",
        }
        for name, path in pages.items():
            context = browser.new_context(base_url=server.base)
            page = context.new_page()
            responses = []
            page.on("response", lambda r: responses.append(r))
            page.goto(path, wait_until="networkidle")
            files = []
            for response in responses:
                kind = response.request.resource_type
                if kind not in ("script", "stylesheet"):
                    continue
                response.finished()
                sizes = response.request.sizes()
                files.append({
                    "url": response.url.removeprefix(server.base),
                    "encoding": response.headers.get("content-encoding", "identity"),
                    "sent": sizes["responseBodySize"],
                    "raw": len(response.body()),
                })
            sent = sum(f["sent"] for f in files)
            emit({"bench": "page_bytes", "page": name, "js_css_bytes_sent": sent,
                  "js_css_bytes_raw": sum(f["raw"] for f in files), "files": len(files),
                  "all_gzip": all(f["encoding"] == "gzip" for f in files),
                  "target_bytes": TARGET_BYTES, "ok": sent < TARGET_BYTES,
                  "largest": sorted(files, key=lambda f: -f["sent"])[:3]})
            context.close()
    finally:
        server.remove()


# (b) latency -------------------------------------------------------------------------------------

OBSERVE_PRICES = """
() => {
  // Every (outcome, price) the page shows, with the performance.now() of the DOM change.
  const seen = [];
  window.__benchSeen = seen;
  const last = new Map();
  const scan = () => {
    const now = performance.now();
    for (const e of document.querySelectorAll('[data-testid=outcome-price]')) {
      const id = e.dataset.outcomeId, price = e.dataset.price;
      if (last.get(id) !== price) { last.set(id, price); seen.push([id, price, now]); }
    }
  };
  scan();
  new MutationObserver(scan).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-price'] });
}
"""

TRADE_AND_WAIT = """
async ({ marketId, outcomeId, amount, token, sessionId }) => {
  const seen = window.__benchSeen;
  const from = seen.length;
  const started = performance.now();
  const response = await fetch(`/v1/markets/${marketId}/bet`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ session_id: sessionId, outcome_id: outcomeId, amount }),
  });
  const answered = performance.now();
  const receipt = await response.json();
  if (!response.ok) return { error: receipt };
  const want = receipt.new_outcome_price;
  const deadline = answered + 5000;
  while (performance.now() < deadline) {
    for (let i = from; i < seen.length; i++) {
      if (seen[i][0] === outcomeId && seen[i][1] === want) {
        return { started, answered, shown: seen[i][2], price: want };
      }
    }
    await new Promise((r) => requestAnimationFrame(r));
  }
  return { started, answered, shown: null, price: want };
}
"""


def bench_latency(browser, args) -> None:
    server = Server().start()
    try:
        world = World.create(server)
        market = world.create_market("How fast does a trade reach the page?", liquidity=100_000)
        user = world.login(User.named("latency"))
        world.fund(user, 10_000)
        context = browser.new_context(base_url=server.base)
        page = context.new_page()
        page.goto(f"/markets/{market.id}")
        page.wait_for_function("() => document.querySelectorAll('[data-testid=outcome-price]').length === 2")
        page.wait_for_timeout(500)
        page.evaluate(OBSERVE_PRICES)
        rng = random.Random(7)
        latencies, early, missing, http_ms = [], 0, 0, []
        for n in range(args.latency_trades):
            outcome = market.outcomes[n % 2]["id"]
            r = page.evaluate(TRADE_AND_WAIT, {
                "marketId": market.id, "outcomeId": outcome, "amount": tokens(rng.choice(["1", "2.5", "4"])),
                "token": user.access_token, "sessionId": user.session_id})
            if "error" in r:
                raise SystemExit(f"bet failed: {r['error']}")
            http_ms.append(r["answered"] - r["started"])
            if r["shown"] is None:
                missing += 1
                continue
            delta = r["shown"] - r["answered"]
            early += delta < 0
            latencies.append(max(0.0, delta))
            page.wait_for_timeout(20)
        context.close()
        emit({"bench": "trade_to_page", "trades": args.latency_trades, "shown": len(latencies), "missing": missing,
              "shown_before_response": early,
              "p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
              "p99_ms": round(percentile(latencies, 99), 1) if latencies else None,
              "max_ms": round(max(latencies), 1) if latencies else None,
              "bet_http_p50_ms": round(percentile(http_ms, 50), 1),
              "target_ms": TARGET_LATENCY_MS,
              "ok": missing == 0 and bool(latencies) and percentile(latencies, 99) < TARGET_LATENCY_MS})
    finally:
        server.remove()


# (a) chart over a million points ----------------------------------------------------------------

CHART_WATCH = """
(() => {
  // The first animation frame in which the price chart has loaded its candle window (the
  // chart sets data-interval on its container after drawing the history) and its canvas shows
  // pixels: performance.now() counts from the navigation start.
  window.__benchChart = null;
  const drawn = (c) => {
    if (!c.width || !c.height) return false;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 4 * 13) if (d[i] !== 0) return true;
    return false;
  };
  const check = () => {
    const chart = document.querySelector('[data-testid=price-chart]');
    const host = chart && (chart.matches('[data-interval]') ? chart : chart.querySelector('[data-interval]'));
    if (host) {
      for (const c of chart.querySelectorAll('canvas')) {
        if (drawn(c)) { window.__benchChart = performance.now(); return; }
      }
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
})();
"""


def seed_api(server: Server, world: World, market, trades: int, processes: int, threads: int) -> float:
    """`trades` real bets through the HTTP API from `processes` x `threads` keep-alive clients,
    each with a wallet of its own."""
    clients = processes * threads
    users = []
    for n in range(clients):
        user = world.login(User.named(f"bench-seed-{n}"))
        world.fund(user, 10**7)
        users.append((user.access_token, user.session_id))
    outcomes = [o["id"] for o in market.outcomes]
    started = time.monotonic()
    counter = multiprocessing.Value("q", 0)
    jobs = []
    per = [trades // processes + (1 if i < trades % processes else 0) for i in range(processes)]
    for i in range(processes):
        job = multiprocessing.Process(target=seed_worker, args=(
            server.base, market.id, outcomes, users[i * threads:(i + 1) * threads], per[i], counter))
        job.start()
        jobs.append(job)
    last = 0
    while any(j.is_alive() for j in jobs):
        time.sleep(10)
        done = counter.value
        elapsed = time.monotonic() - started
        note(f"seed: {done:,} bets in {elapsed:.0f} s ({(done - last) / 10:,.0f}/s lately)")
        last = done
    for j in jobs:
        j.join()
        if j.exitcode != 0:
            raise SystemExit("a seeding process failed")
    return time.monotonic() - started


def seed_worker(base: str, market_id: str, outcomes: list[str], users: list, count: int, counter) -> None:
    host, port = base.removeprefix("http://").split(":")
    per = [count // len(users) + (1 if i < count % len(users) else 0) for i in range(len(users))]
    failures = []

    def client(index: int) -> None:
        token, session = users[index]
        rng = random.Random(index)
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        headers = {"content-type": "application/json", "authorization": f"Bearer {token}"}
        drift = 0
        for n in range(per[index]):
            # A random walk: lean toward one outcome for a while, then the other.
            if n % 500 == 0:
                drift = rng.randrange(len(outcomes))
            outcome = outcomes[drift] if rng.random() < 0.55 else rng.choice(outcomes)
            amount = str(rng.randrange(10**17, 5 * 10**18))
            body = json.dumps({"session_id": session, "outcome_id": outcome, "amount": amount})
            for attempt in range(5):
                try:
                    conn.request("POST", f"/v1/markets/{market_id}/bet", body, headers)
                    response = conn.getresponse()
                    payload = response.read()
                    break
                except (http.client.HTTPException, OSError):
                    conn.close()
                    conn = http.client.HTTPConnection(host, int(port), timeout=60)
                    if attempt == 4:
                        raise
            if response.status != 200:
                failures.append(payload[:300])
                return
            if n % 100 == 99:
                with counter.get_lock():
                    counter.value += 100
        with counter.get_lock():
            counter.value += per[index] % 100

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(users))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        print(f"seed: a bet failed: {failures[0]!r}", file=sys.stderr)
        sys.exit(1)


def seed_sql(server: Server, market, points: int, days: int = 30) -> float:
    """As crates/hanson-bench's price_history seed: `points` rows of price_points in one
    2-outcome market (points / 2 instants, one point per outcome each), evenly over `days` days
    ending a minute ago, a random walk of outcome 0's price (outcome 1 its complement), volume on
    one outcome per instant with running totals; the market's creation moved to before the
    first point; then the candles rebuilt with the service's own SQL. The server is stopped
    meanwhile and started again on the same address afterwards."""
    started = time.monotonic()
    server.stop()
    o0, o1 = market.outcomes[0]["id"], market.outcomes[1]["id"]
    rng = random.Random(11)
    instants = max(1, points // 2)
    now = int(time.time() * 1_000_000)
    to = now - 60_000_000
    start = to - days * 86_400_000_000
    step = max(1, (to - start) // instants)
    ppm = 500_000
    total0 = total1 = 0
    db = sqlite3.connect(server.database)
    db.execute("PRAGMA journal_mode=WAL")
    rows = []
    insert = "INSERT INTO price_points (market_id, outcome_id, price, volume, cum_volume, at) VALUES (?,?,?,?,?,?)"
    for k in range(instants):
        at = start + k * step + rng.randrange(max(1, step // 2))
        ppm = min(980_000, max(20_000, ppm + rng.randrange(0, 4_000) - 2_000))
        p0 = ppm * 10**30  # prices are kept in 10^-36 units
        volume = rng.randrange(10**17, 5 * 10**18)
        v0, v1 = (volume, 0) if rng.randrange(2) == 0 else (0, volume)
        total0 += v0
        total1 += v1
        rows.append((market.id, o0, str(p0), str(v0), str(total0), at))
        rows.append((market.id, o1, str(10**36 - p0), str(v1), str(total1), at))
        if len(rows) >= 50_000:
            db.executemany(insert, rows)
            db.commit()
            rows.clear()
    if rows:
        db.executemany(insert, rows)
    # The market has existed as long as its history (the page picks its candle width and
    # window from the market's age).
    db.execute("UPDATE markets SET created_at = ? WHERE id = ?", (start - 3_600_000_000, market.id))
    with open(os.path.join(REPO, "crates", "hanson", "migrations", "price_candles_backfill.sql")) as f:
        backfill = f.read()
    db.execute("DELETE FROM price_candles")
    db.execute(backfill)
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    server.restart()
    return time.monotonic() - started


CHART_QUESTION = "What does a million price points look like?"


def bench_chart(browser, args) -> None:
    reuse = args.database is not None
    server = Server(workdir=os.path.dirname(os.path.abspath(args.database))) if reuse else Server()
    server.start()
    try:
        api = Api(server.base)
        if reuse:
            # A database a previous run seeded (its path was printed): measure again, no seeding.
            found = api.post("/v1/markets/search", {"filters": {"search_query": CHART_QUESTION}})["data"]
            detail = api.get(f"/v1/markets/{found[0]['id']}")
            market = Market(id=detail["id"], question=CHART_QUESTION, outcomes=detail["outcomes"],
                            token_id=detail["token"]["id"], decimals=detail["token"]["decimals"])
            trades = api.post("/v1/markets/positions/search", {"filters": {"market_id": market.id},
                                                               "pagination": {"page": 1, "per_page": 1}})["pagination"]["total"]
            seconds = 0.0
        else:
            world = World.create(server)
            market = world.create_market(CHART_QUESTION, liquidity=1_000_000, min_bet="1", fees=(0.5, 0.5))
            note(f"seeding {server.database} (measure it again with --database)")
            if args.seed == "api":
                seconds = seed_api(server, world, market, args.trades, args.processes, args.threads)
                trades = args.trades
            else:
                seconds = seed_sql(server, market, args.points)
                trades = 0
        points = api.post("/v1/markets/price-history/search",
                                {"filters": {"market_id": market.id}, "pagination": {"page": 1, "per_page": 1}})
        total_points = points["pagination"]["total"]
        note(f"seed: {total_points:,} price points in {seconds:.0f} s")

        def load(context) -> dict:
            page = context.new_page()
            page.goto(f"/markets/{market.id}")
            page.wait_for_function("() => window.__benchChart !== null", timeout=60_000)
            result = page.evaluate("""() => ({
                chart: window.__benchChart,
                interval: (document.querySelector('[data-testid=price-chart][data-interval], [data-testid=price-chart] [data-interval]') || {}).dataset?.interval,
                buckets: (document.querySelector('[data-testid=price-chart][data-points], [data-testid=price-chart] [data-points]') || {}).dataset?.points,
                marks: performance.getEntriesByType('mark').map(m => [m.name, m.startTime]),
                api: performance.getEntriesByType('resource').filter(r => r.name.includes('/v1/'))
                  .map(r => [r.name.replace(location.origin, '').slice(0, 40), Math.round(r.startTime), Math.round(r.duration)]),
                dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
            })""")
            page.close()
            return result

        def mark(result) -> float | None:
            return next((t for name, t in result["marks"] if name == "hanson:chart-drawn"), None)

        cold, warm, cold_marks, last = [], [], [], None
        for _ in range(args.loads):
            context = browser.new_context(base_url=server.base)
            context.add_init_script(CHART_WATCH)
            last = load(context)
            cold.append(last["chart"])
            cold_marks.append(mark(last))
            warm.append(load(context)["chart"])
            context.close()
        emit({"bench": "chart_first_render", "seed": "reused" if reuse else args.seed, "trades": trades, "price_points": total_points,
              "seed_s": round(seconds, 1), "loads": args.loads,
              "cold_median_ms": round(statistics.median(cold), 1), "cold_ms": [round(v, 1) for v in cold],
              "warm_median_ms": round(statistics.median(warm), 1), "warm_ms": [round(v, 1) for v in warm],
              "page_mark_chart_drawn_median_ms": round(statistics.median(cold_marks), 1) if None not in cold_marks else None,
              "api_requests_last_load": last["api"],
              "interval": last["interval"], "buckets_drawn": last["buckets"], "marks": last["marks"],
              "dom_content_loaded_ms": round(last["dcl"], 1),
              "target_ms": TARGET_CHART_MS, "ok": statistics.median(cold) < TARGET_CHART_MS})
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", default="bytes,latency,chart")
    parser.add_argument("--seed", choices=["api", "sql"], default="api")
    parser.add_argument("--trades", type=int, default=1_000_000, help="bets seeded with --seed api")
    parser.add_argument("--points", type=int, default=1_000_000, help="price points seeded with --seed sql")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--database", help="chart: measure on a database a previous run seeded (its hanson.db)")
    parser.add_argument("--latency-trades", type=int, default=100)
    args = parser.parse_args()
    parts = args.part.split(",")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        try:
            if "bytes" in parts:
                bench_bytes(browser, args)
            if "latency" in parts:
                bench_latency(browser, args)
            if "chart" in parts:
                bench_chart(browser, args)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
