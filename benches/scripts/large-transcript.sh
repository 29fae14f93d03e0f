#!/usr/bin/env bash
# Writes a synthetic Claude Code session transcript of about SIZE_MB megabytes, for
# measuring `subsim import` (docs/PERFORMANCE.md, "Importing a large transcript"): main's
# own tool calls (a Read and its 2 KiB result, one second apart), and every 200th call a
# background Agent call, its `async_launched` result and, 30 s later, its completion
# notification. Every text is invented.
#
# usage: benches/scripts/large-transcript.sh SIZE_MB OUT.jsonl
# then:  /usr/bin/time -v target/release/subsim import OUT.jsonl --out OUT.yaml --report
set -euo pipefail
size_mb=${1:?usage: large-transcript.sh SIZE_MB OUT.jsonl}
out=${2:?usage: large-transcript.sh SIZE_MB OUT.jsonl}
awk -v limit="$((size_mb * 1000000))" '
function stamp(s,   d, h, m) {
  d = int(s / 86400); s -= d * 86400; h = int(s / 3600); m = int((s % 3600) / 60)
  return sprintf("2026-01-%02dT%02d:%02d:%02d.000Z", d + 1, h, m, s % 60)
}
function line(text) { print text; bytes += length(text) + 1 }
BEGIN {
  sid = "5e55105e-0000-4000-8000-000000000050"
  head = "\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/user/shop\",\"sessionId\":\"" sid "\",\"version\":\"2.1.200\",\"gitBranch\":\"main\""
  pad = ""; for (i = 0; i < 2048; i++) pad = pad "x"
  line("{\"parentUuid\":null," head ",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"Work through the backlog.\"},\"uuid\":\"u0\",\"timestamp\":\"" stamp(0) "\"}")
  parent = "u0"; t = 1; n = 0; pending = 0
  while (bytes < limit) {
    n++
    if (n % 200 == 0) {
      id = sprintf("%08x", n)
      line("{\"parentUuid\":\"" parent "\"," head ",\"type\":\"assistant\",\"message\":{\"model\":\"claude-opus-4-5-20251101\",\"id\":\"msg_" n "\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_" n "\",\"name\":\"Agent\",\"input\":{\"description\":\"Backlog item " n "\",\"prompt\":\"Handle backlog item " n ".\",\"subagent_type\":\"general-purpose\",\"run_in_background\":true}}]},\"uuid\":\"a" n "\",\"timestamp\":\"" stamp(t) "\"}")
      line("{\"parentUuid\":\"a" n "\"," head ",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"toolu_" n "\",\"type\":\"tool_result\",\"content\":[{\"type\":\"text\",\"text\":\"Async agent launched successfully.\"}]}]},\"toolUseResult\":{\"isAsync\":true,\"status\":\"async_launched\",\"agentId\":\"" id "\"},\"uuid\":\"r" n "\",\"timestamp\":\"" stamp(t) "\"}")
      parent = "r" n; due[pending++] = n; when[n] = t + 30
    } else {
      line("{\"parentUuid\":\"" parent "\"," head ",\"type\":\"assistant\",\"message\":{\"model\":\"claude-opus-4-5-20251101\",\"id\":\"msg_" n "\",\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_" n "\",\"name\":\"Read\",\"input\":{\"file_path\":\"/home/user/shop/src/f" n ".rs\"}}]},\"uuid\":\"a" n "\",\"timestamp\":\"" stamp(t) "\"}")
      line("{\"parentUuid\":\"a" n "\"," head ",\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"toolu_" n "\",\"type\":\"tool_result\",\"content\":\"" pad "\"}]},\"uuid\":\"r" n "\",\"timestamp\":\"" stamp(t + 1) "\"}")
      parent = "r" n
    }
    t += 2
    for (k = 0; k < pending; k++) if (due[k] && when[due[k]] <= t) {
      m = due[k]; due[k] = 0
      line("{\"type\":\"queue-operation\",\"operation\":\"enqueue\",\"timestamp\":\"" stamp(t) "\",\"sessionId\":\"" sid "\",\"content\":\"<task-notification>\\n<task-id>" sprintf("%08x", m) "</task-id>\\n<tool-use-id>toolu_" m "</tool-use-id>\\n<status>completed</status>\\n</task-notification>\"}")
    }
  }
}' > "$out"
ls -l "$out" >&2
