//! Run statistics: a [`Summary`] sink that aggregates the trace as it streams by, and
//! renders the result as an aligned text table or as JSON.
//!
//! Memory is constant per event, except that the waits of answered permission prompts are
//! kept (one `u64` each) for the 95th percentile. It measures what the trace says; it
//! makes no decisions and knows no rules.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use subsim_rules::RejectReason;

use crate::event::{Event, EventKind, Outcome};
use crate::render::jsonl::write_string;
use crate::sink::Sink;
use crate::time::{human_duration, SimTime};

/// The outcomes in the order tables list them.
const OUTCOMES: [Outcome; 5] = [
    Outcome::Completed,
    Outcome::Partial,
    Outcome::Failed,
    Outcome::Stopped,
    Outcome::Cancelled,
];

/// Aggregate statistics of one run.
///
/// ```
/// use subsim_engine::summary::Summary;
/// use subsim_engine::{AgentRef, Event, EventKind, Outcome, SimTime, Sink};
/// let mut summary = Summary::default();
/// summary.event(&Event { t: SimTime::from_secs(10), seq: 0, rule: None,
///     kind: EventKind::AgentFinished { agent: AgentRef { id: 1, name: None },
///         outcome: Outcome::Completed, running: 0, detail: None } });
/// assert_eq!(summary.makespan(), SimTime::from_secs(10));
/// assert!(summary.render_json().contains("\"completed\":1"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Summary {
    events: u64,
    cap: Option<u32>,
    spawns_requested: u64,
    started: u64,
    rejected: [u64; RejectReason::ALL.len()],
    rejected_other: u64,
    resumes: u64,
    resumes_past_cap: u64,
    running: u32,
    peak_running: u32,
    /// ∫ running dt, in running·µs.
    running_area: u128,
    last_t: SimTime,
    prompts_by_route: BTreeMap<&'static str, u64>,
    auto_denied: u64,
    withdrawn: u64,
    /// Prompt number → where it was shown, while it waits for an answer.
    pending_routes: BTreeMap<u64, &'static str>,
    /// Where a prompt was shown → the waits of its answered prompts, µs.
    waits: BTreeMap<&'static str, Vec<u64>>,
    finished: [u64; OUTCOMES.len()],
    notifications: BTreeMap<&'static str, u64>,
    limit: Option<(&'static str, u64)>,
}

/// Mean and 95th percentile of a set of waits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitStats {
    /// How many waits.
    pub count: u64,
    /// Mean, µs (rounded down).
    pub mean_us: u64,
    /// 95th percentile by the nearest-rank method, µs.
    pub p95_us: u64,
}

impl WaitStats {
    /// Statistics of `waits` (empty → all zero).
    pub fn of(waits: &[u64]) -> WaitStats {
        if waits.is_empty() {
            return WaitStats {
                count: 0,
                mean_us: 0,
                p95_us: 0,
            };
        }
        let count = waits.len() as u64;
        let total: u128 = waits.iter().map(|&wait| u128::from(wait)).sum();
        let mut sorted = waits.to_vec();
        sorted.sort_unstable();
        // Nearest rank: the smallest value with at least 95% of the waits at or below it.
        let rank = (waits.len() * 95).div_ceil(100);
        WaitStats {
            count,
            mean_us: (total / u128::from(count)) as u64,
            p95_us: sorted[rank - 1],
        }
    }
}

impl Sink for Summary {
    fn event(&mut self, event: &Event) {
        self.events += 1;
        // Time-weighted running: the count holds from one event to the next.
        let elapsed = event.t.as_micros().saturating_sub(self.last_t.as_micros());
        self.running_area += u128::from(self.running) * u128::from(elapsed);
        self.last_t = self.last_t.max(event.t);
        if let Some(running) = event.kind.running() {
            self.running = running;
            self.peak_running = self.peak_running.max(running);
        }
        match &event.kind {
            EventKind::SessionStarted { cap, .. } => self.cap = *cap,
            EventKind::SpawnRequested { .. } => self.spawns_requested += 1,
            EventKind::SpawnRejected { reason, .. } => {
                match RejectReason::ALL.iter().position(|known| known == reason) {
                    Some(index) => self.rejected[index] += 1,
                    None => self.rejected_other += 1,
                }
            }
            EventKind::AgentStarted { .. } => self.started += 1,
            EventKind::AgentResumed { running, .. } => {
                self.resumes += 1;
                if self.cap.is_some_and(|cap| *running > cap) {
                    self.resumes_past_cap += 1;
                }
            }
            EventKind::PermissionRequested {
                routed_to,
                auto_denied,
                prompt,
                ..
            } => {
                if *auto_denied {
                    self.auto_denied += 1;
                } else {
                    let route = routed_to.unwrap_or("unrouted");
                    *self.prompts_by_route.entry(route).or_default() += 1;
                    self.pending_routes.insert(*prompt, route);
                }
            }
            EventKind::PermissionAnswered {
                waited_us, prompt, ..
            } => {
                let route = self.pending_routes.remove(prompt).unwrap_or("unrouted");
                self.waits.entry(route).or_default().push(*waited_us);
            }
            EventKind::PermissionWithdrawn { prompt, .. } => {
                self.pending_routes.remove(prompt);
                self.withdrawn += 1;
            }
            EventKind::AgentFinished { outcome, .. } => {
                let index = OUTCOMES
                    .iter()
                    .position(|known| known == outcome)
                    .unwrap_or(0);
                self.finished[index] += 1;
            }
            EventKind::Notification { what, .. } => {
                // The same static text again (the usual case) is found by its address, with
                // no string comparisons; anything else goes through the map's search.
                let same = self
                    .notifications
                    .iter_mut()
                    .find_map(|(known, count)| std::ptr::eq(*known, *what).then_some(count));
                match same {
                    Some(count) => *count += 1,
                    None => *self.notifications.entry(what).or_default() += 1,
                }
            }
            EventKind::LimitReached { limit, value } => self.limit = Some((limit, *value)),
            _ => {}
        }
    }
}

impl Summary {
    /// A summary that has seen nothing.
    pub fn new() -> Summary {
        Summary::default()
    }

    /// Time of the last event.
    pub fn makespan(&self) -> SimTime {
        self.last_t
    }

    /// Events seen.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Agent tool calls made.
    pub fn spawns_requested(&self) -> u64 {
        self.spawns_requested
    }

    /// Runs started (spawned agents and `/subtask` forks).
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Spawns refused for `reason`.
    pub fn rejected(&self, reason: RejectReason) -> u64 {
        RejectReason::ALL
            .iter()
            .position(|known| *known == reason)
            .map_or(0, |index| self.rejected[index])
    }

    /// Spawns refused for any reason.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.iter().sum::<u64>() + self.rejected_other
    }

    /// Resumes of finished agents, and how many of them left the running count above the cap.
    pub fn resumes(&self) -> (u64, u64) {
        (self.resumes, self.resumes_past_cap)
    }

    /// Peak of the running-subagent count.
    pub fn peak_running(&self) -> u32 {
        self.peak_running
    }

    /// Mean running-subagent count, weighted by time over the makespan (0 for an empty run).
    pub fn mean_running(&self) -> f64 {
        if self.last_t.as_micros() == 0 {
            return 0.0;
        }
        self.running_area as f64 / self.last_t.as_micros() as f64
    }

    /// Cap rejections / spawn requests (0 when nothing was requested).
    pub fn blocking(&self) -> f64 {
        if self.spawns_requested == 0 {
            return 0.0;
        }
        self.rejected(RejectReason::ConcurrentLimit) as f64 / self.spawns_requested as f64
    }

    /// Prompts shown, by where they were shown (`main`, `terminal`).
    pub fn prompts_by_route(&self) -> &BTreeMap<&'static str, u64> {
        &self.prompts_by_route
    }

    /// Prompts auto-denied without being shown (PERM-5).
    pub fn auto_denied(&self) -> u64 {
        self.auto_denied
    }

    /// Wait statistics of the answered prompts that were shown at `route` (`main`: in the
    /// main session).
    pub fn waits(&self, route: &str) -> WaitStats {
        WaitStats::of(self.waits.get(route).map_or(&[][..], |waits| &waits[..]))
    }

    /// Runs that ended with `outcome`.
    pub fn finished(&self, outcome: Outcome) -> u64 {
        OUTCOMES
            .iter()
            .position(|known| *known == outcome)
            .map_or(0, |index| self.finished[index])
    }

    /// Notifications by `what`.
    pub fn notifications(&self) -> &BTreeMap<&'static str, u64> {
        &self.notifications
    }

    /// The safety limit that ended the run, if one did.
    pub fn limit(&self) -> Option<(&'static str, u64)> {
        self.limit
    }

    /// An aligned two-column table for people.
    pub fn render_text(&self) -> String {
        let mut rows: Vec<(String, String)> = Vec::new();
        let mut row = |label: &str, value: String| rows.push((label.to_string(), value));
        row("events", self.events.to_string());
        row(
            "makespan",
            format!(
                "{} ({})",
                self.last_t,
                human_duration(self.last_t.as_micros())
            ),
        );
        row("spawns requested", self.spawns_requested.to_string());
        row(
            "  started",
            format!("{} (every run, /subtask forks included)", self.started),
        );
        row("  rejected", self.rejected_total().to_string());
        for (reason, count) in RejectReason::ALL.iter().zip(self.rejected) {
            if count > 0 {
                row(&format!("    {}", reason.as_str()), count.to_string());
            }
        }
        if self.rejected_other > 0 {
            row("    other", self.rejected_other.to_string());
        }
        row(
            "blocking",
            format!(
                "{:.3} ({} of {} spawn requests hit the cap)",
                self.blocking(),
                self.rejected(RejectReason::ConcurrentLimit),
                self.spawns_requested
            ),
        );
        row(
            "resumes",
            format!("{} ({} past the cap)", self.resumes, self.resumes_past_cap),
        );
        let cap = match self.cap {
            Some(cap) => format!(" (cap {cap})"),
            None => " (no cap)".to_string(),
        };
        row("peak running", format!("{}{cap}", self.peak_running));
        row(
            "mean running",
            format!("{:.2} (time-weighted)", self.mean_running()),
        );
        let shown: u64 = self.prompts_by_route.values().sum();
        let routes = self
            .prompts_by_route
            .iter()
            .map(|(route, count)| format!("{route} {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "prompts shown",
            if routes.is_empty() {
                "0".to_string()
            } else {
                format!("{shown} ({routes})")
            },
        );
        row("  auto-denied", self.auto_denied.to_string());
        if self.withdrawn > 0 {
            row("  withdrawn", self.withdrawn.to_string());
        }
        for (route, waits) in &self.waits {
            let stats = WaitStats::of(waits);
            let label = match *route {
                "main" => "  wait, main session".to_string(),
                other => format!("  wait, {other}"),
            };
            row(
                &label,
                format!(
                    "mean {}, p95 {} ({} answered)",
                    human_duration(stats.mean_us),
                    human_duration(stats.p95_us),
                    stats.count
                ),
            );
        }
        let finished: u64 = self.finished.iter().sum();
        let outcomes = OUTCOMES
            .iter()
            .zip(self.finished)
            .filter(|(_, count)| *count > 0)
            .map(|(outcome, count)| format!("{} {count}", outcome.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "finished",
            if outcomes.is_empty() {
                "0".to_string()
            } else {
                format!("{finished} ({outcomes})")
            },
        );
        let notified: u64 = self.notifications.values().sum();
        let whats = self
            .notifications
            .iter()
            .map(|(what, count)| format!("{what} {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "notifications",
            if whats.is_empty() {
                "0".to_string()
            } else {
                format!("{notified} ({whats})")
            },
        );
        if let Some((limit, value)) = self.limit {
            row("stopped by", format!("safety limit {limit} = {value}"));
        }
        let width = rows
            .iter()
            .map(|(label, _)| label.chars().count())
            .max()
            .unwrap_or(0);
        let mut text = String::new();
        for (label, value) in rows {
            let _ = writeln!(text, "{label:<width$}  {value}");
        }
        text
    }

    /// The statistics as one JSON object (keys in a fixed order; byte-for-byte deterministic).
    pub fn render_json(&self) -> String {
        let mut json = Json::default();
        json.open();
        json.key("events").u64(self.events);
        json.key("makespan_us").u64(self.last_t.as_micros());
        match self.cap {
            Some(cap) => json.key("cap").u64(u64::from(cap)),
            None => json.key("cap").raw("null"),
        };
        json.key("spawns").open();
        json.key("requested").u64(self.spawns_requested);
        json.key("started").u64(self.started);
        json.key("rejected").u64(self.rejected_total());
        json.key("rejected_by_reason").open();
        for (reason, count) in RejectReason::ALL.iter().zip(self.rejected) {
            json.key(reason.as_str()).u64(count);
        }
        if self.rejected_other > 0 {
            json.key("other").u64(self.rejected_other);
        }
        json.close();
        json.close();
        json.key("blocking").f64(self.blocking());
        json.key("resumes").open();
        json.key("total").u64(self.resumes);
        json.key("past_cap").u64(self.resumes_past_cap);
        json.close();
        json.key("running").open();
        json.key("peak").u64(u64::from(self.peak_running));
        json.key("mean").f64(self.mean_running());
        json.close();
        json.key("prompts").open();
        json.key("shown").open();
        for (route, count) in &self.prompts_by_route {
            json.key(route).u64(*count);
        }
        json.close();
        json.key("auto_denied").u64(self.auto_denied);
        json.key("withdrawn").u64(self.withdrawn);
        json.key("wait").open();
        for (route, waits) in &self.waits {
            let stats = WaitStats::of(waits);
            json.key(route).open();
            json.key("answered").u64(stats.count);
            json.key("mean_us").u64(stats.mean_us);
            json.key("p95_us").u64(stats.p95_us);
            json.close();
        }
        json.close();
        json.close();
        json.key("finished").open();
        for (outcome, count) in OUTCOMES.iter().zip(self.finished) {
            json.key(outcome.as_str()).u64(count);
        }
        json.close();
        json.key("notifications").open();
        for (what, count) in &self.notifications {
            json.key(what).u64(*count);
        }
        json.close();
        match self.limit {
            Some((limit, value)) => {
                json.key("limit").open();
                json.key("name").string(limit);
                json.key("value").u64(value);
                json.close();
            }
            None => {
                json.key("limit").raw("null");
            }
        }
        json.close();
        let mut text = String::from_utf8(json.out).expect("the JSON writer writes UTF-8");
        text.push('\n');
        text
    }
}

/// A tiny JSON object writer: enough for the summary, with commas placed for us.
#[derive(Default)]
struct Json {
    out: Vec<u8>,
    /// Per open object: has it had a member yet?
    had_member: Vec<bool>,
}

impl Json {
    fn open(&mut self) -> &mut Json {
        self.out.push(b'{');
        self.had_member.push(false);
        self
    }

    fn close(&mut self) -> &mut Json {
        self.had_member.pop();
        self.out.push(b'}');
        self
    }

    fn key(&mut self, key: &str) -> &mut Json {
        if let Some(had) = self.had_member.last_mut() {
            if *had {
                self.out.push(b',');
            }
            *had = true;
        }
        write_string(&mut self.out, key);
        self.out.push(b':');
        self
    }

    fn u64(&mut self, value: u64) -> &mut Json {
        crate::render::jsonl::write_u64(&mut self.out, value);
        self
    }

    /// Six decimals, trailing zeros trimmed: deterministic and readable.
    fn f64(&mut self, value: f64) -> &mut Json {
        let value = if value.is_finite() { value } else { 0.0 };
        let text = format!("{value:.6}");
        let text = text.trim_end_matches('0');
        let text = text
            .strip_suffix('.')
            .map_or(text.to_string(), |whole| format!("{whole}.0"));
        self.out.extend_from_slice(text.as_bytes());
        self
    }

    fn string(&mut self, value: &str) -> &mut Json {
        write_string(&mut self.out, value);
        self
    }

    fn raw(&mut self, value: &str) -> &mut Json {
        self.out.extend_from_slice(value.as_bytes());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::AgentRef;
    use crate::event::RunProfile;
    use crate::spec::Answer;
    use std::rc::Rc;
    use subsim_rules::Mode;

    fn at(millis: u64, kind: EventKind) -> Event {
        Event {
            t: SimTime::from_millis(millis),
            seq: 0,
            rule: None,
            kind,
        }
    }

    fn agent(id: u32) -> AgentRef {
        AgentRef { id, name: None }
    }

    fn started(millis: u64, id: u32, running: u32) -> Event {
        at(
            millis,
            EventKind::AgentStarted {
                agent: agent(id),
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running,
                cap_checked: true,
                profile: Rc::new(RunProfile::new("general-purpose", "sonnet", &[])),
            },
        )
    }

    fn finished(millis: u64, id: u32, outcome: Outcome, running: u32) -> Event {
        at(
            millis,
            EventKind::AgentFinished {
                agent: agent(id),
                outcome,
                running,
                detail: None,
            },
        )
    }

    fn requested(millis: u64) -> Event {
        at(
            millis,
            EventKind::SpawnRequested {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: None,
                background: None,
                fork: false,
            },
        )
    }

    fn rejected(millis: u64, reason: RejectReason, running: u32) -> Event {
        at(
            millis,
            EventKind::SpawnRejected {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: None,
                reason,
                message: "".into(),
                hint: None,
                running,
            },
        )
    }

    fn session(cap: u32) -> Event {
        at(
            0,
            EventKind::SessionStarted {
                version: "2.1.230".into(),
                session_kind: "interactive",
                cap: Some(cap),
                depth_limit: 3,
                fork_mode: true,
                background_disabled: false,
                main_agent: None,
            },
        )
    }

    fn summarize(events: &[Event]) -> Summary {
        let mut summary = Summary::new();
        for event in events {
            summary.event(event);
        }
        summary
    }

    #[test]
    fn time_weighted_mean_running() {
        // 1 running over [0, 2s), 2 over [2s, 6s), 1 over [6s, 10s): (2 + 8 + 4) / 10 = 1.4.
        let summary = summarize(&[
            session(20),
            started(0, 1, 1),
            started(2_000, 2, 2),
            finished(6_000, 1, Outcome::Completed, 1),
            finished(10_000, 2, Outcome::Completed, 0),
        ]);
        assert_eq!(summary.makespan(), SimTime::from_secs(10));
        assert!(
            (summary.mean_running() - 1.4).abs() < 1e-12,
            "{}",
            summary.mean_running()
        );
        assert_eq!(summary.peak_running(), 2);
        assert_eq!(summary.finished(Outcome::Completed), 2);
    }

    #[test]
    fn empty_run() {
        let summary = Summary::new();
        assert_eq!(summary.mean_running(), 0.0);
        assert_eq!(summary.blocking(), 0.0);
        assert_eq!(
            summary.waits("main"),
            WaitStats {
                count: 0,
                mean_us: 0,
                p95_us: 0
            }
        );
        assert!(summary.render_text().contains("events"));
    }

    #[test]
    fn rejections_and_blocking() {
        let mut events = vec![session(2)];
        for index in 0..4 {
            events.push(requested(0));
            if index < 2 {
                events.push(started(0, index + 1, index + 1));
            } else {
                events.push(rejected(0, RejectReason::ConcurrentLimit, 2));
            }
        }
        events.push(requested(1_000));
        events.push(rejected(1_000, RejectReason::DepthLimit, 2));
        let summary = summarize(&events);
        assert_eq!(summary.spawns_requested(), 5);
        assert_eq!(summary.started(), 2);
        assert_eq!(summary.rejected(RejectReason::ConcurrentLimit), 2);
        assert_eq!(summary.rejected(RejectReason::DepthLimit), 1);
        assert_eq!(summary.rejected_total(), 3);
        assert!((summary.blocking() - 0.4).abs() < 1e-12);
        let text = summary.render_text();
        assert!(text.contains("    concurrent_limit  2\n"), "{text}");
        assert!(
            !text.contains("unknown_type"),
            "zero reasons are left out of the table: {text}"
        );
        let json = summary.render_json();
        assert!(
            json.contains(
                r#""rejected_by_reason":{"concurrent_limit":2,"depth_limit":1,"denied":0,"#
            ),
            "{json}"
        );
        assert!(json.contains(r#""blocking":0.4,"#), "{json}");
    }

    #[test]
    fn resumes_past_the_cap() {
        let resumed = |millis, id, running| {
            at(
                millis,
                EventKind::AgentResumed {
                    agent: agent(id),
                    by: AgentRef::MAIN,
                    cap_checked: false,
                    running,
                    mode: Mode::Background,
                    model: Rc::from("opus"),
                    effort: None,
                },
            )
        };
        let summary = summarize(&[
            session(2),
            resumed(0, 1, 1),
            resumed(0, 2, 2),
            resumed(0, 3, 3),
        ]);
        assert_eq!(summary.resumes(), (3, 1));
        assert_eq!(summary.peak_running(), 3);
    }

    #[test]
    fn prompt_waits_mean_and_p95() {
        let mut events = vec![session(20)];
        // Twenty prompts shown in main, waiting 1s, 2s, …, 20s; one at the terminal; one auto-denied.
        for prompt in 1..=20u64 {
            events.push(at(
                0,
                EventKind::PermissionRequested {
                    agent: agent(1),
                    tool: "Bash".into(),
                    routed_to: Some("main"),
                    auto_denied: false,
                    prompt,
                },
            ));
        }
        events.push(at(
            0,
            EventKind::PermissionRequested {
                agent: agent(2),
                tool: "Bash".into(),
                routed_to: Some("terminal"),
                auto_denied: false,
                prompt: 21,
            },
        ));
        events.push(at(
            0,
            EventKind::PermissionRequested {
                agent: agent(3),
                tool: "Bash".into(),
                routed_to: None,
                auto_denied: true,
                prompt: 22,
            },
        ));
        // Answered in reverse order, to show that the percentile sorts.
        for prompt in (1..=20u64).rev() {
            events.push(at(
                prompt * 1_000,
                EventKind::PermissionAnswered {
                    agent: agent(1),
                    tool: "Bash".into(),
                    answer: Answer::Approve,
                    waited_us: prompt * 1_000_000,
                    prompt,
                },
            ));
        }
        events.push(at(
            30_000,
            EventKind::PermissionAnswered {
                agent: agent(2),
                tool: "Bash".into(),
                answer: Answer::Deny,
                waited_us: 7_000_000,
                prompt: 21,
            },
        ));
        let summary = summarize(&events);
        // Mean of 1..=20 s is 10.5 s; nearest-rank p95 of 20 values is the 19th: 19 s.
        assert_eq!(
            summary.waits("main"),
            WaitStats {
                count: 20,
                mean_us: 10_500_000,
                p95_us: 19_000_000
            }
        );
        assert_eq!(
            summary.waits("terminal"),
            WaitStats {
                count: 1,
                mean_us: 7_000_000,
                p95_us: 7_000_000
            }
        );
        assert_eq!(summary.prompts_by_route().get("main"), Some(&20));
        assert_eq!(summary.auto_denied(), 1);
        let text = summary.render_text();
        assert!(
            text.contains("wait, main session  mean 10.5s, p95 19s (20 answered)"),
            "{text}"
        );
    }

    #[test]
    fn p95_small_samples() {
        assert_eq!(WaitStats::of(&[5]).p95_us, 5);
        assert_eq!(WaitStats::of(&[1, 2]).p95_us, 2);
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(WaitStats::of(&hundred).p95_us, 95);
        assert_eq!(WaitStats::of(&hundred).mean_us, 50);
    }

    #[test]
    fn notifications_and_json_shape() {
        let notify = |what| {
            at(
                5_000,
                EventKind::Notification {
                    to: AgentRef::MAIN,
                    from: agent(1),
                    what,
                },
            )
        };
        let summary = summarize(&[
            session(20),
            notify("completion"),
            notify("completion"),
            notify("bash_done"),
            finished(5_000, 1, Outcome::Stopped, 0),
        ]);
        assert_eq!(summary.notifications().get("completion"), Some(&2));
        let json = summary.render_json();
        assert!(
            json.starts_with(r#"{"events":5,"makespan_us":5000000,"cap":20,"spawns":{"#),
            "{json}"
        );
        assert!(
            json.contains(r#""notifications":{"bash_done":1,"completion":2}"#),
            "{json}"
        );
        assert!(
            json.contains(
                r#""finished":{"completed":0,"partial":0,"failed":0,"stopped":1,"cancelled":0}"#
            ),
            "{json}"
        );
        assert!(json.ends_with("\"limit\":null}\n"), "{json}");
        assert_eq!(json, summary.clone().render_json(), "deterministic");
    }

    #[test]
    fn text_table_is_aligned() {
        let summary = summarize(&[
            session(20),
            started(0, 1, 1),
            finished(4_000, 1, Outcome::Completed, 0),
        ]);
        let text = summary.render_text();
        // The first row is `events`, padded: its value's column is every row's.
        let first = text.lines().next().unwrap();
        let column = "events".len() + first["events".len()..].find(|c: char| c != ' ').unwrap();
        for line in text.lines() {
            let chars: Vec<char> = line.chars().collect();
            assert!(
                chars[column - 1] == ' ' && chars[column] != ' ',
                "misaligned: {line:?}\n{text}"
            );
        }
        assert!(text.contains("mean running"), "{text}");
    }
}
