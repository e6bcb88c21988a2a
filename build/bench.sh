#!/usr/bin/env bash
# The main job: a short run of the benchmark suite with defaults that work anywhere.
#   build/bench.sh            tcp and uds, echo and multicast, 1 and 100 clients, 3 s each
#   SECONDS_PER_RUN=10 build/bench.sh
# When the C reference echo server (../shared/tools/echoref.c) and gcc are present, it also
# measures our TCP echo server against it with the same client, in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SECONDS_PER_RUN:-3}"
dotnet build benchmarks/NetServer.Benchmark/NetServer.Benchmark.csproj -c Release --nologo -v quiet >/dev/null
bench="benchmarks/NetServer.Benchmark/bin/Release/net10.0/netserver-bench"

summary=()
run() {
  local label="$1"; shift
  local out
  out=$("$bench" "$@" -z "$seconds" -q)
  echo "$out" | grep -v '^{' | sed 's/^/  /'
  local rate alloc
  rate=$(echo "$out" | grep -o '"messagesPerSecond":[0-9.]*' | cut -d: -f2)
  alloc=$(echo "$out" | grep -o '"allocatedBytesPerMessage":[0-9.]*' | cut -d: -f2)
  summary+=("$(printf '%-34s %14s msg/s %10s B/msg' "$label" "$rate" "$alloc")")
}

for protocol in tcp uds; do
  for clients in 1 100; do
    echo "== $protocol echo, $clients client(s)"
    run "$protocol echo, $clients client(s)" "$protocol" echo -c "$clients"
    echo "== $protocol multicast, $clients client(s)"
    run "$protocol multicast, $clients client(s)" "$protocol" multicast -c "$clients"
  done
done

reference="../shared/tools/echoref.c"
if [ -f "$reference" ] && command -v gcc >/dev/null; then
  echo "== TCP echo: NetServer vs the C reference server (echoref), same client, same run"
  mkdir -p artifacts
  gcc -O2 -pthread -o artifacts/echoref "$reference"
  port_ref=$((20000 + RANDOM % 10000)); port_our=$((port_ref + 1))
  artifacts/echoref server "$port_ref" 1 >/dev/null &
  ref_pid=$!
  "$bench" tcp echo --role server -p "$port_our" -z 3600 -q >/dev/null &
  our_pid=$!
  trap 'kill $ref_pid $our_pid 2>/dev/null || true' EXIT
  sleep 1
  for clients in 1 100; do
    ref=$("$bench" tcp echo --role client -p "$port_ref" -c "$clients" -z "$seconds" -q | grep -o '"messagesPerSecond":[0-9.]*' | cut -d: -f2)
    our=$("$bench" tcp echo --role client -p "$port_our" -c "$clients" -z "$seconds" -q | grep -o '"messagesPerSecond":[0-9.]*' | cut -d: -f2)
    summary+=("$(printf 'tcp echo vs echoref, %3d client(s): NetServer %s msg/s, echoref %s msg/s, ratio %s' "$clients" "$our" "$ref" "$(awk -v a="$our" -v b="$ref" 'BEGIN { printf "%.2f", a / b }')")")
  done
fi

echo
echo "Summary ($seconds s per run; client and server share this machine):"
printf '  %s\n' "${summary[@]}"
