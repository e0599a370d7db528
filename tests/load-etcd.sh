#!/usr/bin/env bash
# load-etcd (make load-etcd): a 3-member etcd cluster on loopback with
# etcd's default limits, one `specd serve --transport http` on it, and
# specd-load: CLIENTS clients adding tasks (writes only) for DURATION, then
# every acknowledged add is read back (missing must be 0).
# Then it prints the CPU time (user + system, /proc) per acknowledged write
# of the server, of the three members together and of the load driver (all
# share the cores), and, from the members' /metrics, the cluster's round
# trips per write (Txn and Range calls) and the writes per committed
# transaction (acknowledged writes over revisions: each committed write
# transaction is one revision). Setup and the read-back are included.
# Never run by the tests. Binaries: $SPECD_BIN, $ETCD_BIN, $LOAD_BIN.
set -euo pipefail
SPECD_BIN=${SPECD_BIN:-bin/specd} ETCD_BIN=${ETCD_BIN:-bin/etcd} LOAD_BIN=${LOAD_BIN:-bin/specd-load}
CLIENTS=${CLIENTS:-16} DURATION=${DURATION:-20s} SPECS=${SPECS:-4} WRITES=${WRITES:-1.0}
ETCD_FLAGS=${ETCD_FLAGS:-}   # extra member flags (e.g. --enable-pprof), word-split
BASE=${BASE:-31}   # ports ${BASE}x79/x80 for member x, ${BASE}777 for specd
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
cluster=""
for i in 1 2 3; do cluster+="${cluster:+,}m$i=http://127.0.0.1:${BASE}${i}80"; done
for i in 1 2 3; do
  "$ETCD_BIN" --name m$i --data-dir "$dir/m$i" \
    --listen-client-urls http://127.0.0.1:${BASE}${i}79 --advertise-client-urls http://127.0.0.1:${BASE}${i}79 \
    --listen-peer-urls http://127.0.0.1:${BASE}${i}80 --initial-advertise-peer-urls http://127.0.0.1:${BASE}${i}80 \
    --initial-cluster "$cluster" --initial-cluster-state new --log-level error $ETCD_FLAGS >"$dir/m$i.log" 2>&1 &
  pids+=($!)
done
eps="127.0.0.1:${BASE}179,127.0.0.1:${BASE}279,127.0.0.1:${BASE}379"
mkdir -p "$dir/ws"
"$SPECD_BIN" serve --transport http --addr 127.0.0.1:${BASE}777 --store "etcd://$eps/load" --workspace "$dir/ws" --log-level error --rate 100000 --rate-burst 1000000 >"$dir/specd.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  (exec 3<>/dev/tcp/127.0.0.1/${BASE}777) 2>/dev/null && break
  sleep 0.1
done
cputicks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
# metric NAME_REGEX: the sum over the members of the matching series
metric() {
  local i
  for i in 1 2 3; do curl -s "http://127.0.0.1:${BASE}${i}79/metrics"; done | awk -v re="$1" '$0 !~ /^#/ && $1 ~ re { s += $2 } END { printf "%d\n", s }'
}
revision() { curl -s -X POST "http://127.0.0.1:${BASE}179/v3/kv/range" -d '{"key":"AA=="}' | sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p'; }
member_pids=("${pids[@]:0:3}") server_pid=${pids[3]}
e0=$(cputicks "${member_pids[@]}") s0=$(cputicks "$server_pid") r0=$(revision)
c0=$(metric 'grpc_server_handled_total.*grpc_method="(Txn|Range)"')
TIMEFORMAT='%U %S'
# All writes (the default): specd-load's writes mode with the raw driver
# (the lean client make load uses), which reads every acknowledged task id
# back. A WRITES share below 1 runs the mixed mode (mcp-go clients, reads
# too), which counts each spec's acknowledged adds back.
if [ "$WRITES" = "1.0" ] || [ "$WRITES" = "1" ]; then
  load_args=(-driver raw writes)
else
  load_args=(-writes "$WRITES" mixed)
fi
{ time "$LOAD_BIN" -url "http://127.0.0.1:${BASE}777" -clients "$CLIENTS" -specs "$SPECS" -duration "$DURATION" "${load_args[@]}" >"$dir/load.out"; } 2>"$dir/driver.time"
e1=$(cputicks "${member_pids[@]}") s1=$(cputicks "$server_pid") r1=$(revision)
c1=$(metric 'grpc_server_handled_total.*grpc_method="(Txn|Range)"')
out=$(cat "$dir/load.out")
echo "$out"
acked=$(sed -n -e 's/.* writes_ok=\([0-9]*\).*/\1/p' -e 's/.* acked=\([0-9]*\).*/\1/p' <<<"$out")
if [ -n "$acked" ] && [ "$acked" -gt 0 ]; then
  awk -v s="$((s1 - s0))" -v e="$((e1 - e0))" -v hz="$(getconf CLK_TCK)" -v n="$acked" -v c="$((c1 - c0))" -v r="$((r1 - r0))" \
    -v d="$(awk '{print $1 + $2}' "$dir/driver.time")" 'BEGIN {
      printf "CPU per write: server %.3f ms, etcd members %.3f ms, load driver %.3f ms\n", s / hz * 1000 / n, e / hz * 1000 / n, d * 1000 / n
      printf "cluster: %.2f requests per write, %.1f writes per committed transaction (%d transactions)\n", c / n, (r > 0 ? n / r : 0), r }'
fi
if ! grep -Eq 'specs_with_lost_writes=0|errors=0 missing=0' <<<"$out"; then
  echo "load-etcd: acknowledged writes are missing" >&2
  exit 1
fi
