#!/usr/bin/env bash
# The default transport against the loops transport (NETSERVER_TRANSPORT=loops: on Linux every
# stream server and client of the benchmark runs on the loops of one I/O service, docs/io-service.md)
# on the stream scenarios of build/bench.sh, in alternating rounds: for each scenario, ROUNDS rounds,
# each a run on the default transport then one on the loops (SECONDS_PER_RUN s each), and the
# medians of both with their ratio (loops / default; latency: round trips per second, and p99 with
# its ratio default / loops, so above 1 is better for the loops everywhere). UDP and secure UDP
# run on the loops too (recvmmsg/sendmmsg batches, docs/udp.md); their default is the asynchronous mode.
# Each run first warms up for WARMUP s (default 2; netserver-bench --warmup) outside its measured
# window: in a 3-s window JIT tiering alone made the loops' wss echo read 0.48 of the default
# transport where 8-s windows gave 1.15.
#   build/bench-transports.sh                 every scenario, 3 rounds of 3 s after 2 s of warm-up
#   ROUNDS=5 SECONDS_PER_RUN=5 SCENARIOS="tcp-echo-100 http-get-100" build/bench-transports.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
seconds="${SECONDS_PER_RUN:-3}"
warmup="${WARMUP:-2}"
dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet >/dev/null
bench="benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench"

# name: arguments of netserver-bench
declare -A args=(
  [tcp-echo-1]="tcp echo -c 1" [tcp-echo-100]="tcp echo -c 100"
  [tcp-multicast-1]="tcp multicast -c 1" [tcp-multicast-100]="tcp multicast -c 100"
  [uds-echo-1]="uds echo -c 1" [uds-echo-100]="uds echo -c 100"
  [ssl-echo-1]="ssl echo -c 1" [ssl-echo-100]="ssl echo -c 100"
  [ssl-multicast-100]="ssl multicast -c 100"
  [msg-echo-1]="msg echo -c 1" [msg-echo-100]="msg echo -c 100"
  [ws-echo-1]="ws echo -c 1" [ws-echo-100]="ws echo -c 100"
  [wss-echo-100]="wss echo -c 100"
  [proto-echo-100]="proto echo -c 100"
  [tcp-reply-1]="tcp reply -c 1" [tcp-reply-100]="tcp reply -c 100"
  [ssl-handshake-8]="ssl handshake -c 8" [tcp-connect-8]="tcp handshake -c 8"
  [http-get-1]="http get -c 1" [http-get-100]="http get -c 100"
  [http-pipeline-100]="http pipeline -m 16 -c 100"
  [tcp-latency-1]="tcp latency"
  [udp-echo-1]="udp echo -c 1" [udp-echo-100]="udp echo -c 100" [sudp-echo-100]="sudp echo -c 100"
)
order="tcp-echo-1 tcp-echo-100 tcp-multicast-1 tcp-multicast-100 uds-echo-1 uds-echo-100 ssl-echo-1 ssl-echo-100
  ssl-multicast-100 msg-echo-1 msg-echo-100 ws-echo-1 ws-echo-100 wss-echo-100 proto-echo-100 tcp-reply-1 tcp-reply-100
  ssl-handshake-8 tcp-connect-8 http-get-1 http-get-100 http-pipeline-100 tcp-latency-1 udp-echo-1 udp-echo-100
  sudp-echo-100"
scenarios="${SCENARIOS:-$order}"

field() { echo "$1" | grep -o "\"$2\":[0-9.]*" | head -n 1 | cut -d: -f2 || true; }
median() { printf '%s\n' "$@" | { grep -v '^$' || true; } | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "?"; else printf "%.2f", a / b }'; }

printf '%-20s %14s %14s %7s   %s\n' "scenario" "default" "loops" "ratio" "(medians of $rounds alternating rounds of $seconds s after $warmup s of warm-up; load $(cut -d' ' -f1 /proc/loadavg) at start)"
for name in $scenarios; do
  [ -n "${args[$name]:-}" ] || { echo "unknown scenario: $name" >&2; exit 2; }
  declare -a rate_default=() rate_loops=() p99_default=() p99_loops=()
  for ((round = 1; round <= rounds; round++)); do
    for transport in default loops; do
      # shellcheck disable=SC2086 # the arguments are words
      out=$(NETSERVER_TRANSPORT=$transport "$bench" ${args[$name]} -z "$seconds" -w "$warmup" -q 2>&1 | grep '^{' || true)
      rate=$(field "$out" messagesPerSecond)
      [ -n "$rate" ] || rate=$(field "$out" handshakesPerSecond)
      [ -n "$rate" ] || rate=$(field "$out" roundTripsPerSecond)
      if [ "$transport" = default ]; then rate_default+=("$rate"); p99_default+=("$(field "$out" p99Ns)")
      else rate_loops+=("$rate"); p99_loops+=("$(field "$out" p99Ns)"); fi
    done
  done
  d=$(median "${rate_default[@]}"); l=$(median "${rate_loops[@]}")
  line=$(printf '%-20s %14s %14s %7s' "$name" "${d:-?}" "${l:-?}" "$(ratio "$l" "$d")")
  pd=$(median "${p99_default[@]}"); pl=$(median "${p99_loops[@]}")
  [ -z "$pd" ] || line="$line   p99 $(awk -v n="$pd" 'BEGIN { printf "%.1f", n / 1000 }') us vs $(awk -v n="$pl" 'BEGIN { printf "%.1f", n / 1000 }') us ($(ratio "$pd" "$pl"))"
  echo "$line"
  unset rate_default rate_loops p99_default p99_loops
done
