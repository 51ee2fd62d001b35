#!/usr/bin/env python3
"""Schemathesis against a live `hanson serve`, as each kind of caller.

Usage: run.py HANSON_BINARY [WORK_DIR]   (WORK_DIR, kept: the database, the server's log,
the fixture, the configuration used and a JUnit report per run; by default a temporary
directory, removed when every run passes)

Starts `hanson serve` on a fresh SQLite database, sets up what the API needs to be reached
past its first checks (a provider and its API key, a token, a funded treasury and wallets,
an open market, a user logged in with a real wallet signature), then runs `st run` with
`--checks all` against the served OpenAPI document:

  anonymous   no credentials
  user        `Authorization: Bearer <access token>` (logout is left to its own run, so the
              session stays live for the rest)
  logout      POST /v1/auth/logout with a second session's token
  provider    `Authorization: Bearer <API key>`

Each run must end with no failure of any check, the server must log no error, and `hanson
audit` must pass on the database afterwards; the configuration and the reasons for each
setting are in schemathesis.toml beside this script. Exits non-zero if anything fails.
Standard library only, apart from schemathesis itself.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

# A well-known test key (the README's); never use it for anything real.
USER_KEY = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
USER_ADDRESS = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23"


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    keep = len(sys.argv) > 2
    work = os.path.abspath(sys.argv[2]) if keep else tempfile.mkdtemp(prefix="hanson-schemathesis-")
    os.makedirs(work, exist_ok=True)
    env = {**os.environ, "HANSON_DATABASE_URL": f"sqlite://{work}/hanson.db"}
    server = subprocess.Popen(
        # Auth routes are rate limited per IP by default; the fuzzer is one IP sending thousands.
        [binary, "serve", "--listen", "127.0.0.1:0", "--auth-rate-per-ip", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(os.path.join(work, "serve.log"), "w"),
        text=True,
    )
    failed = ["setup"]
    try:
        line = server.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if not match:
            print(f"hanson serve did not start: {line!r}", file=sys.stderr)
            return 1
        base = match.group(1)
        fixture = set_up(binary, env, base)
        with open(os.path.join(work, "fixture.json"), "w") as f:
            json.dump(fixture, f, indent=2)
        config = write_config(work, fixture)
        failed = [role for role, extra in runs(fixture) if not schemathesis(role, base, config, work, extra, fixture)]
        if server_errors(work):
            failed.append("server log")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    # Whatever the fuzzer bought, sold, deposited or cancelled, the books still balance.
    if subprocess.run([binary, "audit"], env=env).returncode != 0:
        failed.append("audit")
    if failed:
        print(f"schemathesis: failed ({', '.join(failed)}); everything is in {work}", file=sys.stderr)
        return 1
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    print("schemathesis: every run passed, and the audit")
    return 0


def runs(fixture):
    """(role, extra `st run` arguments) for each run."""
    user = ["-H", f"Authorization: Bearer {fixture['access_token']}"]
    return [
        ("anonymous", []),
        ("user", user + ["--exclude-path", "/v1/auth/logout"]),
        ("logout", ["-H", f"Authorization: Bearer {fixture['logout_access_token']}", "--include-path", "/v1/auth/logout"]),
        ("provider", ["-H", f"Authorization: Bearer {fixture['api_key']}"]),
    ]


def schemathesis(role, base, config, work, extra, fixture) -> bool:
    reports = os.path.join(work, role)
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", config, "run", f"{base}/v1/openapi.json",
        "--checks", "all",
        "--report", "junit", "--report-dir", reports,
        *extra,
    ]
    shown = [a.replace(fixture["access_token"], "$ACCESS_TOKEN").replace(fixture["logout_access_token"], "$LOGOUT_TOKEN").replace(fixture["api_key"], "$API_KEY") for a in command]
    print(f"== schemathesis as {role}: st {' '.join(shown[3:])}", flush=True)
    started = time.monotonic()
    result = subprocess.run(command, cwd=work, env={**os.environ, "NO_COLOR": "1"})
    print(f"== schemathesis as {role}: exit {result.returncode} in {time.monotonic() - started:.0f} s", flush=True)
    return result.returncode == 0


def server_errors(work) -> bool:
    """A 5xx the fuzzer did not see (or a panic) still shows in the server's log."""
    with open(os.path.join(work, "serve.log")) as f:
        bad = [line.rstrip() for line in f if " ERROR " in line or "panicked" in line]
    if bad:
        print("hanson serve logged errors:", *bad[:20], sep="\n  ", file=sys.stderr)
    return bool(bad)


class Api:
    def __init__(self, base):
        self.base = base

    def call(self, method, path, body=None, token=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("content-type", "application/json")
        if token:
            request.add_header("authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)
        except urllib.error.HTTPError as e:
            raise SystemExit(f"setup: {method} {path} answered {e.code}: {e.read().decode(errors='replace')}")


def cli(binary, env, *args):
    out = subprocess.run([binary, *args], env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def set_up(binary, env, base):
    """A provider with a market open for trading and a logged-in, funded user."""
    api = Api(base)
    provider = cli(binary, env, "provider", "create", "--name", "Schemathesis")
    key = provider["api_key"]
    token = cli(binary, env, "token", "create", "--symbol", "USDC", "--name", "USD Coin", "--decimals", "18")["token_id"]
    api.call("POST", "/v1/providers/treasury/deposits", {"token_id": token, "amount": "1" + "0" * 30, "reference": "st-treasury"}, key)
    creator = api.call(
        "POST", "/v1/providers/wallets/deposits",
        {"wallet_address": "0x00000000000000000000000000000000000000c1", "token_id": token, "amount": "1", "reference": "st-creator"}, key,
    )["wallet_id"]
    market = api.call("POST", "/v1/providers/markets", {
        "question": "Will the fuzzer find a bug?", "description": "A market for schemathesis.",
        "pricing_method": "lmsr", "token_id": token,
        "min_bet_amount": "1", "max_bet_amount": "1" + "0" * 24, "liquidity": "1" + "0" * 24,
        "starts_at": "2020-01-01T00:00:00Z", "ends_at": "2099-01-01T00:00:00Z",
        "creator_wallet_id": creator, "creator_fee_percentage": 1, "platform_fee_percentage": 1,
        "metadata": {"category": "testing", "resolution_source": "schemathesis"},
        "outcomes": [{"title": "Yes", "outcome_index": 0}, {"title": "No", "outcome_index": 1}],
    }, key)
    api.call("POST", "/v1/providers/wallets/deposits",
             {"wallet_address": USER_ADDRESS, "token_id": token, "amount": "1" + "0" * 27, "reference": "st-user"}, key)

    def login():
        grant = api.call("POST", "/v1/auth/nonce", {"wallet_address": USER_ADDRESS, "provider_id": provider["provider_id"]})
        signature = cli(binary, env, "sign", "--private-key", USER_KEY, "--nonce", grant["nonce"])["signature"]
        return api.call("POST", "/v1/auth/login", {
            "provider_id": provider["provider_id"], "wallet_address": USER_ADDRESS,
            "signature": signature, "nonce": grant["nonce"],
        })

    session, logout_session = login(), login()
    outcomes = [o["id"] for o in market["outcomes"]]
    # A position to sell from and to search for.
    api.call("POST", f"/v1/markets/{market['market']['id']}/bet",
             {"session_id": session["session_id"], "outcome_id": outcomes[0], "amount": "1" + "0" * 21}, session["access_token"])
    return {
        "provider_id": provider["provider_id"],
        "api_key": key,
        "token_id": token,
        "creator_wallet_id": creator,
        "market_id": market["market"]["id"],
        "outcome_ids": outcomes,
        "user_address": USER_ADDRESS,
        "session_id": session["session_id"],
        "access_token": session["access_token"],
        "logout_access_token": logout_session["access_token"],
    }


def write_config(work, fixture):
    """schemathesis.toml plus the values of this run's fixture, as dictionaries it draws from."""
    with open(os.path.join(HERE, "schemathesis.toml")) as f:
        config = f.read()
    values = {
        "provider": [fixture["provider_id"]],
        "session": [fixture["session_id"]],
        "outcome": fixture["outcome_ids"],
        "market": [fixture["market_id"]],
        "token": [fixture["token_id"]],
        "wallet": [fixture["creator_wallet_id"]],
        "address": [fixture["user_address"]],
    }
    config += "\n# Written by run.py from this run's fixture.\n"
    for name, entries in values.items():
        config += f"[dictionaries.{name}]\nvalues = {json.dumps(entries)}\n"
    path = os.path.join(work, "schemathesis.toml")
    with open(path, "w") as f:
        f.write(config)
    return path


if __name__ == "__main__":
    sys.exit(main())
