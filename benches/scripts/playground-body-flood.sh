#!/usr/bin/env bash
# A flood of unfinished request bodies on the playground (issue #31): a release
# `subsim serve` on loopback, CONNECTIONS connections each sending just under 1 MiB of a
# body they never finish (`crates/cli/examples/body_flood.rs`). Prints the server's
# resident memory (VmRSS) before, while the bodies are held, and after they are closed,
# and its peak (VmHWM); then stops the server by its process id.
#
# usage: benches/scripts/playground-body-flood.sh [CONNECTIONS] [SERVE ARGS...]
#   CONNECTIONS default 1000 (needs `ulimit -n` above it, for the server and the client)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
connections=${1:-1000}
shift 1 2>/dev/null || shift $#
cd "$here"
cargo build --release -q -p subsim --bin subsim --example body_flood
out=$(mktemp)
RUST_LOG=error target/release/subsim serve --bind 127.0.0.1:0 --max-connections 2048 "$@" >"$out" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q playground "$out" && break; sleep 0.1; done
addr=$(sed -n 's#^playground at http://\(.*\)/$#\1#p' "$out")
rss() { echo "$1: $(grep VmRSS /proc/$server/status | tr -s ' ')"; }
rss before
target/release/examples/body_flood "$addr" "$connections" 5 | while read -r line; do
  echo "client: $line"
  case $line in sent*) rss during ;; esac
done
rss "just after"
sleep 10
rss "10 s after"
grep VmHWM /proc/$server/status | tr -s ' '
