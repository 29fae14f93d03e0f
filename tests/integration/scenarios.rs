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
