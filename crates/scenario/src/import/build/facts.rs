//! What an Agent call's outcome states: the observed facts (`expect:` entries), and how a
//! run that was interrupted, failed or stopped ends; what a subagent's tool calls show
//! about permission. Each observed fact has its counterpart, a `none:` entry for what the
//! model would predict instead and the transcript lacks.

use super::steps::{total_ms, unfinished};
use super::*;
use subsim_rules::observed::{rule, Observed};

/// The rule of what the model would do instead of `permission` (a counterpart's): PERM-5
/// auto-denies where a prompt was answered, PERM-4 shows the prompt an auto-denial did not,
/// PERM-9 runs what `dontAsk` denied (the model's event names its own rule when it has one).
fn rule_of(permission: Permission) -> &'static str {
    match permission {
        Permission::PersonDenied => rule(Observed::AutoDenied),
        Permission::AutoDenied => rule(Observed::PromptedInMain),
        Permission::ModeDenied | Permission::None => rule(Observed::ModeDenied),
    }
}

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

/// What a subagent's tool call's result says about its permission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Permission {
    /// Nothing: it ran, or it failed for another reason.
    None,
    /// The person was asked and said no: a prompt shown and answered (PERM-3/4).
    PersonDenied,
    /// Denied with no prompt shown: a background run that could not ask (PERM-5).
    AutoDenied,
    /// Denied by the `dontAsk` mode without asking (PERM-9).
    ModeDenied,
}

/// What `result` says about its call's permission, by Claude Code's texts: "Permission to
/// use Bash has been denied because Claude Code is running in don't ask mode" (or "…
/// auto-denied in dontAsk mode"), "Permission to use Bash has been auto-denied (prompts
/// unavailable)", "The user doesn't want to proceed with this tool use". An error result
/// says it, or one that opens with those words (a tool's own output that quotes them is
/// neither).
pub(super) fn permission_of(result: Option<&ToolResult>) -> Permission {
    let Some(result) = result else {
        return Permission::None;
    };
    let text = result.text.trim_start();
    let says = |opening: &str| result.is_error || text.starts_with(opening);
    if says("Permission to use ")
        && (text.contains("don't ask mode") || text.contains("dontAsk mode"))
    {
        Permission::ModeDenied
    } else if says("Permission to use ")
        && (text.contains("auto-denied") || text.contains("prompts unavailable"))
    {
        Permission::AutoDenied
    } else if says("The user ")
        && (text.contains("doesn't want to proceed with this tool use")
            || text.contains("tool use was rejected"))
    {
        Permission::PersonDenied
    } else {
        Permission::None
    }
}

impl Builder {
    /// The facts the call's outcome states (the expectations of the scenario), and how
    /// its behaviour ends when it was interrupted, failed or stopped; then what the model
    /// will predict that the transcript does not show ([`Builder::missing_facts`]).
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
            caller_conv,
            ..
        } = *spawned;
        let final_is =
            |outcome: &str| format!("final: {{agent: {}, outcome: {outcome}}}", quote(name));
        // Where the transcript shows it: the call's result, else the call.
        let result_line = result.map_or(call.line, |result| result.line);
        let at = |rule: &'static str, shown: &str, line: usize| FactSource {
            agent: name.to_string(),
            rule,
            expected: String::new(),
            shown: shown.to_string(),
            file: caller_conv.file.clone(),
            lines: (line, line),
            predicted: false,
        };
        match outcome {
            Outcome::UnknownType => {
                if !agent_type.is_empty() {
                    self.refused_types.insert(agent_type.to_string());
                }
                self.fact_from(
                    format!("{who} was refused: no such agent type"),
                    format!(
                        "event: {{kind: spawn_rejected, name: {}, reason: unknown_type}}",
                        quote(name)
                    ),
                    at(
                        rule(Observed::Refused),
                        "the call refused: no such agent type",
                        result_line,
                    ),
                );
            }
            Outcome::Refused(text) => {
                let shown = one_line(&self.text(text), 100);
                self.fact_from(
                    format!("{who} was refused: {shown}"),
                    format!("event: {{kind: spawn_rejected, name: {}}}", quote(name)),
                    at(rule(Observed::Refused), "the call refused", result_line),
                );
            }
            Outcome::Completed(_) => {
                self.fact_from(
                    format!("{who} ran in the foreground"),
                    format!(
                        "event: {{kind: agent_started, name: {}, mode: foreground}}",
                        quote(name)
                    ),
                    at(
                        rule(Observed::Placement),
                        "it ran in the foreground",
                        result_line,
                    ),
                );
                self.fact_from(
                    format!("{who} completed"),
                    final_is("completed"),
                    at(
                        rule(Observed::ResultReturned),
                        "its result came back: completed",
                        result_line,
                    ),
                );
            }
            Outcome::Interrupted => {
                behavior.push(Out::Comment(
                    "interrupted here; what it would have done next is unknown".into(),
                ));
                let stop_at = result.map_or(call.t_ms, |result| result.t_ms);
                behavior.push(Out::Work(unfinished(covered_until, stop_at)));
                self.stops.push((self.rel(stop_at), name.to_string()));
                self.fact_from(
                    format!("{who} was interrupted by the person"),
                    final_is("cancelled"),
                    at(
                        rule(Observed::Stopped),
                        "the person interrupted it",
                        result_line,
                    ),
                );
            }
            Outcome::Launched => {
                self.fact_from(
                    format!("{who} was launched in the background"),
                    format!(
                        "event: {{kind: agent_started, name: {}, mode: background}}",
                        quote(name)
                    ),
                    at(
                        rule(Observed::Placement),
                        "it was launched in the background",
                        result_line,
                    ),
                );
                let notice_at = |rule: &'static str, shown: &str| FactSource {
                    lines: notice.map_or((result_line, result_line), |n| (n.line, n.line)),
                    file: spawned
                        .stray
                        .map_or(caller_conv.file.clone(), |(file, _)| file.to_string()),
                    ..at(rule, shown, result_line)
                };
                match notice.map(|notice| notice.status.as_str()) {
                    Some("completed") => self.fact_from(
                        format!("{who} completed in the background"),
                        final_is("completed"),
                        notice_at(rule(Observed::Notified), "its notification said completed"),
                    ),
                    Some("failed") => {
                        behavior.push(Out::Fail);
                        self.fact_from(
                            format!("{who} failed in the background"),
                            final_is("failed"),
                            notice_at(rule(Observed::FailedNotice), "its notification said failed"),
                        );
                    }
                    Some("killed" | "stopped" | "cancelled") => {
                        let stop_at = notice.map_or(call.t_ms, |notice| notice.t_ms);
                        behavior.push(Out::Work(unfinished(covered_until, stop_at)));
                        self.stops.push((self.rel(stop_at), name.to_string()));
                        self.fact_from(
                            format!("{who} was stopped"),
                            final_is("cancelled"),
                            notice_at(
                                rule(Observed::Stopped),
                                "its notification said it was stopped",
                            ),
                        );
                    }
                    _ => {}
                }
            }
            Outcome::NoResult => {}
        }
        self.missing_facts(spawned);
    }

    /// What the model will predict about the call that the transcript does not show, as
    /// `none:` entries (each naming the lines where it should have been):
    /// - a run whose own transcript shows its work done, but whose result (NOTIFY-2) or
    ///   completion notification (NOTIFY-3) never reached its caller, though the caller's
    ///   file goes on after that;
    /// - a notification that reached another agent than its launcher (NOTIFY-3).
    ///
    /// Nothing is expected after the caller's last line (a session cut off, or still
    /// running), from a layout that does not record notifications
    /// ([`NOTICES_RECORDED_FROM`]), or where a line the reader skipped could have held it.
    fn missing_facts(&mut self, spawned: &Spawned<'_>) {
        let Spawned {
            call,
            outcome,
            notice,
            name,
            ref who,
            caller_conv,
            caller,
            done_at,
            stray,
            ..
        } = *spawned;
        let background = match outcome {
            Outcome::Launched => true,
            Outcome::NoResult => call.input().run_in_background.0 == Some(true),
            Outcome::Completed(_)
            | Outcome::UnknownType
            | Outcome::Interrupted
            | Outcome::Refused(_) => return,
        };
        let (what, rule) = if background {
            ("its completion notification", rule(Observed::Notified))
        } else {
            ("its result", rule(Observed::ResultReturned))
        };
        let (from, shown) = match (stray, notice, outcome) {
            // Reached another agent: expected at the launcher from the notification's time.
            (Some((file, found)), _, _) => (
                found.t_ms,
                format!(
                    "none there; it came to {}",
                    line_range(file, (found.line, found.line))
                ),
            ),
            (None, Some(_), _) => return, // delivered to its launcher, as documented
            (None, None, Outcome::Launched)
                if self.version.is_none_or(|v| v < NOTICES_RECORDED_FROM) =>
            {
                return; // a layout that may not record notifications
            }
            (None, None, _) => match done_at {
                Some(done) => (done, "none".to_string()),
                None => return, // its work was not done when its transcript ends
            },
        };
        // Only what the caller's file could show: written after that moment.
        let Some(lines) = caller_conv.lines_from(from) else {
            return;
        };
        if caller_conv.end_ms.is_none_or(|end| end <= from) || caller_conv.skipped_within(lines) {
            return;
        }
        self.fact_from(
            format!(
                "{who}: the transcript shows no {} to {caller}",
                what.trim_start_matches("its ")
            ),
            format!(
                "none: {{kind: notification, from: {}, to: {}}}",
                quote(name),
                quote(caller)
            ),
            FactSource {
                agent: name.to_string(),
                rule,
                expected: format!("{what} to {caller}"),
                shown,
                file: caller_conv.file.clone(),
                lines,
                predicted: true,
            },
        );
    }

    /// The session's recorded mode is `dontAsk` (PERM-9).
    pub(super) fn dont_ask(&self) -> bool {
        self.permission_mode.as_deref() == Some("dontAsk")
    }

    /// What the tool calls of the run `name` (in `file`) showed about permission, `seen`
    /// in order as `(tool, what, the call's and its result's lines)`; `ran` the tools of
    /// its calls that ran. Each is an observed fact, and its counterpart a `none:` entry,
    /// once per tool and kind, for what the model would do instead:
    /// - a prompt the person denied (PERM-3/4): no auto-denial (PERM-5);
    /// - an auto-denial (PERM-5): no prompt shown (PERM-4 from v2.1.186);
    /// - a `dontAsk` denial (PERM-9): the call not run.
    ///
    /// A counterpart is left out where another call of the same tool shows what it looks
    /// for (it would fail on that call, not on this one).
    pub(super) fn permission_facts(
        &mut self,
        name: &str,
        background: bool,
        file: &str,
        seen: &[(String, Permission, (usize, usize))],
        ran: &BTreeSet<&str>,
    ) {
        let source = |rule: &'static str, shown: &str, lines: (usize, usize)| FactSource {
            agent: name.to_string(),
            rule,
            expected: String::new(),
            shown: shown.to_string(),
            file: file.to_string(),
            lines,
            predicted: false,
        };
        let prompted = rule(if background {
            Observed::PromptedInMain
        } else {
            Observed::Prompted
        });
        for (tool, permission, lines) in seen {
            let (what, yaml, by, shown) = match permission {
                Permission::PersonDenied => (
                    format!("the person denied {name}'s {tool} call"),
                    "permission_answered, agent: {a}, tool: {t}, answer: deny",
                    prompted,
                    "the person was asked and denied it",
                ),
                Permission::AutoDenied => (
                    format!("{name}'s {tool} call was auto-denied (no one to ask)"),
                    "permission_requested, agent: {a}, tool: {t}, auto_denied: true",
                    rule(Observed::AutoDenied),
                    "it auto-denied, no prompt shown",
                ),
                Permission::ModeDenied => (
                    format!("{name}'s {tool} call was denied by dontAsk mode"),
                    "tool_called, agent: {a}, tool: {t}, allowed: false, reason: denied",
                    rule(Observed::ModeDenied),
                    "it denied in dontAsk mode, no prompt shown",
                ),
                Permission::None => continue,
            };
            let yaml = yaml
                .replace("{a}", &quote(name))
                .replace("{t}", &quote(tool));
            self.fact_from(
                what,
                format!("event: {{kind: {yaml}}}"),
                source(by, shown, *lines),
            );
        }
        let kinds: BTreeSet<(&str, Permission)> = seen
            .iter()
            .map(|(tool, permission, _)| (tool.as_str(), *permission))
            .collect();
        let has = |tool: &str, wanted: Permission| kinds.contains(&(tool, wanted));
        let mut written: BTreeSet<(&str, Permission)> = BTreeSet::new();
        for (tool, permission, lines) in seen {
            if !written.insert((tool.as_str(), *permission)) {
                continue;
            }
            let (what, yaml, expected, shown) = match permission {
                Permission::PersonDenied if !has(tool, Permission::AutoDenied) => (
                    "no auto-denial",
                    "permission_requested, agent: {a}, tool: {t}, auto_denied: true",
                    format!("its {tool} call auto-denied, no prompt shown"),
                    "a prompt the person answered: denied",
                ),
                Permission::AutoDenied if !has(tool, Permission::PersonDenied) => (
                    "no prompt shown",
                    "permission_requested, agent: {a}, tool: {t}, auto_denied: false",
                    format!("a permission prompt for its {tool} call"),
                    "it auto-denied, no prompt shown",
                ),
                Permission::ModeDenied
                    if !ran.contains(tool.as_str())
                        && !has(tool, Permission::PersonDenied)
                        && !has(tool, Permission::AutoDenied) =>
                {
                    (
                        "it did not run",
                        "tool_called, agent: {a}, tool: {t}, allowed: true",
                        format!("its {tool} call to run"),
                        "it denied in dontAsk mode",
                    )
                }
                Permission::PersonDenied
                | Permission::AutoDenied
                | Permission::ModeDenied
                | Permission::None => continue,
            };
            let yaml = yaml
                .replace("{a}", &quote(name))
                .replace("{t}", &quote(tool));
            self.fact_from(
                format!("{name}'s {tool} call: {what}"),
                format!("none: {{kind: {yaml}}}"),
                FactSource {
                    expected,
                    predicted: true,
                    ..source(rule_of(*permission), shown, *lines)
                },
            );
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

#[cfg(test)]
mod tests {
    use super::{permission_of, Permission, ToolResult};

    fn result(text: &str, is_error: bool) -> ToolResult {
        ToolResult {
            t_ms: 0,
            text: text.to_string(),
            is_error,
            line: 1,
            detail: None,
        }
    }

    #[test]
    fn each_permission_text_is_told_apart_and_a_quoted_one_is_none() {
        let cases = [
            (
                "Permission to use Bash has been denied because Claude Code is running in \
                 don't ask mode.",
                Permission::ModeDenied,
            ),
            (
                "Permission to use Edit has been auto-denied in dontAsk mode.",
                Permission::ModeDenied,
            ),
            (
                "Permission to use Bash has been auto-denied (prompts unavailable).",
                Permission::AutoDenied,
            ),
            (
                "The user doesn't want to proceed with this tool use. The tool use was rejected.",
                Permission::PersonDenied,
            ),
            ("     1→pub fn backoff()", Permission::None),
        ];
        for (text, wanted) in cases {
            assert_eq!(permission_of(Some(&result(text, true))), wanted, "{text}");
        }
        // A tool's own output that quotes the words (a file read, a grep) says nothing.
        let quoted = "notes.md: the call was auto-denied (prompts unavailable)";
        assert_eq!(
            permission_of(Some(&result(quoted, false))),
            Permission::None
        );
        assert_eq!(permission_of(None), Permission::None);
    }
}
