#!/usr/bin/env bash
# load-etcd (make load-etcd): a 3-member etcd cluster on loopback with
# etcd's default limits, one `specd serve --transport http` on it, and
# specd-load: CLIENTS clients adding tasks (writes only) for DURATION, then
# every acknowledged add is counted back (specs_with_lost_writes must be 0).
# Never run by the tests. Binaries: $SPECD_BIN, $ETCD_BIN, $LOAD_BIN.
set -euo pipefail
SPECD_BIN=${SPECD_BIN:-bin/specd} ETCD_BIN=${ETCD_BIN:-bin/etcd} LOAD_BIN=${LOAD_BIN:-bin/specd-load}
CLIENTS=${CLIENTS:-16} DURATION=${DURATION:-20s} SPECS=${SPECS:-4} WRITES=${WRITES:-1.0}
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
    --initial-cluster "$cluster" --initial-cluster-state new --log-level error >"$dir/m$i.log" 2>&1 &
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
out=$("$LOAD_BIN" -url "http://127.0.0.1:${BASE}777" -clients "$CLIENTS" -specs "$SPECS" -duration "$DURATION" -writes "$WRITES" mixed)
echo "$out"
if ! grep -q 'specs_with_lost_writes=0' <<<"$out"; then
  echo "load-etcd: acknowledged writes are missing" >&2
  exit 1
fi
