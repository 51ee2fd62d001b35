#!/usr/bin/env bash
# The clients' tests against a live `hanson serve` each test starts itself: the TypeScript
# client with Node's test runner, the Python client with pytest. HANSON_BIN names the binary
# (default: the debug build); CLIENTS_VENV the Python virtualenv (default:
# $CARGO_TARGET_DIR/clients-venv, shared with generate.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-target}"
HANSON_BIN="${HANSON_BIN:-$TARGET/debug/hanson}"
[ -x "$HANSON_BIN" ] || { echo "no hanson binary at $HANSON_BIN: build it (cargo build -p hanson) or set HANSON_BIN" >&2; exit 1; }
export HANSON_BIN="$(realpath "$HANSON_BIN")"
VENV="${CLIENTS_VENV:-$TARGET/clients-venv}"

(cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error > /dev/null && npm test)

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
VENV="$(cd "$VENV" && pwd)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e 'clients/python[test]'
(cd clients/python && "$VENV/bin/python" -m pytest -q)
