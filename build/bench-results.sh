# Sourced by build/bench-http.sh and build/bench-ws.sh: their medians as JSON lines in the schema of
# build/bench.sh's results.jsonl (benchmarks/README.md), which benchmarks/NetServer.BenchReport reads.
#   result_line FILE LABEL REFERENCE NAME VALUE [NAME VALUE]...
# appends {"label":LABEL,"reference":REFERENCE,NAME:VALUE,...} to FILE. An empty REFERENCE is left
# out, as is a value that was not measured ("", "?", "-", "n/a"); a number is written as a number,
# anything else as a string.
result_line() {
  local file=$1 label=$2 reference=$3 line
  shift 3
  line="{\"label\":\"$label\""
  [ -z "$reference" ] || line="$line,\"reference\":\"$reference\""
  while [ "$#" -ge 2 ]; do
    case "$2" in
      "" | "?" | "-" | n/a) ;;
      *[!0-9.]* | .* | *. | *.*.*) line="$line,\"$1\":\"$2\"" ;;
      *) line="$line,\"$1\":$2" ;;
    esac
    shift 2
  done
  mkdir -p "$(dirname "$file")"
  echo "$line}" >> "$file"
}
