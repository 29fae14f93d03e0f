//! Regressions of the views that draw the run model (issue #32): the narration's order,
//! the end and what set it, agents without a name.

use serde_json::Value;

use crate::support::{code, repo_root, stdout, subsim, TempDir};

fn scenario(path: &str) -> String {
    repo_root()
        .join(path)
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

fn model(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "model"]);
    let output = subsim(&all);
    assert_eq!(code(&output), 0);
    serde_json::from_str(&stdout(&output)).expect("the model is JSON")
}

#[test]
fn the_resume_prints_before_rejected_1_past_a_cap_of_5() {
    let file = scenario("scenarios/cap/resume-takes-a-slot-past-the-cap.yaml");
    let output = subsim(&["run", &file, "--cap", "5"]);
    let text = stdout(&output);
    let resumed = text.find("first           resumed").expect(&text);
    let rejected = text.find("rejected-1      started").expect(&text);
    assert!(resumed < rejected, "{text}");
    assert!(text.contains("busy-1 … busy-3 (3)  started"), "{text}");
}

#[test]
fn the_narration_never_groups_across_another_decision_in_any_shipped_scenario_order() {
    // The model's order is the trace's: each group's seqs are consecutive decisions.
    let file = scenario("scenarios/cap/resume-takes-a-slot-past-the-cap.yaml");
    let model = model(&[&file, "--cap", "5"]);
    let mut last = None;
    for group in model["order"].as_array().unwrap() {
        for seq in group["seqs"].as_array().unwrap() {
            let seq = seq.as_u64().unwrap();
            assert!(last.is_none_or(|last| last < seq), "{group}");
            last = Some(seq);
        }
    }
}

#[test]
fn the_demo_summary_says_it_ended_at_56s_and_why() {
    let output = subsim(&["run", &scenario("scenarios/demo.yaml")]);
    let text = crate::support::flat(&stdout(&output));
    assert!(
        text.contains("It ended at 56s because main heard planner's completion then (NOTIFY-3)"),
        "{text}"
    );
    assert!(
        text.contains("the last of them, checker, finished at 56s (NOTIFY-6)"),
        "{text}"
    );
}

#[test]
fn an_unnamed_spawn_is_shown_by_its_id_in_the_model() {
    let dir = TempDir::new("unnamed");
    let file = dir.write(
        "unnamed.yaml",
        "name: unnamed\nsession: {kind: interactive}\nmain:\n  - spawn: {agent: general-purpose, background: true, behavior: [{work: 2s}]}\n",
    );
    let model = model(&[file.to_str().unwrap()]);
    assert_eq!(model["runs"][1]["label"], "a1", "{model}");
    assert_eq!(model["end"]["t_us"], 2_000_000);
    let because = model["end"]["because"].as_str().unwrap();
    assert!(because.contains("a1"), "{because}");
}

fn explain_end(path: &str) -> String {
    let output = subsim(&["explain", "--end", &scenario(path)]);
    assert_eq!(code(&output), 0, "{}", crate::support::stderr(&output));
    crate::support::flat(&stdout(&output))
}

#[test]
fn explain_end_says_the_demo_ended_at_56s_because_of_the_checker_chain() {
    let text = explain_end("scenarios/demo.yaml");
    assert!(
        text.contains("It ended at 56s because main heard planner's completion"),
        "{text}"
    );
    assert!(
        text.contains("checker ran its own steps for 21s, from 35s"),
        "{text}"
    );
    assert!(text.contains("(NOTIFY-6)"), "{text}");
}

#[test]
fn explain_end_names_the_prompt_that_set_the_end() {
    let text = explain_end("scenarios/perm/agent-messages-are-never-approval.yaml");
    assert!(
        text.contains(
            "builder waited 10s on a permission prompt, from 11s until it was answered (PERM-4)"
        ),
        "{text}"
    );
}

#[test]
fn explain_end_follows_a_foreground_chain_through_results() {
    let text = explain_end("scenarios/fgbg/a-foreground-resume-blocks-the-resumer.yaml");
    assert!(
        text.contains("It ended at 16s because main heard next's result then (NOTIFY-2)"),
        "{text}"
    );
    assert!(
        text.contains("main had waited for its foreground subagent helper, whose result came at 15s (NOTIFY-2)"),
        "{text}"
    );
    assert!(
        text.contains("helper was resumed by main at 5s (CAP-7)"),
        "{text}"
    );
}

#[test]
fn explain_end_names_the_background_shell_that_set_the_end() {
    let text = explain_end("scenarios/notify/background-bash-notifies-the-subagent.yaml");
    assert!(
        text.contains("watcher waited for its background shell from 5s to 30s (NOTIFY-5)"),
        "{text}"
    );
}

fn report_of(path: &str) -> String {
    let dir = TempDir::new("report-views");
    let out = dir.path().join("r.html");
    let output = subsim(&["report", &scenario(path), "-o", out.to_str().unwrap()]);
    assert_eq!(code(&output), 0, "{}", crate::support::stderr(&output));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn a_report_narration_click_lands_on_the_exact_microsecond_not_the_millisecond() {
    let page = report_of("scenarios/demo.yaml");
    // The prompt's answer is at 43.491238 s; the clock shows 43.491.
    assert!(
        page.contains(r#"data-t="43491238""#),
        "no line at the exact instant"
    );
    assert!(!page.contains(r#"data-t="43491000""#));
}

#[test]
fn the_report_header_counts_the_runs_the_cli_counts_and_has_a_legend_and_the_end() {
    let page = report_of("scenarios/demo.yaml");
    let cli = stdout(&subsim(&["run", &scenario("scenarios/demo.yaml")]));
    assert!(cli.contains("24 runs started"), "{cli}");
    assert!(page.contains("· 24 runs ·"), "header");
    assert!(page.contains(r#"id="legend""#));
    assert!(page.contains("waiting on a prompt"));
    assert!(page.contains("It ended at 56s because"));
    // Nothing wider than an 800 px window is fixed.
    assert!(!page.contains("flex: none; width: 920px"));
    assert!(!page.contains("width: 760px"));
}

#[test]
fn detail_full_says_where_the_demo_s_4_491s_think_time_came_from() {
    let file = scenario("scenarios/demo.yaml");
    let full = crate::support::flat(&stdout(&subsim(&["run", &file, "--detail", "full"])));
    assert!(
        full.contains(
            "approved planner's Bash after 4.491s (prompt #1); think 4.491s, drawn from \
             uniform(2s, 5s), the person's stream"
        ),
        "{full}"
    );
    let output = subsim(&["run", &file, "--format", "jsonl"]);
    let answered = stdout(&output)
        .lines()
        .find(|line| line.contains("\"permission_answered\""))
        .expect("the demo answers a prompt")
        .to_string();
    assert!(
        answered.contains(r#""think_us":4491238,"think_from":"uniform(2s, 5s)""#),
        "{answered}"
    );
}

/// Issue #32, "where a number came from": the report carries each draw in the model's
/// words for its decision panel, and the model's JSON has them.
#[test]
fn the_report_and_the_model_carry_each_drawn_duration_with_its_distribution_and_stream() {
    let file = "scenarios/trace/drawn-durations-say-where-they-came-from.yaml";
    let page = report_of(file);
    assert!(page.contains(r#"<div id="decision">"#), "no decision panel");
    assert!(
        page.contains(r#""text":"work 229.094ms, drawn from exp(3s), researcher's own stream"}"#),
        "the work draw is not in the page's data"
    );
    let drawn = model(&[&scenario(file)]);
    let draws: Vec<(&str, &str, &str)> = drawn["draws"]
        .as_array()
        .expect("draws")
        .iter()
        .map(|d| {
            (
                d["what"].as_str().unwrap(),
                d["drawn_from"].as_str().unwrap(),
                d["drawn_on"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        draws,
        [
            ("work", "exp(3s)", "run"),
            ("wait", "uniform(1s, 2s)", "run"),
            ("tool", "normal(4s, 1s)", "run"),
            ("bash_background", "lognormal(5s, 0.5)", "run"),
            ("think", "exp(3s)", "person"),
        ]
    );
    // A scenario whose durations are all fixed draws nothing.
    let fixed = model(&[&scenario("scenarios/cap/fan-out-25-hits-the-cap.yaml")]);
    assert_eq!(fixed["draws"], serde_json::json!([]));
}
