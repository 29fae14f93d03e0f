//! `subsim import` over the shipped transcript fixtures (`tests/fixtures/import/`, both
//! subagent layouts, versions 2.0.76, 2.1.17 and 2.1.90, `Task` and `Agent` naming): every
//! fixture imports, its scenario loads and runs, passes its own `expect:` block, and makes
//! exactly one `spawn_requested` per Agent tool call of the transcripts (counted here
//! independently of the importer).

use std::path::{Path, PathBuf};

use subsim_engine::expect::Checker;
use subsim_engine::render::JsonlWriter;
use subsim_engine::sink::Tee;
use subsim_engine::Simulation;
use subsim_scenario::import::{fidelity, import_session, ImportOptions};
use subsim_tests::repo_root;

fn fixtures() -> PathBuf {
    repo_root().join("tests/fixtures/import")
}

/// The main session file of each fixture folder (the one `.jsonl` at its top).
fn main_files() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for folder in std::fs::read_dir(fixtures())
        .expect("fixture folder")
        .flatten()
    {
        if !folder.path().is_dir() {
            continue;
        }
        let mains: Vec<PathBuf> = std::fs::read_dir(folder.path())
            .expect("fixture")
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.extension().is_some_and(|ext| ext == "jsonl")
                    && !path
                        .file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with("agent-"))
            })
            .collect();
        assert_eq!(
            mains.len(),
            1,
            "{}: one main session file",
            folder.path().display()
        );
        found.extend(mains);
    }
    found.sort();
    assert!(found.len() >= 3, "the fixtures are missing");
    found
}

/// Agent tool calls (`tool_use` blocks whose input has `subagent_type`) in a file, counted
/// from the raw JSON — every object of every complete line.
fn spawn_calls_in(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).expect("fixture text");
    let mut count = 0;
    for line in text.lines() {
        for value in serde_json::Deserializer::from_str(line).into_iter::<serde_json::Value>() {
            let Ok(value) = value else { break };
            let Some(blocks) = value
                .get("message")
                .and_then(|message| message.get("content"))
                .and_then(|content| content.as_array())
            else {
                continue;
            };
            count += blocks
                .iter()
                .filter(|block| {
                    block.get("type").and_then(|kind| kind.as_str()) == Some("tool_use")
                        && block
                            .get("input")
                            .and_then(|input| input.get("subagent_type"))
                            .is_some()
                })
                .count();
        }
    }
    count
}

#[test]
fn every_fixture_imports_runs_and_passes_its_own_expectations() {
    for main in main_files() {
        for keep_text in [false, true] {
            let shown = format!("{} (keep_text {keep_text})", main.display());
            let imported = import_session(&main, ImportOptions { keep_text })
                .unwrap_or_else(|error| panic!("{shown}: {error}"));
            let loaded =
                subsim_scenario::parse_scenario(&imported.yaml, "imported.yaml", Path::new("."))
                    .unwrap_or_else(|problems| panic!("{shown}: {problems}\n{}", imported.yaml));
            assert_eq!(loaded.expect.len(), imported.facts.len(), "{shown}");
            assert!(loaded.expect.len() >= 4, "{shown}: too few observed facts");
            let mut checker = Checker::new(loaded.expect);
            let mut jsonl = JsonlWriter::new(Vec::new());
            let report = {
                let mut tee = Tee {
                    first: &mut checker,
                    second: &mut jsonl,
                };
                Simulation::new(loaded.spec).run(&mut tee)
            };
            assert!(report.limit.is_none(), "{shown}: hit a safety limit");
            let failures = checker.finish();
            assert!(
                failures.is_empty(),
                "{shown}: {failures:#?}\n{}",
                imported.yaml
            );
            let trace = String::from_utf8(jsonl.finish().expect("trace")).expect("UTF-8");
            let requested = trace
                .lines()
                .filter(|line| line.contains("\"kind\":\"spawn_requested\""))
                .count();
            // One spawn_requested per Agent call of the main file and the subagent files
            // that were replayed.
            let mut calls = spawn_calls_in(&main);
            for sub in &imported.subagent_files {
                calls += spawn_calls_in(sub);
            }
            assert_eq!(requested, calls, "{shown}");
            assert_eq!(imported.spawn_calls, calls, "{shown}");
            let fidelity = fidelity(&imported).unwrap_or_else(|problems| panic!("{problems}"));
            assert_eq!(
                fidelity.reproduced, fidelity.observed,
                "{shown}: {fidelity}"
            );
        }
    }
}

#[test]
fn both_layouts_find_their_subagent_files_and_skip_the_others() {
    let flat = fixtures().join("v2.0.76-flat/7c1e4a52-0f3b-4d7e-9a61-2b8f5d0c9e13.jsonl");
    let imported = import_session(&flat, ImportOptions::default()).expect("imports");
    let names: Vec<String> = imported
        .subagent_files
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // The warm-up sidechain and another session's file lie beside it and are left out.
    assert_eq!(names, ["agent-4f2a9c1e.jsonl", "agent-9b3d7e20.jsonl"]);
    let nested = fixtures().join("v2.1.17-nested/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl");
    let imported = import_session(&nested, ImportOptions::default()).expect("imports");
    assert_eq!(
        imported.subagent_files.len(),
        4,
        "the compaction run is not a subagent"
    );
    assert!(imported
        .subagent_files
        .iter()
        .all(|path| path.to_string_lossy().contains("/subagents/")));
    // Its cut-off last line is a warning, not an error.
    assert!(imported
        .warnings
        .iter()
        .any(|warning| warning.contains("the last line is cut off")));
}

#[test]
fn several_calls_of_one_response_become_one_spawn_list() {
    let nested = fixtures().join("v2.1.17-nested/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl");
    let imported = import_session(&nested, ImportOptions::default()).expect("imports");
    assert!(
        imported
            .yaml
            .contains("# 2 Agent calls in one response\n  - spawn:\n      # Task call"),
        "{}",
        imported.yaml
    );
}

#[test]
fn text_is_private_unless_kept() {
    let agent = fixtures().join("v2.1.90-agent/d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl");
    let private = import_session(&agent, ImportOptions::default())
        .expect("imports")
        .yaml;
    for secret in [
        "ghp_",
        "jane.doe@example.com",
        "Find how retries work",
        "Retries use exponential backoff",
    ] {
        assert!(!private.contains(secret), "{secret} leaked:\n{private}");
    }
    // Descriptions are kept.
    assert!(private.contains("Research payment retries"));
    let kept = import_session(&agent, ImportOptions { keep_text: true })
        .expect("imports")
        .yaml;
    assert!(kept.contains("Find how retries work"));
    assert!(kept.contains("Retries use exponential backoff."));
}

#[test]
fn a_wait_for_a_named_agent_replays_task_output_with_block() {
    let flat = fixtures().join("v2.0.76-flat/7c1e4a52-0f3b-4d7e-9a61-2b8f5d0c9e13.jsonl");
    let imported = import_session(&flat, ImportOptions::default()).expect("imports");
    // The polling call (block: false) is not a wait; the blocking one is.
    assert_eq!(
        imported.yaml.matches("- wait: {for: ").count(),
        1,
        "{}",
        imported.yaml
    );
}
