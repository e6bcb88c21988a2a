#!/usr/bin/env bash
# Time to Direct under the NAT lab's cases (docs/p2p.md, "NAT outcomes"): for each pair of NAT
# types (EIM x EIM, public x EIM, full cone x symmetric and back, EIM x symmetric, symmetric x
# symmetric), TRIES punches between fresh peer agents (new clients and sockets, so new NAT mappings
# and no cached path; one lab and relay per case), each timed by the asking agent from its
# ConnectDirectAsync call to the outcome. Prints per case the median and max time to Direct, how
# many tries ended Relayed and their median and max (the time to the Relayed outcome for the cases
# that cannot go direct). It runs NatTimeToPathBenchmark of the P2P test project (the lab of
# tests/NetServer.P2P.Tests/NatLab; skipped by test runs, which do not set NETSERVER_NATLAB_TRIES).
# Needs root and ip/iptables/tc/sysctl (build/install-tools.sh). Takes about 12 minutes with 20 tries.
#   build/bench-nat.sh               20 tries a case
#   TRIES=5 NO_BUILD=1 build/bench-nat.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-nat: the NAT lab needs root (network namespaces, veth pairs, iptables)" >&2; exit 1; }
tries="${TRIES:-20}"
project=tests/NetServer.P2P.Tests/NetServer.P2P.Tests.csproj
mkdir -p artifacts
report="$(pwd)/artifacts/bench-nat.txt"
log="$(pwd)/artifacts/bench-nat.log"
rm -f "$report"
[ -n "${NO_BUILD:-}" ] || timeout 1500 dotnet build "$project" -c Release --nologo -v quiet >/dev/null
echo "build/bench-nat.sh, TRIES=$tries, $(date -u '+%Y-%m-%d %H:%M') UTC, $(nproc) cores"
code=0
NETSERVER_NATLAB_TRIES="$tries" NETSERVER_NATLAB_REPORT="$report" timeout 3600 dotnet test "$project" -c Release --no-build --nologo \
  --filter "FullyQualifiedName~NatTimeToPathBenchmark" --logger "console;verbosity=normal" >"$log" 2>&1 || code=$?
if [ -f "$report" ]; then cat "$report"; fi
if [ "$code" -ne 0 ] || [ ! -f "$report" ]; then
  echo "bench-nat: the benchmark failed or was skipped (exit $code); dotnet test's output:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
