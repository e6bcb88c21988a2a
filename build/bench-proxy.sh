#!/usr/bin/env bash
# Throughput behind HAProxy with PROXY v2 against HAProxy without it, same client (docs/proxy-protocol.md).
# Two netserver-bench tcp echo servers (one with --proxy-trust 127.0.0.1, one without), each behind
# its own HAProxy in TCP mode (send-proxy-v2, and nothing); the same netserver-bench client runs
# ROUNDS rounds of SECONDS_PER_RUN s against each (alternating, the order swapped every round).
# Prints the medians and their ratio, and the median of each round's ratio (the two runs of a
# round are adjacent in time, so a machine-wide slowdown moves both). Needs haproxy
# (build/install-tools.sh) and a Release build of benchmarks/NetServer.Benchmark.
# Usage: build/bench-proxy.sh   (env: ROUNDS=3 SECONDS_PER_RUN=5 CLIENTS=10)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
seconds=${SECONDS_PER_RUN:-5}
clients=${CLIENTS:-10}
bench=benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench
[ -x "$bench" ] || { echo "bench-proxy: build it first: dotnet build benchmarks/NetServer.Benchmark -c Release" >&2; exit 1; }
command -v haproxy > /dev/null || { echo "bench-proxy: haproxy is missing (build/install-tools.sh)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done; wait 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
run_for=$(( (rounds * 2 * (seconds + 4)) + 30 ))

start_pair() { # name, server flags, haproxy server options; sets front_port (no subshell: pids must stay here)
  local name=$1 flags=$2 options=$3 server_port
  server_port=$(free_port); front_port=$(free_port)
  # shellcheck disable=SC2086
  "$bench" tcp echo -r server -p "$server_port" -z "$run_for" -q $flags > "$work/$name-server.log" 2>&1 &
  pids+=($!)
  cat > "$work/$name.cfg" <<CFG
defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend front
    bind 127.0.0.1:$front_port
    default_backend back
backend back
    server netserver 127.0.0.1:$server_port $options
CFG
  haproxy -db -f "$work/$name.cfg" > "$work/$name-haproxy.log" 2>&1 &
  pids+=($!)
}

start_pair proxied "--proxy-trust 127.0.0.1" send-proxy-v2
proxied=$front_port
start_pair plain "" ""
plain=$front_port
sleep 2

rate() { "$bench" tcp echo -r client -p "$1" -c "$clients" -z "$seconds" -q | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["messagesPerSecond"])'; }

with=(); without=()
for round in $(seq 1 "$rounds"); do
  # The order alternates too, so neither setup always runs first in its round.
  if (( round % 2 )); then
    with+=("$(rate "$proxied")"); without+=("$(rate "$plain")")
  else
    without+=("$(rate "$plain")"); with+=("$(rate "$proxied")")
  fi
  echo "round $round: PROXY v2 ${with[-1]} msg/s, no PROXY ${without[-1]} msg/s"
done

python3 - "${with[*]}" "${without[*]}" <<'PY'
import statistics, sys
w = [float(x) for x in sys.argv[1].split()]
o = [float(x) for x in sys.argv[2].split()]
mw, mo = statistics.median(w), statistics.median(o)
paired = statistics.median(a / b for a, b in zip(w, o))
print(f"median: PROXY v2 {mw:,.0f} msg/s, no PROXY {mo:,.0f} msg/s, ratio {mw / mo:.3f}; median of the rounds' ratios {paired:.3f}")
PY
