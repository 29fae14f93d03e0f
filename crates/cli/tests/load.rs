//! End-to-end runs of the load-testing commands of the `subsim` binary: `run --set` and
//! `--cap`, `erlang`. Statistics themselves are tested in the engine.

use std::path::PathBuf;
use std::process::{Command, Output};

const BINARY: &str = env!("CARGO_BIN_EXE_subsim");

fn subsim(args: &[&str]) -> Output {
    Command::new(BINARY)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .output()
        .expect("the subsim binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("an exit code")
}

fn erlang_scenario() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("scenarios/load/erlang-b-20-erlangs.yaml")
        .display()
        .to_string()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).expect("JSON on stdout")
}

#[test]
fn cap_and_set_change_the_run_without_editing_the_file() {
    let file = erlang_scenario();
    let output = subsim(&[
        "run",
        &file,
        "--format",
        "json",
        "--cap",
        "28",
        "--set",
        "load.count=2000",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let stats = json(&output);
    assert_eq!(stats["cap"], 28);
    assert_eq!(stats["spawns"]["requested"], 2000);
    // The same through the env var's path: identical output.
    let by_path = subsim(&[
        "run",
        &file,
        "--format",
        "json",
        "--set",
        "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=28",
        "--set",
        "load.count=2000",
    ]);
    assert_eq!(stdout(&by_path), stdout(&output));
}

#[test]
fn a_bad_set_is_exit_2_with_the_fix() {
    let file = erlang_scenario();
    for (set, expected) in [
        ("load.cuont=5", "did you mean `count`?"),
        ("load.count=abc", "`count` must be a whole number"),
        ("load.arrivals=poison(30/s)", "did you mean `poisson`?"),
        (
            "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENT=3",
            "did you mean `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`?",
        ),
        ("load.count", "is not PATH=VALUE"),
    ] {
        let output = subsim(&["run", &file, "--set", set]);
        assert_eq!(code(&output), 2, "{set}");
        // miette wraps long lines: compare the words.
        let error = stderr(&output)
            .split_whitespace()
            .filter(|word| *word != "│")
            .collect::<Vec<_>>()
            .join(" ");
        assert!(error.contains(expected), "{set}: {error}");
        assert!(stdout(&output).is_empty(), "{set}: nothing runs");
    }
    let output = subsim(&["run", &file, "--cap", "0"]);
    assert_eq!(code(&output), 2);
}

#[test]
fn erlang_prints_b_and_c_and_the_smallest_cap() {
    let output = subsim(&["erlang", "--cap", "30", "--load", "20", "--format", "json"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let answer = json(&output);
    assert_eq!(answer["cap"], 30);
    assert_eq!(answer["load"], 20.0);
    let b = answer["erlang_b"].as_f64().unwrap();
    let c = answer["erlang_c"].as_f64().unwrap();
    let wait = answer["mean_wait_holding_times"].as_f64().unwrap();
    assert!((b - 0.008_457).abs() < 1e-6, "{b}");
    assert!((c - 0.024_950).abs() < 1e-6, "{c}");
    assert!((wait - c / 10.0).abs() < 1e-12, "{wait}");

    let target = subsim(&[
        "erlang", "--target", "0.01", "--load", "20", "--format", "json",
    ]);
    assert_eq!(code(&target), 0);
    assert_eq!(json(&target)["cap"], 30);
    let text = subsim(&["erlang", "--target", "0.01", "--load", "20"]);
    assert!(stdout(&text).starts_with("smallest cap with blocking ≤ 0.01 at 20 Erlangs: 30\n"));

    // An unstable queue has no finite wait.
    let unstable = subsim(&["erlang", "--cap", "20", "--load", "20", "--format", "json"]);
    assert_eq!(
        json(&unstable)["mean_wait_holding_times"],
        serde_json::Value::Null
    );
    assert_eq!(json(&unstable)["erlang_c"], 1);

    for bad in [
        &["erlang", "--load", "20"][..],
        &["erlang", "--cap", "3", "--target", "0.1", "--load", "20"],
        &["erlang", "--target", "2", "--load", "20"],
        &["erlang", "--cap", "3", "--load", "-1"],
    ] {
        assert_eq!(code(&subsim(bad)), 2, "{bad:?}");
    }
}
