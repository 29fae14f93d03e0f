"""Writes the hostile inputs of the issue #24 hunt into the current folder."""
import os
import subprocess
import sys

def w(name, text):
    os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
    with open(name, "w", encoding="utf-8") as f:
        f.write(text)

def load(n):
    return f"""name: load
session:
  env: {{CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 10}}
agents:
  worker:
    description: w
    behavior: [{{work: 1s}}]
load:
  arrivals: poisson(20/s)
  count: {n}
  spawn: {{agent: worker}}
  retry: none
"""

w("load2m.yaml", load(2_000_000))
w("load1m.yaml", load(1_000_000))
w("load200.yaml", load(200))
w("sched.yaml", "name: quiet schedule\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n"
  "load:\n  arrivals:\n    schedule:\n      - {for: 1ms, rate: 0.000001/s}\n      - {for: 1ms, rate: 0/s}\n"
  "  count: 3\n  spawn: {agent: worker}\n")
w("onoff.yaml", "name: quiet on off\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n"
  "load:\n  arrivals:\n    on_off: {rate: 0.000001/s, on: 1us, off: 1us}\n  count: 3\n  spawn: {agent: worker}\n")
w("bom/times.csv", "\ufefftime\n0s\n1s\n")
w("bom/s.yaml", "name: bom\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n"
  "load:\n  arrivals: {file: times.csv}\n  spawn: {agent: worker}\n"
  "expect:\n  - count: {kind: spawn_requested}\n    equals: 2\n")
w("bomscenario.yaml", "\ufeffname: bom scenario\nmain:\n  - work: 1s\n")
w("ties40k.yaml", "name: ties\nsession:\n  env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 100000}\n"
  "main:\n  - spawn: {agent: Explore, count: 40000, background: true}\n  - wait: {for: children}\n"
  "agents:\n  Explore:\n    description: e\n    behavior: [{work: 1s}]\n")
w("ties3.yaml", "name: ties\nmain:\n  - spawn: {agent: Explore, count: 3, background: true}\n  - wait: {for: children}\n")
w("agent.yaml", "name: a\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\nmain:\n  - spawn: {agent: worker}\n")
w("empty.yaml", "")
w("deep.yaml", "name: x\nmain: " + "[" * 10000 + "]" * 10000 + "\n")
w("big.yaml", "name: x\nmain: []\n#" + "x" * (4 * 1024 * 1024) + "\n")
w("simple.yaml", "name: s\nexpect:\n  - max_running: 0\nmain:\n  - work: 1s\n")
for i in range(300):
    w(f"many/s{i}.yaml", f"name: s{i}\nexpect:\n  - max_running: 0\nmain:\n  - work: 1s\n")
line = '{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"content":"hi"}}\n'
w("nl.jsonl", line)
w("bomtranscript.jsonl", "\ufeff" + line)
if not os.path.exists("fifo"):
    os.mkfifo("fifo")
os.makedirs("fifodir", exist_ok=True)
if not os.path.exists("fifodir/x.yaml"):
    os.mkfifo("fifodir/x.yaml")

# Shard files of a small sweep, made by the binary under test, and damaged copies.
binary = sys.argv[1]
cap = "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS"
for index in ("1/2", "2/2"):
    out = subprocess.run([binary, "sweep", "load200.yaml", "--set", f"{cap}=10,20,30",
                          "--seeds", "2", "--shard", index], capture_output=True, text=True).stdout
    w(f"s{index[0]}.csv", out)
second = open("s2.csv").read()
w("cut.csv", second[:-20])
lines = second.split("\n")
lines[3] += ",99"
w("extra.csv", "\n".join(lines))
w("crafted.csv", second.replace("shard 2/2", "shard 2/99999999999", 1))
w("headeronly.csv", open("s1.csv").read().split("\n")[0] + "\n")
w("emptyshard.csv", "")
