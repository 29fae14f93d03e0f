#!/usr/bin/env bash
# How often `subsim capacity`'s settled pick equals Erlang B's answer (issue #33): for caps
# from 5 to 100 (a load that makes Erlang B's answer for blocking < 1 % that cap), over
# SEEDS base seeds each, on scenarios/load/erlang-b-20-erlangs.yaml with exp(1s) runs of
# COUNT arrivals. Prints one line per case and the agreement percentage (of the settled
# picks, and how many were not settled within the default budget).
#
# PLACE chooses the load at each cap:
#   edge   — the largest load (in steps of 0.1 Erlang) whose answer is the cap: the cap's
#            own blocking is just under 1 % (e.g. 0.0098 at cap 20), the hardest case;
#   middle — the load (in steps of 0.1 Erlang) nearest to putting 1 % halfway (geometric
#            mean) between the blocking at the cap and at the cap less one.
#
#   cargo build --release && benches/scripts/capacity-agreement.sh [SEEDS] [COUNT] [PLACE]
set -euo pipefail
cd "$(dirname "$0")/../.."
SEEDS=${1:-10}
COUNT=${2:-5000}
PLACE=${3:-edge}
case "$PLACE" in edge|middle) ;; *) echo "PLACE must be edge or middle, not '$PLACE'" >&2; exit 2;; esac
BIN=${BIN:-target/release/subsim}
FILE=scenarios/load/erlang-b-20-erlangs.yaml
agree=0 settled=0 total=0
for cap in 5 10 20 30 40 50 60 70 80 90 100; do
    load=$(python3 -c "
import math
def b(c, a):
    x = 1.0
    for k in range(1, c + 1): x = a * x / (k + a * x)
    return x
c = $cap
loads = [k / 10 for k in range(1, 10 * c)]
ok = [a for a in loads if b(c, a) <= 0.01 and (c == 1 or b(c - 1, a) > 0.01)]
if '$PLACE' == 'edge':
    a = max(ok)
else:
    a = min(ok, key=lambda a: abs(math.log(b(c, a) * b(c - 1, a)) - 2 * math.log(0.01)))
print(a)")
    answer=$("$BIN" erlang --load "$load" --target 0.01 --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cap"])')
    from=$(( answer > 3 ? answer - 3 : 1 ))
    for seed in $(seq 1 "$SEEDS"); do
        out=$("$BIN" capacity "$FILE" --set "load.arrivals=poisson(${load}/s)" --set "load.count=$COUNT" \
            --target 'blocking<0.01' --values "$from..$((answer + 3))" --seed "$seed" --format json -q 2>/dev/null || true)
        pick=$(python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["pick"] if d["settled"] else "-")' <<<"$out")
        total=$((total + 1))
        if [ "$pick" != "-" ]; then settled=$((settled + 1)); fi
        if [ "$pick" = "$answer" ]; then agree=$((agree + 1)); fi
        echo "load $load erlang_b_cap $answer seed $seed pick $pick"
    done
done
echo "settled $settled of $total; of the settled, $agree equal Erlang B's cap ($(python3 -c "print(round(100*$agree/max($settled,1),1))") %)"
