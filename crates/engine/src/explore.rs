//! `explore`: runs a scenario under every ordering of its same-instant ties that could
//! differ (see [`crate::sim::TieBreak`] for which wakes take part), checks its `expect:`
//! block under each, and groups the runs by outcome.
//!
//! An ordering is the list of choices made at the tie points of a run, in order (0 =
//! scheduling order); choices past the end of the list are 0, so the empty list is the
//! plain run. The orderings are enumerated depth first, like an odometer, by re-running
//! the scenario from the start with a longer or different prefix: run *k+1* takes the
//! choices of run *k* up to its last tie point that had an option left, and the next
//! option there. Everything is deterministic: the same scenario, seed and bound give the
//! same orderings in the same order.

use std::collections::BTreeMap;

use crate::budget::Budget;
use crate::event::{Event, EventKind, Limit};
use crate::expect::{Checker, Failure, Located};
use crate::sim::{LimitHit, Simulation, TieBreak, TieOptions};
use crate::sink::{Sink, Tee};
use crate::spec::SimSpec;
use crate::time::SimTime;

/// A [`TieBreak`] that follows a list of choices, then chooses 0, and records every tie
/// point it met (the choice made, and whether an option was left after it).
#[derive(Clone, Debug, Default)]
pub struct Replay {
    choices: Vec<usize>,
    /// `(choice, another option after it)` at each tie point met, in order.
    pub taken: Vec<(usize, bool)>,
    /// The first choice of the list that was out of range: `(tie point, choice, options)`
    /// (0 was taken instead).
    pub out_of_range: Option<(usize, usize, usize)>,
}

impl Replay {
    /// Follows `choices`.
    pub fn new(choices: Vec<usize>) -> Replay {
        Replay {
            choices,
            ..Replay::default()
        }
    }

    /// Tie points the list named that the run never reached (the list was longer than
    /// the run's ties).
    pub fn unused(&self) -> usize {
        self.choices.len().saturating_sub(self.taken.len())
    }
}

impl TieBreak for Replay {
    /// Asks only about the option chosen and the one after it (what the enumeration
    /// needs), so a tie point costs a read of the wakes up to those, not of all of them.
    fn choose(&mut self, _at: SimTime, options: &mut dyn TieOptions) -> usize {
        let point = self.taken.len();
        let mut choice = self.choices.get(point).copied().unwrap_or(0);
        if !options.has(choice) {
            if self.out_of_range.is_none() {
                self.out_of_range = Some((point, choice, options.count()));
            }
            choice = 0;
        }
        self.taken.push((choice, options.has(choice + 1)));
        choice
    }
}

/// The most choices one `--order` may name, its `C*N` runs counted out (issue #24): the
/// list is sized by it, and a run meets at most one tie point per step.
pub const ORDER_CHOICES: Budget = Budget::new("order choices", 10_000_000, "choices", None);

/// An ordering written out longer than this is written with runs (`0*39999,1`): 40,000
/// same-instant agents gave a suggested `--order` of megabytes.
pub const ORDER_TEXT_BYTES: usize = 1024;

/// Writes an ordering as `run --order` takes it: the choices, comma-separated, without
/// the trailing zeros (`0` for the plain run); past [`ORDER_TEXT_BYTES`], runs of three or
/// more equal choices as `CHOICE*COUNT`.
pub fn order_text(choices: &[usize]) -> String {
    let end = choices
        .iter()
        .rposition(|choice| *choice != 0)
        .map_or(0, |last| last + 1);
    if end == 0 {
        return "0".to_string();
    }
    let plain = choices[..end]
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",");
    if plain.len() <= ORDER_TEXT_BYTES {
        return plain;
    }
    let mut parts: Vec<String> = Vec::new();
    for run in choices[..end].chunk_by(|a, b| a == b) {
        if run.len() >= 3 {
            parts.push(format!("{}*{}", run[0], run.len()));
        } else {
            parts.extend(run.iter().map(ToString::to_string));
        }
    }
    parts.join(",")
}

/// The most bytes of an ordering that `explore` shows as an `--order` to replay: runs
/// keep the orderings it enumerates short (`0*39998,1`), but one whose choices alternate
/// would still be written out as long as its tie points (megabytes for 40,000 agents).
pub const ORDER_SHOWN_BYTES: usize = 4096;

/// [`order_text`] as `explore` shows it: past [`ORDER_SHOWN_BYTES`], cut after the last
/// whole choice that fits, followed by what was cut
/// (`0,1,0,1,… [cut: 4090 of 79997 bytes shown, …]`).
pub fn order_shown(choices: &[usize]) -> String {
    let text = order_text(choices);
    if text.len() <= ORDER_SHOWN_BYTES {
        return text;
    }
    let kept = text[..ORDER_SHOWN_BYTES].rfind(',').unwrap_or(0);
    format!(
        "{}… [cut: {kept} of {} bytes shown, {} tie points; too long to replay from a \
         command line]",
        &text[..kept],
        text.len(),
        choices.len()
    )
}

/// Reads `run --order` text: whole numbers separated by commas, `CHOICE*COUNT` for a run
/// of one choice; at most [`ORDER_CHOICES`] in all, checked before the list is made.
pub fn parse_order(text: &str) -> Result<Vec<usize>, String> {
    let shown: String = text.chars().take(40).collect();
    let more = if text.chars().count() > 40 { "…" } else { "" };
    let bad = || {
        format!(
            "`{shown}{more}` is not an ordering: write the choices at each tie as whole numbers \
             separated by commas, e.g. `0,1,0`, and a run of one choice as CHOICE*COUNT, e.g. \
             `0*500,1` (as `subsim explore` prints them)"
        )
    };
    let mut runs: Vec<(usize, u64)> = Vec::new();
    for part in text.split(',') {
        let (choice, count) = match part.split_once('*') {
            Some((choice, count)) => (choice, count.trim().parse::<u64>().map_err(|_| bad())?),
            None => (part, 1),
        };
        runs.push((choice.trim().parse::<usize>().map_err(|_| bad())?, count));
    }
    let counts: u64 = runs
        .iter()
        .map(|(_, count)| *count)
        .fold(0, u64::saturating_add);
    let total = ORDER_CHOICES
        .check_usize("the --order", counts)
        .map_err(|over| over.to_string())?;
    let mut choices = Vec::with_capacity(total);
    for (choice, count) in runs {
        choices.extend(std::iter::repeat_n(choice, count as usize));
    }
    Ok(choices)
}

/// What happened in one run, coarsely enough that orderings which only interleave
/// independent events differently compare equal: how many events of each kind, how each
/// agent's last run ended, and which assertions failed.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct OutcomeSummary {
    /// Indices (0-based) of the failed assertions, and whether a safety limit stopped it.
    pub failed: Vec<usize>,
    /// Stopped by a safety limit.
    pub limited: bool,
    /// Event counts per kind.
    pub kinds: BTreeMap<&'static str, u64>,
    /// Each agent (by name, or id) → its last run's outcome (`running` if it never ended).
    pub finals: BTreeMap<String, String>,
}

#[derive(Default)]
struct Fingerprint {
    kinds: BTreeMap<&'static str, u64>,
    finals: BTreeMap<String, String>,
}

impl Sink for Fingerprint {
    fn event(&mut self, event: &Event) {
        *self.kinds.entry(event.kind.name()).or_default() += 1;
        match &event.kind {
            EventKind::AgentStarted { agent, .. } | EventKind::AgentResumed { agent, .. } => {
                self.finals.insert(agent.label(), "running".to_string());
            }
            EventKind::AgentFinished { agent, outcome, .. } => {
                self.finals
                    .insert(agent.label(), outcome.as_str().to_string());
            }
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::Notification { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::ConversationCleared
            | EventKind::DefinitionNoted { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::Worktree { .. }
            | EventKind::ActionIgnored { .. }
            | EventKind::DurationDrawn { .. }
            | EventKind::LimitReached { .. } => {}
        }
    }
}

/// One ordering and what it gave.
#[derive(Clone, Debug)]
pub struct OrderingRun {
    /// The choices made at each tie point (trailing zeros included).
    pub choices: Vec<usize>,
    /// Index into [`Exploration::outcomes`].
    pub outcome: usize,
    /// The failed assertions.
    pub failures: Vec<Failure>,
    /// The safety limit that stopped it, if any.
    pub limit: Option<LimitHit>,
}

impl OrderingRun {
    /// Did every assertion hold (and no safety limit stop the run)?
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.limit.is_none()
    }
}

/// Every ordering explored.
#[derive(Clone, Debug, Default)]
pub struct Exploration {
    /// In the order explored (the first is the plain run).
    pub orderings: Vec<OrderingRun>,
    /// The distinct outcomes, in the order first seen.
    pub outcomes: Vec<OutcomeSummary>,
    /// False when `max_orderings` or `max_explore_steps` stopped the enumeration with
    /// orderings left.
    pub complete: bool,
    /// Steps run over every ordering (the one `max_explore_steps` cut short included).
    pub steps: u64,
    /// `session.limits.max_explore_steps`, when it stopped the enumeration: the ordering
    /// it cut short is not in `orderings`.
    pub budget_hit: Option<u64>,
}

/// Runs `spec` under its orderings, at most `max_orderings` of them and at most
/// `session.limits.max_explore_steps` steps over all of them, checking `expect` under
/// each. `limit_expected`: a safety limit does not count as a failure.
///
/// The step budget is exact: a run gets `max_steps` no larger than what the runs before
/// it left, and one stopped there (not by its own `max_steps`) ends the enumeration
/// without being counted as an ordering.
pub fn explore(
    spec: &SimSpec,
    expect: &[Located],
    max_orderings: usize,
    limit_expected: bool,
) -> Exploration {
    let mut exploration = Exploration {
        complete: true,
        ..Exploration::default()
    };
    let budget = spec.session.limits.max_explore_steps;
    let own_steps = spec.session.limits.steps();
    let mut prefix: Vec<usize> = Vec::new();
    loop {
        let left = budget.saturating_sub(exploration.steps);
        if left == 0 {
            exploration.complete = false;
            exploration.budget_hit = Some(budget);
            break;
        }
        let mut run_spec = spec.clone();
        let cut = left < own_steps;
        if cut {
            run_spec.session.limits.max_steps = Some(left);
        }
        let mut replay = Replay::new(prefix);
        let mut checker = Checker::new(expect.to_vec());
        let mut fingerprint = Fingerprint::default();
        let report = {
            let mut tee = Tee {
                first: &mut checker,
                second: &mut fingerprint,
            };
            Simulation::new(run_spec).run_with_ties(&mut tee, &mut replay)
        };
        exploration.steps += report.steps;
        if cut
            && report
                .limit
                .as_ref()
                .is_some_and(|hit| hit.limit == Limit::MaxSteps)
        {
            exploration.complete = false;
            exploration.budget_hit = Some(budget);
            break;
        }
        let failures = checker.finish();
        let limit = report.limit.filter(|_| !limit_expected);
        let outcome = OutcomeSummary {
            failed: failures.iter().map(|failure| failure.index).collect(),
            limited: limit.is_some(),
            kinds: fingerprint.kinds,
            finals: fingerprint.finals,
        };
        let index = match exploration
            .outcomes
            .iter()
            .position(|seen| *seen == outcome)
        {
            Some(index) => index,
            None => {
                exploration.outcomes.push(outcome);
                exploration.outcomes.len() - 1
            }
        };
        let taken = replay.taken;
        exploration.orderings.push(OrderingRun {
            choices: taken.iter().map(|(choice, _)| *choice).collect(),
            outcome: index,
            failures,
            limit,
        });
        // The next ordering: the last tie point with an option left takes it.
        let Some(point) = taken.iter().rposition(|(_, more)| *more) else {
            break;
        };
        if exploration.orderings.len() >= max_orderings {
            exploration.complete = false;
            break;
        }
        prefix = taken[..point].iter().map(|(choice, _)| *choice).collect();
        prefix.push(taken[point].0 + 1);
    }
    exploration
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_written_without_trailing_zeros_and_read_back() {
        assert_eq!(order_text(&[]), "0");
        assert_eq!(order_text(&[0, 0]), "0");
        assert_eq!(order_text(&[0, 1, 0, 2, 0, 0]), "0,1,0,2");
        assert_eq!(parse_order("0,1,0,2"), Ok(vec![0, 1, 0, 2]));
        assert_eq!(parse_order(" 1 , 0"), Ok(vec![1, 0]));
        assert!(parse_order("1;2").is_err());
        assert!(parse_order("").is_err());
        assert!(parse_order("-1").is_err());
    }

    #[test]
    fn long_orders_are_written_with_runs_and_read_back_within_the_budget() {
        // 40,000 same-instant agents suggested an --order of megabytes.
        let mut choices = vec![0; 40_000];
        choices[39_998] = 1;
        choices.extend([2, 2, 2, 2]);
        let text = order_text(&choices);
        assert_eq!(text, "0*39998,1,0,2*4");
        assert_eq!(parse_order(&text), Ok(choices));
        assert_eq!(
            order_text(&[0, 1, 1, 1]),
            "0,1,1,1",
            "short orders are as before"
        );
        assert_eq!(parse_order("0*2, 1*1"), Ok(vec![0, 0, 1]));
        let over = parse_order("0*18446744073709551615,0*18446744073709551615").unwrap_err();
        assert!(
            over.contains("over the order choices budget of 10000000"),
            "{over}"
        );
        let bad = parse_order(&"x".repeat(100_000)).unwrap_err();
        assert!(
            bad.len() < 400,
            "the message quotes 40 characters: {}",
            bad.len()
        );
        assert!(parse_order("1*x").is_err());
    }

    #[test]
    fn an_order_too_long_even_with_runs_is_cut_with_a_note_of_what_was_cut() {
        // Alternating choices do not shorten into runs: 40,000 of them are 80 KB.
        let choices: Vec<usize> = (0..40_000).map(|point| point % 2).collect();
        let full = order_text(&choices);
        assert_eq!(full.len(), 79_999);
        let shown = order_shown(&choices);
        assert!(shown.len() < ORDER_SHOWN_BYTES + 100, "{}", shown.len());
        assert!(
            shown.ends_with("… [cut: 4095 of 79999 bytes shown, 40000 tie points; too long to replay from a command line]"),
            "{}",
            &shown[shown.len() - 120..]
        );
        assert!(full.starts_with(&shown[..4095]));
        assert_eq!(order_shown(&[0, 1]), "0,1", "short orders are shown whole");
    }

    #[test]
    fn replay_follows_its_choices_then_takes_zero() {
        let mut replay = Replay::new(vec![1, 5]);
        assert_eq!(replay.choose(SimTime::ZERO, &mut 2), 1);
        assert_eq!(replay.choose(SimTime::ZERO, &mut 3), 0, "5 is out of range");
        assert_eq!(replay.choose(SimTime::ZERO, &mut 2), 0);
        assert_eq!(replay.taken, vec![(1, false), (0, true), (0, true)]);
        assert_eq!(replay.out_of_range, Some((1, 5, 3)));
        assert_eq!(Replay::new(vec![0, 0, 1]).unused(), 3);
    }
}
