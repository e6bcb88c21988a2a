#!/usr/bin/env bash
# What logging and metrics cost on the hot paths: each scenario run without them and with them at
# their default levels (the server's events to a console ILogger at Information, what a host
# configures, and every NetServer meter listened to, as a collector would), in alternating rounds,
# and the medians side by side.
#   build/bench-telemetry.sh                  3 rounds of 5 s per scenario and variant
#   ROUNDS=5 SECONDS_PER_RUN=10 build/bench-telemetry.sh
#   SCENARIOS="http get,ws echo" build/bench-telemetry.sh     only these
# Scenarios: tcp, msg, ws and proto echo and http keep-alive GET, 100 clients each. Every run's line
# starts with the load average before it: a busy machine shows in the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
seconds="${SECONDS_PER_RUN:-5}"
dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet >/dev/null
bench="benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench"

field() { echo "$1" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2 || true; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

IFS=, read -r -a scenarios <<<"${SCENARIOS:-tcp echo,msg echo,ws echo,proto echo,http get}"
variants=(off on)
on_args=(--logging information --telemetry-metrics)
declare -A rate alloc
failed=0
for round in $(seq "$rounds"); do
  for scenario in "${scenarios[@]}"; do
    # Alternate which variant goes first, so a drift in the machine's load does not favour one.
    order=("${variants[@]}"); [ $((round % 2)) -eq 1 ] || order=(on off)
    for variant in "${order[@]}"; do
      args=(); [ "$variant" = off ] || args=("${on_args[@]}")
      load=$(cut -d' ' -f1 /proc/loadavg)
      status=0
      # The console logger writes to stdout: keep only the JSON result line.
      out=$($bench $scenario -c 100 -z "$seconds" -q "${args[@]}" 2>/dev/null | grep '^{') || status=$?
      r=$(field "$out" messagesPerSecond); a=$(field "$out" allocatedBytesPerMessage)
      printf 'round %d (load %s) %-11s %-3s %12s msg/s %8s B/msg%s\n' "$round" "$load" "$scenario" "$variant" \
        "${r:-?}" "${a:-?}" "$([ "$status" -eq 0 ] || echo "  FAILED (exit $status)")"
      if [ "$status" -ne 0 ] || [ -z "$r" ]; then failed=1; continue; fi
      rate[$scenario/$variant]+="$r "; alloc[$scenario/$variant]+="$a "
    done
  done
done

echo
echo "Medians of $rounds rounds of $seconds s, 100 clients (on: ${on_args[*]}):"
printf '  %-11s %14s %14s %7s %12s %12s\n' scenario "off msg/s" "on msg/s" "on/off" "off B/msg" "on B/msg"
for scenario in "${scenarios[@]}"; do
  off=$(printf '%s\n' ${rate[$scenario/off]:-} | median); on=$(printf '%s\n' ${rate[$scenario/on]:-} | median)
  printf '  %-11s %14s %14s %7s %12s %12s\n' "$scenario" "${off:-?}" "${on:-?}" \
    "$(awk -v a="${on:-0}" -v b="${off:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }')" \
    "$(printf '%s\n' ${alloc[$scenario/off]:-} | median)" "$(printf '%s\n' ${alloc[$scenario/on]:-} | median)"
done
exit "$failed"
