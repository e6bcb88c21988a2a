#!/usr/bin/env bash
# Coverage-guided fuzzing of one parser with AFL++ and SharpFuzz (docs/fuzzing.md):
#   build/fuzz.sh TARGET SECONDS     e.g. build/fuzz.sh http-request 1800
#   build/fuzz.sh list               the targets
# Installs afl++ and time (Debian) and the sharpfuzz tool (NuGet) when missing, publishes
# tests/NetServer.Fuzz, instruments NetServer.dll, NetServer.Protobuf.dll and NetServer.P2P.dll, starts afl-fuzz
# from the target's seed corpus (tests/NetServer.Fuzz/corpus/TARGET) and prints executions,
# paths and edges found, crashes, hangs and peak memory. Findings stay in
# artifacts/fuzz/TARGET/out/default/{crashes,hangs}: copy each into the corpus as a regression
# (the test suite replays every corpus file) and fix the parser.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: build/fuzz.sh TARGET SECONDS (build/fuzz.sh list names the targets)}"
work="artifacts/fuzz"
bin="$work/bin"

dotnet publish tests/NetServer.Fuzz/NetServer.Fuzz.csproj -c Release --nologo -v quiet -o "$bin" > /dev/null
if [ "$target" = list ]; then dotnet "$bin/netserver-fuzz.dll" list; exit 0; fi
seconds="${2:?usage: build/fuzz.sh TARGET SECONDS}"
[ -d "tests/NetServer.Fuzz/corpus/$target" ] || { echo "No target '$target'." >&2; dotnet "$bin/netserver-fuzz.dll" list; exit 2; }

if ! command -v afl-fuzz > /dev/null || [ ! -x /usr/bin/time ]; then
  sudo=(); [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends afl++ time > /dev/null
fi
tools="$work/tools"
[ -x "$tools/sharpfuzz" ] || dotnet tool install SharpFuzz.CommandLine --version 2.3.0 --tool-path "$tools" > /dev/null

# Instrument once per publish (sharpfuzz refuses an assembly it has instrumented already).
for assembly in NetServer.dll NetServer.Protobuf.dll NetServer.P2P.dll; do
  stamp="$bin/$assembly.instrumented"
  if [ ! -f "$stamp" ] || [ "$bin/$assembly" -nt "$stamp" ]; then
    "$tools/sharpfuzz" "$bin/$assembly" > /dev/null
    touch "$stamp"
  fi
done

out="$work/$target/out"
rm -rf "$out"; mkdir -p "$out"
# dotnet itself carries no AFL instrumentation (SharpFuzz reports coverage from the instrumented
# assemblies), hence AFL_SKIP_BIN_CHECK; no core_pattern change needed on a shared machine.
# Peak memory: GNU time's maximum resident set of afl-fuzz and the target processes it waited for.
AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CPUFREQ=1 AFL_FORKSRV_INIT_TMOUT=60000 \
  /usr/bin/time -f "%M" -o "$work/$target/peak-kb" afl-fuzz -i "tests/NetServer.Fuzz/corpus/$target" -o "$out" -V "$seconds" -t 10000 -m none \
  -- dotnet "$bin/netserver-fuzz.dll" "$target" > "$work/$target/afl.log" 2>&1 || { tail -n 30 "$work/$target/afl.log" >&2; exit 1; }

stats="$out/default/fuzzer_stats"
get() { grep "^$1 " "$stats" | cut -d: -f2 | tr -d ' '; }
crashes=$(get saved_crashes); hangs=$(get saved_hangs)
echo "$target: $(get execs_done) executions in $(get run_time) s, $(get corpus_count) paths, edges $(get edges_found)/$(get total_edges) ($(get bitmap_cvg)), crashes $crashes, hangs $hangs, peak RSS $(( $(tail -n 1 "$work/$target/peak-kb") / 1024 )) MB"
[ "${crashes:-0}" -eq 0 ] && [ "${hangs:-0}" -eq 0 ]
