"""What the browser tests, the screenshots and the browser benchmark share.

A real `hanson serve` on a fresh SQLite file (`Server`), the HTTP API it serves (`Api`), a
provider with a funded treasury, a token, markets and funded wallets set up through the CLI
and the API exactly as the README's walkthrough does (`World`), users logged in with real
EIP-191 signatures (`User`), and an EIP-1193 wallet injected into a browser context
(`install_wallet`). Nothing is mocked: every figure a test compares comes from the API.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from eth_account import Account
from eth_account.messages import encode_defunct

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = os.environ.get("HANSON_CHROMIUM", "/usr/bin/chromium")
ONE = 10**18  # one token of 18 decimals, in wei

# The web app signs in with Sign-In with Ethereum (EIP-4361), naming the server's public URL,
# which `Server` sets to the address it listens on.
LOGIN_MESSAGE = re.compile(
    r"^(127\.0\.0\.1:\d+) wants you to sign in with your Ethereum account:\n0x[0-9a-fA-F]{40}\n\n"
    r"Sign in to Hanson\.[^\n]*\n\nURI: http://\1\nVersion: 1\nChain ID: 1\nNonce: [0-9a-f]{32}\n"
    r"Issued At: \S+Z\nExpiration Time: \S+Z$")


def hanson_binary() -> str:
    path = os.environ.get("HANSON_BIN", os.path.join(REPO, "target", "debug", "hanson"))
    path = path if os.path.isabs(path) else os.path.join(REPO, path)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no hanson binary at {path}: build it (cargo build -p hanson) or set HANSON_BIN")
    return path


def tokens(amount: str | int | Decimal, decimals: int = 18) -> str:
    """Token units (a decimal string) to wei, exactly."""
    value = Decimal(str(amount)) * (Decimal(10) ** decimals)
    if value != value.to_integral_value():
        raise ValueError(f"{amount} has more than {decimals} decimals")
    return str(int(value))


def units(wei: str | int, decimals: int = 18) -> Decimal:
    """Wei to token units, exactly."""
    return Decimal(int(wei)) / (Decimal(10) ** decimals)


def numbers_in(text: str) -> list[Decimal]:
    """Every decimal number written in `text` (thousands separators and signs allowed)."""
    found = []
    for match in re.finditer(r"[-+−]?\d[\d,\u202f\u00a0']*(?:\.\d+)?|[-+−]?\.\d+", text):
        raw = match.group(0).replace("−", "-")
        raw = re.sub(r"[,\u202f\u00a0']", "", raw)
        try:
            found.append(Decimal(raw))
        except Exception:
            pass
    return found


def shows_number(text: str, expected: Decimal, tolerance: Decimal) -> bool:
    """Whether `text` writes a number within `tolerance` of `expected` (display rounding)."""
    return any(abs(n - expected) <= tolerance for n in numbers_in(text))


class ApiError(Exception):
    def __init__(self, method, path, status, body):
        super().__init__(f"{method} {path} answered {status}: {body}")
        self.status = status
        self.body = body


class Api:
    """The HTTP API, with the standard library (one connection per request)."""

    def __init__(self, base: str):
        self.base = base

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                headers: dict | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("content-type", "application/json")
        if token:
            request.add_header("authorization", f"Bearer {token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode(errors="replace")

    def call(self, method: str, path: str, body: Any = None, token: str | None = None,
             headers: dict | None = None) -> Any:
        status, answer = self.request(method, path, body, token, headers)
        if not 200 <= status < 300:
            raise ApiError(method, path, status, answer)
        return answer

    def get(self, path: str, token: str | None = None) -> Any:
        return self.call("GET", path, token=token)

    def post(self, path: str, body: Any = None, token: str | None = None, headers: dict | None = None) -> Any:
        return self.call("POST", path, body if body is not None else {}, token, headers)


class Server:
    """`hanson serve` on 127.0.0.1:<free port> with a fresh SQLite file in its own directory."""

    def __init__(self, binary: str | None = None, workdir: str | None = None, extra_args: list[str] | None = None):
        self.binary = binary or hanson_binary()
        self.workdir = workdir or tempfile.mkdtemp(prefix="hanson-web-")
        self.database = os.path.join(self.workdir, "hanson.db")
        self.database_url = f"sqlite://{self.database}"
        self.log_path = os.path.join(self.workdir, "serve.log")
        self.extra_args = extra_args or []
        self.process: subprocess.Popen | None = None
        self.base = ""

    def start(self, listen: str = "127.0.0.1:0") -> "Server":
        env = {**os.environ, "HANSON_DATABASE_URL": self.database_url}
        if listen.endswith(":0"):
            # A port known in advance, for the public URL that login messages name.
            with socket.socket() as probe:
                probe.bind((listen.rsplit(":", 1)[0], 0))
                listen = f"{listen.rsplit(':', 1)[0]}:{probe.getsockname()[1]}"
        public_url = [] if "--public-url" in self.extra_args else ["--public-url", f"http://{listen}"]
        self.process = subprocess.Popen(
            # Every test user logs in from 127.0.0.1: the per-IP login limit would throttle them.
            [self.binary, "serve", "--listen", listen, "--auth-rate-per-ip", "0", *public_url, *self.extra_args],
            env=env, stdout=subprocess.PIPE, stderr=open(self.log_path, "a"), text=True,
        )
        line = self.process.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if not match:
            self.stop()
            raise RuntimeError(f"hanson serve did not start: {line!r}; log: {self.log()[-2000:]}")
        self.base = match.group(1)
        # Keep reading stdout so the server never blocks on a full pipe.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        return self

    def restart(self) -> None:
        """Stop (every connection drops) and start again on the same address and database."""
        self.stop()
        address = self.base.removeprefix("http://")
        for _ in range(50):
            try:
                self.start(listen=address)
                return
            except RuntimeError:
                time.sleep(0.1)  # the port may take a moment to be free again
        raise RuntimeError(f"hanson serve did not restart on {address}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def remove(self) -> None:
        """Stop, and delete the directory with the database and the log."""
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self) -> str:
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def errors_logged(self) -> list[str]:
        return [line for line in self.log().splitlines() if " ERROR " in line or "panicked" in line]

    def cli(self, *args: str) -> dict:
        out = subprocess.run([self.binary, *args, "--database-url", self.database_url],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    def audit(self) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, "audit", "--database-url", self.database_url],
                              capture_output=True, text=True)


def private_key_for(name: str) -> str:
    """A test private key derived from a name, so each test user has its own, reproducibly."""
    return "0x" + hashlib.sha256(f"hanson-web-tests:{name}".encode()).hexdigest()


@dataclass
class User:
    """A wallet with its key, and (after `World.login`) an API session of its own."""
    name: str
    private_key: str
    address: str  # lower case, as wallets report it
    access_token: str = ""
    session_id: str = ""

    @classmethod
    def named(cls, name: str) -> "User":
        key = private_key_for(name)
        return cls(name=name, private_key=key, address=Account.from_key(key).address.lower())

    def sign(self, message: str) -> str:
        signed = Account.sign_message(encode_defunct(text=message), private_key=self.private_key)
        return "0x" + bytes(signed.signature).hex()


@dataclass(eq=False)
class Market:
    id: str
    question: str
    outcomes: list[dict]  # as the create response lists them: id, title, outcome_index, ...
    token_id: str
    decimals: int

    def outcome(self, title: str) -> str:
        return next(o["id"] for o in self.outcomes if o["title"] == title)


@dataclass
class World:
    """A provider with a funded treasury, a token and the API, set up as the README does."""
    server: Server
    api: Api
    provider_id: str
    provider_name: str
    api_key: str
    token_id: str
    token_symbol: str
    decimals: int
    creator_wallet_id: str
    _counter: list = field(default_factory=lambda: [0])

    @classmethod
    def create(cls, server: Server, name: str = "Acme Games", symbol: str = "USDC", decimals: int = 18) -> "World":
        api = Api(server.base)
        provider = server.cli("provider", "create", "--name", name)
        key = provider["api_key"]
        token = server.cli("token", "create", "--symbol", symbol, "--name", "USD Coin", "--decimals", str(decimals))
        api.post("/v1/providers/treasury/deposits",
                 {"token_id": token["token_id"], "amount": tokens(10**9, decimals), "reference": f"treasury-{uuid.uuid4()}"}, key)
        creator = api.post("/v1/providers/wallets/deposits", {
            "wallet_address": "0x00000000000000000000000000000000000000c1", "token_id": token["token_id"],
            "amount": "1", "reference": f"creator-{uuid.uuid4()}"}, key)["wallet_id"]
        return cls(server=server, api=api, provider_id=provider["provider_id"], provider_name=name, api_key=key,
                   token_id=token["token_id"], token_symbol=symbol, decimals=decimals, creator_wallet_id=creator)

    def with_token(self, symbol: str, decimals: int) -> "World":
        """The same provider with another token (and its treasury funded in it)."""
        token = self.server.cli("token", "create", "--symbol", symbol, "--name", symbol, "--decimals", str(decimals))
        self.api.post("/v1/providers/treasury/deposits",
                      {"token_id": token["token_id"], "amount": tokens(10**9, decimals), "reference": f"treasury-{uuid.uuid4()}"},
                      self.api_key)
        return World(server=self.server, api=self.api, provider_id=self.provider_id, provider_name=self.provider_name,
                     api_key=self.api_key, token_id=token["token_id"], token_symbol=symbol, decimals=decimals,
                     creator_wallet_id=self.creator_wallet_id)

    # Markets ---------------------------------------------------------------------------------

    def create_market(self, question: str, outcomes=("Yes", "No"), description: str = "Resolves on the final whistle.",
                      liquidity: str | int = 1000, category: str = "sports", min_bet: str = "1000",
                      max_bet: str | None = None, ends_at: str = "2099-01-01T00:00:00Z", fees=(1, 1)) -> Market:
        body = {
            "question": question, "description": description, "pricing_method": "lmsr", "token_id": self.token_id,
            "min_bet_amount": min_bet, "max_bet_amount": max_bet or tokens(10**6, self.decimals),
            "liquidity": tokens(liquidity, self.decimals),
            "starts_at": "2020-01-01T00:00:00Z", "ends_at": ends_at,
            "creator_wallet_id": self.creator_wallet_id,
            "creator_fee_percentage": fees[0], "platform_fee_percentage": fees[1],
            "metadata": {"category": category, "resolution_source": "league.example.com"},
            "outcomes": [{"title": t, "outcome_index": i} for i, t in enumerate(outcomes)],
        }
        created = self.api.post("/v1/providers/markets", body, self.api_key)
        return Market(id=created["market"]["id"], question=question, outcomes=created["outcomes"],
                      token_id=self.token_id, decimals=self.decimals)

    def market(self, market_id: str) -> dict:
        return self.api.get(f"/v1/markets/{market_id}")

    def prices(self, market_id: str) -> dict[str, str]:
        """outcome id -> the API's exact price string."""
        return {o["id"]: o["current_price"] for o in self.market(market_id)["outcomes"]}

    def trades(self, market_id: str, wallet_address: str | None = None) -> list[dict]:
        filters = {"market_id": market_id}
        if wallet_address:
            filters["wallet_address"] = wallet_address
        return self.api.post("/v1/markets/positions/search",
                             {"filters": filters, "pagination": {"page": 1, "per_page": 100}})["data"]

    def resolve(self, market_id: str, outcome_id: str) -> dict:
        return self.api.post(f"/v1/providers/markets/{market_id}/resolve", {
            "winning_outcome_id": outcome_id, "resolver_wallet_id": "ops",
            "resolution_source": "league.example.com", "resolution_data": {"score": "2-1"}}, self.api_key)

    def cancel(self, market_id: str) -> dict:
        return self.api.post(f"/v1/providers/markets/{market_id}/cancel",
                             {"canceller_wallet_id": "ops", "reason": "called off"}, self.api_key)

    # Wallets ---------------------------------------------------------------------------------

    def fund(self, user: User, amount: str | int | Decimal) -> dict:
        return self.api.post("/v1/providers/wallets/deposits", {
            "wallet_address": user.address, "token_id": self.token_id, "amount": tokens(amount, self.decimals),
            "reference": f"deposit-{uuid.uuid4()}"}, self.api_key)

    def balance(self, user: User) -> str:
        wallet = self.api.get(f"/v1/providers/wallets/{user.address}", self.api_key)
        return next((b["balance"] for b in wallet["balances"] if b["token_id"] == self.token_id), "0")

    def login(self, user: User) -> User:
        """An API session of the user's own (apart from any the browser opens)."""
        grant = self.api.post("/v1/auth/nonce", {"wallet_address": user.address, "provider_id": self.provider_id})
        login = self.api.post("/v1/auth/login", {
            "provider_id": self.provider_id, "wallet_address": user.address,
            "signature": user.sign(grant["message"]), "nonce": grant["nonce"]})
        user.access_token, user.session_id = login["access_token"], login["session_id"]
        return user

    def bet(self, user: User, market_id: str, outcome_id: str, amount_wei: str) -> dict:
        return self.api.post(f"/v1/markets/{market_id}/bet",
                             {"session_id": user.session_id, "outcome_id": outcome_id, "amount": amount_wei},
                             user.access_token, {"idempotency-key": str(uuid.uuid4())})

    def holdings(self, user: User, market_id: str | None = None) -> list[dict]:
        filters = {"market_id": market_id} if market_id else {}
        return self.api.post("/v1/markets/holdings/search", {"filters": filters}, user.access_token)["data"]


# The injected wallet --------------------------------------------------------------------------

WALLET_SCRIPT = """
(() => {
  const address = %(address)s;
  const listeners = {};
  const fail = (code, message) => Object.assign(new Error(message), { code });
  window.ethereum = {
    isHansonTestWallet: true,
    request: async ({ method, params }) => {
      switch (method) {
        case "eth_requestAccounts":
        case "eth_accounts":
          return [address];
        case "eth_chainId":
          return "0x1";
        case "net_version":
          return "1";
        case "personal_sign": {
          const [message, from] = params || [];
          if (typeof from !== "string" || from.toLowerCase() !== address) {
            throw fail(4100, "personal_sign from an account this wallet does not hold: " + from);
          }
          return await window.__hansonTestWalletSign(message, from);
        }
        default:
          throw fail(4200, "the test wallet does not support " + method);
      }
    },
    on: (event, listener) => { (listeners[event] = listeners[event] || []).push(listener); },
    removeListener: (event, listener) => {
      listeners[event] = (listeners[event] || []).filter((l) => l !== listener);
    },
  };
  window.dispatchEvent(new Event("ethereum#initialized"));
})();
"""


@dataclass
class Wallet:
    """What the injected wallet did: every message it signed, as text."""
    user: User
    signed: list[str] = field(default_factory=list)


def install_wallet(context, user: User) -> Wallet:
    """Give every page of `context` an EIP-1193 `window.ethereum` holding `user`'s key.

    `personal_sign` takes [hexMessage, address] as wallets do: the message is the UTF-8 text
    hex-encoded with 0x, and the signature is EIP-191 over those bytes, made in Python."""
    wallet = Wallet(user)

    def sign(message: str, address: str) -> str:
        if isinstance(message, str) and re.fullmatch(r"0x([0-9a-fA-F]{2})*", message):
            signable = encode_defunct(hexstr=message)
            text = bytes.fromhex(message[2:]).decode("utf-8", errors="replace")
        else:  # some apps pass the text itself; wallets accept that too
            signable = encode_defunct(text=message)
            text = message
        wallet.signed.append(text)
        signed = Account.sign_message(signable, private_key=user.private_key)
        return "0x" + bytes(signed.signature).hex()

    context.expose_function("__hansonTestWalletSign", sign)
    context.add_init_script(WALLET_SCRIPT % {"address": json.dumps(user.address)})
    return wallet


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {message}")
        time.sleep(interval)
