#!/usr/bin/env bash
# Our echo server against the C reference server (../shared/tools/echoref.c), both running for
# the whole measurement, driven by the same client in alternating rounds; prints every round
# and the median ratio per client count. Both clients are used: our netserver-bench client and
# echoref's own C client.
#   build/compare-echoref.sh                 TCP: 5 rounds of 5 s, 1 and 100 clients
#   PROTOCOL=udp build/compare-echoref.sh    UDP: echoref udpserver vs our udp echo server
#   ROUNDS=3 SECONDS_PER_RUN=3 CLIENTS="100" INLINE=1 build/compare-echoref.sh
#   PROTOCOL=udp DEDICATED=1 build/compare-echoref.sh
#   SCENARIO=reply CLIENTS=100 NETSERVER_ONLY=1 build/compare-echoref.sh
# SCENARIO=reply drives both servers with our reply client (a send of its own per 32-byte message,
# as NetCoreServer's TcpEchoClient does) instead of the echo client; NETSERVER_ONLY=1 leaves out
# echoref's own client. With our client, each round also gives each server's CPU time per message
# (user + system of its process, from /proc, over the client's measured window: --server-pid),
# and the summary their medians and ratio (issue 18: ours at most 1.5x echoref's, 100 clients).
# LOOPS=1 runs our server on the loops of an I/O service (NETSERVER_TRANSPORT=loops: on Linux the
# loops poll the sockets with epoll and run the hooks; docs/io-service.md). INLINE=1 runs our server with inline socket completions (--inline); DEDICATED=1 runs our UDP
# server on a thread of its own with blocking calls (--dedicated-thread). Every client keeps
# MESSAGES x SIZE in flight (default 1000 x 32: TCP 32000 bytes, UDP 1000 datagrams of 32 bytes).
# UDP drops under overload; the ratio compares echoes received per second, losses aside.
set -euo pipefail
cd "$(dirname "$0")/.."
protocol="${PROTOCOL:-tcp}"
rounds="${ROUNDS:-5}"
seconds="${SECONDS_PER_RUN:-5}"
clients="${CLIENTS:-1 100}"
messages="${MESSAGES:-1000}"
size="${SIZE:-32}"
reference="${ECHOREF_SOURCE:-../shared/tools/echoref.c}"
[ -f "$reference" ] || { echo "The reference server's source is not at $reference (set ECHOREF_SOURCE)." >&2; exit 1; }
case "$protocol" in tcp|udp) ;; *) echo "PROTOCOL is tcp or udp, not $protocol." >&2; exit 2 ;; esac

dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet >/dev/null
bench="benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench"
mkdir -p artifacts
gcc -O2 -pthread -o artifacts/echoref "$reference"

port_ref=$((20000 + RANDOM % 10000)); port_our=$((port_ref + 1))
if [ "$protocol" = udp ]; then artifacts/echoref udpserver "$port_ref" >/dev/null &
else artifacts/echoref server "$port_ref" 1 >/dev/null &
fi
ref_pid=$!
inline=(); [ "${INLINE:-0}" = 1 ] && inline=(--inline)
[ "${DEDICATED:-0}" = 1 ] && inline+=(--dedicated-thread)
transport=default; [ "${LOOPS:-0}" = 1 ] && transport=loops
NETSERVER_TRANSPORT=$transport "$bench" "$protocol" echo --role server -p "$port_our" -z 86400 -q "${inline[@]}" >/dev/null &
our_pid=$!
trap 'kill $ref_pid $our_pid 2>/dev/null || true' EXIT
sleep 2

scenario="${SCENARIO:-echo}"
case "$scenario" in echo) ;; reply) [ "$protocol" = tcp ] || { echo "SCENARIO=reply is for tcp." >&2; exit 2; } ;; *) echo "SCENARIO is echo or reply, not $scenario." >&2; exit 2 ;; esac
field() { grep -o "\"$1\":[0-9.]*" | cut -d: -f2; }
# ours_client PORT CLIENTS PID: "RATE CPU" (CPU: the server's ns per message, or ? without /proc).
ours_client() {
  local out
  out=$("$bench" "$protocol" "$scenario" --role client -p "$1" -c "$2" -m "$messages" -s "$size" -z "$seconds" -q --server-pid "$3")
  echo "$(echo "$out" | field messagesPerSecond) $(echo "$out" | field serverCpuNsPerMessage | grep . || echo '?')"
}
ref_client() {
  if [ "$protocol" = udp ]; then
    artifacts/echoref udpclient 127.0.0.1 "$1" "$2" "$messages" "$size" "$seconds" | grep 'Datagram throughput' | grep -o '[0-9.]*' | head -n 1
  else
    # echoref's TCP client counts 32-byte messages: scale to SIZE-byte ones.
    artifacts/echoref client 127.0.0.1 "$1" "$2" $((messages * size)) "$seconds" | grep 'Data throughput' | grep -o '[0-9.]*' | head -n 1 |
      awk -v s="$size" '{ printf "%.0f", $1 / s }'
  fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# A short run against each server first, so the rounds do not time our server's JIT warm-up.
"$bench" "$protocol" echo --role client -p "$port_our" -c 100 -z 1 -q >/dev/null || true

clients_used=(netserver-bench echoref); [ "${NETSERVER_ONLY:-0}" = 1 ] && clients_used=(netserver-bench)
summary=()
for c in $clients; do
  for client in "${clients_used[@]}"; do
    ratios=(); cpu_ref=(); cpu_our=()
    for round in $(seq "$rounds"); do
      if [ "$client" = echoref ]; then
        ref=$(ref_client "$port_ref" "$c"); our=$(ref_client "$port_our" "$c")
        cpu=""
      else
        read -r ref c_ref < <(ours_client "$port_ref" "$c" "$ref_pid"); read -r our c_our < <(ours_client "$port_our" "$c" "$our_pid")
        cpu_ref+=("$c_ref"); cpu_our+=("$c_our")
        cpu=", server CPU/msg: echoref $c_ref ns, NetServer $c_our ns"
      fi
      r=$(ratio "$our" "$ref")
      ratios+=("$r")
      echo "$protocol, clients $c, $client client ($scenario), round $round: echoref $ref msg/s, NetServer $our msg/s, ratio $r$cpu"
    done
    line="$(printf '%s %3d client(s), %-15s client: median NetServer/echoref %s' "$protocol" "$c" "$client" "$(printf '%s\n' "${ratios[@]}" | median)")"
    if [ "$client" != echoref ] && ! printf '%s\n' "${cpu_ref[@]}" "${cpu_our[@]}" | grep -q '?'; then
      m_ref=$(printf '%s\n' "${cpu_ref[@]}" | median); m_our=$(printf '%s\n' "${cpu_our[@]}" | median)
      line="$line; median server CPU/msg: NetServer $m_our ns, echoref $m_ref ns, ratio $(ratio "$m_our" "$m_ref")"
    fi
    summary+=("$line")
  done
done

echo
echo "Summary ($rounds rounds of $seconds s, $scenario client; client and servers share this machine):"
printf '  %s\n' "${summary[@]}"
