#!/usr/bin/env bash
# Regenerates both clients from the OpenAPI document the server serves (`hanson openapi`
# prints the document of GET /v1/openapi.json), with pinned generators, into the repository:
#   clients/openapi.json                       the document (pretty-printed, for readable diffs)
#   clients/typescript/src/openapi.ts          openapi-typescript (clients/typescript/package-lock.json)
#   clients/python/hanson_client/generated/    openapi-python-client (clients/python/requirements-generate.txt)
# Any output from a generator beyond its usual progress lines (a warning, a dropped
# operation) fails the script. CI runs it and fails on any difference from what is committed.
#
# HANSON_BIN names the binary (default: the debug build, built here if missing);
# CLIENTS_VENV the Python virtualenv for the generator (default: $CARGO_TARGET_DIR/clients-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-target}"
if [ -z "${HANSON_BIN:-}" ]; then
  cargo build -q -p hanson
  HANSON_BIN="$TARGET/debug/hanson"
fi
VENV="${CLIENTS_VENV:-$TARGET/clients-venv}"

# Prints a generator's output and fails if anything is left once its expected lines are removed.
only_progress() {
  local name="$1" output="$2" expected="$3" rest
  rest=$(printf '%s\n' "$output" | grep -Ev "$expected" | grep -v '^$' || true)
  printf '%s\n' "$output"
  if [ -n "$rest" ]; then
    echo "generate.sh: $name printed more than its progress lines (a warning?):" >&2
    printf '%s\n' "$rest" >&2
    exit 1
  fi
}

"$HANSON_BIN" openapi | python3 -c 'import json, sys; json.dump(json.load(sys.stdin), sys.stdout, indent=2, ensure_ascii=False); print()' > clients/openapi.json

(cd clients/typescript && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error > /dev/null)
output=$(cd clients/typescript && npm run --silent generate 2>&1)
only_progress openapi-typescript "$output" '^(✨ openapi-typescript [0-9.]+|🚀 \.\./openapi\.json → src/openapi\.ts \[[0-9.]+m?s\])$'

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
VENV="$(cd "$VENV" && pwd)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r clients/python/requirements-generate.txt
# The generator formats its code with the ruff on PATH: the pinned one.
output=$(cd clients/python && PATH="$VENV/bin:$PATH" "$VENV/bin/openapi-python-client" generate --path ../openapi.json --meta none \
  --output-path hanson_client/generated --overwrite 2>&1)
only_progress openapi-python-client "$output" '^Generating hanson_client/generated$'
