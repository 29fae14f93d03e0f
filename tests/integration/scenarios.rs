//! Every scenario under `scenarios/` runs and meets its own `expect:` block.

use subsim_tests::{repo_root, run_file, scenario_files};

#[test]
fn every_scenario_meets_its_expectations() {
    let files = scenario_files(&repo_root().join("scenarios"));
    assert!(
        files.len() >= 20,
        "expected the rule scenarios under scenarios/, found {}",
        files.len()
    );
    let mut problems = Vec::new();
    for path in &files {
        match run_file(path, None) {
            Err(error) => problems.push(format!("{}: {error}", path.display())),
            Ok(run) => {
                if run.expectations == 0 {
                    problems.push(format!("{}: has no expect: block", path.display()));
                }
                for failure in run.failures {
                    problems.push(format!(
                        "{} ({}): expected {}, got {}\n    {}",
                        path.display(),
                        failure.location.unwrap_or_default(),
                        failure.expected,
                        failure.got,
                        failure.events.join("\n    ")
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// `fields_of_kind` (what `expect:` validation and `false` matching read) lists every field
/// any event of every scenario writes, so a filter key is never wrongly warned about.
#[test]
fn every_field_written_is_listed_for_its_kind() {
    use std::collections::BTreeSet;

    use subsim_engine::event::fields_of_kind;
    use subsim_engine::{Event, Simulation, Sink};

    struct Fields(BTreeSet<(String, String)>);
    impl Sink for Fields {
        fn event(&mut self, event: &Event) {
            let kind = event.kind.name();
            event.visit_fields(&mut |name, _| {
                if !matches!(name, "t_us" | "seq" | "kind" | "rule")
                    && !fields_of_kind(kind).is_some_and(|known| known.contains(&name))
                {
                    self.0.insert((kind.to_string(), name.to_string()));
                }
            });
        }
    }
    let mut unlisted = Fields(BTreeSet::new());
    for path in scenario_files(&repo_root().join("scenarios")) {
        let loaded = subsim_scenario::load_scenario(&path).expect("every scenario loads");
        Simulation::new(loaded.spec).run(&mut unlisted);
    }
    assert!(
        unlisted.0.is_empty(),
        "fields written but missing from subsim_engine::event::fields_of_kind: {:?}",
        unlisted.0
    );
}

/// A refusal carries what its reason's entry says (`RejectReason::facts`, written beside the
/// variant in the rules crate): its fixed message where it has one, and its hint (CAP-2). A
/// new reason with a fixed message whose refusal the engine writes with other words, or a
/// message constant changed on one side only, fails here.
#[test]
fn every_refusal_carries_its_reason_s_fixed_message_and_hint() {
    use std::collections::BTreeSet;

    use subsim_engine::{Event, EventKind, Simulation, Sink};
    use subsim_rules::RejectReason;

    #[derive(Default)]
    struct Refusals {
        wrong: Vec<String>,
        fixed_seen: BTreeSet<RejectReason>,
    }
    impl Sink for Refusals {
        fn event(&mut self, event: &Event) {
            let EventKind::SpawnRejected {
                reason,
                message,
                hint,
                ..
            } = &event.kind
            else {
                return;
            };
            let facts = reason.facts();
            if let Some(fixed) = facts.message {
                self.fixed_seen.insert(*reason);
                if &**message != fixed {
                    self.wrong
                        .push(format!("{reason}: message {message:?}, not {fixed:?}"));
                }
            }
            if *hint != facts.hint {
                self.wrong
                    .push(format!("{reason}: hint {hint:?}, not {:?}", facts.hint));
            }
        }
    }
    let mut refusals = Refusals::default();
    for path in scenario_files(&repo_root().join("scenarios")) {
        let loaded = subsim_scenario::load_scenario(&path).expect("every scenario loads");
        Simulation::new(loaded.spec).run(&mut refusals);
    }
    assert!(refusals.wrong.is_empty(), "{:#?}", refusals.wrong);
    // The scan saw refusals with a fixed message: the cap's at least.
    assert!(
        refusals.fixed_seen.contains(&RejectReason::ConcurrentLimit),
        "{:?}",
        refusals.fixed_seen
    );
}
