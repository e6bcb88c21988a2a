#!/usr/bin/env bash
# Installs the programs outside .NET that the HTTP and WebSocket tests and benchmarks drive:
#   wrk                 HTTP load generator (benchmarks/README.md, "Reference: Kestrel")
#   curl, openssl       HTTP(S) requests and TLS checks by hand and from scripts
#   chromium            headless browser: the Swagger UI test renders www/api in it
#   fonts-liberation    fonts for chromium's screenshots (text renders without them, unreadable)
#   python3-websockets  a Python WebSocket peer, for Debian's own /usr/bin/python3
#   nodejs, npm         only when node / npm are missing (this machine's nodejs already has npm;
#                       Debian's npm package would conflict with it)
#   ws (npm)            a Node.js WebSocket peer, pinned in tests/node/package-lock.json and
#                       installed into tests/node/node_modules
#   testssl.sh         the TLS scanner the HTTPS and WSS example tests run (tests/NetServer.Tests/Ssl/TlsScannerTests.cs)
#   iproute2, iptables, procps
#                       ip/tc, iptables and sysctl for the P2P tests' NAT lab (network namespaces, veth
#                       pairs, a bridge, NAT rules, per-namespace conntrack timeouts: docs/nat-lab.md);
#                       Debian's iptables is the nft backend
#   redis-server        the Redis the scale-out backplane tests start on free ports (tests/NetServer.Redis.Tests)
#   haproxy             the proxy the PROXY protocol tests start on free ports in front of NetServer
#                       (send-proxy, send-proxy-v2: tests/NetServer.Tests/Proxy, docs/proxy-protocol.md)
#   nginx               the HTTP reference server build/bench-http.sh starts on a free port beside
#                       Kestrel and ours (benchmarks/nginx/bench.conf); where services start on
#                       install, Debian's package also starts its own on port 80, which nothing here uses
# Idempotent: only what is missing is installed, and apt-get update runs only then. Needs root for
# apt-get (run as root, or have sudo). Prints the version of every tool at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for package in wrk curl openssl chromium fonts-liberation python3-websockets testssl.sh iproute2 iptables procps redis-server haproxy nginx; do
  installed "$package" || missing+=("$package")
done
command -v node > /dev/null || missing+=(nodejs)
command -v npm > /dev/null || missing+=(npm)

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-tools: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo > /dev/null || { echo "install-tools: apt-get needs root (or sudo) for: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi

# npm ci installs exactly the locked version; skipped when that version is already there.
want=$(sed -n 's/.*"ws": "\(.*\)".*/\1/p' tests/node/package.json)
have=$(node -p "require('./tests/node/node_modules/ws/package.json').version" 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  echo "install-tools: npm ci in tests/node (ws $want)"
  npm ci --prefix tests/node --no-audit --no-fund --loglevel=error > /dev/null
fi

echo "install-tools: versions"
echo "  wrk:                $(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2)"
echo "  curl:               $(curl --version | head -n 1 | cut -d' ' -f1-2)"
echo "  openssl:            $(openssl version)"
echo "  chromium:           $(chromium --version 2>/dev/null)"
echo "  python3-websockets: $(/usr/bin/python3 -c 'import websockets; print(websockets.__version__)') (for /usr/bin/python3)"
echo "  node:               $(node --version), npm $(npm --version 2>/dev/null)"
echo "  ws (npm):           $(node -p "require('./tests/node/node_modules/ws/package.json').version")"
echo "  testssl.sh:         $(testssl --version 2>/dev/null | grep -o "testssl *[0-9.]*" | head -n 1)"
echo "  iproute2:           $(ip -V)"
echo "  iptables:           $(iptables --version)"
echo "  redis-server:       $(redis-server --version | cut -d' ' -f3)"
echo "  haproxy:            $(haproxy -v | head -n 1 | cut -d' ' -f1-3)"
echo "  nginx:              $(nginx -v 2>&1 | cut -d' ' -f3)"
