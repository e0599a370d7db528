#!/usr/bin/env bash
# load.sh SPECD SPECD_LOAD — the write load of `make load` (issue 22).
#
# Starts `SPECD serve --transport http` on a fresh store (a loopback port,
# keyless, rate limit lifted), runs CLIENTS (16) HTTP clients adding tasks
# to SPECS (4) specs for DURATION (10s) with the DRIVER client (raw, the
# lean one, or mcp-go; see specd-load -driver), reads every acknowledged
# task id back (specd-load fails if one is missing) and prints the server's
# CPU time per write (Linux /proc), the load driver's (it shares the
# cores) and the server's peak RSS (VmHWM), stops the server, then runs
# one sequential stdio client (its own `specd serve` on a fresh store) for
# the same duration. Each run prints writes/s, p50 and p99.
set -euo pipefail
specd=$(realpath "$1")
load=$(realpath "$2")
clients=${CLIENTS:-16}
specs=${SPECS:-4}
duration=${DURATION:-10s}
driver=${DRIVER:-raw}
dir=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT
SPECD_WORKSPACE=$dir "$specd" serve --transport http --addr 127.0.0.1:0 --db "$dir/http.db" \
	--log-format json --rate 100000 --rate-burst 1000000 2>"$dir/server.log" &
pid=$!
addr=
for _ in $(seq 300); do
	addr=$(sed -n 's/.*"msg":"serving MCP over streamable HTTP".*"addr":"\([^"]*\)".*/\1/p' "$dir/server.log" | head -1)
	[ -n "$addr" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$dir/server.log"; exit 1; }
	sleep 0.1
done
[ -n "$addr" ] || { echo "server did not start"; cat "$dir/server.log"; exit 1; }
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
echo "http, $clients clients, $specs specs, $duration, driver $driver (server pid $pid, $addr):"
t0=$(cputicks "$pid")
TIMEFORMAT='%U %S'
{ time "$load" -url "http://$addr" -driver "$driver" -clients "$clients" -specs "$specs" -duration "$duration" writes 2>"$dir/driver.err" | tee "$dir/http.out"; } 2>"$dir/driver.time"
cat "$dir/driver.err" >&2
t1=$(cputicks "$pid")
acked=$(sed -n 's/.* acked=\([0-9]*\).*/\1/p' "$dir/http.out")
if [ -n "$acked" ] && [ "$acked" -gt 0 ] && [ "$t1" -gt 0 ]; then
	# server CPU (user + system) per acknowledged write, setup and read-back included
	awk -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v n="$acked" 'BEGIN { printf "server CPU per write: %.3f ms\n", t / hz * 1000 / n }'
	# the load driver's, on the same cores
	awk -v n="$acked" -v d="$driver" '{ printf "load driver (%s) CPU per write: %.3f ms\n", d, ($1 + $2) * 1000 / n }' "$dir/driver.time"
fi
# the server's peak resident memory (VmHWM) over the run
sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/server peak RSS: \1 kB/p' "/proc/$pid/status" 2>/dev/null || true
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
echo "stdio, 1 sequential client, 1 spec, $duration:"
SPECD_WORKSPACE=$dir "$load" -stdio "$specd serve --db $dir/stdio.db" -clients 1 -specs 1 -duration "$duration" writes
