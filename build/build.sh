#!/usr/bin/env bash
# Builds everything (library for all targets, tests, benchmarks, examples) in Release.
set -euo pipefail
cd "$(dirname "$0")/.."
dotnet build NetServer.sln -c Release --nologo "$@"
