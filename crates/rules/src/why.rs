//! Why a decision went the way it did, in words: pure data for the narration.
//!
//! Every decision the engine records cites a rule ID (`FORK-3`, `PERM-9`, …). A person
//! learning how delegation behaves needs the reason behind it too: "fork mode is on, so
//! Claude cannot ask for the foreground". This table holds those reasons, one row per
//! (event kind, rule, situation), so the narration, the report and `explain` all say the
//! same thing and no renderer invents its own wording.
//!
//! A reason may contain placeholders that the renderer fills from the trace:
//! `{mode}` (the caller's permission mode), `{pattern}` (the permission rule that matched),
//! `{cap}`, `{depth_limit}`, `{tool}`, `{input}` and `{would}` (what the mode alone would do).

use crate::{gates_table, RuleId};
use std::sync::LazyLock;

/// One reason: for events of `kind` deciding by `rule` in situation `case`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Why {
    /// The trace's event kind (`agent_started`, `tool_called`, …).
    pub kind: &'static str,
    /// The rule the event cites.
    pub rule: RuleId,
    /// The situation within the kind: the `mode`, `reason`, `routed_to` or `what` field the
    /// event carries, or `*` for any.
    pub case: &'static str,
    /// How to cite the rule, when more precise than the bare ID (`FGBG-1 case 3`).
    pub cite: Option<&'static str>,
    /// The reason, in words, possibly with placeholders.
    pub text: &'static str,
}

impl Why {
    /// The citation: [`Why::cite`] or the rule ID.
    pub fn citation(&self) -> &'static str {
        self.cite.unwrap_or(self.rule)
    }
}

const fn why(
    kind: &'static str,
    rule: RuleId,
    case: &'static str,
    cite: Option<&'static str>,
    text: &'static str,
) -> Why {
    Why {
        kind,
        rule,
        case,
        cite,
        text,
    }
}

/// ISO-2's gate: `before v… ` and `rest`, as [`before_background_prompts`].
fn before_worktree_check(rest: &str) -> &'static str {
    let since = gates_table::since("worktree_cwd_check");
    format!("before v{since} {rest}").leak()
}

/// ISO-3's gate: `before v… ` and `rest`, as [`before_background_prompts`].
fn before_whole_repo_check(rest: &str) -> &'static str {
    let since = gates_table::since("worktree_check_whole_repo");
    format!("before v{since} {rest}").leak()
}

/// PERM-5's reasons: `before v… ` (the first version of PERM-4's gate, read from the gate
/// table) and `rest`. Called only while [`REASONS`] is built, once per process, so the
/// leaked text is the table's own.
fn before_background_prompts(rest: &str) -> &'static str {
    let since = gates_table::since("background_prompts");
    format!("before v{since} {rest}").leak()
}

/// Every reason subsim can give, by event kind, rule and situation. Built on first use,
/// so that PERM-5's version comes from the gate table.
#[rustfmt::skip]
pub static REASONS: LazyLock<Vec<Why>> = LazyLock::new(|| vec![
    // Where a subagent runs (FGBG-1's first-match chain).
    why("agent_started", "FORK-3", "background", Some("FGBG-1 case 3, FORK-3"),
        "fork mode is on, so Claude cannot ask for the foreground"),
    why("agent_started", "FGBG-1", "background", Some("FGBG-1 case 4"),
        "fork mode is off and Claude did not need the result first, so it runs in the background"),
    why("agent_started", "FGBG-1", "foreground", Some("FGBG-1 case 4"),
        "fork mode is off and Claude needs the result before it goes on, so the caller waits for it in the foreground"),
    why("agent_started", "FGBG-1", "foreground_background_disabled", Some("FGBG-1 case 2"),
        "background tasks are disabled, so every subagent runs in the foreground"),
    why("agent_started", "FGBG-1", "foreground_teammate", Some("FGBG-1 case 1"),
        "an agent-team teammate's spawns always run in the foreground"),
    why("agent_started", "FGBG-3", "*", None,
        "its definition says `background: true`, so it runs in the background"),
    why("agent_started", "CAP-6", "*", None,
        "a `/subtask` fork takes a slot but is never checked against the cap"),
    why("agent_started", "FORK-9", "*", None,
        "`/subtask` starts a fork whatever the fork mode"),
    why("agent_started", "SPAWN-11", "*", None,
        "with agent teams on, main's named call starts a teammate rather than a subagent"),
    why("agent_started", "CAP-10", "*", None,
        "a fork Claude asks for through the Agent tool counts against the cap like any subagent"),
    // Resumes.
    why("agent_resumed", "CAP-7", "*", None,
        "a resume takes a slot without a cap check, so it can push the count past the cap"),
    why("agent_resumed", "RESUME-11", "*", None,
        "the person typed into the stopped agent's transcript within 30 seconds, which resumes it"),
    why("agent_resumed", "Q-7", "*", None,
        "the person typed into the finished agent's transcript, which resumes it without a cap check"),
    why("agent_resumed", "FGBG-7", "*", None,
        "a resumed subagent runs in the background, with the tools it first had"),
    // Rejected spawns.
    why("spawn_rejected", "CAP-1", "*", None,
        "the cap of {cap} running subagents is full, and a rejected call is not queued"),
    why("spawn_rejected", "CAP-10", "*", None,
        "a fork Claude asks for counts against the cap, which is full"),
    why("spawn_rejected", "DEPTH-3", "*", None,
        "the caller sits at the depth limit ({depth_limit}), where filter 1 takes `Agent` away"),
    why("spawn_rejected", "DEPTH-4", "*", None,
        "a fork at the depth limit keeps `Agent`, but calling it returns an error"),
    why("spawn_rejected", "DEPTH-5", "*", None,
        "the caller's definition leaves `Agent` out of its tools, so it cannot nest"),
    why("spawn_rejected", "FGBG-1", "*", Some("FGBG-1 case 1"),
        "a teammate cannot launch a subagent in the background"),
    why("spawn_rejected", "FORK-3", "*", None,
        "fork mode is off, so there is no fork to ask for"),
    why("spawn_rejected", "FORK-4", "*", None,
        "a deny rule on `Agent(fork)` stops forks even though fork mode is on"),
    why("spawn_rejected", "FORK-7", "*", None,
        "the caller is itself a fork, and forks do not spawn forks"),
    why("spawn_rejected", "Q-29", "*", None,
        "the caller is a subagent, and the adopted answer to this open question lets main alone fork"),
    why("spawn_rejected", "Q-32", "*", None,
        "several plugins provide that bare name, so the scoped name is needed"),
    why("spawn_rejected", "SPAWN-3", "*", None,
        "no agent definition of that type exists in any scope"),
    why("spawn_rejected", "SPAWN-4", "*", None,
        "no type was given and general-purpose is not available"),
    why("spawn_rejected", "SPAWN-5", "*", None,
        "the `--agent` main thread may only spawn the types its `Agent(…)` entry lists"),
    why("spawn_rejected", "SPAWN-7", "*", None,
        "a `permissions.deny` rule blocks that agent type"),
    why("spawn_rejected", "SPAWN-8", "*", None,
        "that built-in type is switched off in this session"),
    why("spawn_rejected", "TOOLS-12", "*", None,
        "its tool allowlist resolves to no usable tool"),
    why("spawn_rejected", "HANDBACK-7", "*", None,
        "the auto-mode classifier blocked the delegation before launch"),
    // Tool calls.
    why("tool_called", "PERM-14", "denied", None,
        "the deny rule `{pattern}` covers it, and deny rules apply to main and every subagent"),
    why("tool_called", "PERM-14", "allowed", None,
        "the allow rule `{pattern}` covers it, for the whole session"),
    why("tool_called", "PERM-9", "denied_dontAsk", None,
        "dontAsk mode denies what no allow rule covers"),
    why("tool_called", "PERM-9", "denied_plan", None,
        "plan mode refuses file edits"),
    why("tool_called", "PERM-9", "denied", None,
        "{mode} mode denies it without asking"),
    why("tool_called", "PERM-9", "allowed", None,
        "{mode} mode lets it run without asking"),
    // A step's `prompt: false` runs a call its mode would not (the trace still cites PERM-9,
    // the table of what each mode prompts for; docs/decisions.md).
    why("tool_called", "PERM-9", "allowed_by_step", Some("step `prompt: false`"),
        "the step forces it to run without asking, where {mode} mode would {would}"),
    why("tool_called", "PERM-3", "allowed", None, "the person approved it"),
    why("tool_called", "PERM-4", "denied", None,
        "the person pressed Esc, which denies this one call; the run goes on"),
    why("tool_called", "PERM-5", "*", None,
        before_background_prompts("a background subagent's prompt was denied without asking anyone")),
    why("tool_called", "PERM-6", "allowed", None,
        "the person granted it for the rest of the session, main included"),
    why("tool_called", "PERM-13", "allowed", None,
        "in auto mode the classifier judges the call with main's rules and let it run"),
    why("tool_called", "PERM-13", "denied", None,
        "in auto mode the classifier judged the call with main's rules and blocked it"),
    why("tool_called", "HANDBACK-5", "*", None, "SubagentHandback needs no permission prompt"),
    why("tool_called", "Q-28", "*", None,
        "permission rules do not apply to SubagentHandback (the adopted answer to an open question)"),
    why("tool_called", "HOOK-7", "*", None,
        "a PreToolUse hook exited with code 2, which blocks the call"),
    why("tool_called", "DEPTH-3", "*", None,
        "at the depth limit filter 1 removes `Agent` from a non-fork subagent"),
    why("tool_called", "TOOLS-1", "*", None,
        "the subagent's pool is main's tools narrowed by two filters, and {tool} is not in it"),
    why("tool_called", "TOOLS-6", "*", None, "filter 1 removes it from every subagent"),
    why("tool_called", "TOOLS-5", "*", None,
        "filter 2 keeps only the background allow-list of built-ins (and every MCP tool) in a background subagent, and {tool} is not on it"),
    why("tool_called", "TOOLS-10", "*", None,
        "the session has no Task tools, so subagents get none either"),
    why("tool_called", "TOOLS-11", "*", None,
        "its definition's `tools`/`disallowedTools` leave {tool} out"),
    why("tool_called", "MAIN-1", "*", None,
        "main runs as an `--agent` agent whose tools leave {tool} out"),
    // Worktree isolation.
    why("tool_called", "ISO-2", "outside_worktree", None,
        "an isolated subagent runs its commands in its worktree; one whose working directory resolves to the main checkout fails with an error"),
    why("tool_called", "ISO-2", "allowed", None,
        before_worktree_check("the working directory was not checked, so the command ran where it resolved")),
    why("tool_called", "ISO-3", "outside_worktree", None,
        "the working-directory check covers the whole repository the session was launched in, and a linked worktree's main checkout"),
    why("tool_called", "ISO-3", "allowed", None,
        before_whole_repo_check("the check covered only the launch directory, so the command ran where it resolved")),
    why("tool_called", "ISO-4", "git_redirected", None,
        "Claude Code blocks a Bash or Monitor command that redirects git to the main checkout"),
    why("tool_called", "ISO-4", "git_unverifiable", None,
        "Claude Code refuses a Bash or Monitor command when its text cannot show that every git it runs stays in the worktree"),
    why("tool_called", "ISO-5", "*", None,
        "the main conversation runs isolated in a worktree, so the same checks apply to it and to every subagent it spawns"),
    why("worktree", "ISO-1", "created", None,
        "`isolation: worktree` gives the subagent an isolated copy of the repository, branched from the default branch rather than the session's HEAD"),
    why("worktree", "ISO-1", "removed", None,
        "the worktree is cleaned up automatically when the subagent made no changes"),
    why("worktree", "ISO-1", "kept", None,
        "a worktree the subagent made changes in is not cleaned up"),
    // Permission prompts.
    why("permission_requested", "PERM-3", "*", None,
        "a foreground subagent asks in the terminal, like main, as the call happens"),
    why("permission_requested", "PERM-4", "*", None,
        "a background subagent has no terminal of its own, so its prompt goes to the main session, naming it"),
    why("permission_requested", "PERM-5", "*", None,
        before_background_prompts("a background subagent could not ask, so the call is denied silently")),
    why("permission_requested", "PERM-7", "*", None,
        "fork prompts appear in the terminal although forks run in the background"),
    why("permission_answered", "PERM-3", "*", None, "the call runs"),
    why("permission_answered", "PERM-4", "*", None, "Esc denies only this call"),
    why("permission_answered", "PERM-6", "*", None,
        "the grant applies session-wide, main included"),
    // Waiting and ending.
    why("agent_waiting", "NOTIFY-6", "*", None,
        "in an interactive session a launcher waits for its background children before it reports"),
    why("agent_waiting", "NOTIFY-5", "*", None,
        "a background shell command it started is still running"),
    why("agent_backgrounded", "FGBG-5", "*", None,
        "Ctrl+B sends the running foreground task to the background"),
    why("agent_finished", "NOTIFY-6", "*", None,
        "its background children have all reported, so it can report too"),
    why("agent_finished", "ERR-2", "*", None,
        "an API error ends the run as a failure, not as findings"),
    why("agent_finished", "ERR-3", "*", None,
        "a foreground run cut by an API error returns what it wrote so far, marked partial"),
    why("agent_finished", "ERR-4", "*", None,
        "a background run cut by an API error is marked failed"),
    why("agent_finished", "RESUME-4", "*", None,
        "it hit `maxTurns`, so its output is marked partial and it can be resumed"),
    why("agent_finished", "RESUME-10", "*", None, "the person stopped it"),
    // Messages.
    why("message_delivered", "Q-8", "*", None,
        "a message to a running agent is direction for its current run, not a new run"),
    why("message_delivered", "NOTIFY-9", "*", None,
        "the resumer gets the report and waits for it"),
    why("message_rejected", "RESUME-3", "*", None,
        "Explore and Plan runs are one-shot and cannot be resumed"),
    why("message_rejected", "RESUME-5", "*", None,
        "no agent has that ID or name"),
    why("message_rejected", "RESUME-10", "*", None,
        "the person stopped that agent, and Claude may not resume it"),
    why("message_rejected", "RESUME-12", "*", None,
        "the name now reaches a newer agent, so the message is not misdelivered"),
    // Who hears back.
    why("notification", "NOTIFY-3", "*", None,
        "a background run reports to its launcher by a notification when it ends"),
    why("notification", "NOTIFY-2", "*", None,
        "a foreground run's result is the return value of the Agent call"),
    why("notification", "NOTIFY-4", "still_running", None,
        "asked before the run has ended, the answer is that it is still running; the result comes by notification"),
    why("notification", "NOTIFY-4", "*", None,
        "Claude waits for the run's notification rather than polling it"),
    why("notification", "NOTIFY-5", "*", None,
        "a background shell command that outlived the turn notifies the subagent when it ends"),
    why("notification", "NOTIFY-7", "*", None,
        "outside an interactive session a launcher does not wait, so its orphaned children report to main"),
    why("notification", "NOTIFY-9", "*", None,
        "a subagent that resumes another gets that run's report"),
    why("notification", "NOTIFY-10", "*", None,
        "a fork's result arrives as a message in the main conversation"),
    why("notification", "NOTIFY-11", "*", None,
        "a teammate reports through team messages, not a result"),
    why("notification", "NOTIFY-12", "*", None,
        "a background run that ends in an API error delivers a failure notification"),
    why("notification", "NOTIFY-6", "*", None,
        "a nested subagent reports to the subagent that launched it; only the top-level summary reaches the user"),
]);

/// The reason for an event of `kind` citing `rule` in situation `case`: the row for that
/// exact case, else the row for any case (`*`).
///
/// ```
/// let why = subsim_rules::why::reason("agent_started", "FORK-3", "background").unwrap();
/// assert_eq!(why.citation(), "FGBG-1 case 3, FORK-3");
/// assert!(why.text.starts_with("fork mode is on"));
/// ```
pub fn reason(kind: &str, rule: &str, case: &str) -> Option<&'static Why> {
    let rows = || {
        REASONS
            .iter()
            .filter(|why| why.kind == kind && why.rule == rule)
    };
    rows()
        .find(|why| why.case == case)
        .or_else(|| rows().find(|why| why.case == "*"))
}

/// Every reason given for `rule`, whatever the event kind (for `explain`): its own rows,
/// and the rows whose citation names it (`FGBG-1 case 3, FORK-3` cites FGBG-1's case 3,
/// the placement a learner meets most, under FORK-3).
pub fn reasons_for(rule: &str) -> impl Iterator<Item = &'static Why> + '_ {
    REASONS.iter().filter(move |why| {
        why.rule == rule
            || why
                .cite
                .is_some_and(|cite| cite.split([',', ' ']).any(|word| word == rule))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_case_first_then_any() {
        assert_eq!(
            reason("tool_called", "PERM-9", "denied_dontAsk").map(|why| why.text),
            Some("dontAsk mode denies what no allow rule covers")
        );
        assert_eq!(
            reason("tool_called", "PERM-5", "whatever").map(|why| why.rule),
            Some("PERM-5")
        );
        assert!(reason("tool_called", "CAP-1", "*").is_none());
    }

    #[test]
    fn reasons_for_a_rule_are_its_rows_only() {
        // `explain PERM-9` lists every reason given for PERM-9, and nothing else.
        let perm_9: Vec<&Why> = reasons_for("PERM-9").collect();
        assert!(perm_9.iter().all(|why| why.rule == "PERM-9"), "{perm_9:?}");
        assert!(perm_9.iter().any(|why| why.case == "denied_dontAsk"));
        assert_eq!(
            perm_9.len(),
            REASONS.iter().filter(|why| why.rule == "PERM-9").count()
        );
        assert_eq!(reasons_for("NO-SUCH-RULE").count(), 0);
    }

    /// Issue #23 item 10: `explain FGBG-1` left out its case 3 (fork mode on), whose row
    /// is FORK-3's and only cites FGBG-1.
    #[test]
    fn reasons_for_a_rule_include_the_rows_citing_it() {
        let fgbg_1: Vec<&str> = reasons_for("FGBG-1").map(|why| why.text).collect();
        assert!(
            fgbg_1.contains(&"fork mode is on, so Claude cannot ask for the foreground"),
            "{fgbg_1:?}"
        );
        // A citation names a rule as a whole word: FGBG-1 is not FGBG-10.
        assert!(reasons_for("FGBG-10")
            .all(|why| why.rule == "FGBG-10"
                || why.cite.is_some_and(|cite| cite.contains("FGBG-10"))));
    }

    #[test]
    fn rows_are_unique_and_say_something() {
        for (index, row) in REASONS.iter().enumerate() {
            assert!(row.text.split_whitespace().count() >= 3, "{row:?}");
            assert!(
                !REASONS[..index]
                    .iter()
                    .any(|other| (other.kind, other.rule, other.case)
                        == (row.kind, row.rule, row.case)),
                "duplicate {row:?}"
            );
        }
    }
}
