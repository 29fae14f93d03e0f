//! `subsim explore` (a scenario under every ordering of its same-instant ties, `expect:`
//! checked under each) and what `run` needs for `--order` and `--check-determinism`.

use crate::words::plural;
use std::fmt::Write as _;
use std::io::{self, Write};

use subsim_engine::explore::{self, order_shown, OutcomeSummary, Replay};
use subsim_engine::render::JsonlWriter;
use subsim_engine::{SimSpec, Simulation};

use crate::args::ExploreArgs;
use crate::output;
use crate::Status;

/// Failing orderings printed with their reproducer, at most (the rest are counted).
const SHOW_FAILING: usize = 50;

pub fn explore(args: ExploreArgs) -> anyhow::Result<Status> {
    let loaded = crate::load::load_source(Some(&args.file), &args.source)?;
    let spec = loaded.spec;
    let limit_expected = crate::load::expects_limit(&loaded.expect);
    let max = usize::try_from(args.max_orderings).unwrap_or(usize::MAX);
    let exploration = explore::explore(&spec, &loaded.expect, max, limit_expected);

    let shown = args.file.display().to_string();
    // The replay reads the scenario the way this exploration did.
    let seed: String = args
        .source
        .shown()
        .iter()
        .map(|flag| match flag.split_once(' ') {
            Some((name, value)) => format!(" {name} {}", shell_word(value)),
            None => format!(" {flag}"),
        })
        .collect();
    let reproducer =
        |choices: &[usize]| format!("subsim run {shown}{seed} --order {}", order_shown(choices));
    let mut text = String::new();
    if loaded.expect.is_empty() {
        text.push_str("note: the scenario has no `expect:` block; every ordering passes\n");
    }
    let first_outcome = exploration.outcomes.first();
    for (index, outcome) in exploration.outcomes.iter().enumerate() {
        let runs: Vec<_> = exploration
            .orderings
            .iter()
            .filter(|run| run.outcome == index)
            .collect();
        let example = runs.first().expect("an outcome comes from a run");
        let verdict = if example.passed() {
            "every expectation holds".to_string()
        } else {
            let mut failed: Vec<String> = example
                .failures
                .iter()
                .map(|failure| format!("#{}", failure.index + 1))
                .collect();
            if example.limit.is_some() {
                failed.push("(a safety limit stopped the run)".to_string());
            }
            format!("fails expect {}", failed.join(", "))
        };
        let _ = writeln!(
            text,
            "outcome {} ({}, e.g. --order {}): {verdict}",
            index + 1,
            plural(runs.len(), "ordering"),
            order_shown(&example.choices)
        );
        if index > 0 {
            if let Some(first) = first_outcome {
                for difference in differences(first, outcome) {
                    let _ = writeln!(text, "  {difference}");
                }
            }
        }
        if let Some(limit) = &example.limit {
            let _ = writeln!(text, "  {limit}");
        }
        for failure in &example.failures {
            let location = failure.location.clone().unwrap_or_else(|| shown.clone());
            let _ = writeln!(text, "  expect #{} at {location}", failure.index + 1);
            let _ = writeln!(text, "    expected: {}", failure.expected);
            let _ = writeln!(text, "    got:      {}", failure.got);
            for (line, event) in failure.events.iter().enumerate() {
                let label = if line == 0 { "events:  " } else { "         " };
                let _ = writeln!(text, "    {label} {event}");
            }
            for hint in &failure.hints {
                let _ = writeln!(text, "    {hint}");
            }
        }
    }
    let failing: Vec<_> = exploration
        .orderings
        .iter()
        .filter(|run| !run.passed())
        .collect();
    if !failing.is_empty() {
        let _ = writeln!(
            text,
            "{} where an expectation fails (each replays exactly):",
            plural(failing.len(), "ordering")
        );
        for run in failing.iter().take(SHOW_FAILING) {
            let _ = writeln!(
                text,
                "  {}    # outcome {}",
                reproducer(&run.choices),
                run.outcome + 1
            );
        }
        if failing.len() > SHOW_FAILING {
            let _ = writeln!(text, "  … and {} more", failing.len() - SHOW_FAILING);
        }
    }
    if let Some(budget) = exploration.budget_hit {
        let _ = writeln!(
            text,
            "stopped at session.limits.max_explore_steps {budget}: more orderings remain"
        );
    } else if !exploration.complete {
        let _ = writeln!(
            text,
            "stopped at --max-orderings {}: more orderings remain",
            args.max_orderings
        );
    }
    let _ = writeln!(
        text,
        "{}, {}",
        plural(exploration.orderings.len(), "ordering"),
        plural(exploration.outcomes.len(), "distinct outcome")
    );
    output::print_text(&text)?;
    if exploration.budget_hit.is_some() {
        crate::output::note(&format!(
            "subsim: explore was stopped by its safety limit `max_explore_steps` after {} \
             ({} steps run over every ordering, each a whole run of the scenario; the next \
             ordering was cut short and is not counted); raise session.limits.\
             max_explore_steps in the scenario if the exploration is meant to be that long. The output up to that point is kept above.",
            plural(exploration.orderings.len(), "ordering"),
            exploration.steps
        ));
        return Ok(Status::LimitHit);
    }
    Ok(if failing.is_empty() {
        Status::Ok
    } else {
        Status::ExpectationsFailed
    })
}

/// How `outcome` differs from `first`: agents that ended otherwise, kinds counted otherwise.
fn differences(first: &OutcomeSummary, outcome: &OutcomeSummary) -> Vec<String> {
    let mut lines = Vec::new();
    let mut agents: Vec<&String> = first.finals.keys().chain(outcome.finals.keys()).collect();
    agents.sort();
    agents.dedup();
    for agent in agents {
        let was = first
            .finals
            .get(agent)
            .map_or("never started", String::as_str);
        let now = outcome
            .finals
            .get(agent)
            .map_or("never started", String::as_str);
        if was != now {
            lines.push(format!("{agent}: {now} (outcome 1: {was})"));
        }
    }
    let mut kinds: Vec<&&str> = first.kinds.keys().chain(outcome.kinds.keys()).collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let was = first.kinds.get(*kind).copied().unwrap_or(0);
        let now = outcome.kinds.get(*kind).copied().unwrap_or(0);
        if was != now {
            lines.push(format!(
                "{kind}: {} (outcome 1: {was})",
                crate::words::plural(usize::try_from(now).unwrap_or(usize::MAX), "event")
            ));
        }
    }
    lines
}

/// `text` as one shell word: as it is when it holds only characters no shell reads
/// specially, else in single quotes.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=,:@%+-".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// After `run --order`: a choice out of range is bad input (exit 2); choices the run
/// never reached are worth a note.
pub fn check_replay(replay: &Replay) -> anyhow::Result<()> {
    if let Some((point, choice, options)) = replay.out_of_range {
        anyhow::bail!(
            "--order: tie point {} had {options} options (0 to {}), so choice {choice} is out of \
             range; the run above took 0 there. Use an ordering `subsim explore` printed",
            point + 1,
            options - 1
        );
    }
    let unused = replay.unused();
    if unused > 0 {
        crate::output::note(&format!(
            "subsim: note: the run met {} tie points; the last {unused} choices of --order were \
             not used",
            replay.taken.len()
        ));
    }
    Ok(())
}

/// FNV-1a over everything written.
struct Hasher {
    hash: u64,
    bytes: u64,
}

impl Write for Hasher {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        for byte in bytes {
            self.hash ^= u64::from(*byte);
            self.hash = self.hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.bytes += bytes.len() as u64;
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The hash and length of the JSON Lines trace of one run.
fn trace_hash(spec: SimSpec, order: Option<Vec<usize>>) -> anyhow::Result<(u64, u64, u64)> {
    let hasher = Hasher {
        hash: 0xcbf2_9ce4_8422_2325,
        bytes: 0,
    };
    let mut writer = JsonlWriter::new(hasher);
    let simulation = Simulation::new(spec);
    let report = match order {
        Some(order) => simulation.run_with_ties(&mut writer, &mut Replay::new(order)),
        None => simulation.run(&mut writer),
    };
    let hasher = writer.finish()?;
    Ok((hasher.hash, hasher.bytes, report.events))
}

/// `run --check-determinism`: two more runs of the same spec (and ordering), their JSON
/// Lines traces hashed and compared. Different hashes → exit 1.
pub fn check_determinism(
    spec: SimSpec,
    order: Option<Vec<usize>>,
    status: Status,
) -> anyhow::Result<Status> {
    let first = trace_hash(spec.clone(), order.clone())?;
    let second = trace_hash(spec, order)?;
    if first == second {
        crate::output::note(&format!(
            "subsim: deterministic: two more runs wrote the same trace ({} events, {} bytes, \
             FNV-1a {:016x})",
            first.2, first.1, first.0
        ));
        Ok(status)
    } else {
        crate::output::note(&format!(
            "subsim: NOT deterministic: two runs of the same scenario and seed wrote different \
             traces: {} events, {} bytes, FNV-1a {:016x} vs {} events, {} bytes, FNV-1a {:016x}",
            first.2, first.1, first.0, second.2, second.1, second.0
        ));
        Ok(Status::ExpectationsFailed)
    }
}

#[cfg(test)]
mod tests {
    use super::differences;
    use subsim_engine::explore::OutcomeSummary;

    /// Issue #32 item 7: `explore` said "1 events".
    #[test]
    fn explore_says_1_event_not_1_events() {
        let outcome = |count| OutcomeSummary {
            failed: Vec::new(),
            limited: false,
            kinds: [("spawn_rejected", count)].into_iter().collect(),
            finals: Default::default(),
        };
        let lines = differences(&outcome(0), &outcome(1));
        assert_eq!(lines, ["spawn_rejected: 1 event (outcome 1: 0)"]);
        let lines = differences(&outcome(1), &outcome(2));
        assert_eq!(lines, ["spawn_rejected: 2 events (outcome 1: 1)"]);
    }
}
