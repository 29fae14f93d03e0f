//! Which same-instant decisions the views may show as one: neighbours only, never across
//! another decision.
//!
//! A group is a run of neighbours repeating one pattern for different subjects: one
//! decision (`busy-1 … busy-3 (3) started`) or two about the same subject (`researcher-n
//! finished`, then `main ← researcher-n`). Anything else between two alike decisions
//! splits them: the resume between `busy-3` and `rejected-1` stays between them.

use subsim_rules::RuleId;

use crate::event::{AgentRef, Event, EventKind};

/// Splits one instant's decisions, in order, into groups `(start, len, period)` covering
/// them all in order. `keys` say which decisions are alike, `subjects` whom each is about
/// (a decision about no one is never grouped).
pub fn split<K: PartialEq, S: PartialEq>(
    keys: &[K],
    subjects: &[Option<S>],
) -> Vec<(usize, usize, usize)> {
    let n = keys.len().min(subjects.len());
    let about = |at: usize| subjects[at].is_some();
    let mut groups = Vec::new();
    let mut i = 0;
    while i < n {
        if about(i) {
            let mut j = i + 1;
            while j < n && about(j) && keys[j] == keys[i] {
                j += 1;
            }
            if j - i >= 2 {
                groups.push((i, j - i, 1));
                i = j;
                continue;
            }
            let unit = |m: usize| {
                let (a, b) = (i + 2 * m, i + 2 * m + 1);
                b < n
                    && keys[a] == keys[i]
                    && keys[b] == keys[i + 1]
                    && about(a)
                    && subjects[a] == subjects[b]
            };
            if i + 1 < n && keys[i] != keys[i + 1] {
                let mut m = 0;
                while unit(m) {
                    m += 1;
                }
                if m >= 2 {
                    groups.push((i, 2 * m, 2));
                    i += 2 * m;
                    continue;
                }
            }
        }
        groups.push((i, 1, 1));
        i += 1;
    }
    groups
}

/// What makes two decisions alike for the model: their kind, their rule and the words
/// that their lines would differ in besides the subject (a rejection's reason, a run's
/// mode and depth, an outcome, a notice).
pub type Key = (&'static str, Option<RuleId>, String);

/// The model's [`Key`] of `event`.
pub fn key(event: &Event) -> Key {
    let detail = match &event.kind {
        EventKind::AgentStarted {
            mode,
            depth,
            parent,
            fork,
            cap_checked,
            profile,
            ..
        } => format!(
            "{}/{depth}/{}/{fork}/{cap_checked}/{}",
            mode.as_str(),
            parent.id,
            profile.agent_type
        ),
        EventKind::SpawnRejected { reason, caller, .. } => {
            format!("{}/{}", reason.as_str(), caller.id)
        }
        EventKind::AgentFinished { outcome, .. } => outcome.as_str().to_string(),
        EventKind::Notification { to, what, .. } => format!("{}/{}", what.as_str(), to.id),
        EventKind::AgentWaiting { waiting_for, .. } => waiting_for.as_str().to_string(),
        EventKind::ToolCalled {
            tool,
            allowed,
            reason,
            ..
        } => format!("{tool}/{allowed}/{}", reason.map_or("", |r| r.as_str())),
        EventKind::AgentResumed { by, mode, .. } => format!("{}/{}", by.id, mode.as_str()),
        EventKind::PermissionRequested {
            tool, routed_to, ..
        } => {
            format!("{tool}/{}", routed_to.map_or("", |r| r.as_str()))
        }
        EventKind::ReportDelivered { to, .. } => to.id.to_string(),
        EventKind::SessionStarted { .. }
        | EventKind::SpawnRequested { .. }
        | EventKind::PermissionAnswered { .. }
        | EventKind::PermissionWithdrawn { .. }
        | EventKind::AgentBackgrounded { .. }
        | EventKind::MessageDelivered { .. }
        | EventKind::MessageRejected { .. }
        | EventKind::StopRequested { .. }
        | EventKind::ConversationCleared
        | EventKind::DefinitionNoted { .. }
        | EventKind::PanelChanged { .. }
        | EventKind::HookFired { .. }
        | EventKind::HookSkipped { .. }
        | EventKind::ContinuationRequested { .. }
        | EventKind::ModelSwitched { .. }
        | EventKind::Worktree { .. }
        | EventKind::ActionIgnored { .. }
        | EventKind::DurationDrawn { .. }
        | EventKind::LimitReached { .. } => String::new(),
    };
    (event.kind.name(), event.rule, detail)
}

/// Whom a grouped line is about: the one list of which events have a subject, read by the
/// model's grouping and by the narration, which labels each case its own way.
#[derive(Clone, Copy, Debug)]
pub enum Subject<'e> {
    /// A refused call's requested name.
    Name(&'e str),
    /// A notification's sender.
    From(&'e AgentRef),
    /// The run the event is about (its `agent`).
    Run(&'e AgentRef),
}

/// Whom `event` is about, for grouping: `None` for a decision that is never grouped.
pub fn subject_of(event: &Event) -> Option<Subject<'_>> {
    match &event.kind {
        EventKind::SpawnRejected { name, .. } => name.as_deref().map(Subject::Name),
        EventKind::Notification { from, .. } => Some(Subject::From(from)),
        EventKind::AgentStarted { agent, .. }
        | EventKind::AgentFinished { agent, .. }
        | EventKind::AgentResumed { agent, .. }
        | EventKind::AgentWaiting { agent, .. }
        | EventKind::ToolCalled { agent, .. }
        | EventKind::PermissionRequested { agent, .. }
        | EventKind::ReportDelivered { agent, .. } => Some(Subject::Run(agent)),
        EventKind::SessionStarted { .. }
        | EventKind::SpawnRequested { .. }
        | EventKind::PermissionAnswered { .. }
        | EventKind::PermissionWithdrawn { .. }
        | EventKind::AgentBackgrounded { .. }
        | EventKind::MessageDelivered { .. }
        | EventKind::MessageRejected { .. }
        | EventKind::StopRequested { .. }
        | EventKind::ConversationCleared
        | EventKind::DefinitionNoted { .. }
        | EventKind::PanelChanged { .. }
        | EventKind::HookFired { .. }
        | EventKind::HookSkipped { .. }
        | EventKind::ContinuationRequested { .. }
        | EventKind::ModelSwitched { .. }
        | EventKind::Worktree { .. }
        | EventKind::ActionIgnored { .. }
        | EventKind::DurationDrawn { .. }
        | EventKind::LimitReached { .. } => None,
    }
}

/// Whom `event` is about, for grouping (the narration's subject), by the trace's labels:
/// `None` for a decision that is never grouped.
pub fn subject(event: &Event) -> Option<String> {
    subject_of(event).map(|subject| match subject {
        Subject::Name(name) => name.to_string(),
        Subject::From(agent) | Subject::Run(agent) => agent.label(),
    })
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn alike_neighbours_group_and_a_different_decision_between_splits_them() {
        // busy-1, busy-2, busy-3 started; first resumed; rejected-1 started.
        let keys = ["start", "start", "start", "resume", "start"];
        let subjects = [
            Some("b1"),
            Some("b2"),
            Some("b3"),
            Some("first"),
            Some("r1"),
        ];
        assert_eq!(
            split(&keys, &subjects),
            vec![(0, 3, 1), (3, 1, 1), (4, 1, 1)]
        );
    }

    #[test]
    fn a_two_step_pattern_about_the_same_subject_groups() {
        let keys = ["fin", "note", "fin", "note", "fin", "note", "start"];
        let subjects = [
            Some("r1"),
            Some("r1"),
            Some("r2"),
            Some("r2"),
            Some("r3"),
            Some("r3"),
            Some("x"),
        ];
        assert_eq!(split(&keys, &subjects), vec![(0, 6, 2), (6, 1, 1)]);
    }

    #[test]
    fn decisions_about_no_one_are_never_grouped() {
        let keys = ["clear", "clear"];
        let subjects: [Option<&str>; 2] = [None, None];
        assert_eq!(split(&keys, &subjects), vec![(0, 1, 1), (1, 1, 1)]);
    }
}
