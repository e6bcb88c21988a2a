#!/usr/bin/env bash
# Produces every shipped NuGet package (each src/ project with a PackageId: README, license, XML docs,
# embedded symbols) in artifacts/packages. Package validation runs as part of each pack.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t projects < <(grep -l '<PackageId>' src/*/*.csproj | sort)
for project in "${projects[@]}"; do
  dotnet pack "$project" -c Release --nologo -o artifacts/packages "$@"
done
ls -l artifacts/packages
