#!/usr/bin/env bash
# Runs the whole test suite and prints one line "Tests: N passed, N failed" taken from the
# test results (TRX), so a run that executed no test is visible. Extra arguments go to
# `dotnet test` (for example: --filter "FullyQualifiedName~HookOrder").
set -uo pipefail
cd "$(dirname "$0")/.."
# The programs outside .NET that some tests drive (curl, chromium, wrk, Node and Python WebSocket
# peers): installed when missing; a test whose tool is still missing is skipped with the reason.
bash build/install-tools.sh || echo "install-tools failed: tests that need those tools will be skipped" >&2

results="artifacts/test-results"
rm -rf "$results"
mkdir -p "$results"

# The three test projects (net10.0 build, netstandard2.0 build, netstandard2.1 build) run one
# after another (-m:1): each runs its own tests in parallel and floods sockets, and three at once
# on a 2-core machine make timing-sensitive tests fail for want of CPU, not for a defect.
dotnet test NetServer.sln -c Release --nologo -m:1 \
  --logger "trx" \
  --results-directory "$results" \
  --blame-hang-timeout 5m \
  "$@"
code=$?

# The engine, TLS, UDP (and secure UDP), HTTP, WebSocket, PROXY and messaging test classes once more with every server
# and client on the loops of an I/O service (NETSERVER_TRANSPORT=loops: on Linux the loops poll
# the sockets themselves with epoll; docs/io-service.md), so every engine guarantee is checked
# on both transports. The TLS scans are left out of this pass: they check which protocol versions and
# suites the server offers (SslStream's configuration, the same on both transports) and take two
# minutes alone. The engine theories' TLS cases ("kind: Ssl") run here too: they were left out
# while two of them failed intermittently on the loops (a reader that never came back short kept
# its loop from going round; fixed). Only on a whole run (no extra arguments);
# LOOPS_PASS=0 leaves it out.
if [ $# -eq 0 ] && [ "${LOOPS_PASS:-1}" = 1 ]; then
  NETSERVER_TRANSPORT=loops dotnet test tests/NetServer.Tests/NetServer.Tests.csproj -c Release --nologo --no-build \
    --logger "trx;LogFileName=loops-transport.trx" \
    --results-directory "$results" \
    --blame-hang-timeout 5m \
    --filter "(FullyQualifiedName~NetServer.Tests.Streams|FullyQualifiedName~NetServer.Tests.Tcp|FullyQualifiedName~NetServer.Tests.Udp|FullyQualifiedName~NetServer.Tests.SecureUdp|FullyQualifiedName~NetServer.Tests.Ssl|FullyQualifiedName~NetServer.Tests.Http|FullyQualifiedName~NetServer.Tests.WebSockets|FullyQualifiedName~NetServer.Tests.Messaging|FullyQualifiedName~NetServer.Tests.Proxy|FullyQualifiedName~NetServer.Tests.Service)&FullyQualifiedName!~TlsScannerTests"
  loops=$?
  [ "$code" -ne 0 ] || code=$loops
fi

passed=0; failed=0; total=0; skipped=0; found=0
for trx in "$results"/*.trx; do
  [ -f "$trx" ] || continue
  found=$((found + 1))
  counters=$(grep -o '<Counters [^>]*>' "$trx" | head -n 1)
  get() { printf '%s' "$counters" | grep -o " $1=\"[0-9]*\"" | grep -o '[0-9]*'; }
  passed=$((passed + $(get passed)))
  failed=$((failed + $(get failed)))
  total=$((total + $(get total)))
  skipped=$((skipped + $(get total) - $(get executed)))
done

echo "Tests: $passed passed, $failed failed"
# The failed tests by name, here at the end where a short tail of the log shows them.
if [ "$failed" -ne 0 ]; then
  for trx in "$results"/*.trx; do
    [ -f "$trx" ] || continue
    grep -o '<UnitTestResult [^>]*outcome="Failed"[^>]*>' "$trx" | grep -o 'testName="[^"]*"' \
      | sed "s|^testName=|Failed in $(basename "$trx"): |"
  done
fi
[ "$skipped" -eq 0 ] || echo "Skipped: $skipped (listed above; reasons in artifacts/test-results/*.trx)"
if [ "$found" -eq 0 ] || [ "$total" -eq 0 ]; then
  echo "No test results were produced." >&2
  exit 1
fi
exit $code
