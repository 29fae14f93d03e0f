#!/bin/bash
# The hostile-input hunt of issue #24 (docs/TESTING.md): every case of cases.txt
# (COMMAND|EXIT CODE EXPECTED|COMMAND LINE) run against BIN in a scratch folder under a
# 2 GiB address-space limit and a 25 s timeout; one tab-separated line per case:
# number, command, expected, exit code, seconds, stdout bytes, command line, stderr head.
# usage: tests/hunt/hunt.sh BIN OUT.tsv
set -u
BIN=$(realpath "$1"); OUT=$(realpath -m "$2"); HERE=$(dirname "$(realpath "$0")")
WORK=$(mktemp -d); cd "$WORK" || exit 2
python3 "$HERE/inputs.py" "$BIN"
export RUST_BACKTRACE=0 NO_COLOR=1 CAPP=session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS
: > "$OUT"
n=0
while IFS='|' read -r cmd expect line; do
  n=$((n+1))
  start=$(date +%s.%N)
  timeout -k 2 25 bash -c "ulimit -v 2097152; ${line//\$BIN/$BIN}" > stdout 2> stderr < /dev/null
  rc=$?
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  err=$(grep -v '^\s*$' stderr | grep -v '^  *[│╭╰·]' | head -2 | tr '\n\t' '  ' | cut -c1-200)
  printf '%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\n' "$n" "$cmd" "$expect" "$rc" "$seconds" \
    "$(stat -c %s stdout)" "$line" "$err" >> "$OUT"
done < "$HERE/cases.txt"
cd / && rm -rf "$WORK"
