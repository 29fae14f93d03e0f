//! `--format csv` of `subsim run`: a [`RunTable`] sink that writes one CSV row per run —
//! for a notebook or a spreadsheet — as each run ends.
//!
//! Columns: `id`, `name`, `type`, `parent`, `depth`, `requested`, `started`, `finished`,
//! `outcome`, `wait`, `mode`. Times are seconds from the start as decimals (µs precision);
//! `requested` is the first Agent call that led to the run (for a load arrival retried
//! after a rejection, its first attempt), so `wait` = `started` − `requested`. A resume is a
//! run of its own (its `requested` is empty); runs still going when the simulation ends get
//! `outcome` = `running` and an empty `finished`. Rows come in the order runs end, then the
//! unfinished ones by id. Names and types are cells of [`subsim_escape::csv`]: quoted as
//! needed, and a name that a spreadsheet would run as a formula (`=HYPERLINK(…)`) gets a `'`
//! in front. Memory is what is running (plus load arrivals waiting for a
//! retry), not what ran.

use std::collections::BTreeMap;
use std::io::{self, Write};

use subsim_escape::csv;

use crate::event::{id_string, Event, EventKind};
use crate::sink::Sink;
use crate::time::SimTime;

/// The header line.
pub const HEADER: &str = "id,name,type,parent,depth,requested,started,finished,outcome,wait,mode\n";

/// One run while it goes on.
#[derive(Clone, Debug)]
struct Open {
    name: String,
    agent_type: String,
    parent: String,
    depth: u32,
    requested: Option<u64>,
    started: u64,
    mode: &'static str,
}

/// Writes one CSV row per run to `out`.
pub struct RunTable<W: Write> {
    out: W,
    error: Option<io::Error>,
    /// The last Agent call's time and, for a load call, its arrival.
    pending: Option<(u64, Option<u64>)>,
    /// First request of load arrivals that were rejected and may be retried.
    first_request: BTreeMap<u64, u64>,
    running: BTreeMap<u32, Open>,
}

impl<W: Write> RunTable<W> {
    /// A table writing to `out`; the header is written at once.
    pub fn new(mut out: W) -> RunTable<W> {
        let error = out.write_all(HEADER.as_bytes()).err();
        RunTable {
            out,
            error,
            pending: None,
            first_request: BTreeMap::new(),
            running: BTreeMap::new(),
        }
    }

    /// Writes the runs still going, flushes, and returns the writer (or the first error).
    pub fn finish(mut self) -> io::Result<W> {
        let open = std::mem::take(&mut self.running);
        for (id, run) in open {
            self.row(id, &run, None, "running");
        }
        if let Some(error) = self.error {
            return Err(error);
        }
        self.out.flush()?;
        Ok(self.out)
    }

    fn row(&mut self, id: u32, run: &Open, finished: Option<u64>, outcome: &str) {
        if self.error.is_some() {
            return;
        }
        let requested = run.requested.map(seconds).unwrap_or_default();
        let wait = run
            .requested
            .map(|requested| seconds(run.started.saturating_sub(requested)))
            .unwrap_or_default();
        let line = format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            id_string(id),
            csv::cell(&run.name),
            csv::cell(&run.agent_type),
            run.parent,
            run.depth,
            requested,
            seconds(run.started),
            finished.map(seconds).unwrap_or_default(),
            outcome,
            wait,
            run.mode
        );
        if let Err(error) = self.out.write_all(line.as_bytes()) {
            self.error = Some(error);
        }
    }
}

impl<W: Write> Sink for RunTable<W> {
    fn event(&mut self, event: &Event) {
        let t = event.t.as_micros();
        match &event.kind {
            EventKind::SpawnRequested { arrival, .. } => {
                let first = match arrival {
                    Some(arrival) => *self.first_request.get(arrival).unwrap_or(&t),
                    None => t,
                };
                self.pending = Some((first, *arrival));
            }
            EventKind::SpawnRejected { .. } => {
                if let Some((first, Some(arrival))) = self.pending.take() {
                    self.first_request.insert(arrival, first);
                }
            }
            EventKind::AgentStarted {
                agent,
                parent,
                depth,
                mode,
                profile,
                ..
            } => {
                let requested = self.pending.take().map(|(first, arrival)| {
                    if let Some(arrival) = arrival {
                        self.first_request.remove(&arrival);
                    }
                    first
                });
                self.running.insert(
                    agent.id,
                    Open {
                        name: agent.name.as_deref().unwrap_or_default().to_string(),
                        agent_type: profile.agent_type.to_string(),
                        parent: parent.id_string(),
                        depth: *depth,
                        requested,
                        started: t,
                        mode: mode.as_str(),
                    },
                );
            }
            EventKind::AgentResumed {
                agent, by, mode, ..
            } => {
                let depth = self.running.get(&by.id).map_or(1, |run| run.depth + 1);
                self.running.insert(
                    agent.id,
                    Open {
                        name: agent.name.as_deref().unwrap_or_default().to_string(),
                        agent_type: String::new(),
                        parent: by.id_string(),
                        depth,
                        requested: None,
                        started: t,
                        mode: mode.as_str(),
                    },
                );
            }
            EventKind::AgentBackgrounded { agent, .. } => {
                if let Some(run) = self.running.get_mut(&agent.id) {
                    run.mode = "background";
                }
            }
            EventKind::AgentFinished { agent, outcome, .. } => {
                if let Some(run) = self.running.remove(&agent.id) {
                    self.row(agent.id, &run, Some(t), outcome.as_str());
                }
            }
            EventKind::SessionStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
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

/// Seconds with six decimals, trailing zeros trimmed (`1.5`, `12`).
fn seconds(micros: u64) -> String {
    let whole = micros / 1_000_000;
    let fraction = micros % 1_000_000;
    if fraction == 0 {
        return whole.to_string();
    }
    let text = format!("{whole}.{fraction:06}");
    text.trim_end_matches('0').to_string()
}

/// `SimTime` as the table writes it (for tests and docs).
pub fn format_time(time: SimTime) -> String {
    seconds(time.as_micros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{AgentRef, Outcome, RunProfile};
    use std::rc::Rc;
    use subsim_rules::{Mode, RejectReason};

    fn at(millis: u64, kind: EventKind) -> Event {
        Event {
            t: SimTime::from_millis(millis),
            seq: 0,
            rule: None,
            kind,
        }
    }

    fn request(millis: u64, arrival: Option<u64>) -> Event {
        at(
            millis,
            EventKind::SpawnRequested {
                caller: AgentRef::MAIN,
                agent_type: "worker".into(),
                name: None,
                background: None,
                fork: false,
                arrival,
                stream: None,
            },
        )
    }

    fn start(millis: u64, id: u32, name: Option<&str>) -> Event {
        at(
            millis,
            EventKind::AgentStarted {
                agent: AgentRef {
                    id,
                    name: name.map(Rc::from),
                },
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running: 1,
                cap_checked: true,
                profile: Rc::new(RunProfile::new("worker", "sonnet", &[])),
            },
        )
    }

    #[test]
    fn one_row_per_run_with_the_wait_from_the_first_request() {
        let mut table = RunTable::new(Vec::new());
        let events = [
            request(0, Some(1)),
            start(0, 1, Some("w, 1")),
            request(500, Some(2)),
            at(
                500,
                EventKind::SpawnRejected {
                    caller: AgentRef::MAIN,
                    agent_type: "worker".into(),
                    name: None,
                    reason: RejectReason::ConcurrentLimit,
                    message: "".into(),
                    hint: None,
                    running: 1,
                },
            ),
            at(
                2_000,
                EventKind::AgentFinished {
                    agent: AgentRef { id: 1, name: None },
                    outcome: Outcome::Completed,
                    running: 0,
                    detail: None,
                },
            ),
            request(2_000, Some(2)),
            start(2_000, 2, None),
        ];
        for event in &events {
            table.event(event);
        }
        let text = String::from_utf8(table.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            format!(
                "{HEADER}a1,\"w, 1\",worker,main,1,0,0,2,completed,0,background\n\
                 a2,,worker,main,1,0.5,2,,running,1.5,background\n"
            )
        );
        assert_eq!(format_time(SimTime(1_500_001)), "1.500001");
    }
}
