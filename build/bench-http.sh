#!/usr/bin/env bash
# HTTP/1.1 load with wrk: keep-alive GET, pipelined GET and the seeds' TRACE, with 1 and 100
# connections, in rounds, and the median of each figure.
#   build/bench-http.sh                      starts kestrel-reference (Kestrel, the reference), nginx
#                                            (when installed: benchmarks/nginx/bench.conf) and
#                                            netserver-bench's http server (ours) and runs every
#                                            round against each, alternately (Kestrel, nginx, ours, ...)
#   SERVERS=kestrel build/bench-http.sh      only some of them (kestrel, nginx, ours, loops)
#   SERVERS="nginx ours loops"               "loops" is ours on the loops of an I/O service
#                                            (NETSERVER_TRANSPORT=loops: epoll on Linux, docs/io-service.md)
#   build/bench-http.sh http://127.0.0.1:8080/   any HTTP server already running, alone
#   ROUNDS=5 SECONDS_PER_RUN=10 CONNECTIONS="1 100" DEPTH=16 SCENARIOS="get pipeline trace" THREADS=1
#   HTTPS=1                                  both servers over TLS (certs/server.pfx)
#   OURS_ARGS=--inline                       extra netserver-bench options for ours (and baseline):
#                                            --inline runs socket completions on the I/O threads
#   BASELINE=DIR                             adds "baseline": the http server of another netserver-bench
#                                            build (DIR holds its netserver-bench), for a before/after
#                                            of a library change with the same wrk runs
#   NO_BUILD=1                               runs the servers as built (build/bench.sh has just built them)
#   RESULTS=FILE                             where the medians go as JSON lines, appended (default
#                                            artifacts/bench/results-web.jsonl; benchmarks/README.md)
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
# the rounds' ratios (each round's runs are seconds apart). wrk and nginx come from
# build/install-tools.sh. nginx answers GET as the other two do (status, Content-Type, body; its
# responses carry two more fields) but TRACE with 405, so it sits out the trace scenario; it
# allocates no managed memory (no B/request), and its CPU time is its master's and workers'.
# The medians also go to RESULTS as JSON lines (build/bench-results.sh), each server's with Kestrel's
# of the same scenario and connections as its reference, for benchmarks/NetServer.BenchReport.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
seconds="${SECONDS_PER_RUN:-5}"
connections="${CONNECTIONS:-1 100}"
depth="${DEPTH:-16}"
scenarios="${SCENARIOS:-get pipeline trace}"
threads="${THREADS:-1}"
results="${RESULTS:-artifacts/bench/results-web.jsonl}"
if [ -n "${SERVERS:-}" ]; then
  servers="$SERVERS"
elif command -v nginx > /dev/null; then
  servers="kestrel nginx ours"
else
  servers="kestrel ours"
  echo "bench-http: nginx is not installed (build/install-tools.sh installs it): no nginx series"
fi
[ -z "${BASELINE:-}" ] || servers="$servers baseline"
command -v wrk > /dev/null || { echo "bench-http: wrk is missing (build/install-tools.sh installs it)" >&2; exit 2; }
# shellcheck source=build/bench-results.sh
source build/bench-results.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-http.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

declare -A url stats pid_of
# Whether server $1 runs scenario $2: nginx refuses TRACE (405, in its core), so not trace.
serves() { [ "$1" != nginx ] || [ "$2" != trace ]; }
if [[ " $servers " == *" nginx "* && " $scenarios " == *" trace "* ]]; then
  echo "bench-http: nginx answers TRACE with 405 (nginx's core refuses the method): nginx sits out the trace scenario"
fi
if [ -n "${1:-}" ]; then
  servers=given
  url[given]="$1"
  echo "Server: $1"
fi

# nginx on a free port of 127.0.0.1, in the foreground, its files in $work/nginx: sets url[nginx]
# and leaves it the last background job (start() takes its pid). nginx cannot bind port 0 and say
# which port it got, so a port is drawn, and drawn again if nginx could not bind it.
start_nginx() {
  local dir="$work/nginx" port
  mkdir -p "$dir"
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    ! (: < "/dev/tcp/127.0.0.1/$port") 2> /dev/null || continue
    sed -e "s|@WORK@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@SSL@|${HTTPS:+ssl}|g" -e "s|@CERTS@|$PWD/certs|g" -e "s|@WORKERS@|${NGINX_WORKERS:-1}|g" \
      benchmarks/nginx/bench.conf > "$dir/nginx.conf"
    nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -g 'daemon off;' > "$work/nginx.out" 2>&1 &
    for _ in $(seq 100); do
      kill -0 $! 2> /dev/null || break
      if (: < "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
        url[nginx]="http${HTTPS:+s}://127.0.0.1:$port/"
        return
      fi
      sleep 0.1
    done
    kill -TERM $! 2> /dev/null || true
    wait $! 2> /dev/null || true
  done
  echo "bench-http: nginx did not start" >&2
  cat "$dir/error.log" "$work/nginx.out" >&2
  exit 1
}

# Starts server $1 on a free port; its stdout goes to $work/$1.out, its per-second lines to $work/$1.stats.
start() {
  local name=$1 line
  if [ "$name" = nginx ]; then
    start_nginx
    pids+=($!)
    pid_of[$name]=$!
    echo "Server: $name at ${url[$name]} (pid $!)"
    return
  fi
  case "$name" in
    kestrel)
      [ -n "${NO_BUILD:-}" ] || dotnet build benchmarks/KestrelReference/KestrelReference.csproj -c Release --nologo -v quiet > /dev/null
      benchmarks/KestrelReference/bin/Release/net10.0/kestrel-reference --stats ${HTTPS:+--https} > "$work/$name.out" 2> "$work/$name.stats" & ;;
    ours | baseline | loops)
      local binary=benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench certs=() transport=default
      [ "$name" != loops ] || transport=loops
      if [ "$name" != baseline ]; then
        [ -n "${NO_BUILD:-}" ] || dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet > /dev/null
      else
        # Another build finds no certs/ above its own folder: name ours.
        binary="$BASELINE/netserver-bench"
        [ -z "${HTTPS:-}" ] || certs=(--certs "$PWD/certs")
      fi
      # -z: a server with -z 0 stops when its stdin ends, and a background job's stdin is empty.
      # shellcheck disable=SC2086
      NETSERVER_TRANSPORT=$transport "$binary" "http${HTTPS:+s}" --role server --port 0 -z 1000000 "${certs[@]}" ${OURS_ARGS:-} \
        > "$work/$name.out" 2> "$work/$name.stats" & ;;
    *) echo "bench-http: unknown server $name (kestrel, nginx, ours, loops, baseline)" >&2; exit 2 ;;
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

# CPU time (user + system) of server $1 so far, in clock ticks: its process's and its children's
# (nginx's workers; the .NET servers have none).
cpu_ticks() {
  local pid=${pid_of[$1]}
  # shellcheck disable=SC2046
  cat "/proc/$pid/stat" $(cat /proc/"$pid"/task/*/children 2> /dev/null | xargs -r printf '/proc/%s/stat ') 2> /dev/null |
    awk '{ t += $14 + $15 } END { print t }'
}
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
for server in $servers; do for scenario in $scenarios; do ! serves "$server" "$scenario" || run "$server" "$scenario" 100 2 > /dev/null; done; done

declare -A rps p99 bpr cpu ratios nratios
for round in $(seq "$rounds"); do
  for scenario in $scenarios; do
    for c in $connections; do
      declare -A this_round=()
      for server in $servers; do
        serves "$server" "$scenario" || continue
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
      g="${this_round[nginx]:-}"
      for other in ours nginx baseline loops; do
        o="${this_round[$other]:-}"
        if [ -n "$k" ] && [ -n "$o" ]; then ratios["$other $scenario c=$c"]+="$(awk -v o="$o" -v k="$k" 'BEGIN { if (k > 0) printf "%.3f", o / k }') "; fi
        if [ -n "$g" ] && [ -n "$o" ]; then nratios["$other $scenario c=$c"]+="$(awk -v o="$o" -v k="$g" 'BEGIN { if (k > 0) printf "%.3f", o / k }') "; fi
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
# label SCENARIO CONNECTIONS SERVER: the run's name in RESULTS, e.g. "http get (wrk), 100 connection(s), kestrel".
label() {
  local name=$1
  [ "$1" != pipeline ] || name="pipeline $depth"
  echo "http${HTTPS:+s} $name (wrk), $2 connection(s), $3"
}
for scenario in $scenarios; do
  for c in $connections; do
    for server in $servers; do
      serves "$server" "$scenario" || continue
      key="$server $scenario c=$c"
      p=$(median_of "${p99[$key]}")
      [ "$p" = "?" ] && l="n/a" || l="$p us"
      b=$(median_of "${bpr[$key]}")
      n=$(median_of "${cpu[$key]}")
      r=$(median_of "${rps[$key]}")
      printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$server" "$scenario" "$c" "$r" "$l" "${b/\?/-}" "${n/\?/-}"
      reference=""
      [ "$server" = kestrel ] || [[ " $servers " != *" kestrel "* ]] || reference=$(label "$scenario" "$c" kestrel)
      result_line "$results" "$(label "$scenario" "$c" "$server")" "$reference" protocol "http${HTTPS:+s}" scenario "$scenario" \
        server "$server" client wrk clients "$c" seconds "$seconds" rounds "$rounds" messagesPerSecond "$r" \
        p99Ns "$(awk -v p="$p" 'BEGIN { if (p != "?") printf "%.0f", p * 1000; else print "?" }')" \
        allocatedBytesPerMessage "$b" serverCpuNsPerMessage "$n"
    done
  done
done

if [[ " $servers " == *" nginx "* && " $servers " =~ " "(ours|loops|baseline)" " ]]; then
    echo
    echo "Ratio to nginx of the median requests/s and of the server CPU per request, and the median of the rounds' ratios (issue 20: loops get c=100 >= 0.85, CPU <= 1.4x):"
    echo
    echo "| server | scenario | connections | requests/s ratio of the medians | median of the rounds' ratios | CPU/request ratio |"
    echo "|---|---|---:|---:|---:|---:|"
    for other in ours loops baseline; do
      [[ " $servers " == *" $other "* ]] || continue
      for scenario in $scenarios; do
        serves "$other" "$scenario" && serves nginx "$scenario" || continue
        for c in $connections; do
          g=$(median_of "${rps[nginx $scenario c=$c]}")
          o=$(median_of "${rps[$other $scenario c=$c]}")
          r=$(median_of "${nratios[$other $scenario c=$c]:-}")
          gc=$(median_of "${cpu[nginx $scenario c=$c]}")
          oc=$(median_of "${cpu[$other $scenario c=$c]}")
          printf '| %s | %s | %s | %s | %s | %s |\n' "$other" "$scenario" "$c" "$(awk -v o="$o" -v k="$g" 'BEGIN { if (k > 0) printf "%.2f", o / k; else print "?" }')" \
            "$(awk -v r="$r" 'BEGIN { if (r != "?" && r != "") printf "%.2f", r; else print "?" }')" "$(awk -v o="$oc" -v k="$gc" 'BEGIN { if (k > 0 && o > 0) printf "%.2f", o / k; else print "?" }')"
        done
      done
    done
fi

if [[ " $servers " == *" kestrel "* && " $servers " =~ " "(ours|nginx|baseline|loops)" " ]]; then
    echo
    echo "Ratio to Kestrel of the median requests/s, and the median of the rounds' ratios (targets: >= 1.5 for get c=100, >= 1 for pipeline):"
    echo
    echo "| server | scenario | connections | ratio of the medians | median of the rounds' ratios |"
    echo "|---|---|---:|---:|---:|"
    for other in ours loops nginx baseline; do
      [[ " $servers " == *" $other "* ]] || continue
      for scenario in $scenarios; do
        serves "$other" "$scenario" || continue
        for c in $connections; do
          k=$(median_of "${rps[kestrel $scenario c=$c]}")
          o=$(median_of "${rps[$other $scenario c=$c]}")
          r=$(median_of "${ratios[$other $scenario c=$c]:-}")
          printf '| %s | %s | %s | %s | %s |\n' "$other" "$scenario" "$c" "$(awk -v o="$o" -v k="$k" 'BEGIN { if (k > 0) printf "%.2f", o / k; else print "?" }')" "$(awk -v r="$r" 'BEGIN { if (r != "?") printf "%.2f", r; else print "?" }')"
        done
      done
    done
fi
echo
echo "Medians as JSON lines: $results"
