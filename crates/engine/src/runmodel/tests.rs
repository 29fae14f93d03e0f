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

/// A run's work drawn from `exp(3s)` at 1s, and a think time of 2.5s drawn from
/// `uniform(2s, 5s)` answered at 6s, on the run `lead`.
fn drawn() -> Vec<Event> {
    let mut trace = Trace(Vec::new());
    trace
        .start(0.0, 1, Some("lead"), 0, 1)
        .at(
            1.0,
            None,
            EventKind::DurationDrawn {
                agent: Some(agent(1, Some("lead"))),
                arrival: None,
                what: crate::event::DrawnFor::Work,
                drawn_us: 4_491_238,
                drawn_from: Rc::from("exp(3s)"),
                drawn_on: crate::event::DrawnOn::Run,
            },
        )
        .at(
            6.0,
            Some("PERM-3"),
            EventKind::PermissionAnswered {
                agent: agent(1, Some("lead")),
                tool: Rc::from("Bash"),
                answer: crate::spec::Answer::Approve,
                waited_us: 2_500_000,
                prompt: 1,
                think_us: Some(2_500_000),
                think_from: Some(Rc::from("uniform(2s, 5s)")),
            },
        )
        .at(
            7.0,
            None,
            EventKind::DurationDrawn {
                agent: None,
                arrival: Some(3),
                what: crate::event::DrawnFor::Retry,
                drawn_us: 962_240,
                drawn_from: Rc::from("exp(1s)"),
                drawn_on: crate::event::DrawnOn::Retry,
            },
        )
        .finish(9.0, 1, Some("lead"), 0);
    trace.0
}

#[test]
fn each_draw_is_kept_with_its_distribution_its_stream_and_its_words() {
    let model = RunModel::of(&drawn(), 100);
    let texts: Vec<&str> = model.draws.iter().map(|d| d.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "work 4.491s, drawn from exp(3s), lead's own stream",
            "think 2.5s, drawn from uniform(2s, 5s), the person's stream",
            "arrival #3: retry in 962.24ms, drawn from exp(1s), the load's retry stream",
        ]
    );
    let work = &model.draws[0];
    assert_eq!((work.at, work.until()), (1_000_000, 5_491_238));
    assert_eq!((work.agent, work.label.as_deref()), (Some(1), Some("lead")));
    assert_eq!((work.what, work.drawn_on), ("work", "run"));
    // A think time was drawn when the person took the prompt up: it ends at the answer.
    let think = &model.draws[1];
    assert_eq!(
        (think.at, think.until(), think.seq),
        (3_500_000, 6_000_000, 2)
    );
    assert_eq!((think.what, think.drawn_on), ("think", "person"));
    // A retry's arrival has no run yet.
    let retry = &model.draws[2];
    assert_eq!((retry.agent, retry.arrival), (None, Some(3)));
}

#[test]
fn a_draw_is_not_a_decision_and_does_not_move_the_end() {
    let mut events = drawn();
    // A draw after the last decision (none is, in a run; the model must not care).
    let last = events.len() as u64;
    events.push(Event {
        t: SimTime::from_secs(20),
        seq: last,
        rule: None,
        kind: EventKind::DurationDrawn {
            agent: Some(agent(1, Some("lead"))),
            arrival: None,
            what: crate::event::DrawnFor::Wait,
            drawn_us: 1,
            drawn_from: Rc::from("exp(1s)"),
            drawn_on: crate::event::DrawnOn::Run,
        },
    });
    let model = RunModel::of(&events, 100);
    assert_eq!(model.end.at, 9_000_000);
    let ordered: Vec<u64> = model.order.iter().flat_map(|g| g.seqs.clone()).collect();
    assert!(
        !ordered.contains(&1) && !ordered.contains(&last),
        "{ordered:?}"
    );
    assert_eq!(model.counts.events, events.len() as u64);
}

#[test]
fn draws_past_the_budget_are_counted_not_kept() {
    // A budget of one row keeps four draws.
    let mut trace = Trace(Vec::new());
    for i in 0..6 {
        trace.at(
            f64::from(i),
            None,
            EventKind::DurationDrawn {
                agent: Some(agent(1, None)),
                arrival: None,
                what: crate::event::DrawnFor::Work,
                drawn_us: 1_000,
                drawn_from: Rc::from("exp(1s)"),
                drawn_on: crate::event::DrawnOn::Load,
            },
        );
    }
    let model = RunModel::of(&trace.0, 1);
    assert_eq!((model.draws.len(), model.more_draws), (4, 2));
    assert_eq!(
        model.draws[0].text,
        "work 1ms, drawn from exp(1s), the load runs' shared stream"
    );
}

#[test]
fn the_json_carries_each_draw_with_when_it_ends() {
    let json = RunModel::of(&drawn(), 100).to_json();
    assert!(
        json.contains(
            "\"draws\":[{\"t_us\":1000000,\"seq\":1,\"agent\":\"a1\",\"label\":\"lead\",\
             \"arrival\":null,\"what\":\"work\",\"drawn_us\":4491238,\"until_us\":5491238,\
             \"drawn_from\":\"exp(3s)\",\"drawn_on\":\"run\",\
             \"text\":\"work 4.491s, drawn from exp(3s), lead's own stream\"}"
        ),
        "{json}"
    );
    assert!(json.contains("\"arrival\":3,\"what\":\"retry\""), "{json}");
    assert!(json.contains("],\"more_draws\":0,"), "{json}");
}
