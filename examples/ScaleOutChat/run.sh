#!/usr/bin/env bash
# The scale-out chat on one machine: a redis-server, three ScaleOutChat nodes and HAProxy in TCP
# mode in front of them (roundrobin, PROXY protocol v2), all on free loopback ports. Prints how to
# connect, then runs until Ctrl+C; everything it started is stopped on the way out.
#   examples/ScaleOutChat/run.sh [--nodes N] [--proxy send-proxy|send-proxy-v2]
# Needs redis-server and haproxy (build/install-tools.sh installs both) and the .NET SDK.
set -euo pipefail

nodes=3
proxy=send-proxy-v2
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) nodes="$2"; shift 2 ;;
        --proxy) proxy="$2"; shift 2 ;;
        *) echo "usage: $0 [--nodes N] [--proxy send-proxy|send-proxy-v2]" >&2; exit 2 ;;
    esac
done
for tool in redis-server haproxy dotnet; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (build/install-tools.sh installs redis-server and haproxy)" >&2; exit 1; }
done

root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d -t netserver-scaleout-XXXXXX)"
pids=()
stop() {
    trap - EXIT INT TERM
    # Nodes first (SIGTERM: they leave their rooms in Redis), then HAProxy and Redis.
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
    echo "Stopped."
}
trap stop EXIT
trap 'exit 130' INT TERM

# A port nothing listens on now (a connect to it is refused).
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
    done
}

# Waits (up to 30 s) for a line matching $2 in the file $1 and prints it.
wait_line() {
    for _ in $(seq 300); do
        if grep -m1 -E "$2" "$1" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "Timed out waiting for '$2' in $1:" >&2; cat "$1" >&2; exit 1
}

echo "Building examples/ScaleOutChat..."
dotnet build -c Release -v quiet --nologo "$root/examples/ScaleOutChat" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
dll="$root/examples/ScaleOutChat/bin/Release/net10.0/ScaleOutChat.dll"

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
wait_line "$work/redis.log" "Ready to accept connections" >/dev/null
echo "Redis on 127.0.0.1:$redis_port"

servers=""
for i in $(seq "$nodes"); do
    SCALEOUT_NODE="node$i" SCALEOUT_PORT=0 SCALEOUT_REDIS="127.0.0.1:$redis_port" SCALEOUT_PROXY_TRUST=127.0.0.1 \
        dotnet "$dll" </dev/null > >(tee "$work/node$i.log" | sed -u "s/^/[node$i] /") 2>&1 &
    pids+=($!)
done
for i in $(seq "$nodes"); do
    line=$(wait_line "$work/node$i.log" "^Listening on ")
    port=$(echo "$line" | sed -E 's/^Listening on [^ ]*:([0-9]+).*/\1/')
    servers+="    server node$i 127.0.0.1:$port $proxy check inter 2s check-send-proxy"$'\n'
done

front_port=$(free_port)
cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 4096
defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h
frontend chat
    bind 127.0.0.1:$front_port
    default_backend nodes
backend nodes
    balance roundrobin
$servers
CFG
haproxy -db -f "$work/haproxy.cfg" > >(sed -u "s/^/[haproxy] /") 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$front_port") 2>/dev/null && break; sleep 0.1; done

cat <<TEXT

The chat is up: HAProxy on 127.0.0.1:$front_port ($proxy, roundrobin) -> $nodes nodes -> Redis 127.0.0.1:$redis_port.
Connect one WebSocket client per terminal; consecutive clients land on different nodes:
    dotnet run --project examples/WsChatClient -- 127.0.0.1 $front_port
Type a line to say it in your room, "/join ROOM" to change rooms, "/who" to list the room's members on every node.
Ctrl+C stops everything.
TEXT
wait "${pids[@]}"
