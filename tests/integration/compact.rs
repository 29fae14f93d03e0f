//! `--format jsonl --compact` (issue #8 item 8): a faithful encoding of the full trace.
//! Expanding it by the documented rule — carry each `agent_started` list (`tools`,
//! `context`, `mcp_servers`) forward into the lines that lack it, drop the first line's
//! `compact_lists` marker — gives back exactly the full form, and the full form is what the
//! default writer writes.

use serde_json::Value;
use subsim_engine::render::JsonlWriter;
use subsim_engine::Simulation;
use subsim_tests::{repo_root, scenario_files};

/// The list fields the compact form may leave out.
const LISTS: [&str; 3] = ["tools", "context", "mcp_servers"];

/// The default and the compact trace of one scenario.
fn both(path: &std::path::Path) -> Option<(String, String)> {
    let loaded = subsim_scenario::load_scenario(path).ok()?;
    let mut full = JsonlWriter::new(Vec::new());
    Simulation::new(loaded.spec.clone()).run(&mut full);
    let mut compact = JsonlWriter::compact(Vec::new());
    Simulation::new(loaded.spec).run(&mut compact);
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8");
    Some((
        text(full.finish().expect("written")),
        text(compact.finish().expect("written")),
    ))
}

/// The compact trace expanded by the documented rule, one JSON value per line; also how
/// many list fields it had to restore.
fn expand(compact: &str) -> (Vec<Value>, usize) {
    let mut last: Vec<Option<Value>> = vec![None; LISTS.len()];
    let mut restored = 0;
    let mut lines = Vec::new();
    for (number, line) in compact.lines().enumerate() {
        let mut value: Value = serde_json::from_str(line).expect("each line is JSON");
        let object = value.as_object_mut().expect("each line is an object");
        if number == 0 {
            assert_eq!(
                object.remove("compact_lists"),
                Some(Value::Bool(true)),
                "the first line is marked"
            );
        }
        assert!(!object.contains_key("compact_lists"), "only the first line");
        if object.get("kind").and_then(Value::as_str) == Some("agent_started") {
            for (field, last) in LISTS.iter().zip(&mut last) {
                match object.get(*field) {
                    Some(list) => *last = Some(list.clone()),
                    None => {
                        let list = last.clone().expect("a list left out was written before");
                        object.insert((*field).to_string(), list);
                        restored += 1;
                    }
                }
            }
        }
        lines.push(value);
    }
    (lines, restored)
}

#[test]
fn expanding_the_compact_trace_gives_the_full_one() {
    let mut checked = 0;
    let mut restored = 0;
    // The long load runs are left to the next test (one of them is enough there).
    let files = scenario_files(&repo_root().join("scenarios"));
    for path in files
        .iter()
        .filter(|path| !path.starts_with(repo_root().join("scenarios/load")))
    {
        let Some((full, compact)) = both(path) else {
            continue;
        };
        let full_lines: Vec<Value> = full
            .lines()
            .map(|line| serde_json::from_str(line).expect("JSON"))
            .collect();
        let (expanded, count) = expand(&compact);
        assert_eq!(expanded, full_lines, "{}", path.display());
        // A line that left nothing out is the full line, byte for byte (the marker aside).
        for (number, (full_line, compact_line)) in full.lines().zip(compact.lines()).enumerate() {
            let without_marker = compact_line.replacen(",\"compact_lists\":true", "", 1);
            let line = if number == 0 {
                &without_marker
            } else {
                compact_line
            };
            if line.len() == full_line.len() {
                assert_eq!(line, full_line, "{} line {}", path.display(), number + 1);
            } else {
                assert!(line.len() < full_line.len(), "{}", path.display());
            }
        }
        checked += 1;
        restored += count;
    }
    assert!(checked > 100, "only {checked} scenarios ran");
    assert!(restored > 0, "no scenario repeated a list");
}

#[test]
fn the_compact_form_of_a_load_run_is_smaller_and_the_default_keeps_every_list() {
    let path = repo_root().join("scenarios/load/erlang-b-20-erlangs.yaml");
    let (full, compact) = both(&path).expect("runs");
    let starts = full
        .lines()
        .filter(|line| line.contains("\"kind\":\"agent_started\""))
        .count();
    assert!(starts > 1000);
    for field in LISTS {
        let key = format!("\"{field}\":[");
        assert_eq!(full.matches(&key).count(), starts, "{field}");
        // One agent type, one profile: the compact form writes each list once.
        assert_eq!(compact.matches(&key).count(), 1, "{field}");
    }
    assert!(compact.len() < full.len());
}
