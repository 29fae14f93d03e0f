//! `subsim check` as a test runner and `subsim validate` over folders, end to end: paths and
//! folders, `--filter`, `--seeds`, `--jobs`, `--fail-fast`, `--junit`, `--format json`, the
//! evidence a failure shows, and the exit codes.

use crate::support::{code, flat, stderr, stdout, subsim, TempDir};
use std::path::Path;

fn passing(name: &str) -> String {
    format!(
        "name: {name}\nmain:\n  - spawn: {{agent: general-purpose, name: worker, count: 2}}\n\
         expect:\n  - count: {{kind: agent_started}}\n    equals: 2\n"
    )
}

fn failing(name: &str) -> String {
    format!(
        "name: {name}\nmain:\n  - spawn: {{agent: general-purpose, name: worker, count: 2}}\n\
         expect:\n  - count: {{kind: agent_started}}\n    equals: 99\n"
    )
}

/// A scenario whose outcome depends on the seed: two random work times decide who ends
/// first, and the expectation says `a` does.
const SEED_DEPENDENT: &str = "\
name: seed-dependent
main:
  - spawn: {agent: general-purpose, name: a, background: true, behavior: [{work: \"uniform(1s, 10s)\"}]}
  - spawn: {agent: general-purpose, name: b, background: true, behavior: [{work: \"uniform(1s, 10s)\"}]}
expect:
  - order: [{kind: agent_finished, agent: a}, {kind: agent_finished, agent: b}]
";

#[test]
fn check_takes_files_and_folders_and_closes_with_the_counts() {
    let dir = TempDir::new("files-folders");
    dir.write("a/one.yaml", passing("one"));
    dir.write("a/b/two.yml", failing("two"));
    let single = dir.write("three.yaml", passing("three"));
    let output = subsim(&[
        "check",
        dir.path().join("a").to_str().unwrap(),
        single.to_str().unwrap(),
    ]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("FAIL ") && lines[0].ends_with("two.yml"),
        "{text}"
    );
    assert!(
        text.contains("ok   ") && text.contains("one.yaml"),
        "{text}"
    );
    assert_eq!(lines.last(), Some(&"2 passed, 1 failed"), "{text}");
}

#[test]
fn check_on_an_empty_folder_is_an_error() {
    let dir = TempDir::new("empty");
    dir.write("notes.txt", "not a scenario");
    let output = subsim(&["check", dir.text()]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("no scenario files"),
        "{}",
        stderr(&output)
    );
    let output = subsim(&["validate", dir.text()]);
    assert_eq!(code(&output), 2);
}

#[test]
fn filter_selects_by_name_or_path_and_an_unmatched_filter_is_an_error() {
    let dir = TempDir::new("filter");
    dir.write("cap/alpha.yaml", passing("The alpha scenario"));
    dir.write("cap/beta.yaml", failing("beta"));
    dir.write("perm/gamma.yaml", passing("gamma"));
    // By name (any case).
    let output = subsim(&["check", dir.text(), "--filter", "ALPHA scen"]);
    assert_eq!(code(&output), 0, "{}", stdout(&output));
    assert!(stdout(&output).ends_with("1 passed, 0 failed\n"));
    // By path.
    let output = subsim(&["check", dir.text(), "--filter", "cap/"]);
    assert_eq!(code(&output), 1);
    assert!(
        stdout(&output).ends_with("1 passed, 1 failed\n"),
        "{}",
        stdout(&output)
    );
    // Nothing matches.
    let output = subsim(&["check", dir.text(), "--filter", "delta"]);
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("no scenario matches --filter `delta`"));
}

#[test]
fn seeds_find_an_expectation_that_holds_for_one_seed_only() {
    let dir = TempDir::new("seeds");
    let file = dir.write("seedy.yaml", SEED_DEPENDENT);
    let path = file.to_str().unwrap();
    // Which seeds break the expectation, by running each seed alone.
    let mut failing_seeds = Vec::new();
    for seed in 0..8u64 {
        let output = subsim(&[
            "run",
            path,
            "--seed",
            &seed.to_string(),
            "--format",
            "jsonl",
        ]);
        assert_eq!(code(&output), 0);
        let trace = stdout(&output);
        let a = trace
            .find("\"agent_finished\",\"agent\":\"a1\"")
            .expect("a ends");
        let b = trace
            .find("\"agent_finished\",\"agent\":\"a2\"")
            .expect("b ends");
        if b < a {
            failing_seeds.push(seed.to_string());
        }
    }
    assert!(
        !failing_seeds.is_empty() && failing_seeds.len() < 8,
        "the scenario must vary with the seed: {failing_seeds:?}"
    );
    let output = subsim(&["check", path, "--seeds", "8"]);
    let text = stdout(&output);
    assert_eq!(code(&output), 1, "{text}");
    assert!(
        text.contains(&format!(
            "fails under {} of 8 seeds: {}",
            failing_seeds.len(),
            failing_seeds.join(", ")
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "(rerun: subsim run {path} --seed {})",
            failing_seeds[0]
        )),
        "{text}"
    );
    assert!(text.ends_with("0 passed, 1 failed\n"), "{text}");
    // The file's own seed alone gives the verdict of seed 0.
    let output = subsim(&["check", path]);
    let own_fails = failing_seeds.first().map(String::as_str) == Some("0");
    assert_eq!(code(&output), i32::from(own_fails));
}

#[test]
fn jobs_keep_the_file_order_and_the_same_report() {
    let dir = TempDir::new("jobs");
    for index in 0..12 {
        let text = if index % 5 == 3 {
            failing(&format!("f{index}"))
        } else {
            passing(&format!("p{index}"))
        };
        dir.write(&format!("s{index:02}.yaml"), &text);
    }
    let serial = subsim(&["check", dir.text()]);
    let parallel = subsim(&["check", dir.text(), "--jobs", "4"]);
    assert_eq!(code(&serial), 1);
    assert_eq!(code(&parallel), 1);
    assert_eq!(stdout(&serial), stdout(&parallel));
    assert!(stdout(&serial).ends_with("10 passed, 2 failed\n"));
}

#[test]
fn fail_fast_stops_after_the_first_failure() {
    let dir = TempDir::new("fail-fast");
    dir.write("s1.yaml", passing("one"));
    dir.write("s2.yaml", failing("two"));
    dir.write("s3.yaml", passing("three"));
    dir.write("s4.yaml", passing("four"));
    let output = subsim(&["check", dir.text(), "--fail-fast"]);
    assert_eq!(code(&output), 1);
    let text = stdout(&output);
    assert!(
        !text.contains("s3.yaml") && !text.contains("s4.yaml"),
        "{text}"
    );
    assert!(text.contains("2 files not run"), "{text}");
    assert!(text.ends_with("1 passed, 1 failed\n"), "{text}");
}

#[test]
fn junit_report_lists_every_file_with_its_failure() {
    let dir = TempDir::new("junit");
    dir.write("s1.yaml", passing("one"));
    dir.write("s2.yaml", failing("two <&>"));
    dir.write("s3.yaml", "name: broken\nmain: [{wrok: 1s}]\n");
    let report = dir.path().join("report.xml");
    let output = subsim(&["check", dir.text(), "--junit", report.to_str().unwrap()]);
    assert_eq!(code(&output), 2, "a file that does not load is bad input");
    let xml = std::fs::read_to_string(&report).expect("the report is written");
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
        "{xml}"
    );
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\""),
        "{xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
    assert!(xml.contains("name=\"s2.yaml\""), "{xml}");
    assert!(
        xml.contains("<failure message=\"expect #1: expected exactly 99 events matching"),
        "{xml}"
    );
    assert!(
        xml.contains("<error message=\"the file does not load\">"),
        "{xml}"
    );
    assert!(
        xml.contains("wrok"),
        "the load error is in the report: {xml}"
    );
    // Balanced tags, nothing raw.
    assert_eq!(
        xml.matches("<testcase").count(),
        xml.matches("</testcase>").count() + xml.matches("/>\n").count()
            - xml.matches("<skipped").count()
    );
    assert!(!xml.contains("<&>"), "{xml}");
    // `time`: wall seconds on every testcase and on the suite (values are not compared:
    // no timing assertions, only that each is a number of seconds).
    let times: Vec<f64> = xml
        .split(" time=\"")
        .skip(1)
        .map(|rest| {
            let value = &rest[..rest.find('"').expect("a closing quote")];
            value.parse().expect("time is a number of seconds")
        })
        .collect();
    assert_eq!(
        times.len(),
        3 + 2,
        "3 testcases, testsuites and testsuite: {xml}"
    );
    assert!(times.iter().all(|time| *time >= 0.0), "{xml}");
}

#[test]
fn json_format_is_one_object_with_every_file_and_the_counts_on_stderr() {
    let dir = TempDir::new("json");
    dir.write("s1.yaml", passing("one"));
    dir.write("s2.yaml", failing("two"));
    let output = subsim(&["check", dir.text(), "--format", "json", "--seeds", "2"]);
    assert_eq!(code(&output), 1);
    let report: serde_json::Value =
        serde_json::from_str(&stdout(&output)).expect("stdout is one JSON value");
    assert_eq!(report["passed"], 1);
    assert_eq!(report["failed"], 1);
    let files = report["files"].as_array().expect("files");
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["status"], "passed");
    assert_eq!(files[1]["status"], "failed");
    assert_eq!(files[1]["name"], "two");
    let runs = files[1]["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["seed"], 0);
    assert_eq!(runs[1]["seed"], 1);
    let failure = &runs[0]["failures"][0];
    assert_eq!(failure["expect"], 1);
    assert_eq!(failure["got"], "2 matching events");
    assert!(failure["location"]
        .as_str()
        .unwrap()
        .ends_with("s2.yaml:5:5"));
    assert!(stderr(&output).ends_with("1 passed, 1 failed\n"));
}

#[test]
fn a_failed_max_running_shows_the_event_of_the_peak() {
    let dir = TempDir::new("peak");
    let file = dir.write(
        "peak.yaml",
        "name: peak\nmain:\n  - spawn: {agent: general-purpose, name: w, count: 3, behavior: [{work: 10s}]}\n\
         expect:\n  - max_running: 2\n",
    );
    let output = subsim(&["check", file.to_str().unwrap()]);
    assert_eq!(code(&output), 1);
    let text = stdout(&output);
    assert!(text.contains("got:      peak running count 3"), "{text}");
    assert!(
        text.contains("agent_started agent=a3 name=w-3") && text.contains("running=3"),
        "the peak's event, not the first start: {text}"
    );
    assert!(text.contains("the peak, first reached here"), "{text}");
}

#[test]
fn an_unmatched_filter_shows_the_nearest_events_and_a_rejection() {
    let dir = TempDir::new("nearest");
    let file = dir.write(
        "nearest.yaml",
        "name: nearest\nsession:\n  env: {CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS: \"8\"}\n\
         main:\n  - spawn: {agent: general-purpose, name: x, count: 9, behavior: [{work: 10s}]}\n\
         expect:\n  - event: {kind: agent_started, agent: x}\n  - event: {kind: agent_started, agent: x-9}\n",
    );
    let output = subsim(&["check", file.to_str().unwrap()]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("nearest: #"), "{text}");
    assert!(text.contains("name=x-1"), "names that start alike: {text}");
    assert!(
        text.contains("`x-9` was rejected instead of started") && text.contains("spawn_rejected"),
        "{text}"
    );
}

#[test]
fn a_filter_key_no_event_of_its_kind_has_is_a_warning() {
    let dir = TempDir::new("key-warning");
    let file = dir.write(
        "warn.yaml",
        "name: warn\nmain:\n  - spawn: {agent: general-purpose, name: w}\n\
         expect:\n  - none: {kind: agent_finished, tool: Bash}\n",
    );
    let output = subsim(&["validate", file.to_str().unwrap()]);
    assert_eq!(code(&output), 0);
    assert!(
        stderr(&output).contains("no `agent_finished` event has a `tool` field"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("1 warning"));
}

#[test]
fn validate_takes_folders_and_exits_2_when_one_file_is_bad() {
    let dir = TempDir::new("validate");
    dir.write("good.yaml", passing("good"));
    dir.write("sub/bad.yaml", "name: bad\nmain: [{wrok: 1s}]\n");
    let output = subsim(&["validate", dir.text()]);
    assert_eq!(code(&output), 2);
    assert!(
        stdout(&output).contains("good.yaml: good"),
        "{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("bad.yaml:2:"),
        "{}",
        stderr(&output)
    );
    let output = subsim(&["validate", dir.path().join("good.yaml").to_str().unwrap()]);
    assert_eq!(code(&output), 0);
}

/// The repository's scenario written for `explore`.
fn race() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/cap/a-spawn-racing-a-finish-at-a-full-cap.yaml")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

#[test]
fn explore_reports_the_orderings_and_a_reproducer_that_replays_the_failure() {
    let race = race();
    let output = subsim(&["explore", &race]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.ends_with("2 orderings, 2 distinct outcomes\n"),
        "{text}"
    );
    let reproducer = format!("subsim run {race} --order 1");
    assert!(flat(&text).contains(&reproducer), "{text}");
    assert!(
        text.contains("second: completed (outcome 1: never started)"),
        "{text}"
    );
    // The reproducer replays it: `second` starts instead of being rejected.
    let replayed = subsim(&["run", &race, "--order", "1", "--format", "jsonl"]);
    assert_eq!(code(&replayed), 0);
    let trace = stdout(&replayed);
    assert!(trace.contains(r#""kind":"agent_started","agent":"a2","name":"second""#));
    assert!(!trace.contains("spawn_rejected"));
    // `--order 0` is the plain run, byte for byte.
    let plain = subsim(&["run", &race, "--format", "jsonl"]);
    let zero = subsim(&["run", &race, "--format", "jsonl", "--order", "0"]);
    assert_eq!(stdout(&plain), stdout(&zero));
    assert!(stdout(&plain).contains("spawn_rejected"));
}

#[test]
fn explore_exits_0_when_every_ordering_passes_and_2_on_bad_input() {
    let dir = TempDir::new("explore");
    let good = dir.write("good.yaml", passing("good"));
    let output = subsim(&["explore", good.to_str().unwrap()]);
    assert_eq!(code(&output), 0, "{}", stdout(&output));
    assert!(stdout(&output).ends_with("2 orderings, 1 distinct outcome\n"));
    let bad = dir.write("bad.yaml", "name: bad\nmain: [{wrok: 1s}]\n");
    let output = subsim(&["explore", bad.to_str().unwrap()]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("bad.yaml:2:"),
        "{}",
        stderr(&output)
    );
    let output = subsim(&["explore", &race(), "--max-orderings", "0"]);
    assert_eq!(code(&output), 2);
    // A bound stops it early, and says so.
    let output = subsim(&["explore", &race(), "--max-orderings", "1"]);
    assert_eq!(code(&output), 0);
    assert!(stdout(&output).contains("stopped at --max-orderings 1: more orderings remain"));
    assert!(stdout(&output).ends_with("1 ordering, 1 distinct outcome\n"));
}

/// `session.limits.max_explore_steps` bounds the steps of every ordering together: explore
/// stops with exit 3, the orderings it ran printed and a message naming the key to raise.
#[test]
fn explore_stops_at_max_explore_steps_with_exit_3_and_the_orderings_so_far() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/limits/explore-stops-at-max-explore-steps.yaml");
    let path = path.to_str().expect("UTF-8 path");
    let output = subsim(&["explore", path]);
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("stopped at session.limits.max_explore_steps 100: more orderings remain"),
        "{text}"
    );
    assert!(
        text.ends_with("9 orderings, 1 distinct outcome\n"),
        "{text}"
    );
    let message = stderr(&output);
    assert!(
        message.contains("stopped by its safety limit `max_explore_steps` after 9 orderings"),
        "{message}"
    );
    assert!(
        message.contains("raise session.limits.max_explore_steps"),
        "{message}"
    );
    // A plain run ignores it, and without it the 120 orders of the five prompts are run.
    let output = subsim(&["run", path, "--format", "summary"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let output = subsim(&["explore", path, "--max-orderings", "9"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stdout(&output).contains("stopped at --max-orderings 9"));
    let dir = TempDir::new("explore-budget");
    let text = std::fs::read_to_string(path).unwrap();
    let unbounded = dir.write(
        "unbounded.yaml",
        text.replace("max_explore_steps: 100", "max_explore_steps: 100000"),
    );
    let output = subsim(&["explore", unbounded.to_str().unwrap()]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stdout(&output).ends_with("120 orderings, 1 distinct outcome\n"));
}

#[test]
fn run_order_out_of_range_or_malformed_is_bad_input() {
    let race = race();
    let output = subsim(&["run", &race, "--order", "2"]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("tie point 1 had 2 options"),
        "{}",
        stderr(&output)
    );
    let output = subsim(&["run", &race, "--order", "1,x"]);
    assert_eq!(code(&output), 2);
    assert!(stderr(&output).contains("is not an ordering"));
}

#[test]
fn run_check_determinism_compares_two_more_runs() {
    let output = subsim(&["run", &race(), "--check-determinism", "--format", "summary"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let note = stderr(&output);
    assert!(
        flat(&note).contains("deterministic: two more runs wrote the same trace"),
        "{note}"
    );
    assert!(flat(&note).contains("FNV-1a "), "{note}");
}
