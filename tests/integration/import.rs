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
        // `departed/` holds sessions derived to depart from the documented behaviour:
        // tested below, each for its one departure.
        if !folder.path().is_dir() || folder.file_name() == "departed" {
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
            // Issue #34: every shipped fixture did what the documentation says.
            assert!(fidelity.reproduced(), "{shown}: {fidelity}");
            assert!(
                fidelity.to_string().ends_with("\nreproduced\n"),
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

#[test]
fn a_report_names_each_fact_the_replay_misses() {
    // The same session under 2.1.100, where only main may spawn (before 2.1.172: the
    // lead's nested spawn is refused) and an API error is reported as findings, not as a
    // failure (before 2.1.199, ERR-2): the report says which facts that breaks.
    let session = fixtures().join("v2.1.200-edge-cases/e7f6a5b4-c3d2-4e1f-8a9b-0c1d2e3f4a5b.jsonl");
    let mut imported = import_session(&session, ImportOptions::default()).expect("imports");
    imported.yaml = imported
        .yaml
        .replace("version: \"2.1.200\"", "version: \"2.1.100\"");
    let report = fidelity(&imported).expect("loads");
    assert_eq!((report.reproduced, report.observed), (8, 11), "{report}");
    let text = report.to_string();
    assert!(
        text.starts_with("8 of 11 observed facts reproduced\n"),
        "{text}"
    );
    assert!(text.contains("mismatch: fact 3: Agent call benchmark-the-old-code (general-purpose) failed in the background: expected benchmark-the-old-code ends failed, got benchmark-the-old-code: completed"), "{text}");
    assert!(
        text.contains(
            "mismatch: fact 6: Agent call find-call-sites (Explore) ran in the foreground"
        ),
        "{text}"
    );
    assert!(
        text.contains("mismatch: fact 7: Agent call find-call-sites (Explore) completed"),
        "{text}"
    );
}

mod damaged {
    //! Damaged transcripts (lines dropped, repeated, reordered, cut, garbage in between)
    //! never panic the importer: it writes a scenario that loads, or says the file is not
    //! a transcript.
    use proptest::prelude::*;

    use super::*;
    use subsim_scenario::import::ImportError;

    fn lines() -> Vec<String> {
        let main = fixtures().join("v2.1.17-nested/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl");
        std::fs::read_to_string(main)
            .expect("fixture")
            .lines()
            .map(str::to_string)
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn damaged_transcripts_never_panic(
            picks in proptest::collection::vec(0usize..64, 0..24),
            cut in proptest::option::of((0usize..64, 0usize..4000)),
            garbage in proptest::option::of(0usize..24),
        ) {
            let source = lines();
            let mut chosen: Vec<String> = picks.iter().map(|&i| source[i % source.len()].clone()).collect();
            if let (Some((line, at)), false) = (cut, chosen.is_empty()) {
                let index = line % chosen.len();
                let text = &chosen[index];
                let at = text.char_indices().map(|(i, _)| i).nth(at % text.chars().count().max(1)).unwrap_or(0);
                chosen[index] = text[..at].to_string();
            }
            if let (Some(at), false) = (garbage, chosen.is_empty()) {
                chosen.insert(at % chosen.len(), "{\"type\": 7, \"uuid\": [1, 2]}".to_string());
            }
            let dir = std::env::temp_dir().join(format!("subsim-import-prop-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            let path = dir.join("session.jsonl");
            std::fs::write(&path, chosen.join("\n")).expect("write");
            match import_session(&path, ImportOptions::default()) {
                Ok(imported) => {
                    let report = fidelity(&imported).expect("an import always loads");
                    prop_assert!(report.reproduced <= report.observed);
                }
                Err(ImportError::Internal { message }) => {
                    prop_assert!(false, "the import wrote a scenario that does not load: {message}");
                }
                Err(_) => {}
            }
        }
    }
}

#[test]
fn a_print_mode_session_is_imported_as_headless() {
    let dir = std::env::temp_dir().join(format!("subsim-import-headless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("0f0e0d0c-0000-4000-8000-000000000001.jsonl");
    let lines = [
        r#"{"parentUuid":null,"type":"user","entrypoint":"sdk-cli","sessionId":"s","version":"2.1.90","message":{"role":"user","content":"go"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"parentUuid":"u1","type":"assistant","entrypoint":"sdk-cli","sessionId":"s","version":"2.1.90","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Agent","input":{"description":"Quick look","prompt":"look","subagent_type":"Explore"}}]},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
        r#"{"parentUuid":"a1","type":"user","entrypoint":"sdk-cli","sessionId":"s","version":"2.1.90","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]},"toolUseResult":{"status":"completed","agentId":"x1","totalDurationMs":4000},"uuid":"r1","timestamp":"2026-01-01T00:00:05.000Z"}"#,
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let imported = import_session(&path, ImportOptions::default()).expect("imports");
    assert!(
        imported.yaml.contains("\n  kind: headless"),
        "{}",
        imported.yaml
    );
    assert!(
        imported.yaml.contains("        - work: 4s\n"),
        "{}",
        imported.yaml
    );
    let report = fidelity(&imported).expect("loads");
    assert_eq!(report.reproduced, report.observed, "{report}");
    // Without a version the scenario runs under the default, and the importer says so.
    let unversioned: Vec<String> = lines
        .iter()
        .map(|line| line.replace(r#""version":"2.1.90","#, ""))
        .collect();
    std::fs::write(&path, unversioned.join("\n")).expect("write");
    let imported = import_session(&path, ImportOptions::default()).expect("imports");
    assert!(
        imported
            .warnings
            .iter()
            .any(|warning| warning.contains("names no version")),
        "{:?}",
        imported.warnings
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_subagent_without_an_agent_id_is_found_by_its_prompt_or_its_meta_file() {
    // The interrupted call's result carries no agentId: its transcript is found by its
    // task prompt; with the prompt changed, by the type and description of its meta file.
    let source = fixtures().join("v2.1.17-nested");
    let dir = std::env::temp_dir().join(format!("subsim-import-meta-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let session = "b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e";
    let subagents = dir.join(session).join("subagents");
    std::fs::create_dir_all(&subagents).expect("temp dir");
    std::fs::copy(
        source.join(format!("{session}.jsonl")),
        dir.join(format!("{session}.jsonl")),
    )
    .expect("copy");
    for entry in std::fs::read_dir(source.join(session).join("subagents"))
        .expect("fixture")
        .flatten()
    {
        let text = std::fs::read_to_string(entry.path()).expect("read");
        let text = text.replace(
            "Apply migration 0042 to the dev database.",
            "(a prompt the call did not write)",
        );
        std::fs::write(subagents.join(entry.file_name()), text).expect("write");
    }
    let imported = import_session(
        &dir.join(format!("{session}.jsonl")),
        ImportOptions::default(),
    )
    .expect("imports");
    assert_eq!(imported.subagent_files.len(), 4, "{:?}", imported.warnings);
    assert!(imported.yaml.contains("      name: \"apply-the-migration\"\n      background: false\n      behavior:\n        - work: 2.800s\n        - tool: {name: \"Bash\", duration: 26s, prompt: false}\n"), "{}", imported.yaml);
    // Without the meta file nothing links it: it is replayed from its result alone.
    std::fs::remove_file(subagents.join("agent-7d6c5b4a.meta.json")).expect("remove");
    let imported = import_session(
        &dir.join(format!("{session}.jsonl")),
        ImportOptions::default(),
    )
    .expect("imports");
    assert_eq!(imported.subagent_files.len(), 3);
    assert!(
        imported.warnings.iter().any(|warning| warning
            .contains("agent-7d6c5b4a.jsonl: no Agent call of the session launched this subagent")),
        "{:?}",
        imported.warnings
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue #34: each transcript of `tests/fixtures/import/departed/` was derived from a
/// shipped fixture to depart from the documented behaviour in one way; the report names
/// exactly that departure (its run, rule and lines) and no other, and the imported
/// scenario's own `expect:` block fails on it.
#[test]
fn each_departed_fixture_reports_exactly_its_one_departure() {
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "notification-removed/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl",
            "run-the-migration-tests: the model expected its completion notification to main (NOTIFY-3) at 00:01:21.500; the transcript shows none (",
            &["b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl:13-14)"],
        ),
        (
            "notification-misdelivered/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl",
            "run-the-migration-tests: the model expected its completion notification to main (NOTIFY-3) at 00:01:21.500; the transcript shows none there; it came to ",
            &["agent-7d6c5b4a.jsonl:4 (", "b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl:13-14)"],
        ),
        (
            "result-missing/e7f6a5b4-c3d2-4e1f-8a9b-0c1d2e3f4a5b.jsonl",
            "find-call-sites: the model expected its result to lead (NOTIFY-2) at 00:00:29.900; the transcript shows none (",
            &["agent-d1d2d3d4.jsonl:3-5)"],
        ),
        (
            "over-the-cap/d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl",
            "researcher-21: the model expected the call refused: concurrent_limit (CAP-1) at 00:00:04.500; the transcript shows it was launched in the background (",
            &["d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl:46)"],
        ),
        (
            "foreground-as-notification/7c1e4a52-0f3b-4d7e-9a61-2b8f5d0c9e13.jsonl",
            "run-the-slow-test: the model expected it to run in the foreground (FGBG-1) at 00:00:49.850; the transcript shows it was launched in the background (",
            &["7c1e4a52-0f3b-4d7e-9a61-2b8f5d0c9e13.jsonl:9)"],
        ),
        (
            "prompt-auto-denied/d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl",
            "researcher: the model expected a permission prompt for its Bash call, shown in the main session (PERM-4) at 00:00:06.700; the transcript shows it auto-denied, no prompt shown (",
            &["agent-f0e1d2c3.jsonl:2-3)"],
        ),
    ];
    let folders: Vec<String> = std::fs::read_dir(fixtures().join("departed"))
        .expect("departed fixtures")
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        folders.len(),
        cases.len(),
        "one case per folder: {folders:?}"
    );
    for (path, starts, ends) in cases {
        let main = fixtures().join("departed").join(path);
        let imported = import_session(&main, ImportOptions::default())
            .unwrap_or_else(|error| panic!("{path}: {error}"));
        let report = fidelity(&imported).unwrap_or_else(|problems| panic!("{problems}"));
        assert!(!report.reproduced(), "{path}: {report}");
        assert_eq!(report.departures.len(), 1, "{path}: {report}");
        let departure = &report.departures[0];
        assert!(departure.starts_with(starts), "{path}: {departure}");
        for end in ends {
            assert!(departure.contains(end), "{path}: `{end}` in {departure}");
        }
        let text = report.to_string();
        assert!(
            text.contains("\ndeparted from the documented behaviour at 1 point:\n  1. "),
            "{path}: {text}"
        );
        // Privacy defaults hold for the derived sessions too.
        assert!(!imported.yaml.contains("ghp_"), "{path}");
        assert!(!imported.yaml.contains("jane.doe@"), "{path}");
    }
}

/// Issue #34: a session cut off while a run was still working is not a departure: the
/// notification-removed session, cut before the test runner wrote its report.
#[test]
fn a_run_still_working_when_the_transcript_ends_is_not_a_departure() {
    let from = fixtures().join("departed/notification-removed");
    let dir = std::env::temp_dir().join(format!("subsim-cut-off-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&from, &dir);
    // The test runner's last line (its report) was never written.
    let sub = dir.join("b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e/subagents/agent-0a9b8c7d.jsonl");
    let text = std::fs::read_to_string(&sub).expect("sub");
    let kept: Vec<&str> = text.lines().filter(|line| !line.is_empty()).collect();
    std::fs::write(&sub, kept[..kept.len() - 1].join("\n") + "\n").expect("write");
    let imported = import_session(
        &dir.join("b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl"),
        ImportOptions::default(),
    )
    .expect("imports");
    let report = fidelity(&imported).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.reproduced(), "{report}");
}

/// Issue #34: a departure is never reported from a line the reader skipped: with a
/// garbled line of the shape the reader skips where the missing notification should be,
/// the notification-removed session says "reproduced" and counts the line.
#[test]
fn a_skipped_line_where_the_fact_should_be_is_no_departure() {
    let from = fixtures().join("departed/notification-removed");
    let dir = std::env::temp_dir().join(format!("subsim-skipped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&from, &dir);
    let main = dir.join("b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl");
    let text = std::fs::read_to_string(&main).expect("main");
    let mut lines: Vec<&str> = text.split('\n').collect();
    // Valid JSON of an unexpected shape (a field given twice): skipped with a warning.
    lines.insert(12, r#"{"type":"user","type":"user"}"#);
    std::fs::write(&main, lines.join("\n")).expect("write");
    let imported = import_session(&main, ImportOptions::default()).expect("imports");
    let report = fidelity(&imported).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.reproduced(), "{report}");
    assert_eq!(report.unreadable_lines, 2, "{report}"); // it, and the cut-off last line
    assert!(
        report
            .to_string()
            .contains("2 transcript lines could not be read and were skipped"),
        "{report}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for entry in std::fs::read_dir(from).expect("read").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A copy of the fixture folder `from` in a fresh temporary folder `name`, with each
/// `(file, old, new)` edit made (every occurrence of `old` in that file).
fn derived(from: &str, name: &str, edits: &[(&str, &str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("subsim-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&fixtures().join(from), &dir);
    for (file, old, new) in edits {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).expect("fixture file");
        assert!(text.contains(old), "{file}: `{old}`");
        std::fs::write(&path, text.replace(old, new)).expect("write");
    }
    dir
}

const V2_1_90_MAIN: &str = "d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl";
const V2_1_90_RESEARCHER: &str =
    "d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9/subagents/agent-f0e1d2c3.jsonl";
const AUTO_DENIED: &str = "Permission to use Bash has been auto-denied (prompts unavailable).";

/// Issue #34: the other direction of a person's denial. In 2.1.90 a background subagent
/// could not ask (PERM-5): a prompt its Bash call showed the person, who denied it, is a
/// departure where the model auto-denies; its `none:` entry names the lines.
#[test]
fn a_prompt_answered_where_the_rules_auto_deny_is_a_departure() {
    let dir = derived(
        "v2.1.90-agent",
        "person-denied",
        &[(
            V2_1_90_RESEARCHER,
            AUTO_DENIED,
            "The user doesn't want to proceed with this tool use.",
        )],
    );
    let imported =
        import_session(&dir.join(V2_1_90_MAIN), ImportOptions::default()).expect("imports");
    let report = fidelity(&imported).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        imported.yaml.contains(
            "  # 3: researcher's Bash call: no auto-denial (agent-f0e1d2c3.jsonl:2-3)\n  - none: \
             {kind: permission_requested, agent: \"researcher\", tool: \"Bash\", auto_denied: true}\n"
        ),
        "{}",
        imported.yaml
    );
    assert_eq!(report.departures.len(), 1, "{report}");
    let departure = &report.departures[0];
    assert!(
        departure.starts_with(
            "researcher: the model expected its Bash call auto-denied, no prompt shown (PERM-5) \
             at 00:00:06.700; the transcript shows a prompt the person answered: denied ("
        ),
        "{departure}"
    );
    assert!(
        departure.ends_with("agent-f0e1d2c3.jsonl:2-3)"),
        "{departure}"
    );
}

/// Issue #34: `dontAsk` denials (PERM-9). In a session whose recorded mode is `dontAsk`
/// the denied call is replayed with no `prompt:`, so the mode decides: a Bash call it
/// denies is reproduced; a Glob call it lets run is a departure (a denial where the rules
/// allow). In a session recorded in another mode the denial is replayed as a call that ran,
/// with a warning, and nothing is expected of it.
#[test]
fn dont_ask_denials_are_compared_both_ways_in_a_dont_ask_session() {
    let dont_ask = "Permission to use Bash has been denied because Claude Code is running in \
                    don't ask mode.";
    let mode = (
        V2_1_90_MAIN,
        "\"permissionMode\":\"default\"",
        "\"permissionMode\":\"dontAsk\"",
    );
    let denied = (V2_1_90_RESEARCHER, AUTO_DENIED, dont_ask);
    let dir = derived("v2.1.90-agent", "dont-ask", &[mode, denied]);
    let imported =
        import_session(&dir.join(V2_1_90_MAIN), ImportOptions::default()).expect("imports");
    let report = fidelity(&imported).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.reproduced(), "{report}\n{}", imported.yaml);
    assert!(
        imported.yaml.contains("        - tool: {name: \"Bash\"}\n"),
        "{}",
        imported.yaml
    );
    assert!(
        imported.yaml.contains(
            "  - event: {kind: tool_called, agent: \"researcher\", tool: \"Bash\", allowed: false, \
             reason: denied}\n"
        ),
        "{}",
        imported.yaml
    );

    let glob = (V2_1_90_RESEARCHER, "\"name\":\"Bash\"", "\"name\":\"Glob\"");
    let glob_denied = (V2_1_90_RESEARCHER, "use Bash has", "use Glob has");
    let dir = derived(
        "v2.1.90-agent",
        "dont-ask-glob",
        &[mode, denied, glob, glob_denied],
    );
    let imported =
        import_session(&dir.join(V2_1_90_MAIN), ImportOptions::default()).expect("imports");
    let report = fidelity(&imported).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(report.departures.len(), 1, "{report}");
    let departure = &report.departures[0];
    assert!(
        departure.starts_with("researcher: the model expected its Glob call to run (PERM-9) at "),
        "{departure}"
    );
    assert!(
        departure.contains("; the transcript shows it denied in dontAsk mode ("),
        "{departure}"
    );
    assert!(
        departure.ends_with("agent-f0e1d2c3.jsonl:2-3)"),
        "{departure}"
    );

    // The same denial in a session recorded in the default mode: the mode changed.
    let dir = derived("v2.1.90-agent", "dont-ask-changed", &[denied]);
    let imported =
        import_session(&dir.join(V2_1_90_MAIN), ImportOptions::default()).expect("imports");
    let report = fidelity(&imported).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.reproduced(), "{report}");
    assert!(
        imported.warnings.iter().any(|warning| warning.contains(
            "agent-f0e1d2c3.jsonl:3: a Bash call denied in \
                dontAsk mode, but the session's recorded mode is default; replayed as a call \
                that ran"
        )),
        "{:?}",
        imported.warnings
    );
}

/// Issue #34: a subagent transcript cut off between a tool call and its result says
/// nothing about that call's permission: the prompt-auto-denied session cut after the
/// researcher's Bash call (before its auto-denial) is no departure.
#[test]
fn a_call_whose_result_was_never_written_is_no_permission_departure() {
    let dir = derived("departed/prompt-auto-denied", "cut-before-denial", &[]);
    let sub = dir.join(V2_1_90_RESEARCHER);
    let text = std::fs::read_to_string(&sub).expect("sub");
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&sub, kept.join("\n") + "\n").expect("write");
    let imported =
        import_session(&dir.join(V2_1_90_MAIN), ImportOptions::default()).expect("imports");
    let report = fidelity(&imported).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.reproduced(), "{report}");
    assert!(
        !imported.yaml.contains("permission_requested"),
        "{}",
        imported.yaml
    );
}
