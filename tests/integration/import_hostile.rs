//! `subsim import` on hostile and odd transcripts (issue #24 "Imported scenarios that
//! cannot load", issue #23 item 13): every import here must write a scenario that loads
//! (`import_session` parses its own output) or say, per call, what it dropped and why.
//! Each test is named after what broke.

use std::path::PathBuf;

use subsim_scenario::import::{fidelity, import_session, ImportOptions, Imported};

/// A transcript line: an Agent call by main at second `t`.
fn agent_call(uuid: &str, parent: &str, t: u32, id: &str, input: &str) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent},"timestamp":"2026-03-01T10:{:02}:{:02}.000Z","version":"2.1.17","sessionId":"s1","message":{{"id":"m-{uuid}","model":"claude-opus-4-5","content":[{{"type":"tool_use","id":"{id}","name":"Agent","input":{input}}}]}}}}"#,
        t / 60,
        t % 60
    )
}

/// Its result: `detail` is the line's `toolUseResult`.
fn agent_result(uuid: &str, parent: &str, t: u32, id: &str, detail: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"{uuid}","parentUuid":"{parent}","timestamp":"2026-03-01T10:{:02}:{:02}.000Z","sessionId":"s1","message":{{"content":[{{"type":"tool_result","tool_use_id":"{id}","content":"done"}}]}},"toolUseResult":{detail}}}"#,
        t / 60,
        t % 60
    )
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn import_lines(name: &str, lines: &[String]) -> Imported {
    import_with(name, lines, ImportOptions::default())
}

fn import_with(name: &str, lines: &[String], options: ImportOptions) -> Imported {
    let dir = Dir(std::env::temp_dir().join(format!(
        "subsim-import-hostile-{name}-{}",
        std::process::id()
    )));
    std::fs::create_dir_all(&dir.0).expect("temp dir");
    let path = dir.0.join("s1.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("transcript");
    import_session(&path, options).unwrap_or_else(|error| panic!("{name}: {error}"))
}

fn warned(imported: &Imported, text: &str) -> bool {
    imported
        .warnings
        .iter()
        .any(|warning| warning.contains(text))
}

#[test]
fn a_negative_total_duration_no_longer_moves_a_call_after_its_result() {
    let imported = import_lines(
        "negative",
        &[
            agent_call(
                "a",
                "null",
                10,
                "t1",
                r#"{"subagent_type":"Explore","description":"scan"}"#,
            ),
            agent_result(
                "b",
                "a",
                20,
                "t1",
                r#"{"status":"completed","totalDurationMs":-50000}"#,
            ),
        ],
    );
    assert!(
        warned(&imported, "totalDurationMs is -50000"),
        "{:?}",
        imported.warnings
    );
    // The call starts when it was written (10 s after the first line: zero), not 60 s
    // after its result.
    assert!(
        imported.yaml.contains("main:\n  # Agent call"),
        "{}",
        imported.yaml
    );
    let report = fidelity(&imported).expect("runs");
    assert_eq!(report.reproduced, report.observed, "{report}");
}

#[test]
fn a_total_duration_of_1e18_is_refused_not_an_importer_bug() {
    for total in ["1e18", "1000000000000000000"] {
        let imported = import_lines(
            "huge-total",
            &[
                agent_call(
                    "a",
                    "null",
                    10,
                    "t1",
                    r#"{"subagent_type":"Explore","description":"scan"}"#,
                ),
                agent_result(
                    "b",
                    "a",
                    20,
                    "t1",
                    &format!(r#"{{"status":"completed","totalDurationMs":{total}}}"#),
                ),
            ],
        );
        assert!(
            warned(&imported, "more than a year"),
            "{:?}",
            imported.warnings
        );
        assert!(imported.yaml.contains("- work: 10s"), "{}", imported.yaml);
    }
}

#[test]
fn a_usage_duration_of_1e308_is_not_read_as_1_ms() {
    let notification = r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-03-01T10:01:00.000Z","sessionId":"s1","content":"<task-notification>\n<task-id>x1</task-id>\n<tool-use-id>t1</tool-use-id>\n<status>completed</status>\n<usage>duration_ms: 1e308</usage>\n</task-notification>"}"#;
    let imported = import_lines(
        "usage-1e308",
        &[
            agent_call(
                "a",
                "null",
                0,
                "t1",
                r#"{"subagent_type":"Explore","description":"scan"}"#,
            ),
            agent_result(
                "b",
                "a",
                1,
                "t1",
                r#"{"status":"async_launched","agentId":"x1"}"#,
            ),
            notification.to_string(),
        ],
    );
    assert!(
        warned(&imported, "duration_ms is 1e308"),
        "{:?}",
        imported.warnings
    );
    assert!(!imported.yaml.contains("work: 0.001s"), "{}", imported.yaml);
    assert!(imported.yaml.contains("- work: 59s"), "{}", imported.yaml);
}

#[test]
fn a_garbage_version_is_ignored_with_a_warning_not_an_importer_bug() {
    let line = agent_call("a", "null", 0, "t1", r#"{"subagent_type":"Explore"}"#)
        .replace("\"2.1.17\"", "\"banana\\u202e\"");
    let imported = import_lines("version", &[line]);
    assert!(
        warned(&imported, "is not a version"),
        "{:?}",
        imported.warnings
    );
    assert!(
        !imported.yaml.contains("version: \"banana"),
        "{}",
        imported.yaml
    );
}

#[test]
fn a_long_subagent_type_is_replayed_as_general_purpose_not_a_key_over_1024_characters() {
    let long = "x".repeat(2_000);
    let imported = import_lines(
        "long-type",
        &[
            agent_call(
                "a",
                "null",
                0,
                "t1",
                &format!(r#"{{"subagent_type":"{long}","description":"d"}}"#),
            ),
            agent_result(
                "b",
                "a",
                5,
                "t1",
                r#"{"status":"completed","totalDurationMs":5000}"#,
            ),
        ],
    );
    assert!(
        warned(&imported, "2000 characters"),
        "{:?}",
        imported.warnings
    );
    assert!(
        !imported.yaml.contains(&long),
        "the long type is not written"
    );
}

#[test]
fn an_agent_call_without_subagent_type_is_a_general_purpose_spawn_not_dropped() {
    let imported = import_lines(
        "no-type",
        &[
            agent_call(
                "a",
                "null",
                0,
                "t1",
                r#"{"description":"look around","prompt":"p"}"#,
            ),
            agent_result(
                "b",
                "a",
                5,
                "t1",
                r#"{"status":"completed","totalDurationMs":5000}"#,
            ),
        ],
    );
    assert_eq!(
        imported.spawn_calls, 1,
        "SPAWN-3: no type is general-purpose"
    );
    assert!(
        imported.yaml.contains("(general-purpose, foreground)"),
        "{}",
        imported.yaml
    );
}

#[test]
fn a_call_named_a1_does_not_collide_with_agent_id_a1() {
    let imported = import_lines(
        "a1",
        &[
            agent_call(
                "a",
                "null",
                0,
                "t1",
                r#"{"subagent_type":"Explore","name":"a2"}"#,
            ),
            agent_result(
                "b",
                "a",
                5,
                "t1",
                r#"{"status":"completed","totalDurationMs":5000}"#,
            ),
            agent_call(
                "c",
                "\"b\"",
                6,
                "t2",
                r#"{"subagent_type":"Explore","name":"a1"}"#,
            ),
            agent_result(
                "d",
                "c",
                9,
                "t2",
                r#"{"status":"completed","totalDurationMs":3000}"#,
            ),
        ],
    );
    assert!(!imported.yaml.contains("name: \"a1\""), "{}", imported.yaml);
    assert!(!imported.yaml.contains("name: \"a2\""), "{}", imported.yaml);
    let report = fidelity(&imported).expect("runs");
    assert_eq!(report.reproduced, report.observed, "{report}");
}

#[test]
fn one_line_nested_200_deep_is_skipped_not_the_whole_import() {
    // Deep where the importer reads (a message's content) and where it does not.
    let deep_content = format!(
        r#"{{"type":"user","message":{{"content":[{}1{}]}}}}"#,
        "{\"content\":[".repeat(100),
        "]}".repeat(100)
    );
    let deep_elsewhere = format!(
        r#"{{"type":"progress","data":{}1{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let imported = import_lines(
        "deep",
        &[
            deep_content,
            deep_elsewhere,
            agent_call("a", "null", 0, "t1", r#"{"subagent_type":"Explore"}"#),
        ],
    );
    assert!(
        warned(&imported, "s1.jsonl:1: a line nested deeper"),
        "{:?}",
        imported.warnings
    );
    assert_eq!(imported.spawn_calls, 1);
}

#[test]
fn a_thirty_day_session_raises_max_time_instead_of_hitting_it() {
    let late = r#"{"type":"system","timestamp":"2026-04-05T10:00:00.000Z","sessionId":"s1"}"#;
    let imported = import_lines(
        "long-session",
        &[
            agent_call("a", "null", 0, "t1", r#"{"subagent_type":"Explore"}"#),
            late.to_string(),
        ],
    );
    assert!(
        warned(&imported, "past the simulator's 30-day"),
        "{:?}",
        imported.warnings
    );
    assert!(
        imported.yaml.contains("limits: {max_time: "),
        "{}",
        imported.yaml
    );
    let report = fidelity(&imported).expect("runs");
    assert_eq!(report.reproduced, report.observed, "{report}");
}

#[test]
fn a_transcript_with_no_agent_calls_warns_of_an_empty_replay() {
    let line =
        r#"{"type":"user","timestamp":"2026-03-01T10:00:00.000Z","message":{"content":"hi"}}"#;
    let imported = import_lines("empty", &[line.to_string()]);
    assert!(
        warned(&imported, "no Agent calls"),
        "{:?}",
        imported.warnings
    );
}

#[test]
fn a_foreground_call_of_a_fork_mode_version_reproduces_with_fork_mode_turned_off() {
    let lines = [
        agent_call(
            "a",
            "null",
            0,
            "t1",
            r#"{"subagent_type":"Explore","description":"scan"}"#,
        )
        .replace("2.1.17", "2.1.240"),
        agent_result(
            "b",
            "a",
            5,
            "t1",
            r#"{"status":"completed","totalDurationMs":5000}"#,
        ),
    ];
    let imported = import_lines("fork-off", &lines);
    assert!(
        imported
            .yaml
            .contains("env: {CLAUDE_CODE_FORK_SUBAGENT: \"0\"}"),
        "{}",
        imported.yaml
    );
    assert!(
        warned(&imported, "fork mode is on by default"),
        "{:?}",
        imported.warnings
    );
    let report = fidelity(&imported).expect("runs");
    assert_eq!(report.reproduced, report.observed, "{report}");
}

#[test]
fn a_persons_measured_answer_time_becomes_the_think_time_not_part_of_the_next_work() {
    let dir =
        Dir(std::env::temp_dir().join(format!("subsim-import-answer-{}", std::process::id())));
    let subagents = dir.0.join("s1/subagents");
    std::fs::create_dir_all(&subagents).expect("temp dir");
    let main = [
        agent_call(
            "a",
            "null",
            0,
            "t1",
            r#"{"subagent_type":"general-purpose","description":"fix it","prompt":"fix"}"#,
        ),
        agent_result(
            "b",
            "a",
            40,
            "t1",
            r#"{"status":"completed","totalDurationMs":40000,"agentId":"x1"}"#,
        ),
    ];
    std::fs::write(dir.0.join("s1.jsonl"), main.join("\n") + "\n").expect("main");
    let sub = [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-03-01T10:00:00.000Z","sessionId":"s1","agentId":"x1","message":{"content":"fix"}}"#,
        r#"{"type":"assistant","uuid":"u2","parentUuid":"u1","timestamp":"2026-03-01T10:00:02.000Z","sessionId":"s1","agentId":"x1","message":{"id":"m1","content":[{"type":"tool_use","id":"b1","name":"Bash","input":{"command":"rm -rf build"}}]}}"#,
        r#"{"type":"user","uuid":"u3","parentUuid":"u2","timestamp":"2026-03-01T10:00:14.000Z","sessionId":"s1","agentId":"x1","message":{"content":[{"type":"tool_result","tool_use_id":"b1","content":"The user doesn't want to proceed with this tool use.","is_error":true}]}}"#,
        r#"{"type":"assistant","uuid":"u4","parentUuid":"u3","timestamp":"2026-03-01T10:00:40.000Z","sessionId":"s1","agentId":"x1","message":{"id":"m2","content":[{"type":"text","text":"stopped"}]}}"#,
    ];
    std::fs::write(subagents.join("agent-x1.jsonl"), sub.join("\n") + "\n").expect("sub");
    let imported = import_session(&dir.0.join("s1.jsonl"), ImportOptions::default())
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        imported
            .yaml
            .contains("think: 12s   # the person's measured answer times: 12s"),
        "{}",
        imported.yaml
    );
    // After the answer (at 14 s) the run works until 40 s: 26 s, not 38 s.
    assert!(imported.yaml.contains("- work: 26s"), "{}", imported.yaml);
    let report = fidelity(&imported).expect("runs");
    assert_eq!(report.reproduced, report.observed, "{report}");
}

#[test]
fn a_5_mib_prompt_under_keep_text_is_cut_so_the_scenario_still_loads() {
    let prompt = "p".repeat(5 * 1024 * 1024);
    let imported = import_with(
        "big-prompt",
        &[
            agent_call(
                "a",
                "null",
                0,
                "t1",
                &format!(r#"{{"subagent_type":"Explore","prompt":"{prompt}"}}"#),
            ),
            agent_result(
                "b",
                "a",
                5,
                "t1",
                r#"{"status":"completed","totalDurationMs":5000}"#,
            ),
        ],
        ImportOptions { keep_text: true },
    );
    assert!(
        warned(
            &imported,
            "the prompt of the call at line 1 is 5242880 characters"
        ),
        "{:?}",
        imported.warnings
    );
    assert!(imported.yaml.len() < 100_000);
}

#[test]
fn ten_thousand_agent_calls_are_cut_to_what_loads_and_the_dropped_calls_are_named() {
    let mut lines = Vec::new();
    let mut parent = "null".to_string();
    for index in 0..10_000u32 {
        let call = format!("c{index}");
        let back = format!("r{index}");
        let id = format!("t{index}");
        lines.push(agent_call(
            &call,
            &parent,
            index % 3_000,
            &id,
            r#"{"subagent_type":"Explore","description":"scan"}"#,
        ));
        lines.push(agent_result(
            &back,
            &call,
            index % 3_000,
            &id,
            r#"{"status":"completed","totalDurationMs":1}"#,
        ));
        parent = format!("\"{back}\"");
    }
    let dir = Dir(std::env::temp_dir().join(format!("subsim-import-10k-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("temp dir");
    let path = dir.0.join("s1.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("transcript");
    // The scenario loads (import_session parses it): the replay stops where it must,
    // and the warning says how many calls it dropped and from which lines.
    let imported =
        import_session(&path, ImportOptions::default()).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        warned(&imported, "the replay stops before line"),
        "{:?}",
        imported.warnings
    );
    assert!(imported.spawn_calls < 10_000 && imported.spawn_calls > 1_000);
    assert!(
        warned(
            &imported,
            &format!(
                "dropped: {} of 10000 Agent calls",
                10_000 - imported.spawn_calls
            )
        ),
        "{:?}",
        imported.warnings
    );
}

#[test]
fn a_transcript_saved_with_a_byte_order_mark_no_longer_is_not_json() {
    // It was refused as "s1.jsonl:1:1: this line is not JSON": it is read through the
    // shared bounded reader, which drops the mark, like every other input.
    let call = agent_call(
        "a",
        "null",
        10,
        "t1",
        r#"{"subagent_type":"Explore","description":"scan"}"#,
    );
    let result = agent_result("b", "a", 20, "t1", r#"{"status":"completed"}"#);
    let imported = import_lines("bom", &[format!("\u{feff}{call}"), result]);
    assert_eq!(imported.spawn_calls, 1, "{}", imported.yaml);
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
}
