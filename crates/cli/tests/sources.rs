//! Issue #32 item 3: one scenario-source group. `--set`, `--cap`, `--seed` and
//! `--allow-path` are taken by every command that runs or reads a scenario — `run`,
//! `report`, `check`, `explore`, `panel`, `diff` (and `validate`, `tools`, which run
//! nothing, without `--seed`) — and mean the same in each: the overrides apply before
//! validation, the seed replaces `session.seed`. Only `run` and `sweep` took them; the
//! others refused them as unknown arguments.
//!
//! Each test raises the cap of a 25-call fan-out from 20 to 30, so no call is refused.

use crate::support::{code, flat, repo_root, stderr, stdout, subsim_in, TempDir};
use std::process::Output;

const FAN_OUT: &str = "scenarios/cap/fan-out-25-hits-the-cap.yaml";

fn subsim(args: &[&str]) -> Output {
    subsim_in(&repo_root(), args)
}

#[test]
fn run_takes_the_group() {
    let output = subsim(&["run", FAN_OUT, "--cap", "30", "--format", "summary"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        flat(&stdout(&output)).contains("rejected 0"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn report_takes_the_group() {
    let dir = TempDir::new("source-report");
    let page = dir.path().join("page.html");
    let page = page.to_str().expect("UTF-8");
    let output = subsim(&["report", FAN_OUT, "-o", page, "--cap", "30", "--seed", "7"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let html = std::fs::read_to_string(page).expect("the page");
    assert!(html.contains("seed 7"), "the seed reaches the page");
    assert!(
        html.contains("peak 25 running (cap 30)"),
        "the cap reaches the run"
    );
}

#[test]
fn check_applies_set_to_each_file_and_says_so() {
    let output = subsim(&[
        "check",
        FAN_OUT,
        "scenarios/demo.yaml",
        "--set",
        "session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=30",
    ]);
    let text = stdout(&output);
    assert_eq!(code(&output), 1, "the fan-out expects 5 refusals: {text}");
    assert!(
        text.starts_with(
            "every file read with --set session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=30\n"
        ),
        "{text}"
    );
    assert!(text.contains("FAIL scenarios/cap/fan-out"), "{text}");
    let json = subsim(&[
        "check", FAN_OUT, "--cap", "30", "--seed", "3", "--format", "json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(
        report["read_with"],
        serde_json::json!(["--cap 30", "--seed 3"])
    );
    assert_eq!(report["files"][0]["runs"][0]["seed"], 3);
}

#[test]
fn explore_takes_the_group_and_its_reproducer_repeats_it() {
    let output = subsim(&["explore", FAN_OUT, "--cap", "30", "--max-orderings", "2"]);
    let text = flat(&stdout(&output));
    assert_eq!(code(&output), 1, "{text}");
    assert!(
        text.contains(&format!("subsim run {FAN_OUT} --cap 30 --order")),
        "{text}"
    );
}

#[test]
fn panel_takes_the_group() {
    let output = subsim(&["panel", FAN_OUT, "--at", "1s", "--cap", "30"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("researcher-25"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn diff_takes_the_group() {
    let args = ["diff", FAN_OUT, "--from", "2.1.200", "--to", "2.1.292"];
    let plain = stdout(&subsim(&args));
    let capped = stdout(&subsim(&[&args[..], &["--cap", "30"]].concat()));
    // 2.1.200 has no cap; 2.1.292 refuses five calls at 20, none at 30.
    assert!(flat(&plain).contains("spawn_rejected"), "{plain}");
    assert!(!flat(&capped).contains("spawn_rejected"), "{capped}");
}

#[test]
fn validate_and_tools_take_set_and_cap() {
    let output = subsim(&["validate", FAN_OUT, "--set", "session.version=two"]);
    assert_eq!(code(&output), 2, "a bad override is bad input");
    let output = subsim(&["validate", FAN_OUT, "--cap", "30"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stdout(&output).starts_with("every file read with --cap 30\n"));
    let output = subsim(&[
        "tools",
        "--file",
        FAN_OUT,
        "--agent",
        "general-purpose",
        "--set",
        "session.env.CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH=1",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        flat(&stdout(&output)).contains("depth 1 of limit 1"),
        "{}",
        stdout(&output)
    );
}

/// `--seed` means one thing everywhere: the run's `session.seed`.
#[test]
fn seed_is_the_same_in_run_and_check() {
    let file = "scenarios/demo.yaml";
    let run = stdout(&subsim(&["run", file, "--seed", "11", "--format", "json"]));
    let set = stdout(&subsim(&[
        "run",
        file,
        "--set",
        "session.seed=11",
        "--format",
        "json",
    ]));
    assert_eq!(run, set);
}

/// Issue #32 item 7: `explain CAP-1` printed `{cap}`, `DEPTH-3` `{depth_limit}`,
/// `TOOLS-1/5/11` `{tool}`, `PERM-9` `{mode}`; now each is filled, and the note says
/// where the value came from.
#[test]
fn explain_fills_the_placeholders_of_its_reasons_and_says_from_where() {
    for rule in [
        "CAP-1", "DEPTH-3", "TOOLS-1", "TOOLS-5", "TOOLS-11", "PERM-9", "PERM-14",
    ] {
        let output = subsim(&["explain", rule]);
        let text = stdout(&output);
        let reasons = text
            .split("What the narration says when it decides:")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap_or("");
        assert!(!reasons.contains('{'), "{rule}: {reasons}");
    }
    let text = flat(&stdout(&subsim(&["explain", "CAP-1"])));
    assert!(
        text.contains("the cap of 20 running subagents is full"),
        "{text}"
    );
    assert!(
        text.contains("the cap is 20 as scenarios/cap/fan-out-25-hits-the-cap.yaml sets it"),
        "{text}"
    );
}
