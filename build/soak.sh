#!/usr/bin/env bash
# Soak (docs/soak.md): build/soak.sh MINUTES [WORKERS]
# One server process runs the echo servers of tcp, ssl, uds, udp, http, ws and msg; a client
# process drives them all at once for MINUTES with steady churn (WORKERS per protocol, default 2:
# connect, exchange, then close, reset or half-close; HTTP keep-alive and short connections),
# checking every byte it gets back. The server samples its RSS, GC heap, handles, threads,
# sessions and errors every interval (60 s; 10 s for runs under 10 minutes; SOAK_INTERVAL
# overrides) into artifacts/soak/samples.csv, plotted in artifacts/soak/soak.png.
# Passes (exit 0) when neither side saw an error and memory, handles and threads are flat after
# the warm-up (a fifth of the run, at most 5 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:?usage: build/soak.sh MINUTES [WORKERS]}"
workers="${2:-2}"
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
interval="${SOAK_INTERVAL:-$(( seconds >= 600 ? 60 : 10 ))}"
warmup=$(( seconds / 5 < 300 ? seconds / 5 : 300 ))

dotnet build benchmarks/NetServer.Soak/NetServer.Soak.csproj -c Release --nologo -v quiet > /dev/null
soak="benchmarks/NetServer.Soak/bin/Release/net10.0/netserver-soak"
out="artifacts/soak"
rm -rf "$out"; mkdir -p "$out"

# The server stops when its stdin closes: a FIFO this script holds open (fd 3) until the client is done.
mkfifo "$out/server-stdin"
exec 3<> "$out/server-stdin"
"$soak" server "$out/samples.csv" "$interval" < "$out/server-stdin" > "$out/server.log" 2>&1 3>&- &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^endpoints ' "$out/server.log" && break; sleep 0.2; done
endpoints=$(grep '^endpoints ' "$out/server.log" | head -n 1 | cut -d' ' -f2-)
[ -n "$endpoints" ] || { cat "$out/server.log" >&2; echo "soak: the server did not start" >&2; exit 1; }
echo "soak: $minutes minute(s), $workers worker(s) per protocol, sampled every $interval s; servers: $endpoints"

client_code=0
"$soak" client "$endpoints" "$seconds" "$workers" 2>&1 3>&- | tee "$out/client.log" || client_code=$?
exec 3>&-
server_code=0
wait "$server" || server_code=$?
trap - EXIT
tail -n 3 "$out/server.log"

report_code=0
"$soak" report "$out/samples.csv" "$out/soak.png" "$warmup" || report_code=$?
echo "soak: client exit $client_code, server exit $server_code, report exit $report_code (samples: $out/samples.csv, plot: $out/soak.png)"
[ "$client_code" -eq 0 ] && [ "$server_code" -eq 0 ] && [ "$report_code" -eq 0 ]
