//! The words of each event, by family: [`Narrator::describe`] hands each kind to the
//! family that words it (issue #32: one `describe` of ~500 lines, split). Each family's
//! match names every kind it does not word, so a new kind does not compile until the
//! dispatch and its family say where its words are.

use super::*;
use subsim_rules::isolation::{Cwd, WorktreeAction};

impl Narrator {
    /// Writes what happened into `what`; returns who it happened to (or who did it).
    ///
    /// The dispatch is exhaustive: a new kind does not compile until a family words it.
    pub(super) fn describe(&self, event: &Event, what: &mut String) -> String {
        match &event.kind {
            EventKind::SessionStarted { .. }
            | EventKind::DefinitionNoted { .. }
            | EventKind::ConversationCleared
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. } => self.describe_session(event, what),
            EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::DurationDrawn { .. }
            | EventKind::Worktree { .. } => self.describe_run(event, what),
            EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. } => self.describe_call(event, what),
            EventKind::Notification { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::ReportDelivered { .. } => self.describe_message(event, what),
            EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. } => self.describe_observer(event, what),
        }
    }

    /// The session's own events: its settings, the definitions it loaded, `/clear`, the person's ignored actions and the safety limits.
    fn describe_session(&self, event: &Event, what: &mut String) -> String {
        match &event.kind {
            EventKind::SessionStarted {
                version,
                session_kind,
                cap,
                depth_limit,
                fork_mode,
                background_disabled,
                main_agent,
                permission_mode,
                main_isolated,
            } => {
                let _ = write!(
                    what,
                    "Claude Code {version}, {} session: ",
                    session_kind.as_str()
                );
                if let Some(main_agent) = main_agent {
                    // PANEL-12: the startup header shows @<name>.
                    let _ = write!(what, "main runs as @{main_agent}; ");
                }
                match cap {
                    Some(cap) => {
                        let _ = write!(what, "at most {cap} subagents running at once");
                    }
                    None => what.push_str("no cap on running subagents"),
                }
                let _ = write!(
                    what,
                    ", nesting down to depth {depth_limit}, fork mode {}",
                    if *fork_mode { "on" } else { "off" }
                );
                if *background_disabled {
                    what.push_str(", background tasks disabled");
                }
                if *permission_mode != subsim_rules::PermissionMode::Default {
                    let _ = write!(what, ", permission mode {permission_mode}");
                }
                if *main_isolated {
                    // ISO-5: the checks apply to the session and every subagent.
                    what.push_str(", main runs isolated in a worktree");
                }
                "session".to_string()
            }
            EventKind::DefinitionNoted {
                name,
                path,
                scope,
                outcome,
                reason,
            } => {
                let subject = name.as_deref().unwrap_or(path);
                let _ = write!(what, "definition {subject} ({scope}, {path}): {outcome}");
                if let Some(reason) = reason {
                    let _ = write!(what, " — {reason}");
                }
                "definitions".to_string()
            }
            EventKind::ConversationCleared => {
                what.push_str(
                    "cleared the conversation (/clear): names no longer bind to earlier agents",
                );
                "person".to_string()
            }
            EventKind::ActionIgnored { action, why } => {
                let _ = write!(
                    what,
                    "{} had no effect: {why}",
                    action.as_str().replace('_', " ")
                );
                "person".to_string()
            }
            EventKind::LimitReached { limit, value } => {
                let bound = limit.bound_text(*value);
                let _ = write!(
                    what,
                    "safety limit reached: {limit} = {bound}; the run stops here"
                );
                "session".to_string()
            }
            EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::Notification { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::DurationDrawn { .. }
            | EventKind::Worktree { .. } => {
                unreachable!("describe hands only its family to describe_session")
            }
        }
    }

    /// A run's life: the Agent call, its refusal or start, its waits, its backgrounding, its end, a resume, a continuation and a model switch.
    fn describe_run(&self, event: &Event, what: &mut String) -> String {
        match &event.kind {
            EventKind::SpawnRequested {
                caller,
                agent_type,
                name,
                background,
                fork,
                ..
            } => {
                if *fork {
                    what.push_str("forks itself");
                    if let Some(name) = name {
                        let _ = write!(what, " as {name}");
                    }
                } else {
                    let _ = write!(
                        what,
                        "asks for {} {agent_type} subagent",
                        article(agent_type)
                    );
                    if let Some(name) = name {
                        let _ = write!(what, " named {name}");
                    }
                }
                match background {
                    Some(true) => what.push_str(" in the background"),
                    Some(false) => what.push_str(" in the foreground"),
                    None => {}
                }
                self.label(caller)
            }
            EventKind::SpawnRejected {
                caller,
                agent_type,
                name,
                reason,
                message,
                hint,
                running,
            } => {
                match name {
                    Some(name) => {
                        let _ = write!(what, "spawn {name} rejected");
                    }
                    None => {
                        let _ = write!(
                            what,
                            "spawn of {} {agent_type} subagent rejected",
                            article(agent_type)
                        );
                    }
                }
                let detail = match (reason, self.cap) {
                    (RejectReason::ConcurrentLimit, Some(cap)) => {
                        format!("{running}/{cap} running")
                    }
                    (RejectReason::ConcurrentLimit, None) => format!("{running} running"),
                    _ => reason.facts().words.to_string(),
                };
                // A reason in words follows (`why`): the short label would say it a third
                // time after the message (`"A fork cannot spawn further forks" (a fork
                // cannot fork): …`), so it goes.
                let explained = *reason != RejectReason::ConcurrentLimit
                    && !message.is_empty()
                    && event.rule.is_some_and(|rule| {
                        subsim_rules::why::reason("spawn_rejected", rule, "*").is_some()
                    });
                if explained {
                    let _ = write!(what, " with \"{message}\"");
                } else if message.is_empty() {
                    let _ = write!(what, " ({detail})");
                } else if message.contains(&detail) {
                    // The kernel's cap message already says `(20/20 running)`.
                    let _ = write!(what, " with \"{message}\"");
                } else {
                    let _ = write!(what, " with \"{message}\" ({detail})");
                }
                if let (Some(hint), false) = (hint, self.brief) {
                    let _ = write!(what, "; Claude is also told: {hint}");
                }
                self.label(caller)
            }
            EventKind::AgentStarted {
                agent,
                parent,
                depth,
                mode,
                fork,
                running,
                cap_checked,
                profile,
            } => {
                let (agent_type, model, effort) =
                    (&profile.agent_type, &profile.model, &profile.effort);
                let label = self.label(agent);
                let _ = write!(what, "started in the {} at depth {depth}", mode.as_str());
                if label != agent.id_string() && !self.brief {
                    let _ = write!(what, " as {}", agent.id_string());
                }
                if *fork {
                    let _ = write!(what, " (a fork of {} on {model}", self.label(parent));
                } else {
                    let _ = write!(what, " ({agent_type} on {model}");
                    if let Some(effort) = effort {
                        let _ = write!(what, ", effort {effort}");
                    }
                    let _ = write!(what, ", launched by {}", self.label(parent));
                }
                let running = self.running(*running);
                let _ = write!(what, "; {})", &running[1..running.len() - 1]);
                if !*cap_checked && self.cap.is_some() {
                    what.push_str(", without a cap check");
                }
                if let (Some(skills), false) = (&profile.skills, self.brief) {
                    // MEM-4 / MEM-5: which listed skills it does not start with, and why.
                    let _ = write!(
                        what,
                        "; preloads {} listed {}, skips",
                        skills.preloaded,
                        plural(skills.preloaded, "skill", "skills")
                    );
                    let mut first = true;
                    for (list, why) in [
                        (&skills.beyond_cap, "past the first 32"),
                        (
                            &skills.model_invocation_disabled,
                            "disable-model-invocation",
                        ),
                        (&skills.missing, "missing, a debug-log warning"),
                        (&skills.disabled, "disabled, a debug-log warning"),
                    ] {
                        if list.is_empty() {
                            continue;
                        }
                        let _ = write!(
                            what,
                            "{} {} ({why})",
                            if first { "" } else { ";" },
                            list.join(", ")
                        );
                        first = false;
                    }
                }
                label
            }
            EventKind::AgentWaiting {
                agent,
                waiting_for,
                count,
            } => {
                what.push_str("done with its steps; waits for ");
                let _ = match *waiting_for {
                    WaitingFor::Children => write!(
                        what,
                        "{count} {} it launched",
                        plural(*count, "subagent", "subagents")
                    ),
                    WaitingFor::Bash => write!(
                        what,
                        "{count} background shell {}",
                        plural(*count, "command", "commands")
                    ),
                };
                self.label(agent)
            }
            EventKind::AgentBackgrounded { agent, running } => {
                let _ = write!(
                    what,
                    "moved to the background with Ctrl+B {}",
                    self.running(*running)
                );
                self.label(agent)
            }
            EventKind::AgentFinished {
                agent,
                outcome,
                running,
                detail,
            } => {
                let _ = write!(what, "finished: {}", outcome.as_str());
                if let Some(detail) = detail {
                    let _ = write!(what, " — {detail}");
                }
                let _ = write!(what, " {}", self.running(*running));
                self.label(agent)
            }
            EventKind::AgentResumed {
                agent,
                by,
                cap_checked,
                running,
                mode,
                model,
                effort,
            } => {
                let _ = write!(
                    what,
                    "resumed by {} in the {} on {model}",
                    self.label(by),
                    mode.as_str()
                );
                if let Some(effort) = effort {
                    let _ = write!(what, " with effort {effort}");
                }
                let _ = write!(what, " {}", self.running(*running));
                if !*cap_checked && self.cap.is_some() {
                    what.push_str(", without a cap check");
                }
                self.label(agent)
            }
            EventKind::ContinuationRequested { agent, attempt } => {
                let _ = write!(
                    what,
                    "response cut mid-stream; asked to continue (#{attempt})"
                );
                self.label(agent)
            }
            EventKind::ModelSwitched {
                agent,
                from_model,
                model,
            } => {
                let _ = write!(
                    what,
                    "switches from {from_model} to the fallback model {model}"
                );
                self.label(agent)
            }
            EventKind::DurationDrawn {
                agent,
                arrival,
                what: drawn_for,
                drawn_us,
                drawn_from,
                drawn_on,
            } => {
                // Where the number came from (issue #32).
                let subject = match agent {
                    Some(agent) => self.label(agent),
                    None => "main".to_string(),
                };
                if let Some(arrival) = arrival {
                    let _ = write!(what, "arrival #{arrival}: ");
                }
                what.push_str(&crate::event::drawn_words(
                    drawn_for.words(),
                    *drawn_us,
                    drawn_from,
                    &drawn_on.words(&subject),
                ));
                subject
            }
            EventKind::Worktree {
                agent,
                action,
                changes,
            } => {
                match action {
                    WorktreeAction::Created => what.push_str(
                        "gets its own temporary git worktree, branched from the default branch",
                    ),
                    WorktreeAction::Removed => {
                        what.push_str("its worktree is cleaned up: it made no changes");
                    }
                    WorktreeAction::Kept => {
                        let changes = changes.unwrap_or(0);
                        let plural = if changes == 1 { "" } else { "s" };
                        let _ = write!(
                            what,
                            "its worktree is kept: it made {changes} change{plural}"
                        );
                    }
                }
                self.label(agent)
            }
            EventKind::SessionStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::Notification { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::DefinitionNoted { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ConversationCleared
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. } => {
                unreachable!("describe hands only its family to describe_run")
            }
        }
    }

    /// Tool calls and the permission prompts they raise.
    fn describe_call(&self, event: &Event, what: &mut String) -> String {
        match &event.kind {
            EventKind::ToolCalled {
                agent,
                tool,
                allowed,
                reason,
                input,
                cwd,
                ..
            } => {
                if *allowed {
                    let _ = write!(what, "uses {tool}");
                    if let Some(input) = input {
                        let _ = write!(what, " `{input}`");
                    }
                    // ISO-2/3: an isolated run's command that ran outside its worktree.
                    if let Some(cwd) = cwd.filter(|cwd| *cwd != Cwd::Worktree) {
                        let _ = write!(what, " in {}", cwd_words(cwd));
                    }
                } else if *reason == Some(ToolRefusal::Denied) {
                    let _ = match input {
                        Some(input) => write!(what, "{tool} `{input}` denied"),
                        None => write!(what, "{tool} denied"),
                    };
                } else {
                    let _ = match reason {
                        Some(ToolRefusal::NotInTools) => {
                            write!(what, "tries {tool}, which is not among its tools")
                        }
                        Some(ToolRefusal::Denied) => write!(what, "tries {tool}: denied"),
                        Some(ToolRefusal::AutoDenied) => {
                            write!(what, "tries {tool}: auto-denied")
                        }
                        Some(ToolRefusal::OutsideWorktree) => write!(
                            what,
                            "{tool} fails: its working directory resolved to {}, outside its worktree",
                            cwd_words(cwd.unwrap_or(Cwd::MainCheckout))
                        ),
                        Some(ToolRefusal::GitRedirected) => write!(
                            what,
                            "{tool} blocked: it redirects git to the main checkout"
                        ),
                        Some(ToolRefusal::GitUnverifiable) => write!(
                            what,
                            "{tool} refused: its text cannot show that its git stays in the worktree"
                        ),
                        Some(other) => write!(
                            what,
                            "tries {tool}: refused ({})",
                            other.as_str().replace('_', " ")
                        ),
                        None => write!(what, "tries {tool}: refused"),
                    };
                }
                self.label(agent)
            }
            EventKind::PermissionRequested {
                agent,
                tool,
                routed_to,
                auto_denied,
                prompt,
                ..
            } => {
                let _ = write!(what, "permission prompt #{prompt}: asks to use {tool}");
                if *auto_denied {
                    what.push_str(" — auto-denied silently, nobody is asked");
                } else {
                    let _ = match routed_to {
                        Some(RoutedTo::Main) => write!(what, " — shown in the main session"),
                        Some(RoutedTo::Terminal) => write!(what, " — shown in the terminal"),
                        None => Ok(()),
                    };
                }
                self.label(agent)
            }
            EventKind::PermissionAnswered {
                agent,
                tool,
                answer,
                waited_us,
                prompt,
                think_us,
                think_from,
            } => {
                let asker = self.label(agent);
                let waited = human_duration(*waited_us);
                let _ = match answer {
                    Answer::Approve => write!(what, "approved {asker}'s {tool} after {waited}"),
                    Answer::Deny => write!(what, "denied {asker}'s {tool} (Esc) after {waited}"),
                    Answer::ApproveSession => {
                        write!(
                            what,
                            "approved {asker}'s {tool} for the rest of the session after {waited}"
                        )
                    }
                };
                let _ = write!(what, " (prompt #{prompt})");
                // Where the number came from (issue #32): the draw, with the full detail.
                if let (false, Some(think), Some(from)) = (self.brief, think_us, think_from) {
                    what.push_str("; ");
                    what.push_str(&crate::event::drawn_words(
                        "think",
                        *think,
                        from,
                        crate::event::PERSON_STREAM,
                    ));
                }
                "person".to_string()
            }
            EventKind::PermissionWithdrawn {
                agent,
                tool,
                prompt,
            } => {
                let _ = write!(
                    what,
                    "permission prompt #{prompt} for {tool} withdrawn: the run ended before it was answered"
                );
                self.label(agent)
            }
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::Notification { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::DefinitionNoted { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::Worktree { .. }
            | EventKind::ConversationCleared
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. }
            | EventKind::DurationDrawn { .. } => {
                unreachable!("describe hands only its family to describe_call")
            }
        }
    }

    /// What passes between runs: results, messages, refusals of them, stops and the reports handed back.
    fn describe_message(&self, event: &Event, what: &mut String) -> String {
        match &event.kind {
            EventKind::Notification {
                to,
                from,
                what: kind,
            } => {
                let _ = write!(what, "← {}: ", self.label(from));
                match *kind {
                    Notice::Completion => what.push_str("completion notification"),
                    Notice::Result => what.push_str("result returned"),
                    Notice::Failed => what.push_str("failure notification"),
                    other => {
                        let _ = write!(what, "{} notification", other.as_str().replace('_', " "));
                    }
                }
                self.label(to)
            }
            EventKind::MessageDelivered { to, from } => {
                let _ = write!(
                    what,
                    "→ {}: message delivered while it runs",
                    self.label(to)
                );
                self.label(from)
            }
            EventKind::MessageRejected {
                to,
                by,
                reason,
                message,
            } => {
                let reason = reason.as_str().replace('_', " ");
                if message.is_empty() {
                    let _ = write!(what, "message to {to} rejected: {reason}");
                } else {
                    let _ = write!(what, "message to {to} rejected: {message} ({reason})");
                }
                self.label(by)
            }
            EventKind::StopRequested { agent, by, source } => {
                let target = self.label(agent);
                match *source {
                    StopSource::User => {
                        let _ = write!(what, "stops {target} from the tasks panel");
                        "person".to_string()
                    }
                    StopSource::TaskStop => {
                        let _ = write!(what, "stops {target} (TaskStop)");
                        self.label(by)
                    }
                }
            }
            EventKind::ReportDelivered {
                agent,
                to,
                text,
                scan,
                review,
            } => {
                // The first line is the subagent-output header (NOTIFY-13); show what follows.
                let mut lines = text.lines().skip(1);
                let first_line = lines.next().unwrap_or("");
                let _ = write!(
                    what,
                    "report to {} under the subagent-output header: \"{first_line}\"",
                    self.label(to)
                );
                if lines.next().is_some() {
                    what.push_str(" …");
                }
                if let Some(scan) = scan {
                    let _ = write!(what, "; scan: {scan}");
                }
                if let Some(review) = review {
                    let _ = write!(what, "; review: {review}");
                }
                self.label(agent)
            }
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::DefinitionNoted { .. }
            | EventKind::PanelChanged { .. }
            | EventKind::HookFired { .. }
            | EventKind::HookSkipped { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::Worktree { .. }
            | EventKind::ConversationCleared
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. }
            | EventKind::DurationDrawn { .. } => {
                unreachable!("describe hands only its family to describe_message")
            }
        }
    }

    /// What watches the runs: the panel and the hooks.
    fn describe_observer(&self, event: &Event, what: &mut String) -> String {
        match &event.kind {
            EventKind::PanelChanged {
                change,
                row,
                reason,
                status,
            } => {
                let row_label = if row.id == crate::event::MAIN {
                    "the main session".to_string()
                } else {
                    self.label(row)
                };
                let _ = match *change {
                    ChangeKind::RowAdded => write!(what, "row for {row_label} appears"),
                    ChangeKind::RowRemoved => write!(
                        what,
                        "row for {row_label} leaves ({})",
                        reason
                            .map_or("gone", |reason| reason.as_str())
                            .replace('_', " ")
                    ),
                    ChangeKind::RowStatusChanged => write!(
                        what,
                        "row for {row_label} now reads {}",
                        status.map_or("?", RowStatus::as_str)
                    ),
                    ChangeKind::FooterHintShown => {
                        write!(what, "footer shows \"/tasks to see subagents\"")
                    }
                    ChangeKind::FooterHintCleared => write!(what, "footer hint goes away"),
                };
                "panel".to_string()
            }
            EventKind::HookFired {
                agent,
                hook,
                matcher,
                command,
                source,
            } => {
                let _ = write!(what, "{source} hook {hook}");
                if let Some(matcher) = matcher {
                    let _ = write!(what, " [{matcher}]");
                }
                let _ = write!(
                    what,
                    " fires for {}: `{command}` (recorded, not run)",
                    self.label(agent)
                );
                "hooks".to_string()
            }
            EventKind::HookSkipped { agent, hook, why } => {
                let _ = write!(what, "hook {hook} for {} skipped: {why}", self.label(agent));
                "hooks".to_string()
            }
            EventKind::SessionStarted { .. }
            | EventKind::SpawnRequested { .. }
            | EventKind::SpawnRejected { .. }
            | EventKind::AgentStarted { .. }
            | EventKind::ToolCalled { .. }
            | EventKind::PermissionRequested { .. }
            | EventKind::PermissionAnswered { .. }
            | EventKind::PermissionWithdrawn { .. }
            | EventKind::AgentWaiting { .. }
            | EventKind::AgentBackgrounded { .. }
            | EventKind::AgentFinished { .. }
            | EventKind::Notification { .. }
            | EventKind::AgentResumed { .. }
            | EventKind::MessageDelivered { .. }
            | EventKind::MessageRejected { .. }
            | EventKind::StopRequested { .. }
            | EventKind::DefinitionNoted { .. }
            | EventKind::ReportDelivered { .. }
            | EventKind::ContinuationRequested { .. }
            | EventKind::ModelSwitched { .. }
            | EventKind::Worktree { .. }
            | EventKind::ConversationCleared
            | EventKind::ActionIgnored { .. }
            | EventKind::LimitReached { .. }
            | EventKind::DurationDrawn { .. } => {
                unreachable!("describe hands only its family to describe_observer")
            }
        }
    }
}

/// ISO-2/3: where a command's working directory resolved, in words.
fn cwd_words(cwd: Cwd) -> &'static str {
    match cwd {
        Cwd::Worktree => "its worktree",
        Cwd::MainCheckout => "the main checkout",
        Cwd::Repo => "elsewhere in the repository",
        Cwd::LinkedMainCheckout => "the linked worktree's main checkout",
    }
}
