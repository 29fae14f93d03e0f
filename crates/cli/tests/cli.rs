//! End-to-end runs of the built `subsim` binary: exit codes, what goes to stdout and
//! stderr, and the files it writes. Kept few; behaviour is tested in the library crates.

use crate::support::{code, repo_root, stderr, stdout, subsim, text, TempDir, BINARY};
use std::process::Command;

/// The narration's lines with each wrapped continuation (indented) joined to the line it
/// continues: one per narrated event, heading or summary line.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        match lines.last_mut() {
            Some(last) if line.starts_with("   ") && !line.trim_start().starts_with("subsim ") => {
                last.push(' ');
                last.push_str(line.trim_start());
            }
            _ => lines.push(line.to_string()),
        }
    }
    lines
}

const TWO_WORKERS: &str = "\
name: two workers
main:
  - spawn: {agent: general-purpose, name: worker, count: 2}
expect:
  - count: {kind: agent_started}
    equals: 2
";

const WRONG_EXPECTATION: &str = "\
name: two workers, wrongly expected
main:
  - spawn: {agent: general-purpose, name: worker, count: 2}
expect:
  - count: {kind: agent_started}
    equals: 99
";

const NO_EXPECTATIONS: &str = "\
name: nothing to check
main:
  - spawn: {agent: general-purpose, name: worker}
";

/// Parses JSON Lines output, checking the fields every event has.
fn parse_trace(text: &str) -> Vec<serde_json::Value> {
    let mut events = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let event: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|error| panic!("line {} is not JSON ({error}): {line}", index + 1));
        let object = event
            .as_object()
            .unwrap_or_else(|| panic!("line {} is not an object", index + 1));
        assert!(
            object.get("t_us").is_some_and(|t| t.is_u64()),
            "t_us on line {}: {line}",
            index + 1
        );
        assert_eq!(
            object.get("seq").and_then(|s| s.as_u64()),
            Some(index as u64),
            "seq: {line}"
        );
        assert!(
            object.get("kind").is_some_and(|k| k.is_string()),
            "kind: {line}"
        );
        events.push(event);
    }
    events
}

#[test]
fn run_demo_narrates_and_exits_0() {
    let output = subsim(&["run"]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    let narration = logical_lines(&stdout(&output)).join("\n");
    assert!(
        narration.contains("Concurrent subagent limit reached"),
        "{narration}"
    );
    assert!(narration.contains("(CAP-1)"), "{narration}");
    assert!(
        narration.contains("shown in the main session"),
        "{narration}"
    );
    // Every line is a chapter heading, a narrated event (starting with the clock), or part
    // of the closing summary.
    let summary = narration
        .find("── Summary ──")
        .expect("the demo closes with a summary");
    assert!(
        logical_lines(&narration[..summary])
            .iter()
            .all(|line| line.starts_with("── ") || line.as_bytes().get(2) == Some(&b':')),
        "{narration}"
    );
}

/// The rule citation a narrated line ends with (`(CAP-1)`, `(FGBG-1 case 3, FORK-3)`), if
/// it ends with one.
fn citation(line: &str) -> Option<(&str, &str)> {
    let body = line.strip_suffix(')')?;
    let open = body.rfind(" (")?;
    let cite = &body[open + 2..];
    let first = cite.split([' ', ',']).next()?;
    let (area, number) = first.split_once('-')?;
    let is_id = !area.is_empty()
        && area.chars().all(|c| c.is_ascii_uppercase())
        && number.chars().all(|c| c.is_ascii_digit())
        && !number.is_empty();
    is_id.then(|| (&body[..open], cite))
}

#[test]
fn the_demo_fits_a_screen_and_every_decision_gives_its_reason_in_words() {
    let output = subsim(&["run"]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    let narration = stdout(&output);
    // A screen of decisions (each wrapped to the terminal's width, issue #23 item 9).
    let lines = logical_lines(&narration);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert!(lines.len() <= 80, "{} lines:\n{narration}", lines.len());
    // Five chapters, each opened by a one-line heading.
    let headings: Vec<&&str> = lines
        .iter()
        .filter(|line| line.starts_with("── ") && !line.contains("Summary"))
        .collect();
    assert_eq!(headings.len(), 5, "{narration}");
    let mut decisions = 0;
    for line in &lines {
        let Some((before, cite)) = citation(line) else {
            continue;
        };
        decisions += 1;
        // `what happened: why (RULE)`: words of reason after the last colon, not only the ID.
        let (_, why) = before
            .rsplit_once(": ")
            .unwrap_or_else(|| panic!("no reason before ({cite}) in: {line}"));
        let words = why
            .split_whitespace()
            .filter(|word| word.chars().any(char::is_alphabetic));
        assert!(
            words.count() >= 3,
            "too few words of reason before ({cite}) in: {line}"
        );
    }
    assert!(
        decisions >= 15,
        "only {decisions} decision lines in:\n{narration}"
    );
    // It ends with three commands to try, and the file it points to is the same demo.
    let tries: Vec<&&str> = lines
        .iter()
        .skip_while(|line| **line != "Try next:")
        .skip(1)
        .collect();
    assert_eq!(tries.len(), 3, "{narration}");
    let demo = repo_root().join("scenarios/demo.yaml");
    let shipped = std::fs::read_to_string(&demo).unwrap();
    let from_file = subsim(&["run", demo.to_str().unwrap()]);
    assert_eq!(stdout(&from_file), narration);
    assert!(shipped.contains("narration:"));
}

#[test]
fn detail_full_shows_every_event_and_follow_narrows_to_one_agent() {
    let full = stdout(&subsim(&["run", "--detail", "full"]));
    let jsonl = stdout(&subsim(&["run", "--format", "jsonl"]));
    // One line per event, after the chapter headings.
    let narrated = logical_lines(&full)
        .iter()
        .filter(|line| !line.starts_with("── "))
        .count();
    assert_eq!(narrated, jsonl.lines().count(), "{full}");
    assert!(full.contains("row for scout appears (PANEL-1)"), "{full}");
    let brief = stdout(&subsim(&["run"]));
    assert!(!brief.contains("row for scout appears"), "{brief}");

    let followed = stdout(&subsim(&["run", "--follow", "checker"]));
    assert!(followed.contains("checker"), "{followed}");
    assert!(!followed.contains("researcher-3"), "{followed}");
    assert!(followed.contains("(DEPTH-3)"), "{followed}");
}

#[test]
fn tool_calls_carry_their_input_in_the_trace() {
    let jsonl = stdout(&subsim(&["run", "--format", "jsonl"]));
    let bash = jsonl
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|event| event["kind"] == "tool_called" && event["tool"] == "Bash")
        .expect("the demo's planner calls Bash");
    assert_eq!(bash["input"], "git log --oneline -20");
}

#[test]
fn chrome_format_is_valid_trace_event_json() {
    let output = subsim(&["run", "--format", "chrome"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let trace: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    assert_eq!(trace["metadata"]["seed"], 7);
    assert_eq!(
        trace["metadata"]["subsim_version"],
        env!("CARGO_PKG_VERSION")
    );
    let events = trace["traceEvents"]
        .as_array()
        .expect("a traceEvents array");
    let of = |phase: &str| {
        events
            .iter()
            .filter(|event| event["ph"] == phase)
            .collect::<Vec<_>>()
    };
    // Every event has the fields Chrome and Perfetto require.
    for event in events {
        assert!(
            event["ph"].is_string() && event["pid"].is_u64() && event["tid"].is_u64(),
            "{event}"
        );
        if event["ph"] != "M" {
            assert!(event["ts"].is_u64(), "{event}");
        }
    }
    // A track (thread) per run: main and the 24 runs the demo starts.
    let threads = of("M")
        .into_iter()
        .filter(|event| event["name"] == "thread_name")
        .count();
    assert_eq!(threads, 25);
    // The checker is nested under its launcher, the analyst's process.
    let analyst_process = of("M")
        .into_iter()
        .find(|event| {
            event["name"] == "process_name" && event["args"]["name"] == "launched by analyst"
        })
        .expect("a process for what the analyst launched");
    let checker = of("M")
        .into_iter()
        .find(|event| {
            event["name"] == "thread_name"
                && event["args"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("checker")
        })
        .unwrap();
    assert_eq!(checker["pid"], analyst_process["pid"]);
    // The counter track reaches 21 against a cap of 20.
    let counters = of("C");
    assert!(counters
        .iter()
        .any(|event| event["args"]["running"] == 21 && event["args"]["cap"] == 20));
    // Rejections carry their rule.
    let rejections: Vec<_> = of("i")
        .into_iter()
        .filter(|event| event["cat"] == "rejected")
        .collect();
    assert_eq!(rejections.len(), 6);
    assert!(rejections
        .iter()
        .any(|event| event["args"]["rule"] == "CAP-1"));
    assert!(rejections
        .iter()
        .any(|event| event["args"]["rule"] == "DEPTH-3"));
    assert!(of("X").iter().all(|event| event["dur"].is_u64()));
}

#[test]
fn gantt_draws_a_row_per_run_and_the_cap_line() {
    let output = Command::new(BINARY)
        .args(["run", "--format", "gantt"])
        .current_dir(repo_root())
        .env("COLUMNS", "90")
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.lines().all(|line| line.chars().count() <= 90),
        "{text}"
    );
    let rows = text.lines().filter(|line| line.contains(" |")).count();
    // A header, main and 24 runs, the running strip and the cap line.
    assert_eq!(rows, 1 + 25 + 2, "{text}");
    assert!(text.contains("cap 20"), "{text}");
    assert!(
        text.contains('▲'),
        "the resume pushes the count over the cap:\n{text}"
    );
    assert!(text.contains('×'), "rejections are marked:\n{text}");
    assert!(
        text.contains('?'),
        "the planner waits on its prompt:\n{text}"
    );
}

#[test]
fn run_demo_jsonl_is_one_object_per_line() {
    let output = subsim(&["run", "--format", "jsonl"]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    let events = parse_trace(&stdout(&output));
    let rejected_by_cap = events
        .iter()
        .filter(|event| event["kind"] == "spawn_rejected" && event["reason"] == "concurrent_limit")
        .count();
    assert_eq!(rejected_by_cap, 5);
    assert!(events
        .iter()
        .any(|event| event["kind"] == "spawn_rejected" && event["reason"] == "depth_limit"));
    assert!(events
        .iter()
        .any(|event| event["kind"] == "agent_resumed" && event["cap_checked"] == false));
}

#[test]
fn run_compact_jsonl_is_shorter_and_only_for_jsonl() {
    let full = subsim(&["run", "--format", "jsonl"]);
    let compact = subsim(&["run", "--format", "jsonl", "--compact"]);
    assert_eq!(code(&compact), 0, "stderr: {}", stderr(&compact));
    let (full, compact) = (stdout(&full), stdout(&compact));
    assert_eq!(full.lines().count(), compact.lines().count());
    assert!(compact.len() < full.len());
    assert!(compact
        .lines()
        .next()
        .unwrap()
        .ends_with(",\"compact_lists\":true}"));
    assert!(!full.contains("compact_lists"));
    let refused = subsim(&["run", "--format", "summary", "--compact"]);
    assert_eq!(code(&refused), 2);
    assert!(
        stderr(&refused).contains("use it with --format jsonl"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn run_out_writes_the_file_and_nothing_to_stdout() {
    let dir = TempDir::new("out");
    let out = dir.path().join("trace.jsonl");
    let output = subsim(&["run", "--format", "jsonl", "--out", text(&out)]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    assert!(output.stdout.is_empty());
    let written = std::fs::read_to_string(&out).expect("--out wrote the file");
    parse_trace(&written);
    // Same scenario, same seed: the same bytes.
    assert_eq!(written, stdout(&subsim(&["run", "--format", "jsonl"])));
}

#[test]
fn seeds_change_sampled_times_deterministically() {
    let first = stdout(&subsim(&["run", "--format", "jsonl", "--seed", "1"]));
    let again = stdout(&subsim(&["run", "--format", "jsonl", "--seed", "1"]));
    let other = stdout(&subsim(&["run", "--format", "jsonl", "--seed", "2"]));
    assert_eq!(first, again);
    assert_ne!(first, other);
}

#[test]
fn run_summary_json() {
    let output = subsim(&["run", "--format", "json"]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    let summary: serde_json::Value =
        serde_json::from_str(&stdout(&output)).expect("one JSON object");
    assert_eq!(
        summary["spawns"]["rejected_by_reason"]["concurrent_limit"],
        5
    );
    assert_eq!(summary["spawns"]["rejected_by_reason"]["depth_limit"], 1);
    assert_eq!(summary["running"]["peak"], 21);
    let table = stdout(&subsim(&["run", "--format", "summary"]));
    assert!(table.contains("blocking"), "{table}");
}

#[test]
fn realtime_plays_the_same_events() {
    let played = subsim(&["run", "--format", "jsonl", "--realtime", "100000"]);
    assert_eq!(code(&played), 0, "stderr: {}", stderr(&played));
    assert_eq!(
        stdout(&played),
        stdout(&subsim(&["run", "--format", "jsonl"]))
    );
    assert_eq!(code(&subsim(&["run", "--realtime", "0"])), 2);
}

#[test]
fn bad_file_exits_2_with_a_located_message() {
    let dir = TempDir::new("bad");
    let bad = dir.write("bad.yaml", "name: typo\nnmae: oops\nmain: []\n");
    let output = subsim(&["run", text(&bad)]);
    assert_eq!(code(&output), 2);
    let message = stderr(&output);
    assert!(message.contains("bad.yaml:2:1"), "{message}");
    assert!(message.contains("nmae"), "{message}");
    let output = subsim(&["validate", text(&bad)]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("bad.yaml:2:1"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn validate_good_file_exits_0() {
    let dir = TempDir::new("validate");
    let good = dir.write("good.yaml", TWO_WORKERS);
    let output = subsim(&["validate", text(&good)]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    assert!(
        stdout(&output).contains("two workers"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn check_reports_each_file_and_closes_with_the_counts() {
    let dir = TempDir::new("check");
    dir.write("a/good.yaml", TWO_WORKERS);
    dir.write("b/wrong.yml", WRONG_EXPECTATION);
    dir.write("b/plain.yaml", NO_EXPECTATIONS);
    dir.write("b/notes.txt", "not a scenario");
    let output = subsim(&["check", text(dir.path())]);
    let report = stdout(&output);
    assert_eq!(code(&output), 1, "{report}\n{}", stderr(&output));
    let lines: Vec<&str> = report.lines().collect();
    assert!(
        lines[0].starts_with("ok   ") && lines[0].ends_with("good.yaml"),
        "{report}"
    );
    assert!(
        lines[1].starts_with("ok   ") && lines[1].ends_with("plain.yaml (no expectations)"),
        "{report}"
    );
    assert!(
        lines[2].starts_with("FAIL ") && lines[2].ends_with("wrong.yml"),
        "{report}"
    );
    assert!(
        report.contains("exactly 99"),
        "the failure says what was expected: {report}"
    );
    assert!(
        report.contains("2 matching events"),
        "and what happened: {report}"
    );
    assert!(
        report.contains("wrong.yml:"),
        "and where the expectation is: {report}"
    );
    assert_eq!(lines.last(), Some(&"2 passed, 1 failed"), "{report}");
}

#[test]
fn check_passing_files_exits_0() {
    let dir = TempDir::new("check-pass");
    let good = dir.write("good.yaml", TWO_WORKERS);
    let output = subsim(&["check", text(&good)]);
    assert_eq!(code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    assert_eq!(stdout(&output).lines().last(), Some("1 passed, 0 failed"));
}

#[test]
fn check_counts_a_file_that_does_not_load_as_failed() {
    let dir = TempDir::new("check-bad");
    dir.write("bad.yaml", "name: typo\nnmae: oops\n");
    let output = subsim(&["check", text(dir.path())]);
    assert_eq!(code(&output), 2, "bad input");
    let report = stdout(&output);
    assert!(report.contains("FAIL "), "{report}");
    assert!(report.contains("bad.yaml:2:1"), "{report}");
    assert_eq!(report.lines().last(), Some("0 passed, 1 failed"));
}

#[test]
fn usage_errors_exit_2() {
    let dir = TempDir::new("usage");
    let missing = dir.path().join("missing.yaml");
    let output = subsim(&["check", text(&missing)]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("missing.yaml"),
        "{}",
        stderr(&output)
    );
    assert_eq!(code(&subsim(&["run", "--format", "xml"])), 2);
    assert_eq!(code(&subsim(&["frobnicate"])), 2);
    assert_eq!(code(&subsim(&["--help"])), 0);
}

#[test]
fn a_safety_limit_exits_3_and_keeps_the_output() {
    let dir = TempDir::new("limit");
    let scenario = dir.write(
        "limit.yaml",
        "\
name: endless
session:
  limits: {max_events: 10}
main:
  - repeat:
      times: 1000
      steps:
        - spawn: {agent: general-purpose}
",
    );
    let out = dir.path().join("trace.jsonl");
    let output = subsim(&[
        "run",
        text(&scenario),
        "--format",
        "jsonl",
        "--out",
        text(&out),
    ]);
    assert_eq!(code(&output), 3, "stderr: {}", stderr(&output));
    assert!(
        stderr(&output).contains("max_events"),
        "{}",
        stderr(&output)
    );
    let events = parse_trace(&std::fs::read_to_string(&out).expect("the trace so far"));
    assert!(!events.is_empty());
}

/// Issue 10 §4.4: a zero-time loop escaped every limit and, killed, left an empty trace.
/// It stops at `max_steps` with exit 3 and a message naming the key to raise.
#[test]
fn zero_time_loop_exits_3_at_max_steps() {
    let dir = TempDir::new("zero-loop");
    let scenario = dir.write(
        "loop.yaml",
        "\
name: zero-time loop
session:
  limits: {max_events: 10, max_time: 1s}
main:
  - repeat:
      times: 1000000
      steps:
        - repeat: {times: 1000000, steps: [{work: 0s}]}
",
    );
    let output = subsim(&["run", text(&scenario), "--format", "jsonl"]);
    assert_eq!(code(&output), 3, "stderr: {}", stderr(&output));
    assert!(
        stderr(&output).contains("session.limits.max_steps"),
        "{}",
        stderr(&output)
    );
    let events = parse_trace(&stdout(&output));
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["session_started", "limit_reached"]);
}

/// The message named the time of the last event before the limit (5 s here), not the
/// bound where the run stopped and `limit_reached` was written (20 s).
#[test]
fn max_time_message_names_the_bound_where_the_run_stopped() {
    let dir = TempDir::new("max-time-message");
    let scenario = dir.write(
        "long.yaml",
        "\
name: a worker still working at max_time
session:
  limits: {max_time: 20s}
agents:
  worker: {description: w, behavior: [{work: 5s}, {work: 60s}]}
main:
  - spawn: {agent: worker, background: true}
",
    );
    let output = subsim(&["run", text(&scenario), "--format", "jsonl"]);
    assert_eq!(code(&output), 3, "stderr: {}", stderr(&output));
    // The bound as written (a duration, not µs) and the key to raise (REVIEW defect 9).
    let message = stderr(&output);
    assert!(message.contains("`max_time` at 00:00:20.000"), "{message}");
    assert!(
        message.contains("session.limits.max_time (20s)"),
        "{message}"
    );
    assert!(!message.contains("20000000"), "{message}");
    let events = parse_trace(&stdout(&output));
    let last = events.last().expect("the trace so far");
    assert_eq!(last["kind"], "limit_reached");
    assert_eq!(last["t_us"], 20_000_000);
}

/// A failed row's 30 s in the panel (PANEL-3) outlasting `max_time` is not the run going
/// on: it exited 3 with "stopped by its safety limit" although its last real event came
/// at 5 s.
#[test]
fn a_panel_row_outlasting_max_time_is_not_a_limit_hit() {
    let scenario =
        repo_root().join("scenarios/panel/a-failed-row-left-after-max-time-is-not-a-runaway.yaml");
    let output = subsim(&["run", text(&scenario), "--format", "jsonl"]);
    assert_eq!(code(&output), 0, "stderr: {}", stderr(&output));
    assert!(!stdout(&output).contains("limit_reached"));
}

/// Issue 10 §4.4: output is flushed as it goes, so a run that is killed keeps what it
/// wrote — at least `session_started` — even when it writes nothing more afterwards. Since
/// issue #24 a streamed `--out PATH` is written to `PATH.partial` and renamed when the run
/// ends: a killed run keeps its trace there, and `PATH` is never half a file.
#[test]
fn interrupted_run_keeps_session_started() {
    let dir = TempDir::new("interrupted");
    let scenario = dir.write(
        "loop.yaml",
        "\
name: a long zero-time loop, a billion steps under the default limits
main:
  - repeat:
      times: 1000000
      steps:
        - repeat: {times: 1000000, steps: [{work: 0s}]}
",
    );
    let out = dir.path().join("trace.jsonl");
    let mut child = Command::new(BINARY)
        .args([
            "run",
            text(&scenario),
            "--format",
            "jsonl",
            "--out",
            text(&out),
        ])
        .env("NO_COLOR", "1")
        .spawn()
        .expect("the subsim binary runs");
    // Wait (a bounded number of polls, not a timing assertion) for the first line.
    let partial = dir.path().join("trace.jsonl.partial");
    let mut written = String::new();
    for _ in 0..600 {
        written = std::fs::read_to_string(&partial).unwrap_or_default();
        if written.contains('\n') || child.try_wait().expect("child status").is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let still_running = child.try_wait().expect("child status").is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(still_running, "the loop was meant to be interrupted");
    assert!(!out.exists(), "a killed run left a half --out file");
    let events = parse_trace(&written);
    assert_eq!(
        events.first().and_then(|event| event["kind"].as_str()),
        Some("session_started"),
        "{written}"
    );
}

#[test]
fn gantt_shows_a_queued_arrival_waiting_before_its_run() {
    let scenario =
        repo_root().join("scenarios/load/queue-keeps-its-place-when-a-slot-is-taken.yaml");
    let output = Command::new(BINARY)
        .args(["run", scenario.to_str().unwrap(), "--format", "gantt"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    // w-2 arrives while w-1 holds the only slot and waits in the queue before it runs.
    let w2 = text
        .lines()
        .find(|line| line.trim_start().starts_with("w-2 "))
        .unwrap_or_else(|| panic!("no w-2 row in:\n{text}"));
    let queued = w2.find('·').expect("w-2 is drawn queued first");
    let running = w2.find('█').expect("then running");
    assert!(queued < running, "{w2}");
}

#[test]
fn run_follow_of_a_name_nobody_has_is_an_error_before_any_output() {
    // It printed the chapter headings with nothing under them and exited 0.
    let output = subsim(&["run", "--follow", "nobody"]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("--follow nobody: nothing in this run touches it"),
        "{}",
        stderr(&output)
    );
    let followed = subsim(&["run", "--follow", "scout"]);
    assert_eq!(code(&followed), 0, "{}", stderr(&followed));
    assert!(stdout(&followed).contains("scout"));
}

#[test]
fn a_missing_scenario_file_is_reported_by_name_without_a_position() {
    // It said `nonexist.yaml:1:1: cannot read the scenario file`.
    let dir = TempDir::new("missing-file");
    let missing = dir.path().join("nonexist.yaml");
    let missing = missing.to_str().expect("UTF-8 path");
    for command in ["run", "explore"] {
        let output = subsim(&[command, missing]);
        assert_eq!(code(&output), 2, "{command}");
        let err = stderr(&output);
        assert!(
            err.contains(&format!("{missing}: cannot read the scenario file")),
            "{command}: {err}"
        );
        assert!(!err.contains(":1:1"), "{command}: {err}");
    }
}

#[test]
fn check_of_a_file_that_does_not_load_exits_2_as_readme_says() {
    // It exited 1, the code of a failed expectation; README: 2 for bad input.
    let dir = TempDir::new("check-unloadable");
    let broken = dir.write("broken.yaml", "name: broken\nsession: [\n");
    let output = subsim(&["check", broken.to_str().expect("UTF-8 path")]);
    assert_eq!(code(&output), 2, "{}", stdout(&output));
    assert!(stdout(&output).contains("the file does not load"));
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README");
    assert!(readme.contains("2 bad usage or bad input"));
}

#[test]
fn summary_makespan_ends_at_the_last_decision_not_the_panels_trailing_footer_event() {
    // The fan-out to the cap ran 30 s with 20 running throughout, but the summary said
    // makespan 1m and mean running 10.00: it counted the footer hint clearing at 60 s.
    let file = repo_root().join("scenarios/cap/fan-out-25-hits-the-cap.yaml");
    let file = file.to_str().expect("UTF-8 path");
    let summary = stdout(&subsim(&["run", file, "--format", "summary"]));
    assert!(
        summary.contains("makespan              00:00:30.000 (30s)"),
        "{summary}"
    );
    assert!(summary.contains("mean running          20.00"), "{summary}");
    let narration = stdout(&subsim(&["run", file]));
    assert!(narration.contains("In 30s of virtual time"), "{narration}");
    // The trace itself keeps the panel's later events.
    let trace = stdout(&subsim(&["run", file, "--format", "jsonl"]));
    let last = trace.lines().last().expect("a trace");
    assert!(
        last.starts_with("{\"t_us\":60000000,") && last.contains("panel_changed"),
        "{last}"
    );
}

/// Issue #23 item 9: `COLUMNS` below 40 was ignored (the chart fell back to 100 columns),
/// and at 40 the peak line under the chart was 67 columns wide.
#[test]
fn gantt_honours_columns_below_40_and_its_legend_fits_at_40() {
    for columns in [40, 32, 24] {
        let output = Command::new(BINARY)
            .args(["run", "--format", "gantt"])
            .current_dir(repo_root())
            .env("COLUMNS", columns.to_string())
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let text = stdout(&output);
        let widest = text.lines().map(|line| line.chars().count()).max();
        assert!(
            widest.is_some_and(|widest| widest <= columns && widest + 3 >= columns),
            "COLUMNS={columns}:\n{text}"
        );
        assert!(text.contains("× spawn rejected"), "{text}");
        assert!(text.contains("▲ over it"), "{text}");
    }
}

/// Issue #23 item 9: the demo's narration was up to 232 characters wide. It now fits
/// `COLUMNS` (100 without it), the reason wrapped under its decision.
#[test]
fn the_demo_narration_fits_the_terminal() {
    for columns in [None, Some(80), Some(60)] {
        let mut command = Command::new(BINARY);
        command
            .args(["run"])
            .current_dir(repo_root())
            .env("NO_COLOR", "1");
        match columns {
            Some(columns) => command.env("COLUMNS", columns.to_string()),
            None => command.env_remove("COLUMNS"),
        };
        let output = command.output().unwrap();
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let text = stdout(&output);
        let width = columns.unwrap_or(100);
        // The commands to try next are left whole, to be copied.
        for line in text.lines().filter(|line| !line.starts_with("  subsim ")) {
            assert!(line.chars().count() <= width, "{width}: {line}");
        }
    }
}

/// Issue #23 item 9: the static SVG (the README's and the tutorial's pictures) drew the
/// scrubber's red cursor at t = 0, which only the interactive page can move.
#[test]
fn a_static_svg_has_no_scrubber_cursor_and_the_page_has_one() {
    let dir = TempDir::new("svg-cursor");
    let svg = dir.path().join("demo.svg");
    let html = dir.path().join("demo.html");
    for out in [&svg, &html] {
        let output = Command::new(BINARY)
            .args(["report", "--out", out.to_str().unwrap()])
            .current_dir(repo_root())
            .output()
            .unwrap();
        assert_eq!(code(&output), 0, "{}", stderr(&output));
    }
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("<svg"), "{picture}");
    assert!(!picture.contains(r#"id="cursor""#), "{picture}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(r#"<line id="cursor""#));
}

/// Issue #23 item 9: `explain Q-29` and `explain FORK-7` narrated a rejected fork saying one
/// sentence three times in one line: the message, a short label in parentheses and the
/// reason in words (`"Only the main conversation can fork" (only the main conversation can
/// fork): only the main conversation can fork (…) (Q-29)`).
#[test]
fn explain_says_why_a_fork_was_rejected_once() {
    for rule in ["Q-29", "FORK-7"] {
        let output = subsim(&["explain", rule]);
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let lines = logical_lines(&stdout(&output));
        let rejected: Vec<&String> = lines
            .iter()
            .filter(|line| line.contains(" rejected with "))
            .collect();
        assert_eq!(rejected.len(), 2, "{lines:#?}");
        for line in rejected {
            let lower = line.to_lowercase();
            for phrase in [
                "only the main conversation can fork",
                "cannot spawn",
                "a fork cannot fork",
            ] {
                assert!(lower.matches(phrase).count() <= 1, "{rule}: {line}");
            }
        }
    }
}
