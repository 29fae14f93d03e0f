#!/usr/bin/env bash
# Whole-process ratio of the release binary on a YAML workload against the plain heap loop
# (`target/release/heap_loop`, the same W1 as a process of its own): the two run in turn,
# pair by pair, and the median of the pairs' CPU-time ratios is printed (CPU time, from
# `perf stat -e task-clock`, to the microsecond; the two-core project machine is shared, so
# a pair taken at one moment compares like with like).
#
# usage: benches/scripts/whole-process-ratio.sh [PAIRS] [BINARY] [WORKLOAD] [EXTRA ARGS...]
#   PAIRS     default 11
#   BINARY    default target/release/subsim
#   WORKLOAD  default w1 (a name in benches/workloads/)
#   EXTRA     arguments after `run FILE`, default `--format summary`
#   HEAP_LOOP (environment) the heap-loop binary, default target/release/heap_loop (set it
#             to pair another build's binary with its own heap loop)
# needs: perf (apt-get install -y linux-perf); build first:
#   cargo build --release -p subsim -p subsim-benches
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
pairs=${1:-11}
binary=${2:-$here/target/release/subsim}
workload=${3:-w1}
shift 3 2>/dev/null || shift $#
extra=("$@")
[ ${#extra[@]} -gt 0 ] || extra=(--format summary)
heap=${HEAP_LOOP:-$here/target/release/heap_loop}
for tool in "$binary" "$heap"; do
  [ -x "$tool" ] || { echo "no $tool: cargo build --release -p subsim -p subsim-benches" >&2; exit 2; }
done
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
cpu_ms() { # the task-clock of one run of "$@", in milliseconds
  perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'
}
ratios=()
for _ in $(seq "$pairs"); do
  h=$(cpu_ms "$heap")
  s=$(cpu_ms "$binary" run "$here/benches/workloads/$workload.yaml" "${extra[@]}")
  ratios+=("$(awk -v s="$s" -v h="$h" 'BEGIN {printf "%.3f", s / h}')")
  echo "heap_loop ${h} ms  subsim ${s} ms  ratio ${ratios[-1]}"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{r[NR] = $1} END {printf "median of %d pairs: %s\n", NR, r[int((NR + 1) / 2)]}'
