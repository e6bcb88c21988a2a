#!/usr/bin/env bash
# Writes the public surface the build reports as undeclared (RS0016) into the shipped packages'
# PublicAPI/<target>/PublicAPI.Unshipped.txt (headless stand-in for the IDE's code fix). Review the
# diff: every added line is a public API change. Usage: build/update-public-api.sh [project.csproj ...]
# (default: every packable project under src/). docs/api.md says when lines move to Shipped.
set -euo pipefail
cd "$(dirname "$0")/.."
projects=("$@")
[ ${#projects[@]} -gt 0 ] || mapfile -t projects < <(grep -l '<PackageId>' src/*/*.csproj)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for project in "${projects[@]}"; do
  # --no-incremental: a project compiled before would report nothing. The build fails on RS0016 but
  # still reports every undeclared symbol, which is what is collected.
  dotnet build "$project" -c Release --nologo -tl:off --no-incremental -p:TreatWarningsAsErrors=false >>"$log" 2>&1 || true
done
python3 - "$log" <<'PY'
import collections, os, re, sys
pattern = re.compile(r"(?:warning|error) RS0016: Symbol '(.*?)' is not part of the declared public API .*\[(.*?\.csproj)(?:::TargetFramework=([^\]]+))?\]")
found = collections.defaultdict(set)
for line in open(sys.argv[1], encoding="utf-8"):
    m = pattern.search(line)
    if m:
        found[(m.group(2), m.group(3))].add(m.group(1))
for (project, tfm), symbols in sorted(found.items()):
    if tfm is None:  # a single-target project: its one folder
        tfm = next(iter(os.listdir(os.path.join(os.path.dirname(project), "PublicAPI"))))
    path = os.path.join(os.path.dirname(project), "PublicAPI", tfm, "PublicAPI.Unshipped.txt")
    lines = [l.rstrip("\n") for l in open(path, encoding="utf-8")] if os.path.exists(path) else ["#nullable enable"]
    header, body = lines[:1], set(l for l in lines[1:] if l.strip())
    body |= symbols
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(header + sorted(body, key=str.casefold)) + "\n")
    print(f"{path}: +{len(symbols)}")
PY
