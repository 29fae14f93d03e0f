#!/usr/bin/env bash
# A classroom's worth of load on the playground (issue #31): a release `subsim serve` with
# its defaults on loopback, and CLIENTS concurrent clients each running the instant demo
# ROUNDS times (`crates/cli/examples/classroom.rs`). Prints the clients' latencies and the
# server's peak resident memory (VmHWM), then stops the server by its process id.
#
# usage: benches/scripts/playground-classroom.sh [CLIENTS] [ROUNDS] [SERVE ARGS...]
#   CLIENTS default 200, ROUNDS default 5
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
clients=${1:-200}
rounds=${2:-5}
shift 2 2>/dev/null || shift $#
cd "$here"
cargo build --release -q -p subsim --bin subsim --example classroom
out=$(mktemp)
RUST_LOG=warn target/release/subsim serve --bind 127.0.0.1:0 "$@" >"$out" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q playground "$out" && break; sleep 0.1; done
addr=$(sed -n 's#^playground at http://\(.*\)/$#\1#p' "$out")
[ -n "$addr" ] || { echo "the server did not start" >&2; exit 2; }
echo "server pid $server at $addr; start: $(grep VmRSS /proc/$server/status)"
target/release/examples/classroom "$addr" "$clients" "$rounds"
grep -E 'VmHWM|VmRSS' /proc/$server/status
