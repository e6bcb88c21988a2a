#!/usr/bin/env bash
# The sudp echo / udp echo figure of build/bench.sh (both servers on a dedicated thread), measured
# in alternating rounds so that load from other work hits both alike: each round runs udp, then
# sudp, with the same client count, and gives their ratio; the summary is the median of the
# per-round ratios (and of each rate). Every line starts with the load average before the round.
#   build/bench-sudp-ratio.sh                 5 rounds of 3 s, 1 and 100 clients
#   ROUNDS=3 SECONDS_PER_RUN=5 CLIENTS="100" build/bench-sudp-ratio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-5}"
seconds="${SECONDS_PER_RUN:-3}"
clients_list="${CLIENTS:-1 100}"
[ -n "${NO_BUILD:-}" ] || dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet >/dev/null
bench="benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench"

field() { echo "$1" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2 || true; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rate() { field "$("$bench" "$1" echo --dedicated-thread -c "$2" -z "$seconds" -q 2>/dev/null | grep '^{' || true)" messagesPerSecond; }

failed=0
for clients in $clients_list; do
  ratios=(); udps=(); sudps=()
  for round in $(seq "$rounds"); do
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    udp=$(rate udp "$clients"); sudp=$(rate sudp "$clients")
    if [ -z "$udp" ] || [ -z "$sudp" ] || [ "$udp" = 0 ]; then
      echo "clients $clients round $round (load $load): udp ${udp:-?} sudp ${sudp:-?} FAILED"; failed=1; continue
    fi
    ratio=$(awk -v a="$sudp" -v b="$udp" 'BEGIN { printf "%.3f", a / b }')
    ratios+=("$ratio"); udps+=("$udp"); sudps+=("$sudp")
    echo "clients $clients round $round (load $load): udp $udp msg/s, sudp $sudp msg/s, ratio $ratio"
  done
  echo "clients $clients, median of $rounds rounds of $seconds s: udp $(printf '%s\n' "${udps[@]}" | median) msg/s," \
    "sudp $(printf '%s\n' "${sudps[@]}" | median) msg/s, ratio $(printf '%s\n' "${ratios[@]}" | median)"
done
exit "$failed"
