//! Same scenario + seed → byte-identical trace; another seed changes a random scenario.

use subsim_tests::{repo_root, run_file, scenario_files};

#[test]
fn every_scenario_twice_gives_identical_bytes() {
    for path in scenario_files(&repo_root().join("scenarios")) {
        let first = run_file(&path, None).expect("scenario runs");
        let second = run_file(&path, None).expect("scenario runs");
        assert!(
            first.jsonl == second.jsonl,
            "{} is not deterministic",
            path.display()
        );
        assert!(!first.jsonl.is_empty());
    }
}

#[test]
fn a_changed_seed_changes_a_random_scenario() {
    let path = repo_root().join("scenarios/load/erlang-b-20-erlangs.yaml");
    let base = run_file(&path, Some(1)).expect("runs");
    let again = run_file(&path, Some(1)).expect("runs");
    let other = run_file(&path, Some(2)).expect("runs");
    assert!(base.jsonl == again.jsonl);
    assert!(
        base.jsonl != other.jsonl,
        "seed 1 and seed 2 gave the same trace"
    );
}
