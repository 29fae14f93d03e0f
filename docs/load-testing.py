#!/usr/bin/env python3
"""Writes docs/load-testing.md (and docs/images/load-testing-sweep.svg) from the real output
of the commands the guide shows: `cargo build --release && python3 docs/load-testing.py`
from the repository root. The prose between the outputs quotes some of their numbers;
check it when the outputs change."""
import subprocess, os, sys

root = os.getcwd()
env = dict(os.environ, NO_COLOR="1")
env["PATH"] = os.path.join(root, "target/release") + ":" + env["PATH"]
tmp = "/tmp/subsim-guide"
os.makedirs(tmp, exist_ok=True)

def sh(cmd, show=None, stderr=True, ok=(0,)):
    """Runs cmd (bash) from the repo root; returns a fenced block with `$ show` and output.
    Exits unless the command's exit code is one of `ok`."""
    out = subprocess.run(["bash", "-c", cmd], cwd=root, env=env, capture_output=True, text=True)
    text = out.stdout + (out.stderr if stderr else "")
    if out.returncode not in ok:
        sys.exit(f"{cmd}: exit {out.returncode}\n{text}")
    return "```console\n$ " + (show or cmd) + "\n" + text.rstrip("\n") + "\n```"

F = "scenarios/load/capacity-question.yaml"
scenario = open(os.path.join(root, F)).read()

BS = "\\"
CAPACITY = sh(f"subsim capacity {F} --target 'blocking<0.01' -q", stderr=False)
UNSETTLED = sh(f"subsim capacity {F} --target 'blocking<0.01' --max-runs 50 -q", stderr=False, ok=(1,))
SWEEP = sh(f"subsim sweep {F} --cap 20..30 --seeds 10 --target 'blocking<0.01' --vary cap --out {tmp}/sweep.csv",
           show=f"subsim sweep {F} {BS}\n    --cap 20..30 --seeds 10 --target 'blocking<0.01' --vary cap --out sweep.csv")
CHART = f"subsim sweep {F} --cap 20..30 --seeds 10 --target 'blocking<0.01' --vary cap --format svg --out docs/images/load-testing-sweep.svg"
QUEUE = sh(f"subsim sweep {F} --set load.retry=queue --cap 20,24,28 --seeds 10 --out {tmp}/queue.csv && cd {tmp} && (head -1 queue.csv; grep ',all,' queue.csv) | cut -d, -f1,11,14,18,19,30,31,34-37 | column -ts,",
           show=f"subsim sweep {F} --set load.retry=queue --cap 20,24,28 --seeds 10 --out queue.csv\n$ (head -1 queue.csv; grep ',all,' queue.csv) | cut -d, -f1,11,14,18,19,30,31,34-37 | column -ts,")
parts = []
parts.append(f"""# Load testing: how often do we hit the cap?

A team asks: *at our arrival rate and run length, how often do we hit the 20-slot cap, how
long do retried tasks wait, and what cap would keep rejections under 1 %?* This guide
answers that step by step with `subsim`: the commands are real and so is every output
below (made by the release binary, `cargo build --release`; `subsim` is
`target/release/subsim`, or `cargo run --release --` in front of the arguments). The
reference for every key and column is [scenario-format.md](scenario-format.md) (sections
`load` and "Load testing from the command line").

## 1. Write the load down

Our team starts about 30 subagent tasks a minute, and a task runs 36 s on average. That is
an *offered load* of 0.5/s × 36 s = 18 Erlangs: on average 18 tasks would be running if
there were no cap. Claude Code's cap is 20 concurrent subagents (CAP-1); a task that finds
all 20 busy is refused and, as documented, not retried (CAP-2). As a scenario
([{F}](../{F})):

```yaml
{scenario.rstrip()}
```

`poisson(30/m)` draws the gaps between tasks from an exponential distribution (tasks come
independently of each other), `exp(36s)` does the same for run times (many short runs, a
few long ones); both can be anything the [format](scenario-format.md#durations-distributions-and-rates)
allows, and `load` can hold several streams, a daily rate schedule, bursts or your own
recorded arrival times (see [`load`](scenario-format.md#load)). `count: 100000` is about 55
hours of traffic; `warmup: 1h` leaves the first hour, when the system fills up from empty,
out of the statistics. `expect:` makes the file a test too (`subsim check`).

## 2. What theory says

For Poisson arrivals, a loss system with 20 slots has a known answer, Erlang B, and the
same system with a waiting line has Erlang C. `subsim erlang` computes both:

{sh("subsim erlang --cap 20 --load 18")}

So about 11 % of tasks should find the cap full. The simulation does not assume any of
this (it runs the rules, event by event), so agreement is a check of both; where theory
does not apply (other run-time shapes, retries with backoff, schedules, nested spawns)
the simulation still does.

## 3. How often do we hit the cap?

{sh(f"subsim run {F} --format summary")}

Read the `load` block. `blocking … per arrival` is the share of tasks whose first
attempt hit the cap: 0.1074, and the bracket is its 95 % confidence interval (batch means
within the run) — it covers Erlang B's 0.1092. `running` is the time-weighted number of
busy slots, `utilisation` that over the cap. About one task in nine is refused: with the
documented behaviour, that task is simply not done by a subagent.

## 4. How long would retried tasks wait?

If refused tasks waited for a free slot instead, in arrival order, the cap becomes a
queue. `retry: queue` does that; set it from the command line instead of editing the file:

{sh(f"subsim run {F} --set load.retry=queue --format summary")}

Now `delayed` — the share of tasks that had to wait — is 0.55 (Erlang C: 0.5508), and
`wait` is the wait from the first request to the start over all tasks: mean 9.9 s (Erlang
C: 0.2754 × 36 s = 9.9 s), but p95 42 s and p99 84 s; the delayed tasks alone wait 18 s on
average. `retry: after_completion` (a refused call is issued again each time a run ends)
gives the same numbers here: the two differ only when a retry loses a freed slot to a call
of the same instant, which Poisson arrivals in whole microseconds almost never do.

One run's percentiles have no interval, and a tail percentile moves from run to run: this
run's p99 (84 s) is 16 % above Erlang C's 72 s. Section 5 runs 10 replicas and gives
the percentiles with their intervals.

## 5. What cap keeps rejections under 1 %?

Theory first, in the team's own terms (`--rate` and `--mean`; `--load 18` says the same):

{sh("subsim erlang --target 0.01 --rate 30/m --mean 36s")}

Then the simulation. `subsim capacity` tries caps around Erlang B's answer (± 5, or the
`--values` you give), runs each a few seeds (replicas), and adds seeds only where they
change the answer, until the pick is **settled**: the chosen cap's interval lies wholly
under the bound and the next smaller cap's wholly at or above it (the rule is in
[How `capacity` decides](#how-capacity-decides)):

{CAPACITY}

The first line is the answer: **28** slots (0.71 %) meet the target and 27 (1.1 %) do not,
and the answer is settled. Only cap 27, whose blocking is close to the bound, needed more
than the first 4 seeds; every other cap was clear after 4. The table gives each cap's
seeds, its blocking with the interval at the confidence the looks leave (99.17 %), the
verdict and Erlang B, which the simulation does not use: it agrees to within the intervals.
`capacity` exits 0 when the pick is settled and 1 when it is not; with too small a budget
it says so, which caps are in doubt and about how many seeds would settle them:

{UNSETTLED}

`capacity --format json` gives the same as one object, and `--format svg` the chart.

`subsim sweep` is the fixed-size alternative: every cap, the same number of seeds, every
figure in a CSV row per cap and replica and one aggregated row per cap (`replica` = `all`:
the mean over the replicas, the interval from their spread). `--target` applies the same
settled rule to the aggregated rows, on stderr:

{SWEEP}

And with a queue instead of rejections, how long would tasks wait at those caps? The
percentiles of the wait get intervals across the replicas too (each replica's p95 is one
independent estimate; the `wait_p95_lo`/`wait_p95_hi` columns):

{QUEUE}

(`delayed` is a share; `wait_mean`, `wait_p95` and `wait_p99` are seconds from the first
request to the start, over all tasks; then Erlang C's delayed share and mean wait, and the
percentiles' intervals.) At 20 slots the p95 wait is 44 s (interval 40–48 s) and the p99
71 s (64–78 s), where Erlang C's exponential tail gives 43 s and 72 s. At 28 slots 2 % of
tasks wait at all, by 0.07 s on average; the p95 is 0 in every replica, so it has no
interval (the cells are empty), and the p99 is 2.5 s (2.2–2.7 s).

## The answers

- **How often do we hit the 20-slot cap?** 10.7 % of tasks (95 % interval 10.2–11.3 %),
  as Erlang B predicts (10.9 %); with the documented no-retry behaviour those tasks are
  lost.
- **How long would retried tasks wait?** With a first-come-first-served queue, 55 % of
  tasks wait; over all tasks the mean wait is 9.8 s, p95 44 s [40, 48], p99 71 s [64, 78].
- **What cap keeps rejections under 1 %?** 28 slots, settled: `cap 28: blocking 0.00709
  [0.00470, 0.00947] meets <0.01; cap 27: 0.0108 [0.0102, 0.0114] misses`. At 28, a queue
  would delay 2 % of tasks, by 0.07 s on average.

## 6. The chart

`--format svg` draws the sweep: blocking against the swept cap, the simulated points with
their interval bars, the Erlang B curve at every whole cap, and, with `--target`, the target
and the pick (for retry policies: the mean wait with p95 and p99 and their intervals, and
Erlang C):

```console
$ {CHART}
```

![Blocking against the cap, 20 to 30 slots at 18 Erlangs: simulated points with 95 % interval bars on the Erlang B curve, falling from 0.11 at 20 slots to under 0.01 at 28, the pick marked at 28](images/load-testing-sweep.svg)

With 10 × 100,000 arrivals per cap the intervals are narrow: most bars are hidden behind
their dots. Larger sweeps split over machines with `--shard I/N` and `subsim merge` (see
[distributed.md](distributed.md)).
""")
parts.append("""
## How `capacity` decides

`subsim capacity FILE --target 'blocking<0.01'` (section 5) answers without your choosing a
number of seeds: it adds seeds only where they change the answer, until the pick is
**settled**: the chosen value's interval lies wholly under the bound and the next smaller
value's wholly at or above it. `--vary PATH` searches along any scenario value instead of
the cap, and `--values` says which values (default, for a blocking target on the cap:
Erlang B's answer ± 5).

- **Which interval.** Each value's figure (e.g. blocking) is measured once per seed, as
  `sweep` measures a replica (the same runs: value *i*'s replica *r* has the seed `sweep`
  gives point *i*'s replica *r*). The interval is Student's t over those per-seed values:
  mean ± t · s/√n with n − 1 degrees of freedom.
- **What confidence.** Every value first runs 4 seeds; a value in doubt that decides the
  pick then doubles its seeds (8, 16, …) up to `--max-seeds` (default 128). Each round is a
  *look*; with L looks possible (6 for 128 seeds), each interval is two-sided at
  1 − 0.05/L (99.17 %), so by Bonferroni's inequality the chance that any look misjudges a
  value is at most 5 %.
- **Budgets.** `--max-runs` (default 2,000) and `--max-time`: a look that would pass them
  is not started, and the answer says it is not settled, which values are in doubt and
  about how many more seeds each would take (n · (half-width / distance to the bound)²).
  Only `--max-time` makes the answer depend on the machine; the output is otherwise the
  same for any `--jobs`. Exit 0 when settled, 1 when not.
- **Wait percentiles** (`wait_p50`, `wait_p95`, `wait_p99`) get their interval the same way,
  across replications (each replication's percentile is one independent estimate):
  `sweep`'s `wait_p95_lo`/`wait_p95_hi` columns, appended after the older ones. A
  replica's own row has none, and neither has a percentile that is 0 in every replica
  (nothing waited); `sweep --target` then says so in words.

**Against theory.** `benches/scripts/capacity-agreement.sh` asks `capacity` for blocking
< 1 % on exp(1 s) runs at caps 5, 10, 20, …, 100, at a load that makes each cap Erlang B's
answer, with 20 base seeds per cap, runs of 5,000 arrivals and the default budgets
(`--values` Erlang B's answer ± 3), and counts how often a settled pick equals Erlang B:

```console
$ cargo build --release
$ benches/scripts/capacity-agreement.sh 20 5000 middle
settled 146 of 220; of the settled, 146 equal Erlang B's cap (100.0 %)
$ benches/scripts/capacity-agreement.sh 20 5000 edge
settled 59 of 220; of the settled, 58 equal Erlang B's cap (98.3 %)
```

`middle` puts 1 % halfway (geometric mean) between the blocking at the cap and at the cap
less one (at cap 20: 11.6 Erlangs, 0.0074 and 0.0128); `edge` takes the largest load whose
answer is still the cap, so that the cap's own blocking is just under 1 % (at cap 20:
12.0 Erlangs, 0.0098), the hardest case. Together, 204 of 205 settled picks (99.5 %) equal
Erlang B's answer; the one that does not (cap 20 at the edge, seed 2) picked 21 because
cap 20's 8 seeds measured 0.0132 [0.0107, 0.0157] against a true 0.0098. The picks that
are not settled say so (exit 1): all 100 cases at caps 5–40 in `middle` settle, but with
5,000 arrivals a run (a minute of traffic at 80 Erlangs) and at most 128 seeds a value,
the blocking at large caps is too close to 1 % on both sides to settle; longer runs
(`COUNT`) would settle more of them (not measured here).
""")
sh(CHART)
open(os.path.join(root, "docs/load-testing.md"), "w").write("".join(parts))
print("written")
