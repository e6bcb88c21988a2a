#!/usr/bin/env bash
# Produces the NetServer NuGet package (README, license, XML docs, embedded symbols) in artifacts/packages.
set -euo pipefail
cd "$(dirname "$0")/.."
dotnet pack src/NetServer/NetServer.csproj -c Release --nologo -o artifacts/packages "$@"
ls -l artifacts/packages
