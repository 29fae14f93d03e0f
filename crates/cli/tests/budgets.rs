//! Regression tests for issue #24's budget, reader and loop defects, each named after what
//! broke: every count a flag or a file gives is checked against a stated budget before it
//! sizes anything (exit 2, naming the budget and the flag that raises it), every input is
//! read under a byte budget, views of large runs are bounded, and quiet load generators
//! stop at a limit (exit 3). Nothing here measures time: exit codes, messages and sizes.

use crate::support::{code, exits, flat, repo_root, stderr, stdout, subsim, text, TempDir, BINARY};
use std::process::Command;

/// A small load: `count` arrivals of 1 s runs at 20/s against a cap of 10, no retry.
fn load(count: u32) -> String {
    format!(
        "name: small load\nsession:\n  env: {{CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: 10}}\n\
         agents:\n  worker:\n    description: w\n    behavior: [{{work: 1s}}]\n\
         load:\n  arrivals: poisson(20/s)\n  count: {count}\n  spawn: {{agent: worker}}\n  \
         retry: none\n"
    )
}

const CAP: &str = "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS";

#[test]
fn sweep_seeds_past_the_runs_budget_are_refused_before_anything_is_sized() {
    let dir = TempDir::new("seeds");
    let scenario = dir.write("s.yaml", load(20));
    let set = format!("{CAP}=10");
    // 10^8 replicas aborted with exit 134 (a 2.4 GB task list).
    let err = exits(
        &subsim(&[
            "sweep",
            text(&scenario),
            "--set",
            &set,
            "--seeds",
            "100000000",
        ]),
        2,
    );
    assert!(
        flat(&err).contains("100000000 runs, over the sweep runs budget of 100000 runs"),
        "{err}"
    );
    assert!(err.contains("raise it with --max-runs N"), "{err}");
    // Two ranges of 100k values: 10^10 points.
    let seeds = "session.seed=1..100000".to_string();
    let caps = format!("{CAP}=1..100000");
    let err = exits(
        &subsim(&["sweep", text(&scenario), "--set", &seeds, "--set", &caps]),
        2,
    );
    assert!(err.contains("10000000000 runs"), "{err}");
    // A range larger than u64 is over any budget, not a wrap-around.
    let huge = format!("{CAP}=0..1e300");
    let err = exits(&subsim(&["sweep", text(&scenario), "--set", &huge]), 2);
    assert!(err.contains("sweep runs budget"), "{err}");
    // The flag raises it.
    let ok = subsim(&[
        "sweep",
        text(&scenario),
        "--set",
        &set,
        "--seeds",
        "3",
        "--max-runs",
        "3",
    ]);
    exits(&ok, 0);
    assert_eq!(stdout(&ok).lines().count(), 1 + 4, "{}", stdout(&ok));
    exits(
        &subsim(&[
            "sweep",
            text(&scenario),
            "--set",
            &set,
            "--seeds",
            "3",
            "--max-runs",
            "2",
        ]),
        2,
    );
}

/// Two shard files of a 3-point, 2-seed sweep.
fn shards(dir: &TempDir) -> (String, String) {
    let scenario = dir.write("s.yaml", load(20));
    let set = format!("{CAP}=10,20,30");
    let shard = |index: &str| {
        let output = subsim(&[
            "sweep",
            text(&scenario),
            "--set",
            &set,
            "--seeds",
            "2",
            "--shard",
            index,
        ]);
        exits(&output, 0);
        stdout(&output)
    };
    (shard("1/2"), shard("2/2"))
}

#[test]
fn merge_of_a_crafted_shard_count_is_refused_before_anything_is_sized() {
    let dir = TempDir::new("crafted");
    let (first, _) = shards(&dir);
    // `shard 1/99999999999` allocated 800 GB for the shard table.
    let crafted = dir.write(
        "crafted.csv",
        first.replacen("shard 1/2", "shard 1/99999999999", 1),
    );
    let err = exits(&subsim(&["merge", text(&crafted)]), 2);
    assert!(err.contains("crafted.csv:1: the shard count"), "{err}");
    assert!(err.contains("sweep runs budget"), "{err}");
    let rows = dir.write(
        "rows.csv",
        first.replacen(
            "points 3 rows-per-point 3",
            "points 99999999999 rows-per-point 3",
            1,
        ),
    );
    let err = exits(&subsim(&["merge", text(&rows)]), 2);
    assert!(err.contains("rows.csv:1: the rows announced"), "{err}");
}

#[test]
fn merge_reads_an_endless_file_under_its_byte_budget() {
    // `merge /dev/zero` read without a cap.
    let err = exits(
        &subsim(&["merge", "/dev/zero", "--max-input-bytes", "65536"]),
        2,
    );
    assert!(
        flat(&err).contains("holds more than 65536 bytes, over the shard file bytes budget"),
        "{err}"
    );
    assert!(err.contains("--max-input-bytes N"), "{err}");
}

#[test]
fn merge_refuses_cut_off_and_edited_rows() {
    let dir = TempDir::new("rows");
    let (first, second) = shards(&dir);
    let first_path = dir.write("1.csv", &first);
    let good = subsim(&[
        "merge",
        text(&first_path),
        text(&dir.write("2.csv", &second)),
    ]);
    exits(&good, 0);
    assert_eq!(stdout(&good).lines().count(), 1 + 9);
    let cases = [
        // The last row cut off while it was written: copied as a valid-looking row.
        (
            "cut.csv",
            second[..second.len() - 20].to_string(),
            "the last line has no line end",
        ),
        // One cell too many: copied as is.
        (
            "extra.csv",
            second.replacen("\n20,0,", "\n20,0,0,", 1),
            "cells, the header",
        ),
        // A row removed, or one added.
        (
            "missing.csv",
            {
                let mut lines: Vec<&str> = second.lines().collect();
                lines.remove(3);
                lines.join("\n") + "\n"
            },
            "rows after the header",
        ),
        (
            "added.csv",
            format!("{second}{}\n", second.lines().last().unwrap_or_default()),
            "rows after the header",
        ),
        // Rows swapped: the replica column is out of order.
        (
            "swapped.csv",
            {
                let mut lines: Vec<&str> = second.lines().collect();
                lines.swap(2, 3);
                lines.join("\n") + "\n"
            },
            "replica `1` where point 1's replica `0` belongs",
        ),
    ];
    for (name, contents, expected) in cases {
        let path = dir.write(name, contents);
        let output = subsim(&["merge", text(&first_path), text(&path)]);
        let err = exits(&output, 2);
        assert!(flat(&err).contains(&flat(expected)), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        assert!(stdout(&output).is_empty(), "{name}: nothing is written");
    }
}

#[test]
fn sweep_target_with_a_nan_bound_is_refused() {
    let dir = TempDir::new("nan");
    let scenario = dir.write("s.yaml", load(20));
    let set = format!("{CAP}=10,20");
    for bound in ["NaN", "inf", "-inf"] {
        // `blocking<NaN` exited 0, advising to widen the range.
        let target = format!("blocking<{bound}");
        let err = exits(
            &subsim(&[
                "sweep",
                text(&scenario),
                "--set",
                &set,
                "--target",
                &target,
                "--vary",
                CAP,
            ]),
            2,
        );
        assert!(err.contains(&format!("the bound `{bound}`")), "{err}");
        assert!(err.contains("not a finite number"), "{err}");
    }
}

#[test]
fn a_sweep_point_stopped_by_a_limit_is_named_and_the_rest_is_written() {
    let dir = TempDir::new("limit");
    let scenario = dir.write("s.yaml", load(20));
    // The first point stops at max_events; before, the whole sweep printed nothing.
    let output = subsim(&[
        "sweep",
        text(&scenario),
        "--set",
        "session.limits.max_events=30,100000",
    ]);
    let err = exits(&output, 3);
    assert!(
        err.contains("point session.limits.max_events=30 replica 0 (seed "),
        "{err}"
    );
    assert!(err.contains("max_events"), "{err}");
    assert!(
        err.contains("1 of 2 runs stopped at a safety limit"),
        "{err}"
    );
    let out = stdout(&output);
    assert_eq!(out.lines().count(), 1 + 4, "{out}");
    let second = out
        .lines()
        .find(|line| line.starts_with("100000,0,"))
        .unwrap_or_default();
    assert!(
        second.contains(",20,20,"),
        "the other point is measured: {out}"
    );
}

#[test]
fn a_times_file_with_a_byte_order_mark_loads() {
    let dir = TempDir::new("bom");
    dir.write("times.csv", "\u{feff}time\n0s\n1s\n");
    let scenario = dir.write(
        "s.yaml",
        "name: bom\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n\
         load:\n  arrivals: {file: times.csv}\n  spawn: {agent: worker}\n\
         expect:\n  - count: {kind: spawn_requested}\n    equals: 2\n",
    );
    // It was refused as "`time` is not a duration".
    let output = subsim(&["check", text(&scenario)]);
    exits(&output, 0);
}

#[test]
fn a_schedule_of_1ms_phases_at_a_near_zero_rate_ends() {
    let dir = TempDir::new("schedule");
    let scenario = dir.write(
        "s.yaml",
        "name: quiet schedule\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n\
         load:\n  arrivals:\n    schedule:\n      - {for: 1ms, rate: 0.000001/s}\n      \
         - {for: 1ms, rate: 0/s}\n  count: 2\n  spawn: {agent: worker}\n",
    );
    // Each draw walked 1 ms phases one by one for 30 days of virtual time (minutes); now
    // quiet cycles are skipped in bulk, and the 30 days' limit ends the run.
    let err = exits(&subsim(&["run", text(&scenario), "--format", "summary"]), 3);
    assert!(err.contains("max_time"), "{err}");
}

#[test]
fn an_on_off_of_1us_periods_at_a_near_zero_rate_stops_at_max_silent_steps() {
    let dir = TempDir::new("onoff");
    let scenario = dir.write(
        "s.yaml",
        "name: quiet on off\nsession:\n  limits: {max_silent_steps: 100000}\n\
         agents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n\
         load:\n  arrivals:\n    on_off: {rate: 0.000001/s, on: 1us, off: 1us}\n  count: 2\n  \
         spawn: {agent: worker}\n",
    );
    // It drew on/off periods up to 30 days of virtual time: 10^12 of them.
    let output = subsim(&["run", text(&scenario), "--format", "jsonl"]);
    let err = exits(&output, 3);
    assert!(err.contains("max_silent_steps"), "{err}");
    let last = stdout(&output)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(
        last.contains("\"limit_reached\""),
        "the trace is kept: {last}"
    );
}

#[test]
fn views_of_a_run_past_their_row_budget_count_the_rest() {
    let dir = TempDir::new("views");
    let scenario = dir.write("s.yaml", load(2_000));
    // `chrome` held every event and every run (1-2M arrivals aborted, leaving a 0-byte
    // file); now at most --max-rows runs are drawn and the rest counted.
    let output = subsim(&[
        "run",
        text(&scenario),
        "--format",
        "chrome",
        "--max-rows",
        "50",
    ]);
    let err = exits(&output, 0);
    assert!(err.contains("--max-rows N"), "{err}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    let events = json["traceEvents"].as_array().expect("events");
    let threads = events
        .iter()
        .filter(|event| event["name"] == "thread_name")
        .count();
    assert_eq!(threads, 50, "main and 49 runs");
    let not_drawn = json["metadata"]["runs_not_drawn"]
        .as_u64()
        .expect("counted");
    let started = 2_000 - 1; // at most: some arrivals are rejected by the cap
    assert!(not_drawn > 0 && not_drawn <= started, "{not_drawn}");
    let gantt = subsim(&["run", text(&scenario), "--format", "gantt"]);
    exits(&gantt, 0);
    let gantt = stdout(&gantt);
    let more = gantt
        .lines()
        .find_map(|line| line.split("… ").nth(1)?.strip_suffix(" more runs"))
        .expect("the rest are counted");
    assert_eq!(
        more.parse::<u64>().ok(),
        Some(not_drawn + 49 - 59),
        "{gantt}"
    );
    let page = dir.path().join("page.html");
    let report = subsim(&["report", text(&scenario), "--out", text(&page)]);
    exits(&report, 0);
    let runs: u64 = stdout(&report)
        .split(" runs,")
        .next()
        .and_then(|head| head.rsplit('(').next())
        .and_then(|count| count.parse().ok())
        .expect("runs counted");
    assert_eq!(runs, not_drawn + 49, "{}", stdout(&report));
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(
        html.contains(&format!("… {} more runs", runs - 399)),
        "row budget"
    );
}

#[test]
fn check_falls_back_to_fewer_threads_when_a_thread_cannot_start() {
    let dir = TempDir::new("threads");
    for index in 0..60 {
        dir.write(
            &format!("s{index}.yaml"),
            "name: one\nmain:\n  - work: 1s\n",
        );
    }
    // Under a small address space, threads cannot start: every file whose parser thread
    // failed was marked FAIL as "a bug in subsim", and under `ulimit -v 300000` in a
    // loaded full test run the parser threads' retries ran out (flaky). Then workers whose
    // stacks did start took the room their work needed, and an allocation failed — an
    // abort (`check --jobs 8` under 100–160 MB). Now the workers are sized by the limit
    // before any starts, and with room for none the main thread parses without a thread
    // of its own (`check_with_no_room_for_a_worker_parses_on_the_main_thread_instead_of_aborting`):
    // at every limit tried every file passes, with no allocation failure; at least one
    // limit must start fewer workers.
    let mut fell_back = Vec::new();
    for kib in (40_000..=320_000).step_by(20_000) {
        let output = under_address_limit(kib, &format!("check --jobs 8 {}", dir.text()));
        let (out, err) = (stdout(&output), stderr(&output));
        assert!(!out.contains("bug in subsim"), "ulimit -v {kib}: {out}");
        assert!(!out.contains("FAIL"), "ulimit -v {kib}: {out}");
        checked_every_file(kib, &output, "60 passed, 0 failed\n");
        if err.contains("of 8 worker threads") {
            fell_back.push(kib);
        }
    }
    assert!(!fell_back.is_empty(), "no limit left a worker unstarted");
}

/// `check` with no room for a worker ran on the main thread, which still parsed each file
/// on a thread of its own with the parser's 16 MiB stack: under a limit that left room
/// for that stack and little more, the thread started, the work then found too little, and
/// an allocation failed — an abort (`check scenarios` under 50–70 MB in a debug build, 40
/// and 50 MB in a release build). Now the main thread parses without a thread when its
/// stack has room. A limit under which the binary cannot check even one small file is
/// below what it needs to run at all, and is skipped.
#[test]
fn check_with_no_room_for_a_worker_parses_on_the_main_thread_instead_of_aborting() {
    let scenarios = repo_root().join("scenarios");
    let one = repo_root().join("scenarios/cap/ultracode-is-exempt.yaml");
    let mut checked = Vec::new();
    for kib in (40_000..=70_000).step_by(10_000) {
        let probe = under_address_limit(kib, &format!("check {}", one.display()));
        if code(&probe) != 0 {
            continue;
        }
        let output = under_address_limit(kib, &format!("check {}", scenarios.display()));
        checked_every_file(kib, &output, " passed, 0 failed\n");
        checked.push(kib);
    }
    assert!(
        checked.len() >= 2,
        "only {checked:?} limits let the binary run"
    );
}

#[test]
fn erlang_with_a_cap_past_its_budget_is_refused_instead_of_looping() {
    // Erlang B and C take a step per slot: --cap 4294967295 ran for tens of seconds.
    let err = exits(
        &subsim(&["erlang", "--cap", "4294967295", "--load", "1e308"]),
        2,
    );
    assert!(
        err.contains("--cap is 4294967295 slots, over the erlang cap budget of 10000000 slots"),
        "{err}"
    );
    exits(&subsim(&["erlang", "--cap", "10000000", "--load", "20"]), 0);
    // A tiny target is written as a number, not 300 zeros.
    let err = exits(
        &subsim(&["erlang", "--target", "1e-300", "--load", "1000000"]),
        2,
    );
    assert!(err.contains("at or below 1e-300"), "{err}");
}

#[test]
fn a_long_order_is_read_in_runs_and_bounded() {
    let dir = TempDir::new("order");
    let scenario = dir.write(
        "s.yaml",
        "name: ties\nmain:\n  - spawn: {agent: Explore, count: 3, background: true}\n  \
         - wait: {for: children}\n",
    );
    exits(&subsim(&["run", text(&scenario), "--order", "0*2,1"]), 0);
    // An order naming 10^19 choices is refused before a list is made.
    let err = exits(
        &subsim(&[
            "run",
            text(&scenario),
            "--order",
            "0*18446744073709551615,1",
        ]),
        2,
    );
    assert!(err.contains("over the order choices budget"), "{err}");
}

#[test]
fn typed_text_past_its_budget_is_refused_instead_of_searched_and_echoed() {
    // 100,000 characters took 10 s (explain) and seconds (tools) in the "did you mean",
    // and were echoed whole in the error.
    let long = "x".repeat(100_000);
    let err = exits(&subsim(&["explain", &long]), 2);
    assert!(
        err.contains("the query is 100000 characters, over the typed text budget of 1000"),
        "{}",
        &err[..err.len().min(300)]
    );
    assert!(
        err.len() < 400,
        "the text is not echoed: {} bytes",
        err.len()
    );
    let dir = TempDir::new("typed");
    let scenario = dir.write(
        "s.yaml",
        "name: a\nagents:\n  worker:\n    description: w\n    behavior: [{work: 1s}]\n\
         main:\n  - spawn: {agent: worker}\n",
    );
    let err = exits(
        &subsim(&["tools", "--file", text(&scenario), "--agent", &long]),
        2,
    );
    assert!(
        err.contains("--agent is 100000 characters"),
        "{}",
        &err[..err.len().min(300)]
    );
}

#[test]
fn sweep_starts_only_the_workers_an_address_space_limit_has_room_for() {
    // Regression: `sweep --jobs 8` under `ulimit -v` 60–120 MB started eight workers, whose
    // runs then found no room: an allocation failed and the process aborted (exit 134)
    // with no table. Now the pool is sized by the limit before it starts (at least one
    // worker, said on stderr): every limit tried gives the whole table, or a located error
    // when not even the parser's thread can start — never an abort.
    let dir = TempDir::new("sweep-limit");
    let file = dir.write(
        "load.yaml",
        "name: small load\nagents:\n  worker: {description: w, behavior: [{work: exp(1s)}]}\n\
         load:\n  arrivals: poisson(20/s)\n  count: 500\n  spawn: {agent: worker}\n",
    );
    let mut cut = 0;
    for kib in (60_000..=320_000).step_by(40_000) {
        let args = format!("sweep {} --cap 10..12 --seeds 2 --jobs 8", file.display());
        let output = under_address_limit(kib, &args);
        let (out, err) = (stdout(&output), stderr(&output));
        assert!(
            !err.contains("memory allocation of") && !err.contains("panicked"),
            "ulimit -v {kib}: {err}"
        );
        match code(&output) {
            // The header, 3 caps × 2 replicas and a mean row per cap.
            0 => assert_eq!(out.lines().count(), 1 + 3 * 3, "ulimit -v {kib}: {out}"),
            2 => assert!(err.contains("help:"), "ulimit -v {kib}: {err}"),
            other => panic!("ulimit -v {kib}: exit {other}\n{err}"),
        }
        if err.contains("of 8 worker threads: the address-space limit") {
            cut += 1;
        }
    }
    assert!(cut > 0, "no limit cut the number of workers");
}

/// `check` under `ulimit -v KIB` checked every file: no allocation failed, it exited 0
/// and its report ends with `tail`.
fn checked_every_file(kib: u64, output: &std::process::Output, tail: &str) {
    let (out, err) = (stdout(output), stderr(output));
    assert!(
        !err.contains("memory allocation of"),
        "ulimit -v {kib}: an allocation failed:\n{err}"
    );
    assert_eq!(code(output), 0, "ulimit -v {kib}: {out}\n{err}");
    assert!(out.ends_with(tail), "ulimit -v {kib}: {out}");
}

/// `subsim ARGS` (split on spaces) under `ulimit -v KIB`, an address-space limit.
fn under_address_limit(kib: u64, args: &str) -> std::process::Output {
    Command::new("sh")
        .args(["-c", &format!("ulimit -v {kib} && exec {BINARY} {args}")])
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("sh runs")
}
