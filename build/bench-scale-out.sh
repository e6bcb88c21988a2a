#!/usr/bin/env bash
# Group broadcast across nodes: the same load against one ScaleOutChat node and against three on one
# Redis. Every client is in the lobby; the senders share a fixed total rate; each message reaches
# every client (on its sender's node at once, on the others through one Redis PUBLISH).
# Prints, per case, deliveries per second, latency quantiles and Redis PUBLISH calls per message.
#   build/bench-scale-out.sh [--clients 30] [--senders 10] [--rate 1000] [--seconds 10] [--nodes "1 3"]
# Needs redis-server (build/install-tools.sh). On one machine the nodes share its cores with Redis
# and the load, so three nodes show what the backplane costs, not what three machines would gain.
set -euo pipefail

clients=30 senders=10 rate=1000 seconds=10 cases="1 3"
while [ $# -gt 0 ]; do
    case "$1" in
        --clients) clients="$2" ;; --senders) senders="$2" ;; --rate) rate="$2" ;;
        --seconds) seconds="$2" ;; --nodes) cases="$2" ;;
        *) echo "usage: $0 [--clients N] [--senders N] [--rate N] [--seconds N] [--nodes \"1 3\"]" >&2; exit 2 ;;
    esac
    shift 2
done
command -v redis-server >/dev/null || { echo "redis-server is missing (build/install-tools.sh)" >&2; exit 1; }

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d -t netserver-bench-scaleout-XXXXXX)"
pids=()
stop_all() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done; pids=(); }
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

wait_line() {
    for _ in $(seq 300); do grep -m1 -E "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "Timed out waiting for '$2' in $1" >&2; cat "$1" >&2; exit 1
}

for project in examples/ScaleOutChat benchmarks/ScaleOutLoad; do
    dotnet build -c Release -v quiet --nologo "$root/$project" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
done
node_dll="$root/examples/ScaleOutChat/bin/Release/net10.0/ScaleOutChat.dll"
load_dll="$root/benchmarks/ScaleOutLoad/bin/Release/net10.0/ScaleOutLoad.dll"

redis_port=$((20000 + RANDOM % 40000))
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
trap 'stop_all; kill $redis_pid 2>/dev/null; wait $redis_pid 2>/dev/null; rm -rf "$work"' EXIT
wait_line "$work/redis.log" "Ready to accept connections" >/dev/null

for n in $cases; do
    ports=()
    for i in $(seq "$n"); do
        dotnet "$node_dll" 0 --node "node$i" --redis "127.0.0.1:$redis_port" </dev/null >"$work/node$n-$i.log" 2>&1 &
        pids+=($!)
    done
    for i in $(seq "$n"); do
        ports+=("$(wait_line "$work/node$n-$i.log" "^Listening on " | sed -E 's/^Listening on [^ ]*:([0-9]+).*/\1/')")
    done
    dotnet "$load_dll" --ports "$(IFS=,; echo "${ports[*]}")" --redis-port "$redis_port" \
        --clients "$clients" --senders "$senders" --rate "$rate" --seconds "$seconds" || echo "(node $n: not every message was delivered)"
    stop_all
done
