use std::rc::Rc;

use subsim_rules::notify::Notice;
use subsim_rules::Mode;

use super::*;
use crate::event::{AgentRef, RunProfile, WaitingFor};
use crate::Outcome;

fn agent(id: u32, name: Option<&str>) -> AgentRef {
    AgentRef {
        id,
        name: name.map(Rc::from),
    }
}

struct Trace(Vec<Event>);

impl Trace {
    fn at(&mut self, secs: f64, rule: Option<RuleId>, kind: EventKind) -> &mut Trace {
        let seq = self.0.len() as u64;
        self.0.push(Event {
            t: SimTime::ZERO.plus((secs * 1e6) as u64),
            seq,
            rule,
            kind,
        });
        self
    }

    fn start(
        &mut self,
        secs: f64,
        id: u32,
        name: Option<&str>,
        parent: u32,
        running: u32,
    ) -> &mut Trace {
        self.at(
            secs,
            Some("FGBG-1"),
            EventKind::AgentStarted {
                agent: agent(id, name),
                parent: agent(parent, None),
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running,
                cap_checked: true,
                profile: Rc::new(RunProfile::new("worker", "haiku", &[])),
            },
        )
    }

    fn finish(&mut self, secs: f64, id: u32, name: Option<&str>, running: u32) -> &mut Trace {
        self.at(
            secs,
            None,
            EventKind::AgentFinished {
                agent: agent(id, name),
                outcome: Outcome::Completed,
                running,
                detail: None,
            },
        )
    }

    fn notify(&mut self, secs: f64, to: u32, from: u32, name: Option<&str>) -> &mut Trace {
        self.at(
            secs,
            Some("NOTIFY-3"),
            EventKind::Notification {
                to: agent(to, None),
                from: agent(from, name),
                what: Notice::Completion,
            },
        )
    }
}

/// main launches `lead` (a1), which launches an unnamed worker (a2) and waits for it.
fn nested() -> Vec<Event> {
    let mut trace = Trace(Vec::new());
    trace
        .start(0.0, 1, Some("lead"), 0, 1)
        .start(1.0, 2, None, 1, 2)
        .at(
            2.0,
            Some("NOTIFY-6"),
            EventKind::AgentWaiting {
                agent: agent(1, Some("lead")),
                waiting_for: WaitingFor::Children,
                count: 1,
            },
        )
        .finish(9.0, 2, None, 1)
        .notify(9.0, 1, 2, None)
        .finish(9.0, 1, Some("lead"), 0)
        .notify(9.0, 0, 1, Some("lead"));
    trace.0
}

#[test]
fn the_end_chain_goes_through_the_waits_to_the_child_that_finished_last() {
    let model = RunModel::of(&nested(), 100);
    assert_eq!(model.end.at, 9_000_000);
    let agents: Vec<&str> = model.chain.iter().map(|l| l.agent.as_str()).collect();
    assert_eq!(
        agents,
        ["main", "lead", "a2", "a2", "lead", "lead"],
        "{:#?}",
        model.chain
    );
    assert_eq!(model.chain[1].rule, Some("NOTIFY-6"));
    let because = model.because();
    assert!(
        because.starts_with("It ended at 9s because main heard lead's completion"),
        "{because}"
    );
    assert!(
        because.contains("the last of them, a2, finished at 9s"),
        "{because}"
    );
}

#[test]
fn an_agent_without_a_name_is_shown_by_its_id() {
    let model = RunModel::of(&nested(), 100);
    assert_eq!(model.runs[2].label, "a2");
    assert!(model.to_json().contains("\"label\":\"a2\""));
}

#[test]
fn counts_are_per_agent_and_peak_running_is_the_highest_count() {
    let model = RunModel::of(&nested(), 100);
    assert_eq!(model.counts.all.started, 2);
    assert_eq!(model.counts.all.finished, 2);
    assert_eq!(model.counts.by_agent[&Rc::from("worker")].finished, 2);
    assert_eq!(model.counts.peak_running, 2);
}

#[test]
fn finishes_and_their_notifications_group_as_a_pattern_of_two() {
    let mut trace = Trace(Vec::new());
    trace
        .start(0.0, 1, Some("r1"), 0, 1)
        .start(0.0, 2, Some("r2"), 0, 2)
        .finish(5.0, 1, Some("r1"), 1)
        .notify(5.0, 0, 1, Some("r1"))
        .finish(5.0, 2, Some("r2"), 0)
        .notify(5.0, 0, 2, Some("r2"));
    let model = RunModel::of(&trace.0, 100);
    let shapes: Vec<(usize, usize)> = model
        .order
        .iter()
        .map(|g| (g.seqs.len(), g.period))
        .collect();
    assert_eq!(shapes, [(2, 1), (4, 2)]);
    assert_eq!(model.order[1].subjects, ["r1", "r2"]);
}

#[test]
fn the_row_budget_counts_runs_it_does_not_keep() {
    let model = RunModel::of(&nested(), 2);
    assert_eq!(model.runs.len(), 2);
    assert_eq!(model.more_runs, 1);
    assert_eq!(model.counts.all.started, 2);
}
