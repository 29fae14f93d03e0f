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
