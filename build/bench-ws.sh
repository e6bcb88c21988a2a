#!/usr/bin/env bash
# WebSocket echo against Kestrel: kestrel-reference's /ws (ASP.NET Core's WebSocket middleware) and
# netserver-bench's ws server (WsServer, our sessions sending every message back with
# SendBinaryAsync), alternately (Kestrel, ours, Kestrel, ...), driven by the same load client
# (netserver-bench ws echo --role client: MESSAGES messages of SIZE bytes in flight per client, one
# echo = one message each way), in rounds, and the medians.
#   build/bench-ws.sh                      ws and wss (TLS: kestrel-reference --https, our wss server,
#                                          certs/), 1 and 100 clients, 5 rounds of 5 s, after WARMUP s
#                                          of 100 clients against each server
#   PROTOCOLS=ws CLIENTS=100 ROUNDS=9 SECONDS_PER_RUN=10 WARMUP=10 build/bench-ws.sh
#   MESSAGES=1000 SIZE=32 TEXT=1           in flight per client, payload size, text messages
#   SERVERS="kestrel ours"                 or one of them
#   BASELINE=DIR                           adds "baseline": the ws server of another netserver-bench
#                                          build (DIR holds its netserver-bench), for a before/after
#                                          of a library change with the same client
#   NO_BUILD=1                             runs the servers as built (build/bench.sh has just built them)
#   RESULTS=FILE                           where the medians go as JSON lines, appended (default
#                                          artifacts/bench/results-web.jsonl; benchmarks/README.md)
# Every run's line starts with the load average before it. Figures: messages/s as our client counts
# them; the server process's CPU time (user + system, /proc/PID/stat) per message during the run,
# which other work on the machine disturbs less than the rate; and the bytes each server allocated
# per message, from its per-second lines (kestrel-reference --stats, netserver-bench's progress
# lines: the same words; the first and last seconds of a run, with the connects and disconnects, are
# left out). Then the median of each, the ratio
# ours / Kestrel of the median messages/s and the median of the rounds' ratios (each round's runs are
# seconds apart). The medians also go to RESULTS as JSON lines (build/bench-results.sh), ours' and
# the baseline's with Kestrel's of the same protocol and clients as their reference, for
# benchmarks/NetServer.BenchReport.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-5}"
seconds="${SECONDS_PER_RUN:-5}"
warmup="${WARMUP:-5}"
clients="${CLIENTS:-1 100}"
protocols="${PROTOCOLS:-ws wss}"
messages="${MESSAGES:-1000}"
size="${SIZE:-32}"
servers="${SERVERS:-kestrel ours}"
[ -z "${BASELINE:-}" ] || servers="$servers baseline"
text=()
[ -z "${TEXT:-}" ] || text=(--text)
results="${RESULTS:-artifacts/bench/results-web.jsonl}"
# shellcheck source=build/bench-results.sh
source build/bench-results.sh

if [ -z "${NO_BUILD:-}" ]; then
  dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet > /dev/null
  dotnet build benchmarks/KestrelReference/KestrelReference.csproj -c Release --nologo -v quiet > /dev/null
fi
bench="benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-ws.XXXXXX")
pids=()
stop_servers() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  pids=()
}
trap 'stop_servers; rm -rf "$work"' EXIT

declare -A port stats pid_of
# start NAME PROTOCOL: server NAME on a free port; its stdout in $work/NAME.out, its per-second lines in $work/NAME.stats.
start() {
  local name=$1 protocol=$2 line=""
  : > "$work/$name.out" # read below before the background job may have opened it
  case "$name" in
    kestrel)
      local https=()
      [ "$protocol" = ws ] || https=(--https)
      benchmarks/KestrelReference/bin/Release/net10.0/kestrel-reference --stats "${https[@]}" > "$work/$name.out" 2> "$work/$name.stats" & ;;
    ours | baseline)
      local binary="$bench" certs=()
      # Another build finds no certs/ above its own folder: name ours.
      [ "$name" = ours ] || { binary="$BASELINE/netserver-bench"; [ "$protocol" = ws ] || certs=(--certs "$PWD/certs"); }
      # -z: a server with -z 0 stops when its stdin ends, and a background job's stdin is empty.
      "$binary" "$protocol" echo --role server --port 0 -z 1000000 "${certs[@]}" > "$work/$name.out" 2> "$work/$name.stats" & ;;
    *) echo "bench-ws: unknown server $name (kestrel, ours, baseline)" >&2; exit 2 ;;
  esac
  pids+=($!)
  pid_of[$name]=$!
  for _ in $(seq 200); do
    line=$(sed -n -e 's|^listening on https\{0,1\}://[^:]*:\([0-9]*\).*|\1|p' -e 's|^Server listening on [^;]*:\([0-9]*\);.*|\1|p' "$work/$name.out")
    [ -n "$line" ] && break
    sleep 0.1
  done
  [ -n "$line" ] || { echo "bench-ws: $name printed no address" >&2; cat "$work/$name.out" "$work/$name.stats" >&2; exit 1; }
  port[$name]="$line"
  stats[$name]="$work/$name.stats"
  echo "Server: $name ($protocol) on port $line (pid $!)"
}

# CPU time (user + system) of server $1 so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/${pid_of[$1]}/stat"; }
ticks_per_second=$(getconf CLK_TCK)

field() { echo "$1" | grep -o "\"$2\":[0-9.]*" | cut -d: -f2 || true; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "?" }'; }
median_of() { printf '%s\n' $1 | { grep -v -e '^?$' -e '^-$' || true; } | median; }

# client SERVER PROTOCOL CLIENTS SECONDS -> our client's JSON line
client() {
  "$bench" "$2" echo --role client -p "${port[$1]}" --path /ws -c "$3" -m "$messages" -s "$size" -z "$4" -q "${text[@]}" 2> "$work/client.err" | grep '^{' || true
}

# Bytes allocated per message in the lines server $1 added after line $2 with messages in them:
# the number before "ws messages" and the one before "B allocated", in both servers' words. The first
# and the last of those seconds are left out: they hold the connects (TLS handshakes) and the
# disconnects of the run's 100 clients, which allocate (5 to 9 MB for 100 wss clients), not the messages.
allocated_per_message() {
  tail -n +"$(($2 + 1))" "${stats[$1]}" | grep -E '^(second|progress):' |
    awk '{ m = 0; b = 0; for (i = 1; i < NF; i++) { if ($(i + 1) == "ws" && $(i + 2) ~ /^messages/) m = $i; if ($(i + 1) == "B" && $(i + 2) ~ /^allocated/) b = $i }
           if (m > 0) { n++; ms[n] = m; bs[n] = b } }
         END { for (i = 2; i < n; i++) { tm += ms[i]; tb += bs[i] } if (tm) printf "%.3f\n", tb / tm; else print "?" }'
}

declare -A rate alloc cpu ratios
for protocol in $protocols; do
  for server in $servers; do start "$server" "$protocol"; done
  echo "Warm-up ($protocol): $warmup s of 100 clients against each server"
  for server in $servers; do client "$server" "$protocol" 100 "$warmup" > /dev/null; done

  for round in $(seq "$rounds"); do
    for c in $clients; do
      declare -A this_round=()
      for server in $servers; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        before=$(wc -l < "${stats[$server]}")
        ticks0=$(cpu_ticks "$server")
        out=$(client "$server" "$protocol" "$c" "$seconds")
        ticks1=$(cpu_ticks "$server")
        sleep 1.2
        per_message=$(allocated_per_message "$server" "$before")
        mps=$(field "$out" messagesPerSecond)
        total=$(field "$out" totalMessages)
        cpu_ns=$(awk -v t="$((ticks1 - ticks0))" -v hz="$ticks_per_second" -v n="${total:-0}" 'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e9 / n; else print "?" }')
        errors=$(field "$out" errors)
        note=""
        if [ -z "$mps" ] || [ "${errors:-1}" != 0 ]; then note="  FAILED (errors ${errors:-?}): $(tail -n 3 "$work/client.err" | tr '\n' ' ')"; mps=""; fi
        key="$protocol $server c=$c"
        rate[$key]+="${mps:-?} "; alloc[$key]+="$per_message "; cpu[$key]+="$cpu_ns "
        this_round[$server]="$mps"
        printf 'round %s (load %s): %-4s %-8s c=%-4s %12s msg/s  server CPU %6s ns/msg  %8s B/msg%s\n' "$round" "$load" "$protocol" "$server" "$c" "${mps:-?}" "$cpu_ns" "$per_message" "$note"
      done
      k="${this_round[kestrel]:-}"
      o="${this_round[ours]:-}"
      if [ -n "$k" ] && [ -n "$o" ]; then ratios["$protocol c=$c"]+="$(awk -v o="$o" -v k="$k" 'BEGIN { printf "%.3f", o / k }') "; fi
    done
  done
  stop_servers
done

echo
echo "Median of $rounds runs of $seconds s ($messages messages of $size bytes in flight per client${TEXT:+, text}), load at the end: $(cut -d' ' -f1-3 /proc/loadavg):"
echo
echo "| protocol | clients | server | messages/s | server CPU ns/msg | server B/msg |"
echo "|---|---:|---|---:|---:|---:|"
for protocol in $protocols; do
  for c in $clients; do
    for server in $servers; do
      key="$protocol $server c=$c"
      r=$(median_of "${rate[$key]}"); n=$(median_of "${cpu[$key]}"); b=$(median_of "${alloc[$key]}")
      printf '| %s | %s | %s | %s | %s | %s |\n' "$protocol" "$c" "$server" "$r" "$n" "$b"
      label="$protocol echo${TEXT:+ text} (own process), $c client(s)"
      reference=""
      [ "$server" = kestrel ] || [[ " $servers " != *" kestrel "* ]] || reference="$label, kestrel"
      result_line "$results" "$label, $server" "$reference" protocol "$protocol" scenario echo server "$server" \
        clients "$c" size "$size" seconds "$seconds" rounds "$rounds" messagesPerSecond "$r" \
        allocatedBytesPerMessage "$b" serverCpuNsPerMessage "$n"
    done
  done
done

if [[ " $servers " == *" kestrel "* && " $servers " == *" ours "* ]]; then
  echo
  echo "Ours / Kestrel (targets with 100 clients: ws >= 1.5, wss >= 1.2):"
  echo
  echo "| protocol | clients | ratio of the medians | median of the rounds' ratios | rounds' ratios |"
  echo "|---|---:|---:|---:|---|"
  for protocol in $protocols; do
    for c in $clients; do
      k=$(median_of "${rate[$protocol kestrel c=$c]}")
      o=$(median_of "${rate[$protocol ours c=$c]}")
      printf '| %s | %s | %s | %s | %s |\n' "$protocol" "$c" "$(awk -v o="$o" -v k="$k" 'BEGIN { if (k > 0) printf "%.2f", o / k; else print "?" }')" \
        "$(median_of "${ratios[$protocol c=$c]:-}")" "${ratios[$protocol c=$c]:-}"
    done
  done
fi
echo
echo "Medians as JSON lines: $results"
