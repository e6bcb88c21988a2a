#!/usr/bin/env bash
# HTTP/1.1 load with wrk: keep-alive GET, pipelined GET and the seeds' TRACE, with 1 and 100
# connections, in rounds, and the median of each figure.
#   build/bench-http.sh                      starts kestrel-reference (Kestrel, the reference)
#   build/bench-http.sh http://127.0.0.1:8080/   any HTTP server already running (ours)
#   ROUNDS=5 SECONDS_PER_RUN=10 CONNECTIONS="1 100" DEPTH=16 SCENARIOS="get pipeline trace" THREADS=1
# Scenarios: get (one request in flight per connection), pipeline (DEPTH requests written at once
# per connection: benchmarks/wrk/pipeline.lua), trace (TRACE with an empty body, one in flight:
# benchmarks/wrk/trace.lua). Every run's line starts with the load average before it. Figures:
# requests/s, p99 latency (wrk's --latency), and, for kestrel-reference, the bytes the server
# allocated per request during the run (its --stats lines; the first second of a run is left out).
# wrk comes from build/install-tools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
seconds="${SECONDS_PER_RUN:-5}"
connections="${CONNECTIONS:-1 100}"
depth="${DEPTH:-16}"
scenarios="${SCENARIOS:-get pipeline trace}"
threads="${THREADS:-1}"
command -v wrk > /dev/null || { echo "bench-http: wrk is missing (build/install-tools.sh installs it)" >&2; exit 2; }

work=$(mktemp -d)
server_pid=
cleanup() {
  [ -z "$server_pid" ] || { kill -TERM "$server_pid" 2> /dev/null || true; wait "$server_pid" 2> /dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

url="${1:-}"
stats=
if [ -z "$url" ]; then
  dotnet build benchmarks/KestrelReference/KestrelReference.csproj -c Release --nologo -v quiet > /dev/null
  stats="$work/stats"
  benchmarks/KestrelReference/bin/Release/net10.0/kestrel-reference --stats > "$work/out" 2> "$stats" &
  server_pid=$!
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$work/out")
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "bench-http: kestrel-reference printed no address" >&2; cat "$work/out" "$stats" >&2; exit 1; }
  url="$url/"
  echo "Server: kestrel-reference at $url (pid $server_pid)"
else
  echo "Server: $url"
fi

# wrk's latency with its unit, in microseconds.
micros() { awk '{ v = $1 + 0; u = $1; sub(/^[0-9.]+/, "", u); f = (u == "s") ? 1e6 : (u == "ms") ? 1e3 : 1; printf "%.0f\n", v * f }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "?" }'; }
script_of() {
  case "$1" in
    get) echo "" ;;
    pipeline) echo "-s benchmarks/wrk/pipeline.lua" ;;
    trace) echo "-s benchmarks/wrk/trace.lua" ;;
    *) echo "bench-http: unknown scenario $1" >&2; exit 2 ;;
  esac
}
pipeline_args() { [ "$1" = pipeline ] && echo "-- $depth" || true; }

# Allocated bytes per request in the stats lines a run added (the first, with the run's start, left out).
allocated_per_request() {
  tail -n +"$(($1 + 1))" "$stats" | grep '^second:' | tail -n +2 |
    awk '{ r += $2; b += $7 } END { if (r) printf "%.1f\n", b / r; else print "?" }'
}

run() { # scenario connections seconds -> wrk's output
  local threads_now=$threads
  [ "$2" -ge "$threads_now" ] || threads_now=$2
  # shellcheck disable=SC2046
  wrk -t"$threads_now" -c"$2" -d"${3}s" --latency $(script_of "$1") "$url" $(pipeline_args "$1")
}

echo "Warm-up: 2 s of each scenario with 100 connections"
for scenario in $scenarios; do run "$scenario" 100 2 > /dev/null; done

declare -A rps p99 bpr
for round in $(seq "$rounds"); do
  for scenario in $scenarios; do
    for c in $connections; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      before=0
      [ -z "$stats" ] || before=$(wc -l < "$stats")
      out=$(run "$scenario" "$c" "$seconds")
      allocated="-"
      if [ -n "$stats" ]; then sleep 1.2; allocated=$(allocated_per_request "$before"); fi
      requests=$(echo "$out" | awk '/^Requests\/sec:/ { printf "%.0f\n", $2 }')
      latency=$(echo "$out" | awk '$1 == "99%" { print $2 }' | micros)
      # wrk's histogram sometimes answers 0 for a percentile (seen with pipelining on 1 connection).
      [ "$latency" != 0 ] || latency="n/a"
      errors=$(echo "$out" | grep -E 'Non-2xx|Socket errors' | tr -s ' ' | tr '\n' ' ' || true)
      key="$scenario c=$c"
      rps[$key]+="$requests "; p99[$key]+="$latency "; bpr[$key]+="$allocated "
      printf 'round %s (load %s): %-14s %10s req/s  p99 %11s  %6s B/req %s\n' "$round" "$load" "$key" "$requests" "${latency/%[0-9]/& us}" "$allocated" "$errors"
    done
  done
done

echo
echo "Median of $rounds runs of $seconds s (wrk -t$threads, pipeline depth $depth):"
echo
echo "| scenario | connections | requests/s | p99 latency | B/request |"
echo "|---|---:|---:|---:|---:|"
for scenario in $scenarios; do
  for c in $connections; do
    key="$scenario c=$c"
    b=$(printf '%s\n' ${bpr[$key]} | { grep -v -- '-' || true; } | median)
    l=$(printf '%s\n' ${p99[$key]} | { grep -v n/a || true; } | median)
    [ "$l" = "?" ] && l="n/a" || l="$l us"
    printf '| %s | %s | %s | %s | %s |\n' "$scenario" "$c" \
      "$(printf '%s\n' ${rps[$key]} | median)" "$l" "${b/\?/-}"
  done
done
