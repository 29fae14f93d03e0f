#!/usr/bin/env bash
# Instructions per arrival of a workload, counted by callgrind (valgrind): the difference
# between two runs of the same workload at two sizes, divided by the difference in
# arrivals, so parsing, start-up and the end of the run cancel out. Noise on a shared
# machine does not touch these counts (wall-clock times it does), which is why
# docs/PERFORMANCE.md quotes them beside the criterion ratios.
#
# usage: benches/scripts/instructions-per-arrival.sh [BINARY] [WORKLOAD...]
#   BINARY    default target/release/subsim (build it first: cargo build --release)
#   WORKLOAD  names in benches/workloads/ with a `load:` block and a `count:` (default
#             w1 w1r w4); w4 at 50k and 100k arrivals, the others at 100k and 200k
# needs: valgrind (apt-get install -y valgrind)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:-target/release/subsim}
shift || true
workloads=${*:-w1 w1r w4}
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
[ -x "$binary" ] || { echo "no $binary: cargo build --release first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in $workloads; do
  file="$here/workloads/$w.yaml"
  grep -q '^  count: [0-9]*$' "$file" || { echo "$file has no load count" >&2; exit 2; }
  if [ "$w" = w4 ]; then a=50000; b=100000; else a=100000; b=200000; fi
  declare -A instructions
  for n in $a $b; do
    sed "s/^  count: [0-9]*$/  count: $n/" "$file" > "$tmp/$w-$n.yaml"
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" \
      "$binary" run "$tmp/$w-$n.yaml" --format summary >/dev/null 2>"$tmp/err"
    instructions[$n]=$(grep -o 'Collected : [0-9]*' "$tmp/err" | grep -o '[0-9]*$')
  done
  echo "$w $(( (instructions[$b] - instructions[$a]) / (b - a) )) instructions per arrival  (${instructions[$a]} at $a, ${instructions[$b]} at $b)"
done
