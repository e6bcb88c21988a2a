#!/usr/bin/env bash
# HTTP/1.1 load with wrk: keep-alive GET, pipelined GET and the seeds' TRACE, with 1 and 100
# connections, in rounds, and the median of each figure.
#   build/bench-http.sh                      starts kestrel-reference (Kestrel, the reference) and
#                                            netserver-bench's http server (ours) and runs every
#                                            round against both, alternately (Kestrel, ours, ...)
#   SERVERS=kestrel build/bench-http.sh      only one of them (kestrel or ours)
#   build/bench-http.sh http://127.0.0.1:8080/   any HTTP server already running, alone
#   ROUNDS=5 SECONDS_PER_RUN=10 CONNECTIONS="1 100" DEPTH=16 SCENARIOS="get pipeline trace" THREADS=1
#   HTTPS=1                                  both servers over TLS (certs/server.pfx)
#   OURS_ARGS=--inline                       extra netserver-bench options for ours (and baseline):
#                                            --inline runs socket completions on the I/O threads
#   BASELINE=DIR                             adds "baseline": the http server of another netserver-bench
#                                            build (DIR holds its netserver-bench), for a before/after
#                                            of a library change with the same wrk runs
# Scenarios: get (one request in flight per connection), pipeline (DEPTH requests written at once
# per connection: benchmarks/wrk/pipeline.lua), trace (TRACE with an empty body, one in flight:
# benchmarks/wrk/trace.lua). Every run's line starts with the load average before it. Figures:
# requests/s, p99 latency (wrk's --latency), and for the servers started here the bytes the server
# allocated per request during the run (kestrel-reference's --stats lines, netserver-bench's
# progress lines: the same words; the first second of a run and the last two lines, which hold
# the end of the run, are left out: they carry the connections' set-up and tear-down, 100 TLS
# handshakes among them, which are not per request) and the server process's
# CPU time (user + system, /proc/PID/stat) per request, which other work on the machine disturbs
# less than the rate; with both, the ratio ours / Kestrel of the median requests/s and the median of
# the rounds' ratios (each round's runs are seconds apart). wrk comes from build/install-tools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
seconds="${SECONDS_PER_RUN:-5}"
connections="${CONNECTIONS:-1 100}"
depth="${DEPTH:-16}"
scenarios="${SCENARIOS:-get pipeline trace}"
threads="${THREADS:-1}"
servers="${SERVERS:-kestrel ours}"
[ -z "${BASELINE:-}" ] || servers="$servers baseline"
command -v wrk > /dev/null || { echo "bench-http: wrk is missing (build/install-tools.sh installs it)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-http.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

declare -A url stats pid_of
if [ -n "${1:-}" ]; then
  servers=given
  url[given]="$1"
  echo "Server: $1"
fi

# Starts server $1 on a free port; its stdout goes to $work/$1.out, its per-second lines to $work/$1.stats.
start() {
  local name=$1 line
  case "$name" in
    kestrel)
      dotnet build benchmarks/KestrelReference/KestrelReference.csproj -c Release --nologo -v quiet > /dev/null
      benchmarks/KestrelReference/bin/Release/net10.0/kestrel-reference --stats ${HTTPS:+--https} > "$work/$name.out" 2> "$work/$name.stats" & ;;
    ours | baseline)
      local binary=benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench certs=()
      if [ "$name" = ours ]; then
        dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet > /dev/null
      else
        # Another build finds no certs/ above its own folder: name ours.
        binary="$BASELINE/netserver-bench"
        [ -z "${HTTPS:-}" ] || certs=(--certs "$PWD/certs")
      fi
      # -z: a server with -z 0 stops when its stdin ends, and a background job's stdin is empty.
      # shellcheck disable=SC2086
      "$binary" "http${HTTPS:+s}" --role server --port 0 -z 1000000 "${certs[@]}" ${OURS_ARGS:-} \
        > "$work/$name.out" 2> "$work/$name.stats" & ;;
    *) echo "bench-http: unknown server $name (kestrel, ours, baseline)" >&2; exit 2 ;;
  esac
  pids+=($!)
  pid_of[$name]=$!
  for _ in $(seq 200); do
    line=$(sed -n -e 's/^listening on //p' -e "s|^Server listening on \([^;]*\);.*|http${HTTPS:+s}://\1|p" "$work/$name.out")
    [ -n "$line" ] && break
    sleep 0.1
  done
  [ -n "$line" ] || { echo "bench-http: $name printed no address" >&2; cat "$work/$name.out" "$work/$name.stats" >&2; exit 1; }
  url[$name]="$line/"
  stats[$name]="$work/$name.stats"
  echo "Server: $name at ${url[$name]} (pid $!)"
}
[ -n "${1:-}" ] || for server in $servers; do start "$server"; done

# CPU time (user + system) of server $1 so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/${pid_of[$1]}/stat"; }
ticks_per_second=$(getconf CLK_TCK)

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

# Allocated bytes per request in the lines server $1 added after line $2 (the first, with the run's
# start, left out): the number before "requests" and the one before "B allocated", in both servers' words.
allocated_per_request() {
  tail -n +"$(($2 + 1))" "${stats[$1]}" | grep -E '^(second|progress):' | tail -n +2 | head -n -2 |
    awk '{ for (i = 1; i < NF; i++) { if ($(i + 1) ~ /^requests/) r += $i; if ($(i + 1) == "B" && $(i + 2) ~ /^allocated/) b += $i } }
         END { if (r) printf "%.1f\n", b / r; else print "?" }'
}

run() { # server scenario connections seconds -> wrk's output
  local threads_now=$threads
  [ "$3" -ge "$threads_now" ] || threads_now=$3
  # shellcheck disable=SC2046
  wrk -t"$threads_now" -c"$3" -d"${4}s" --latency $(script_of "$2") "${url[$1]}" $(pipeline_args "$2")
}

echo "Warm-up: 2 s of each scenario with 100 connections"
for server in $servers; do for scenario in $scenarios; do run "$server" "$scenario" 100 2 > /dev/null; done; done

declare -A rps p99 bpr cpu ratios
for round in $(seq "$rounds"); do
  for scenario in $scenarios; do
    for c in $connections; do
      declare -A this_round=()
      for server in $servers; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        before=0
        [ -z "${stats[$server]:-}" ] || before=$(wc -l < "${stats[$server]}")
        ticks0=0
        [ -z "${pid_of[$server]:-}" ] || ticks0=$(cpu_ticks "$server")
        out=$(run "$server" "$scenario" "$c" "$seconds")
        cpu_ns="-"
        if [ -n "${pid_of[$server]:-}" ]; then
          ticks1=$(cpu_ticks "$server")
          total=$(echo "$out" | awk '$2 == "requests" && $3 == "in" { print $1 }')
          cpu_ns=$(awk -v t="$((ticks1 - ticks0))" -v hz="$ticks_per_second" -v n="${total:-0}" 'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e9 / n; else print "?" }')
        fi
        allocated="-"
        if [ -n "${stats[$server]:-}" ]; then sleep 2.2; allocated=$(allocated_per_request "$server" "$before"); fi
        requests=$(echo "$out" | awk '/^Requests\/sec:/ { printf "%.0f\n", $2 }')
        latency=$(echo "$out" | awk '$1 == "99%" { print $2 }' | micros)
        # wrk's histogram sometimes answers 0 for a percentile (seen with pipelining on 1 connection).
        [ "$latency" != 0 ] || latency="n/a"
        errors=$(echo "$out" | grep -E 'Non-2xx|Socket errors' | tr -s ' ' | tr '\n' ' ' || true)
        key="$server $scenario c=$c"
        rps[$key]+="$requests "; p99[$key]+="$latency "; bpr[$key]+="$allocated "; cpu[$key]+="$cpu_ns "
        this_round[$server]="$requests"
        printf 'round %s (load %s): %-8s %-14s %10s req/s  p99 %11s  %6s B/req  CPU %5s ns/req %s\n' "$round" "$load" "$server" "$scenario c=$c" \
          "$requests" "${latency/%[0-9]/& us}" "$allocated" "$cpu_ns" "$errors"
      done
      k="${this_round[kestrel]:-}"
      for other in ours baseline; do
        o="${this_round[$other]:-}"
        if [ -n "$k" ] && [ -n "$o" ]; then ratios["$other $scenario c=$c"]+="$(awk -v o="$o" -v k="$k" 'BEGIN { if (k > 0) printf "%.3f", o / k }') "; fi
      done
    done
  done
done

median_of() { # figures -> their median, n/a and - left out
  printf '%s\n' $1 | { grep -v -e n/a -e '^-$' -e '^?$' || true; } | median
}
echo
echo "Median of $rounds runs of $seconds s (wrk -t$threads, pipeline depth $depth), load at the end: $(cut -d' ' -f1-3 /proc/loadavg):"
echo
echo "| server | scenario | connections | requests/s | p99 latency | B/request | server CPU ns/request |"
echo "|---|---|---:|---:|---:|---:|---:|"
for scenario in $scenarios; do
  for c in $connections; do
    for server in $servers; do
      key="$server $scenario c=$c"
      l=$(median_of "${p99[$key]}")
      [ "$l" = "?" ] && l="n/a" || l="$l us"
      b=$(median_of "${bpr[$key]}")
      n=$(median_of "${cpu[$key]}")
      printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$server" "$scenario" "$c" "$(median_of "${rps[$key]}")" "$l" "${b/\?/-}" "${n/\?/-}"
    done
  done
done

if [[ " $servers " == *" kestrel "* && " $servers " =~ " "(ours|baseline)" " ]]; then
    echo
    echo "Ratio to Kestrel of the median requests/s, and the median of the rounds' ratios (targets: >= 1.5 for get c=100, >= 1 for pipeline):"
    echo
    echo "| server | scenario | connections | ratio of the medians | median of the rounds' ratios |"
    echo "|---|---|---:|---:|---:|"
    for other in ours baseline; do
      [[ " $servers " == *" $other "* ]] || continue
      for scenario in $scenarios; do
        for c in $connections; do
          k=$(median_of "${rps[kestrel $scenario c=$c]}")
          o=$(median_of "${rps[$other $scenario c=$c]}")
          r=$(median_of "${ratios[$other $scenario c=$c]:-}")
          printf '| %s | %s | %s | %s | %s |\n' "$other" "$scenario" "$c" "$(awk -v o="$o" -v k="$k" 'BEGIN { if (k > 0) printf "%.2f", o / k; else print "?" }')" "$(awk -v r="$r" 'BEGIN { if (r != "?") printf "%.2f", r; else print "?" }')"
        done
      done
    done
fi
