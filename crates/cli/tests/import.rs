//! End-to-end runs of `subsim import`: the exit codes and outputs the interface
//! names (a scenario written → 0, not a transcript → 2, `--report`'s count line).

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

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/import")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("subsim-import-{}-{name}", std::process::id()))
}

#[test]
fn import_writes_a_scenario_that_check_passes() {
    let session = fixture("v2.1.17-nested/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl");
    let out = temp("nested.yaml");
    let output = subsim(&[
        "import",
        &session,
        "--out",
        out.to_str().unwrap(),
        "--report",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with("8 of 8 observed facts reproduced\n"),
        "{stdout}"
    );
    let checked = subsim(&["check", out.to_str().unwrap()]);
    let _ = std::fs::remove_file(&out);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
}

#[test]
fn import_to_stdout_keeps_the_report_as_comments() {
    let session = fixture("v2.0.76-flat/7c1e4a52-0f3b-4d7e-9a61-2b8f5d0c9e13.jsonl");
    let output = subsim(&["import", &session, "--report"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with("# Imported by `subsim import`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n# 6 of 6 observed facts reproduced\n"),
        "{stdout}"
    );
}

#[test]
fn a_file_that_is_not_a_transcript_exits_2_with_its_line() {
    let not_transcript = temp("notes.jsonl");
    std::fs::write(
        &not_transcript,
        "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\nhello world\n",
    )
    .expect("write");
    let output = subsim(&["import", not_transcript.to_str().unwrap()]);
    let _ = std::fs::remove_file(&not_transcript);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("notes.jsonl:2:1: this line is not JSON"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/cap/fan-out-25-hits-the-cap.yaml");
    let output = subsim(&["import", scenario.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let output = subsim(&["import", "/definitely/not/here.jsonl"]);
    assert_eq!(output.status.code(), Some(2));
}
