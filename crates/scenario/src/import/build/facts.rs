//! What an Agent call's outcome states: the observed facts (`expect:` entries), and how a
//! run that was interrupted, failed or stopped ends.

use super::steps::{total_ms, unfinished};
use super::*;

pub(super) fn outcome(result: Option<&ToolResult>) -> Outcome {
    let Some(result) = result else {
        return Outcome::NoResult;
    };
    let status = result.status();
    if status == Some("async_launched") || result.is_async() {
        return Outcome::Launched;
    }
    let total = total_ms(result);
    if status == Some("completed") {
        return Outcome::Completed(total);
    }
    let text = result.text.trim();
    if text.contains("Request interrupted by user") {
        return Outcome::Interrupted;
    }
    if text.contains("Agent type '") && text.contains("not found") {
        return Outcome::UnknownType;
    }
    if result.is_error || text.starts_with("Error") || text.starts_with("<tool_use_error>") {
        return Outcome::Refused(text.to_string());
    }
    Outcome::Completed(total)
}

impl Builder {
    /// The facts the call's outcome states (the expectations of the scenario), and how
    /// its behaviour ends when it was interrupted, failed or stopped.
    pub(super) fn outcome_facts(
        &mut self,
        spawned: &Spawned<'_>,
        agent_type: &str,
        behavior: &mut Vec<Out>,
    ) {
        let Spawned {
            call,
            result,
            outcome,
            notice,
            name,
            ref who,
            covered_until,
        } = *spawned;
        let final_is =
            |outcome: &str| format!("final: {{agent: {}, outcome: {outcome}}}", quote(name));
        match outcome {
            Outcome::UnknownType => {
                if !agent_type.is_empty() {
                    self.refused_types.insert(agent_type.to_string());
                }
                self.fact(
                    format!("{who} was refused: no such agent type"),
                    format!(
                        "event: {{kind: spawn_rejected, name: {}, reason: unknown_type}}",
                        quote(name)
                    ),
                );
            }
            Outcome::Refused(text) => {
                let shown = one_line(&self.text(text), 100);
                self.fact(
                    format!("{who} was refused: {shown}"),
                    format!("event: {{kind: spawn_rejected, name: {}}}", quote(name)),
                );
            }
            Outcome::Completed(_) => {
                self.fact(
                    format!("{who} ran in the foreground"),
                    format!(
                        "event: {{kind: agent_started, name: {}, mode: foreground}}",
                        quote(name)
                    ),
                );
                self.fact(format!("{who} completed"), final_is("completed"));
            }
            Outcome::Interrupted => {
                behavior.push(Out::Comment(
                    "interrupted here; what it would have done next is unknown".into(),
                ));
                let at = result.map_or(call.t_ms, |result| result.t_ms);
                behavior.push(Out::Work(unfinished(covered_until, at)));
                self.stops.push((self.rel(at), name.to_string()));
                self.fact(
                    format!("{who} was interrupted by the person"),
                    final_is("cancelled"),
                );
            }
            Outcome::Launched => {
                self.fact(
                    format!("{who} was launched in the background"),
                    format!(
                        "event: {{kind: agent_started, name: {}, mode: background}}",
                        quote(name)
                    ),
                );
                match notice.map(|notice| notice.status.as_str()) {
                    Some("completed") => self.fact(
                        format!("{who} completed in the background"),
                        final_is("completed"),
                    ),
                    Some("failed") => {
                        behavior.push(Out::Fail);
                        self.fact(
                            format!("{who} failed in the background"),
                            final_is("failed"),
                        );
                    }
                    Some("killed" | "stopped" | "cancelled") => {
                        let at = notice.map_or(call.t_ms, |notice| notice.t_ms);
                        behavior.push(Out::Work(unfinished(covered_until, at)));
                        self.stops.push((self.rel(at), name.to_string()));
                        self.fact(format!("{who} was stopped"), final_is("cancelled"));
                    }
                    _ => {}
                }
            }
            Outcome::NoResult => {}
        }
    }

    /// A run that ran: its report (the transcript's last text with `--keep-text`) unless
    /// it failed, and its type among the custom types to define.
    pub(super) fn reported(
        &mut self,
        call: &ToolUse,
        report: Option<&str>,
        agent_type: &str,
        behavior: &mut Vec<Out>,
    ) {
        let text = match (report, self.options.keep_text) {
            (Some(text), true) => self.kept_text(text, "report", call.line),
            _ => "(report not copied; import with --keep-text to keep it)".to_string(),
        };
        if !matches!(behavior.last(), Some(Out::Fail)) {
            behavior.push(Out::Report(text));
        }
        if !agent_type.is_empty() && !BuiltIn::REGISTRATION.iter().any(|b| b.name() == agent_type) {
            self.custom_types.insert(agent_type.to_string());
        }
    }
}
