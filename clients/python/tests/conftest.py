"""What the tests share: a real ``hanson serve`` on a fresh SQLite file and a free port, the
CLI against the same database, a wallet that signs with a private key (EIP-191 personal_sign
through eth-account, as a browser wallet would), and an HTTP receiver for webhook deliveries."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import encode_defunct

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# A well-known test key and its address (the README's); never use it for anything real.
USER_KEY = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
USER_ADDRESS = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23"
ONE = 10**18


def hanson_binary() -> str:
    path = os.path.join(REPO, os.environ.get("HANSON_BIN", "target/debug/hanson"))
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no hanson binary at {path}: build it (cargo build -p hanson) or set HANSON_BIN")
    return path


@dataclass
class Server:
    base: str
    env: dict[str, str]
    binary: str

    def cli(self, *args: str) -> Any:
        """Runs ``hanson ARGS`` on the server's database and parses its JSON output."""
        out = subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    def status(self, *args: str) -> int:
        return subprocess.run([self.binary, *args], env=self.env, capture_output=True).returncode


def start_server(*extra: str) -> Iterator[Server]:
    """``hanson serve`` on a free port and a fresh SQLite file; webhooks may go to loopback."""
    binary = hanson_binary()
    work = tempfile.mkdtemp(prefix="hanson-client-py-")
    env = {**os.environ, "HANSON_DATABASE_URL": f"sqlite://{work}/hanson.db"}
    args = [binary, "serve", "--listen", "127.0.0.1:0", "--webhook-allow-private", "--auth-rate-per-ip", "0", *extra]
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if not match:
            raise RuntimeError(f"hanson serve did not start: {line!r}")
        yield Server(match.group(1), env, binary)
    finally:
        process.terminate()
        process.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    yield from start_server()


def sign(message: str) -> str:
    """The test wallet's EIP-191 personal_sign of ``message``."""
    return "0x" + Account.sign_message(encode_defunct(text=message), USER_KEY).signature.hex().removeprefix("0x")


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes


class Receiver:
    """An HTTP server on a free loopback port that answers 204 to every POST and hands over
    each request's headers and raw body."""

    def __init__(self) -> None:
        self.deliveries: queue.Queue[Delivery] = queue.Queue()
        deliveries = self.deliveries

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                self.send_response(204)
                self.end_headers()
                deliveries.put(Delivery({k.lower(): v for k, v in self.headers.items()}, body))

            def log_message(self, *_: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks/hanson"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def next(self, timeout: float = 10) -> Delivery:
        return self.deliveries.get(timeout=timeout)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()
