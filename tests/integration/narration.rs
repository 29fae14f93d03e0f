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
