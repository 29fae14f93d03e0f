//! End-to-end runs of the teaching commands of the built `subsim` binary: `panel`,
//! `rules`, `explain`, `diff` and `tools`. Few, each checking what a person relies on.

use crate::support::{code, command, flat, repo_root, stderr, stdout, subsim_in};
use std::process::Output;

/// Runs `subsim` from the repository root, so scenario paths are relative to it.
fn subsim(args: &[&str]) -> Output {
    subsim_in(&repo_root(), args)
}

/// `text` holds `wanted`, however the terminal's width wrapped it.
fn assert_has(text: &str, wanted: &str) {
    assert!(
        text.contains(wanted) || flat(text).contains(&flat(wanted)),
        "expected {wanted:?} in:\n{text}"
    );
}

#[test]
fn panel_shows_a_failed_row_and_the_tasks_list_at_that_instant() {
    let output = subsim(&[
        "panel",
        "scenarios/panel/failed-and-stopped-rows-stay-30-seconds.yaml",
        "--at",
        "5s",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert_has(&text, "At 00:00:05.000 (5s)");
    // PANEL-3: the failed run's row stays, reading failed; the other still runs.
    assert_has(&text, "Subagent panel\n  flaky  failed\n  long   running\n");
    assert_has(&text, "/tasks\n  long  running");

    let load = subsim(&[
        "panel",
        "scenarios/load/erlang-b-20-erlangs.yaml",
        "--at",
        "1m30s",
    ]);
    assert_eq!(code(&load), 2);
    assert_has(&stderr(&load), "load runs keep no panel");

    // PANEL-1: a `-p` session has no panel either.
    let headless = subsim(&[
        "panel",
        "scenarios/notify/headless-orphans-report-to-main.yaml",
        "--at",
        "5s",
    ]);
    assert_eq!(code(&headless), 2);
    assert_has(
        &stderr(&headless),
        "only interactive sessions have the subagent panel (PANEL-1)",
    );
}

/// `(id, status, scenario paths)` of every row of `docs/rules.md`'s rules tables, read
/// independently of the binary's own parser.
fn rules_from_docs(text: &str) -> Vec<(String, String, Vec<String>)> {
    let section = text
        .split("\n## ")
        .find(|part| part.starts_with("Rules by area"))
        .expect("docs/rules.md has a `## Rules by area` section");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line
                .trim()
                .strip_prefix('|')?
                .strip_suffix('|')?
                .split('|')
                .map(str::trim)
                .collect();
            let id = cells.first()?;
            let is_id = id.split_once('-').is_some_and(|(area, n)| {
                area.chars().all(|c| c.is_ascii_uppercase())
                    && !area.is_empty()
                    && n.parse::<u32>().is_ok()
            });
            if cells.len() != 4 || !is_id {
                return None;
            }
            let scenarios = cells[3]
                .split("](../")
                .skip(1)
                .filter_map(|rest| rest.split(')').next())
                .filter(|target| target.starts_with("scenarios/"))
                .map(String::from)
                .collect();
            Some((id.to_string(), cells[2].to_string(), scenarios))
        })
        .collect()
}

#[test]
fn rules_tsv_agrees_with_docs_rules_md() {
    let docs = std::fs::read_to_string(repo_root().join("docs/rules.md")).expect("docs/rules.md");
    let expected = rules_from_docs(&docs);
    assert!(
        expected.len() >= 200,
        "only {} rows in docs/rules.md",
        expected.len()
    );

    let output = subsim(&["rules", "--format", "tsv"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("id\tstatus\tscenarios\tgates\tsummary"));
    let got: Vec<(String, String, Vec<String>)> = lines
        .map(|line| {
            let columns: Vec<&str> = line.split('\t').collect();
            assert_eq!(columns.len(), 5, "five columns in {line:?}");
            let scenarios = columns[2].split_whitespace().map(String::from).collect();
            (columns[0].to_string(), columns[1].to_string(), scenarios)
        })
        .collect();
    for (index, (want, have)) in expected.iter().zip(&got).enumerate() {
        assert_eq!(
            want, have,
            "row {index} differs (docs/rules.md vs subsim rules)"
        );
    }
    assert_eq!(expected.len(), got.len(), "as many rules in both");
    // The gates column names fields of gates_table: CAP-1's gate is `cap`.
    assert!(text.lines().any(
        |line| line.starts_with("CAP-1\tsimulated\t") && line.split('\t').nth(3) == Some("cap")
    ));
}

#[test]
fn explain_runs_a_built_in_scenario_and_suggests_for_a_typo() {
    // From an empty folder: the rules and the scenarios are built into the binary.
    let empty = std::env::temp_dir().join(format!("subsim-explain-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("temp dir");
    let output = subsim_in(&empty, &["explain", "cap-1"]);
    let _ = std::fs::remove_dir_all(&empty);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert_has(
        &text,
        "CAP-1: A session caps concurrently running subagents",
    );
    assert_has(&text, "Status: simulated");
    assert_has(&text, "cap (CAP-1, Q-34): from 2.1.217");
    assert_has(&text, "Running scenarios/cap/");
    assert_has(&text, "rejected");
    assert_has(&text, "(CAP-1)");

    let typo = subsim(&["explain", "CAP-01"]);
    assert_eq!(code(&typo), 2);
    assert_has(&stderr(&typo), "did you mean `CAP-1`?");
    assert!(stdout(&typo).is_empty());
}

#[test]
fn diff_reports_the_prompt_gate_and_where_the_runs_part() {
    let output = subsim(&[
        "diff",
        "scenarios/perm/background-prompt-goes-to-main.yaml",
        "--from",
        "2.1.185",
        "--to",
        "2.1.292",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    let gate = text
        .lines()
        .find(|line| line.trim_start().starts_with("background_prompts"))
        .unwrap_or_else(|| panic!("no background_prompts gate line in:\n{text}"));
    assert_has(gate, "off → on");
    assert_has(gate, "[PERM-4, PERM-5]");
    assert_has(&text, "The traces part at event #");
    // The 2.1.185 side auto-denies the prompt; the 2.1.292 side routes it to main.
    assert_has(&text, "auto-denied silently, nobody is asked: before v2.1.186 a background subagent could not ask, so the call is denied silently (PERM-5)");
    assert_has(&text, "shown in the main session: a background subagent has no terminal of its own, so its prompt goes to the main session, naming it (PERM-4)");
    assert_has(&text, "permission_answered  0 → 1");

    let same = subsim(&[
        "diff",
        "scenarios/perm/background-prompt-goes-to-main.yaml",
        "--from",
        "2.1.292",
        "--to",
        "2.1.292",
    ]);
    assert_eq!(code(&same), 0);
    assert_has(&stdout(&same), "The two runs are identical");
}

#[test]
fn tools_compare_shows_filter_two_removing_tools_in_the_background() {
    let output = subsim(&[
        "tools",
        "--file",
        "scenarios/handback/auto-mode-attaches-subagent-handback.yaml",
        "--agent",
        "strict",
        "--compare",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    let background = text
        .split("\nBackground, from there on\n")
        .nth(1)
        .expect("a Background section");
    assert_has(background, "filter 2    removed, silently");
    assert_has(background, "TaskCreate");
    assert_has(background, "[TOOLS-5]");
    // HANDBACK-3/4: attached in both placements although disallowed.
    assert_has(&text, "SubagentHandback  yes         yes");
    assert_has(
        &text,
        "TaskCreate        yes         —           filter 2: removed, silently [TOOLS-5]",
    );
}

#[test]
fn explain_runs_each_rule_s_canonical_scenario() {
    let output = subsim(&["explain", "CAP-1"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_has(
        &stdout(&output),
        "Running scenarios/cap/fan-out-25-hits-the-cap.yaml",
    );
}

#[test]
fn explain_answers_words_open_questions_and_discrepancies() {
    let words = subsim(&["explain", "depth limit"]);
    assert_eq!(code(&words), 0, "{}", stderr(&words));
    let text = stdout(&words);
    for id in ["DEPTH-3", "DEPTH-4", "FORK-7"] {
        assert!(
            text.lines().any(|line| line.trim_start().starts_with(id)),
            "{id} missing from:\n{text}"
        );
    }
    // One line per match, every one of them holding both words somewhere in its entry.
    assert!(!text.contains("CAP-1 "), "{text}");

    let resume = stdout(&subsim(&["explain", "resume"]));
    assert!(
        resume
            .lines()
            .filter(|line| line.trim_start().starts_with("RESUME-"))
            .count()
            >= 5,
        "{resume}"
    );

    let question = subsim(&["explain", "Q-29"]);
    assert_eq!(code(&question), 0, "{}", stderr(&question));
    let text = stdout(&question);
    assert_has(&text, "Q-29: Can a subagent request `fork`?");
    assert_has(
        &text,
        "Adopted answer (docs/decisions.md): No: only the main conversation forks",
    );
    assert_has(&text, "Running scenarios/fork/forks-cannot-fork.yaml");
    assert_has(&text, "(Q-29)");

    let discrepancy = subsim(&["explain", "d-9"]);
    assert_eq!(code(&discrepancy), 0, "{}", stderr(&discrepancy));
    assert_has(&stdout(&discrepancy), "D-9: a discrepancy");

    let nothing = subsim(&["explain", "no such words anywhere"]);
    assert_eq!(code(&nothing), 2);
    assert_has(&stderr(&nothing), "nothing matches");
}

#[test]
fn explain_suggests_the_words_meant_for_a_typo_in_words() {
    // `explain resme` and `explain "depht limit"` got no suggestion.
    for (typo, meant) in [("resme", "resume"), ("depht limit", "depth limit")] {
        let output = subsim(&["explain", typo]);
        assert_eq!(code(&output), 2, "{typo}");
        assert_has(
            &stderr(&output),
            &format!("did you mean `subsim explain \"{meant}\"`?"),
        );
    }
}

#[test]
fn explain_denied_finds_the_rules_that_deny_in_other_words() {
    // `explain denied` missed PERM-14 ("deny rules") and PERM-9 ("denies it").
    let output = subsim(&["explain", "denied"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    for id in ["PERM-14", "PERM-9", "PERM-5"] {
        assert!(text.contains(&format!("  {id} ")), "{id}: {text}");
    }
}

#[test]
fn tools_compare_cites_tools_8_for_list_agents_and_tools_5_for_the_rest() {
    let output = subsim(&[
        "tools",
        "--file",
        "scenarios/tools/background-filter-removes-tools.yaml",
        "--agent",
        "planner",
        "--compare",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert_has(
        &text,
        "`ListAgents` resolved to nothing: not available to background subagents [TOOLS-8]",
    );
    assert_has(
        &text,
        "`TaskCreate` resolved to nothing: not available to background subagents [TOOLS-5]",
    );
    assert_has(
        &text,
        "ListAgents                 yes         —           filter 2: removed, silently [TOOLS-8]",
    );
}

/// Issue #23 item 9: `tools --compare` printed the two resolutions one after the other,
/// every shared step twice, although the README says it shows them side by side. The
/// shared steps are now written once, then where each placement goes on its own.
#[test]
fn tools_compare_writes_the_shared_steps_once_then_each_side() {
    let output = subsim(&[
        "tools",
        "--file",
        "scenarios/tools/background-filter-removes-tools.yaml",
        "--agent",
        "planner",
        "--compare",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(text.matches("  base pool ").count(), 1, "{text}");
    assert_eq!(text.matches("  filter 1 ").count(), 1, "{text}");
    let shared = text
        .find("\nForeground and background, the same steps\n")
        .expect(&text);
    let foreground = text.find("\nForeground, from there on\n").expect(&text);
    let background = text.find("\nBackground, from there on\n").expect(&text);
    let table = text.find("\nSide by side\n").expect(&text);
    assert!(
        shared < foreground && foreground < background && background < table,
        "{text}"
    );
    assert!(!text[foreground..background].contains("filter 2"), "{text}");
    assert!(text[background..table].contains("filter 2"), "{text}");
}

/// Issue #23 item 10: `explain FGBG-1` listed what the narration says for cases 1, 2 and 4
/// but not case 3 (fork mode on), the placement most sessions get, whose reason is cited
/// as `FGBG-1 case 3, FORK-3`.
#[test]
fn explain_fgbg_1_includes_its_fork_mode_case() {
    let output = subsim(&["explain", "FGBG-1"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    let said = text
        .split("What the narration says when it decides:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect(&text);
    assert_has(
        said,
        "fork mode is on, so Claude cannot ask for the foreground",
    );
    assert_has(said, "fork mode is off and Claude needs the result");
}

/// Issue #23 item 10: the demo had no denied tool call, so a learner's first "why was it
/// denied?" needed another scenario. Chapter 4 now has one, refused by a deny rule.
#[test]
fn the_demo_s_chapter_4_has_a_denied_tool_call() {
    let output = subsim(&["run"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    let chapter = text
        .split("── 4. ")
        .nth(1)
        .and_then(|rest| rest.split("── 5. ").next())
        .expect(&text);
    assert_has(
        chapter,
        "planner         Bash `git push origin main` denied:",
    );
    assert_has(chapter, "(PERM-14)");
    assert_has(&text, "1 tool call refused.");
}

#[test]
fn explain_s_catalog_header_wraps_at_the_terminal_width() {
    // Regression: a rule's summary, its narration reasons, its gates and an open question's
    // adopted answer were printed on one line each (Q-14's answer was 496 characters).
    for id in ["Q-14", "FGBG-1", "CAP-1", "D-2"] {
        let output = command(&["explain", id])
            .env("COLUMNS", "80")
            .output()
            .expect("subsim runs");
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let text = stdout(&output);
        // The header is what comes before the scenario's run (`Running …`).
        let header = text.split("\nRunning ").next().unwrap_or(&text);
        for line in header.lines() {
            // A path is one word: it may not fit, and is not broken.
            if line.trim_start().starts_with("scenarios/") {
                continue;
            }
            assert!(
                line.chars().count() <= 80,
                "{id}: a line of {} characters:\n{line}",
                line.chars().count()
            );
        }
    }
    let q14 = stdout(
        &command(&["explain", "Q-14"])
            .env("COLUMNS", "80")
            .output()
            .expect("runs"),
    );
    assert!(
        q14.contains("  Adopted answer (docs/decisions.md): No: resumes run in the"),
        "{q14}"
    );
    assert!(
        q14.contains("\n    (FGBG-7)"),
        "a continuation hangs under its line:\n{q14}"
    );
}
