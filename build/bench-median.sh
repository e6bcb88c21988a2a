#!/usr/bin/env bash
# One netserver-bench run repeated, and the median of its figures: a baseline to hold an engine
# change against, measured the same way before and after it.
#   build/bench-median.sh tcp reply -c 100        5 runs of 5 s: median msg/s and B/msg
#   ROUNDS=9 SECONDS_PER_RUN=10 build/bench-median.sh tcp echo
#   build/bench-median.sh tcp latency             median round trips/s, p50, p99, p99.9 (ns)
#   build/bench-median.sh ssl handshake -c 8      median handshakes/s and B/handshake
# Every run's line starts with the load average before it: other work on the machine shows in
# the figures, and a run next to a busy build is worth repeating. A run that fails is marked
# FAILED and left out of the medians; the script then exits with 1.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-5}"
seconds="${SECONDS_PER_RUN:-5}"
[ $# -ge 2 ] || { echo "usage: build/bench-median.sh PROTOCOL SCENARIO [netserver-bench options]" >&2; exit 2; }
dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet >/dev/null
bench="benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench"

case "$2" in
  latency) names=(roundTripsPerSecond p50Ns p99Ns p999Ns maxNs allocatedBytesPerRoundTrip) ;;
  handshake) names=(handshakesPerSecond handshakeNs allocatedBytesPerHandshake) ;;
  *) names=(messagesPerSecond allocatedBytesPerMessage) ;;
esac
field() { echo "$1" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2 || true; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A values
failed=0
for round in $(seq "$rounds"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  status=0
  out=$("$bench" "$@" -z "$seconds" -q 2>/dev/null | grep '^{') || status=$?
  line="run $round (load $load):"
  for name in "${names[@]}"; do
    value=$(field "$out" "$name")
    line="$line $name ${value:-?}"
    [ "$status" -ne 0 ] || [ -z "$value" ] || values[$name]+="$value "
  done
  if [ "$status" -ne 0 ]; then line="$line  FAILED (exit $status)"; failed=1; fi
  echo "$line"
done

echo "Median of $rounds runs of $seconds s ($*):"
for name in "${names[@]}"; do
  printf '  %-28s %s\n' "$name" "$(printf '%s\n' ${values[$name]:-} | median)"
done
exit "$failed"
