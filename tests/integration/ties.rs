//! Same-instant ties: the tie-break hook leaves every trace as it was when it always
//! chooses 0, and `explore` finds the ordering that breaks a tie-dependent expectation,
//! which `Replay` then reproduces exactly.

use subsim_engine::explore::{explore, Replay};
use subsim_engine::render::JsonlWriter;
use subsim_engine::{SimTime, Simulation, TieBreak, TieOptions};
use subsim_tests::{repo_root, scenario_files};

/// Always the scheduling order, counting the tie points it is asked about.
#[derive(Default)]
struct Zero {
    asked: usize,
}

impl TieBreak for Zero {
    fn choose(&mut self, _at: SimTime, options: &mut dyn TieOptions) -> usize {
        assert!(options.has(1), "a tie point has at least two options");
        assert!(options.count() >= 2, "a tie point has at least two options");
        self.asked += 1;
        0
    }
}

fn jsonl(spec: subsim_engine::SimSpec, ties: Option<&mut dyn TieBreak>) -> Vec<u8> {
    let mut writer = JsonlWriter::new(Vec::new());
    let simulation = Simulation::new(spec);
    match ties {
        Some(ties) => simulation.run_with_ties(&mut writer, ties),
        None => simulation.run(&mut writer),
    };
    writer.finish().expect("writes to memory")
}

#[test]
fn choosing_zero_at_every_tie_is_the_plain_run_byte_for_byte() {
    let mut ties_seen = 0;
    for path in scenario_files(&repo_root().join("scenarios")) {
        let loaded = subsim_scenario::load_scenario(&path).expect("every scenario loads");
        let plain = jsonl(loaded.spec.clone(), None);
        let mut zero = Zero::default();
        let chosen = jsonl(loaded.spec, Some(&mut zero));
        ties_seen += zero.asked;
        assert!(plain == chosen, "{}: the traces differ", path.display());
    }
    assert!(ties_seen > 0, "some scenario has a tie point");
}

const RACE: &str = "scenarios/cap/a-spawn-racing-a-finish-at-a-full-cap.yaml";

#[test]
fn explore_finds_the_order_where_the_finish_wins_and_replay_reproduces_it() {
    let loaded = subsim_scenario::load_scenario(&repo_root().join(RACE)).expect("loads");
    let exploration = explore(&loaded.spec, &loaded.expect, 1000, false);
    assert!(exploration.complete);
    assert_eq!(exploration.orderings.len(), 2);
    assert_eq!(exploration.outcomes.len(), 2);
    let plain = &exploration.orderings[0];
    assert!(plain.passed() && plain.choices == vec![0]);
    let raced = &exploration.orderings[1];
    assert_eq!(raced.choices, vec![1]);
    assert_eq!(raced.failures.len(), 1);
    assert_eq!(raced.failures[0].index, 0);
    assert_eq!(
        exploration.outcomes[1]
            .finals
            .get("second")
            .map(String::as_str),
        Some("completed")
    );
    // Replaying [1] gives a trace in which `second` starts at 10 s.
    let mut replay = Replay::new(raced.choices.clone());
    let trace = String::from_utf8(jsonl(loaded.spec.clone(), Some(&mut replay))).unwrap();
    assert!(trace.contains(r#""t_us":10000000,"seq":"#));
    assert!(trace.contains(r#""kind":"agent_started","agent":"a2","name":"second""#));
    assert!(!trace.contains("spawn_rejected"));
    assert_eq!(replay.taken, vec![(1, false)]);
    assert_eq!(replay.out_of_range, None);
}

#[test]
fn max_orderings_bounds_the_enumeration() {
    // Five prompts raised at one instant: their order in the person's queue is a race.
    let path = repo_root().join("scenarios/perm/one-person-answers-in-order.yaml");
    let loaded = subsim_scenario::load_scenario(&path).expect("loads");
    let bounded = explore(&loaded.spec, &loaded.expect, 7, false);
    assert_eq!(bounded.orderings.len(), 7);
    assert!(!bounded.complete);
    let full = explore(&loaded.spec, &loaded.expect, 100_000, false);
    assert!(full.complete);
    // 5 asking steps at one instant: 5! orders of the prompts.
    assert_eq!(full.orderings.len(), 120);
    // The first seven are the same whether bounded or not (depth-first, deterministic).
    for (a, b) in bounded.orderings.iter().zip(&full.orderings) {
        assert_eq!(a.choices, b.choices);
    }
    // Every ordering is distinct.
    let mut choices: Vec<_> = full
        .orderings
        .iter()
        .map(|run| run.choices.clone())
        .collect();
    choices.sort();
    choices.dedup();
    assert_eq!(choices.len(), 120);
}

/// Tie-heavy scenarios (two outcomes, every order of five prompts, hundreds of orderings,
/// the bound stopping the enumeration) and the `--max-orderings` each is explored with.
const TIE_HEAVY: [(&str, usize); 7] = [
    ("scenarios/cap/resume-takes-a-slot-past-the-cap.yaml", 1000),
    (
        "scenarios/load/queue-keeps-its-place-when-a-slot-is-taken.yaml",
        1000,
    ),
    ("scenarios/perm/one-person-answers-in-order.yaml", 1000),
    ("scenarios/load/two-streams-arrive-in-list-order.yaml", 250),
    ("scenarios/spawn/the-built-in-catalogue.yaml", 250),
    ("scenarios/cap/fan-out-25-hits-the-cap.yaml", 150),
    ("scenarios/demo.yaml", 150),
];

/// The orderings `explore` found in them, in order (one line each: the ordering, its
/// outcome, the assertions that failed), as written by the chooser that popped and
/// re-queued every same-instant wake at each pick (main at fcc7aca).
const ORDERINGS: &str = "tests/golden/explore-orderings.txt";

/// Keeping the instant's wakes in a vector and reading only as many as a choice needs
/// (`crates/engine/src/sim/ties.rs`) changes what a pick costs, not what it picks: the
/// same orderings, in the same order, with the same outcomes. `SUBSIM_BLESS=1` rewrites
/// the file (only for a change that means to change the orderings).
#[test]
fn explore_finds_the_same_orderings_in_the_same_order_as_the_requeueing_chooser() {
    let mut text = String::new();
    for (path, max) in TIE_HEAVY {
        let loaded = subsim_scenario::load_scenario(&repo_root().join(path)).expect("loads");
        let exploration = explore(&loaded.spec, &loaded.expect, max, false);
        text.push_str(&format!(
            "## {path} --max-orderings {max}: {} orderings, {} outcomes, complete {}\n",
            exploration.orderings.len(),
            exploration.outcomes.len(),
            exploration.complete
        ));
        for run in &exploration.orderings {
            let failed: Vec<String> = run
                .failures
                .iter()
                .map(|failure| format!("#{}", failure.index + 1))
                .collect();
            text.push_str(&format!(
                "{} outcome {} {}\n",
                subsim_engine::explore::order_text(&run.choices),
                run.outcome + 1,
                failed.join(",")
            ));
        }
    }
    let golden = repo_root().join(ORDERINGS);
    if std::env::var_os("SUBSIM_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().expect("a folder")).expect("mkdir");
        std::fs::write(&golden, &text).expect("writes the orderings");
    }
    let expected = std::fs::read_to_string(&golden).expect("the orderings file is there");
    assert!(
        text == expected,
        "explore's orderings differ from {ORDERINGS} (first differing line: {:?})",
        text.lines()
            .zip(expected.lines())
            .find(|(got, want)| got != want)
    );
}
