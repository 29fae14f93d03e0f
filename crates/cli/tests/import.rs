//! End-to-end runs of `subsim import`: the exit codes and outputs the issue's interface
//! names (a scenario written → 0, not a transcript → 2, `--report`'s count line).

use crate::support::{subsim, BINARY};
use std::path::PathBuf;
use std::process::Command;

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

/// The fenced blocks of a Markdown text: (info string, body lines).
fn fenced_blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) => current = Some((info.trim().to_string(), Vec::new())),
            (Some(_), Some(_)) => blocks.extend(current.take()),
            (Some((_, body)), None) => body.push(line.to_string()),
            (None, None) => {}
        }
    }
    blocks
}

/// Whether `expected` (a doc excerpt: `…` alone skips lines, `…` inside a line stands for
/// any text) appears in `actual` in order.
fn excerpt_matches(expected: &[String], actual: &str) -> Result<(), String> {
    let lines: Vec<&str> = actual.lines().collect();
    let mut at = 0;
    for wanted in expected {
        let wanted = wanted.trim_end();
        if wanted.trim() == "…" || wanted.is_empty() {
            continue;
        }
        let (head, tail) = wanted.split_once('…').unwrap_or((wanted, ""));
        let found = lines[at..].iter().position(|line| {
            if wanted.contains('…') {
                line.starts_with(head)
                    && line.ends_with(tail)
                    && line.len() >= head.len() + tail.len()
            } else {
                *line == wanted
            }
        });
        match found {
            Some(offset) => at += offset + 1,
            None => return Err(format!("`{wanted}` not found (in order) in:\n{actual}")),
        }
    }
    Ok(())
}

/// docs/replay-a-session.md runs as written (issue #23 item 12): every `sh` block's last
/// command, run in a folder with the fixture as the doc's transcript, prints what the
/// block after it shows; the scenario excerpt is in the imported scenario; every JSON
/// line it shows is JSON.
#[test]
fn the_replay_doc_runs_as_written() {
    let doc_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/replay-a-session.md");
    let doc = std::fs::read_to_string(&doc_path).expect("the replay doc");
    let dir = temp("replay-doc");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let session = fixture("v2.1.17-nested/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl");
    let blocks = fenced_blocks(&doc);
    let mut ran = 0;
    for (index, (info, body)) in blocks.iter().enumerate() {
        if info == "json" {
            for line in body {
                serde_json::from_str::<serde_json::Value>(line)
                    .unwrap_or_else(|error| panic!("doc JSON line {line}: {error}"));
            }
        }
        if info != "sh" {
            continue;
        }
        let Some((next_info, expected)) = blocks.get(index + 1) else {
            continue;
        };
        if !next_info.is_empty() {
            continue;
        }
        let joined = body.join("\n").replace("\\\n", " ");
        let Some(command) = joined.lines().rfind(|line| line.starts_with("subsim ")) else {
            continue;
        };
        let command = command.split(" # ").next().unwrap_or(command).replace(
            "~/.claude/projects/-home-me-shop/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl",
            &session,
        );
        // A fixture named from the repository's root (the departed sessions).
        let command = command.replace(" tests/fixtures/import/", &format!(" {}", fixture("")));
        let command = format!("{BINARY}{}", &command["subsim".len()..]);
        let output = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env("COLUMNS", "400")
            .env_remove("RUST_LOG")
            .output()
            .expect("sh runs");
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        )
        .replace(&session, "…/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl")
        .replace(&fixture(""), "tests/fixtures/import/");
        excerpt_matches(expected, &printed)
            .unwrap_or_else(|problem| panic!("docs/replay-a-session.md, `{command}`: {problem}"));
        ran += 1;
    }
    assert!(ran >= 5, "the doc's commands were found ({ran})");
    let scenario = std::fs::read_to_string(dir.join("session.yaml")).expect("imported");
    let excerpts: Vec<&Vec<String>> = blocks
        .iter()
        .filter(|(info, body)| {
            info == "yaml"
                && body
                    .first()
                    .is_some_and(|l| l == "session:" || l == "expect:")
        })
        .map(|(_, body)| body)
        .collect();
    // The first two: the scenario's start and its expect block (a later one is an edit).
    assert!(excerpts.len() >= 2, "the scenario and expect excerpts");
    for excerpt in excerpts.into_iter().take(2) {
        excerpt_matches(excerpt, &scenario)
            .unwrap_or_else(|problem| panic!("docs/replay-a-session.md excerpt: {problem}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue #23 item 9: on an imported session, `diff`'s excerpts widened their name column
/// line by line as long names appeared (to 26 columns), so lines of one excerpt did not
/// line up. The column is now one width for the whole comparison, at most 20: a longer
/// name overflows its own line only.
#[test]
fn diff_keeps_one_name_column_of_at_most_20_on_an_imported_session() {
    let session = fixture("v2.1.200-edge-cases/e7f6a5b4-c3d2-4e1f-8a9b-0c1d2e3f4a5b.jsonl");
    let out = temp("edge-diff.yaml");
    let imported = subsim(&["import", &session, "--out", out.to_str().unwrap()]);
    assert_eq!(imported.status.code(), Some(0), "{imported:?}");
    let output = subsim(&[
        "diff",
        out.to_str().unwrap(),
        "--from",
        "2.1.17",
        "--to",
        "2.1.292",
    ]);
    let _ = std::fs::remove_file(&out);
    let text = String::from_utf8_lossy(&output.stdout);
    let mut starts = std::collections::BTreeSet::new();
    let mut long = 0;
    for line in text.lines() {
        let Some(rest) = line
            .strip_prefix("    > ")
            .or_else(|| line.strip_prefix("      "))
        else {
            continue;
        };
        let Some(narrated) = rest
            .get(14..)
            .filter(|_| rest.as_bytes().get(2) == Some(&b':'))
        else {
            continue;
        };
        let name = narrated.split("  ").next().unwrap();
        if name.chars().count() > 20 {
            long += 1;
            continue;
        }
        let after = &narrated[name.len()..];
        starts.insert(name.len() + after.len() - after.trim_start().len());
    }
    assert!(long > 0, "the fixture has a name longer than 20:\n{text}");
    assert_eq!(starts.len(), 1, "{starts:?}\n{text}");
    assert!(
        starts.iter().all(|start| *start <= 22),
        "{starts:?}\n{text}"
    );
}

/// Issue #34: a session that departed from the documented behaviour exits 1 under
/// `--report` (reproduced 0, not a transcript 2), its report ends with the departure, and
/// `check` fails on the imported scenario the same way: the expectation is a `none:` entry
/// whose comment names the transcript lines.
#[test]
fn a_departed_session_exits_1_and_its_scenario_fails_check() {
    let session =
        fixture("departed/notification-removed/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl");
    let out = temp("departed.yaml");
    let output = subsim(&[
        "import",
        &session,
        "--out",
        out.to_str().unwrap(),
        "--report",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "departed from the documented behaviour at 1 point:\n  1. run-the-migration-tests: \
             the model expected its completion notification to main (NOTIFY-3) at \
             00:01:21.500; the transcript shows none ("
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl:13-14)\n"),
        "{stdout}"
    );
    let scenario = std::fs::read_to_string(&out).expect("written");
    assert!(
        scenario.contains(
            "(b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl:13-14)\n  - none: {kind: notification, \
             from: \"run-the-migration-tests\", to: \"main\"}\n"
        ),
        "{scenario}"
    );
    let checked = subsim(&["check", out.to_str().unwrap()]);
    let _ = std::fs::remove_file(&out);
    let printed = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(1), "{printed}");
    assert!(printed.contains("FAIL"), "{printed}");
    assert!(
        printed.contains("no event matching {kind: \"notification\", from: \"run-the-migration-tests\", to: \"main\"}"),
        "{printed}"
    );
}

/// Issue #34: a permission departure (a background subagent's Bash call auto-denied in a
/// 2.1.200 session, where PERM-4 shows its prompt in the main session) exits 1, and `check`
/// fails on the imported scenario's `none:` entry, whose comment names the subagent's lines.
#[test]
fn a_permission_departure_exits_1_and_its_scenario_fails_check() {
    let session = fixture("departed/prompt-auto-denied/d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl");
    let out = temp("permission.yaml");
    let output = subsim(&[
        "import",
        &session,
        "--out",
        out.to_str().unwrap(),
        "--report",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "departed from the documented behaviour at 1 point:\n  1. researcher: the model \
             expected a permission prompt for its Bash call, shown in the main session (PERM-4) \
             at 00:00:06.700; the transcript shows it auto-denied, no prompt shown ("
        ),
        "{stdout}"
    );
    assert!(stdout.ends_with("agent-f0e1d2c3.jsonl:2-3)\n"), "{stdout}");
    let scenario = std::fs::read_to_string(&out).expect("written");
    assert!(
        scenario.contains(
            "  # 3: researcher's Bash call: no prompt shown (agent-f0e1d2c3.jsonl:2-3)\n  - none: \
             {kind: permission_requested, agent: \"researcher\", tool: \"Bash\", auto_denied: \
             false}\n"
        ),
        "{scenario}"
    );
    let checked = subsim(&["check", out.to_str().unwrap()]);
    let _ = std::fs::remove_file(&out);
    let printed = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(1), "{printed}");
    assert!(
        printed.contains("no event matching {kind: \"permission_requested\", agent: \"researcher\", tool: \"Bash\",")
            && printed.contains("rule=PERM-4"),
        "{printed}"
    );
}

/// Issue #34: every shipped fixture that did not depart still says "reproduced" (exit 0).
#[test]
fn every_shipped_fixture_says_reproduced() {
    for session in [
        "v2.0.76-flat/7c1e4a52-0f3b-4d7e-9a61-2b8f5d0c9e13.jsonl",
        "v2.1.17-nested/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl",
        "v2.1.90-agent/d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl",
        "v2.1.200-edge-cases/e7f6a5b4-c3d2-4e1f-8a9b-0c1d2e3f4a5b.jsonl",
    ] {
        let out = temp("shipped.yaml");
        let output = subsim(&[
            "import",
            &fixture(session),
            "--out",
            out.to_str().unwrap(),
            "--report",
        ]);
        let _ = std::fs::remove_file(&out);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{session}: {stdout}");
        assert!(stdout.ends_with("\nreproduced\n"), "{session}: {stdout}");
    }
}

/// Issue #34 item 4: the HTML report of an imported session marks each departure on its
/// run's row of the timeline, with its rule; a session that reproduced has no mark.
#[test]
fn the_report_marks_each_departure_with_its_rule() {
    for (session, rule) in [
        (
            "departed/notification-removed/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl",
            Some("NOTIFY-3"),
        ),
        (
            "departed/over-the-cap/d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl",
            Some("CAP-1"),
        ),
        (
            "departed/foreground-as-notification/7c1e4a52-0f3b-4d7e-9a61-2b8f5d0c9e13.jsonl",
            Some("FGBG-1"),
        ),
        (
            "departed/prompt-auto-denied/d4c3b2a1-9e8f-4a7b-b6c5-d4e3f2a1b0c9.jsonl",
            Some("PERM-4"),
        ),
        (
            "v2.1.17-nested/b5e0d1c2-3a4f-4b6c-8d7e-0f1a2b3c4d5e.jsonl",
            None,
        ),
    ] {
        let scenario = temp("marked.yaml");
        let page = temp("marked.html");
        let imported = subsim(&[
            "import",
            &fixture(session),
            "--out",
            scenario.to_str().unwrap(),
        ]);
        assert_eq!(imported.status.code(), Some(0), "{session}");
        let reported = subsim(&[
            "report",
            scenario.to_str().unwrap(),
            "--out",
            page.to_str().unwrap(),
        ]);
        let html = std::fs::read_to_string(&page).unwrap_or_default();
        let _ = std::fs::remove_file(&scenario);
        let _ = std::fs::remove_file(&page);
        assert_eq!(reported.status.code(), Some(0), "{session}");
        match rule {
            Some(rule) => {
                let mark = format!("<g class=\"departure\" data-rule=\"{rule}\"><title>departed from the documented behaviour at ");
                assert!(html.contains(&mark), "{session}: no {rule} mark");
            }
            None => assert!(!html.contains("class=\"departure\""), "{session}"),
        }
    }
}
