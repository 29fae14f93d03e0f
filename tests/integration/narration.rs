//! The narration explains: across every scenario, every decision it narrates gives its
//! reason in words (from `subsim_rules::why`), not only a rule ID.

use subsim_engine::render::Narrator;
use subsim_engine::sink::Collect;
use subsim_engine::{EventKind, Simulation};
use subsim_tests::{repo_root, scenario_files};

/// The kinds whose events are decisions a learner asks "why?" about.
fn is_decision(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::SpawnRejected { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::Notification { .. }
    )
}

#[test]
fn every_decision_of_every_scenario_gives_its_reason_in_words() {
    let mut missing = std::collections::BTreeSet::new();
    let mut decisions = 0;
    for path in scenario_files(&repo_root().join("scenarios")) {
        let Ok(loaded) = subsim_scenario::load_scenario(&path) else {
            continue;
        };
        if loaded.spec.load.is_some() {
            continue;
        }
        let mut trace = Collect::default();
        Simulation::new(loaded.spec).run(&mut trace);
        let mut narrator = Narrator::new();
        for event in &trace.events {
            let told = narrator.tell(event);
            let (Some(rule), true) = (event.rule, is_decision(&event.kind)) else {
                continue;
            };
            decisions += 1;
            if told.why.is_none() {
                let shown = path
                    .strip_prefix(repo_root())
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                missing.insert(format!(
                    "{} {rule}: {} ({shown})",
                    event.kind.name(),
                    told.what
                ));
            }
        }
    }
    assert!(decisions > 1000, "only {decisions} decisions found");
    assert!(
        missing.is_empty(),
        "{} decisions without a reason in words (add a row to crates/rules/src/why.rs):\n{}",
        missing.len(),
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// Each narration line of `yaml`, as `subsim run` writes them.
fn narrate(yaml: &str) -> Vec<String> {
    let loaded = subsim_scenario::parse_scenario(yaml, "inline.yaml", &repo_root())
        .unwrap_or_else(|problems| panic!("{problems}"));
    let mut trace = Collect::default();
    Simulation::new(loaded.spec).run(&mut trace);
    let mut narrator = Narrator::new();
    trace
        .events
        .iter()
        .map(|event| {
            let mut line = String::new();
            narrator.line(event, &mut line);
            line
        })
        .collect()
}

/// Issue #23 item 8: a step's `prompt: false` ran `git status` in default mode, which asks
/// before a Bash call, and the narration said "default mode lets it run without asking
/// (PERM-9)". The trace still cites PERM-9; the narration now credits the step, and says
/// what the mode alone would have done. A call the mode itself runs keeps the mode's reason.
#[test]
fn a_forced_no_prompt_is_credited_to_the_step_not_the_permission_mode() {
    let path =
        repo_root().join("scenarios/perm/forced-no-prompt-still-denies-a-chained-command.yaml");
    let lines = narrate(&std::fs::read_to_string(path).unwrap());
    let forced = lines
        .iter()
        .find(|line| line.contains("uses Bash `git status`"))
        .expect("the allowed call is narrated");
    assert!(
        forced.ends_with(
            "uses Bash `git status`: the step forces it to run without asking, \
             where default mode would ask (step `prompt: false`)"
        ),
        "{forced}"
    );

    let lines = narrate(
        "name: x\nsession: {permission_mode: dontAsk}\nmain:\n  \
         - tool: {name: Bash, input: ls, prompt: false}\n  \
         - tool: {name: Read, input: a.txt, prompt: false}\n",
    );
    let bash = lines
        .iter()
        .find(|line| line.contains("Bash `ls`"))
        .unwrap();
    assert!(
        bash.ends_with("where dontAsk mode would deny it (step `prompt: false`)"),
        "{bash}"
    );
    let read = lines
        .iter()
        .find(|line| line.contains("Read `a.txt`"))
        .unwrap();
    assert!(
        read.ends_with("dontAsk mode lets it run without asking (PERM-9)"),
        "{read}"
    );
}
