//! PERM — whether a tool call asks permission, in which mode a subagent runs, and where
//! a prompt goes.
//!
//! The pure questions:
//! - [`decide_call`] (with [`decide`] as the older thin wrapper): does this call prompt,
//!   run, or get denied? (PERM-9 modes, PERM-13, PERM-14 rules, PERM-6 grants)
//! - [`effective_mode`]: the subagent's permission mode (PERM-10/11/12, D-9), and
//!   [`parse_mode`] for the `permissionMode` field (PERM-9's `manual` alias);
//! - [`route`]: who sees a prompt — the terminal, the main session, or nobody because the
//!   version auto-denies (PERM-3/4/5/7, Q-37);
//! - [`launch_check`] (PERM-1: launching never prompts) and [`is_approval`] /
//!   [`may_change_settings`] (PERM-8: no agent message is approval).
//!
//! This module is not for which tools a run has ([`crate::tools`]) or the auto-mode
//! report review (HANDBACK).
//!
//! # Decisions where the catalog is silent
//! - **acceptEdits** accepts `Edit`, `Write` and `NotebookEdit`, and Bash commands made
//!   only of [`ACCEPT_EDITS_COMMANDS`] (`mkdir`, `touch`, `mv`, `cp`, `rm`, `rmdir`) whose
//!   path arguments all lie in the working directory or an additional directory
//!   ([`in_workspace`]). With no workspace given every path counts as inside.
//! - **"Always ask" calls** — MCP tools marked `requiresUserInteraction`, connector tools the
//!   organization set to `ask`, and reads from network paths (`\\host\share`, `//host/share`;
//!   ES only, **D-10**: applied at every version, since no version is given) — prompt even
//!   when allowed. That is why `dontAsk` denies them "even if allowed". `bypassPermissions`
//!   still skips their prompt; `AskUserQuestion` never prompts, but `dontAsk` denies it.
//! - **auto** (PERM-9, PERM-13): an explicitly allowed or granted call runs; any other call
//!   runs unless the scenario's classifier verdict blocks it ([`Call::classifier_blocks`]).
//!   A subagent's calls are judged with the main session's rules (the same
//!   [`PermissionRules`]), under rule PERM-13.
//! - **plan** denies `Edit`, `Write` and `NotebookEdit`; other calls prompt as in `default`.
//! - **Compound commands**: a Bash or PowerShell input is split at `&&`, `||`, `;`, `|` and
//!   new lines; a deny rule matches if it matches any part, an allow rule only if it
//!   matches every part.
//! - **D-9**: a declared `auto` that is unavailable keeps the main mode at every version
//!   (ES; DE names only the `bypassPermissions` exception, but gives no version).

use crate::{Gates, Mode, PermissionMode, RuleId};

/// Tools that never prompt (read-only or bookkeeping).
const NEVER_PROMPT: [&str; 22] = [
    "Read",
    "Grep",
    "Glob",
    "LSP",
    "TodoWrite",
    "Skill",
    "ToolSearch",
    "TaskStop",
    "SendMessage",
    "ListAgents",
    "Agent",
    "AskUserQuestion",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskOutput",
    "SubagentHandback",
    "EnterPlanMode",
    "ExitPlanMode",
    "Artifact",
    "WebSearch",
];

/// File-editing tools that `acceptEdits` accepts and `plan` refuses.
pub const EDIT_TOOLS: [&str; 3] = ["Edit", "Write", "NotebookEdit"];

/// Tools that read files; a read from a network path always asks (D-10).
pub const READ_TOOLS: [&str; 4] = ["Read", "Grep", "Glob", "LSP"];

/// PERM-9: the "common filesystem commands" `acceptEdits` accepts for paths in the
/// working directory (the project's list; the seeds give none).
pub const ACCEPT_EDITS_COMMANDS: [&str; 6] = ["mkdir", "touch", "mv", "cp", "rm", "rmdir"];

/// What happens to one tool call before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallDecision {
    /// Runs without asking.
    Run(RuleId),
    /// Asks the person.
    Prompt(RuleId),
    /// Refused without asking (a deny rule, `dontAsk`, `plan`, the classifier).
    Deny(RuleId),
}

impl CallDecision {
    /// The rule that decided.
    pub fn rule(self) -> RuleId {
        match self {
            CallDecision::Run(rule) | CallDecision::Prompt(rule) | CallDecision::Deny(rule) => rule,
        }
    }
}

/// `permissions.allow` / `permissions.deny` rules in the documented syntax, e.g.
/// `Bash(git push *)`, `Edit`, `mcp__github`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionRules {
    /// Allow rules.
    pub allow: Vec<String>,
    /// Deny rules.
    pub deny: Vec<String>,
}

/// Splits `Tool(specifier)` into its parts.
pub fn split_rule(rule: &str) -> (&str, Option<&str>) {
    match rule.find('(') {
        Some(open) if rule.ends_with(')') => (&rule[..open], Some(&rule[open + 1..rule.len() - 1])),
        _ => (rule, None),
    }
}

/// Glob match with `*` as "any run of characters".
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (index, part) in parts.iter().enumerate() {
        if index == 0 {
            let Some(stripped) = rest.strip_prefix(part) else {
                return false;
            };
            rest = stripped;
        } else if index == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(position) => rest = &rest[position + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// PERM-14: does one permission rule cover a call of `tool` with `input`?
///
/// `Tool` covers every call of the tool; `Tool(glob)` covers calls whose input matches the
/// glob (`Bash(git push *)`); `mcp__server` and `mcp__server__*` cover every tool of that
/// server; `Task(…)` is read as `Agent(…)` (TOOLS-20).
pub fn rule_matches(rule: &str, tool: &str, input: Option<&str>) -> bool {
    let (rule_tool, specifier) = split_rule(rule.trim());
    let rule_tool = if rule_tool == "Task" {
        "Agent"
    } else {
        rule_tool
    };
    let tool_matches = rule_tool == tool
        || (rule_tool.starts_with("mcp__")
            && (tool.starts_with(&format!("{rule_tool}__"))
                || rule_tool
                    .strip_suffix("__*")
                    .is_some_and(|server| tool.starts_with(&format!("{server}__")))));
    match specifier {
        None => tool_matches,
        Some(specifier) => tool_matches && glob_match(specifier, input.unwrap_or("")),
    }
}

/// Splits a shell command into the commands it chains (`&&`, `||`, `;`, `|`, new lines),
/// trimmed, empty parts dropped.
pub fn split_command(command: &str) -> Vec<&str> {
    let mut parts = vec![command];
    for separator in ["&&", "||", ";", "|", "\n"] {
        parts = parts
            .into_iter()
            .flat_map(|part| part.split(separator))
            .collect();
    }
    parts
        .into_iter()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect()
}

fn is_shell(tool: &str) -> bool {
    tool == "Bash" || tool == "PowerShell"
}

/// PERM-14 for deny rules: a shell call is denied if any command it chains is covered.
fn deny_covers(rule: &str, tool: &str, input: Option<&str>) -> bool {
    match input {
        Some(command) if is_shell(tool) => {
            rule_matches(rule, tool, Some(command))
                || split_command(command)
                    .into_iter()
                    .any(|part| rule_matches(rule, tool, Some(part)))
        }
        _ => rule_matches(rule, tool, input),
    }
}

/// PERM-14: does a `permissions.deny` rule cover a call of `tool` with `input`? Deny rules
/// apply to main and to every subagent, in every mode; a shell call is covered when a rule
/// matches its whole command or any command it chains (`&&`, `||`, `;`, `|`, new lines).
pub fn denied_by_rule(rules: &PermissionRules, tool: &str, input: Option<&str>) -> bool {
    rules.deny.iter().any(|rule| deny_covers(rule, tool, input))
}

/// PERM-14 for allow rules: a shell call is allowed only if every command it chains is.
fn allow_covers(rules: &[String], tool: &str, input: Option<&str>) -> bool {
    match input {
        Some(command) if is_shell(tool) => {
            let parts = split_command(command);
            !parts.is_empty()
                && parts.into_iter().all(|part| {
                    rules
                        .iter()
                        .any(|rule| rule_matches(rule, tool, Some(part)))
                })
        }
        _ => rules.iter().any(|rule| rule_matches(rule, tool, input)),
    }
}

/// D-10: a network path (`\\host\share\…` or `//host/share/…`).
pub fn is_network_path(path: &str) -> bool {
    let path = path.trim();
    path.starts_with("\\\\") || path.starts_with("//")
}

/// PERM-9 (`acceptEdits`): does `path` lie in the working directory or an additional
/// directory? `workspace` holds their absolute paths, the working directory first. A
/// relative path is inside unless `..` climbs out of it; `~`, network paths and absolute
/// paths elsewhere are outside. An empty `workspace` means "unknown": everything is inside.
pub fn in_workspace(path: &str, workspace: &[String]) -> bool {
    if workspace.is_empty() {
        return true;
    }
    let path = path.trim().trim_matches(|c| c == '"' || c == '\'');
    if is_network_path(path) || path.starts_with('~') {
        return false;
    }
    let absolute = path.starts_with('/') || path.get(1..3) == Some(":\\");
    if absolute {
        return workspace.iter().any(|dir| {
            let dir = dir.trim_end_matches('/');
            path == dir || path.starts_with(&format!("{dir}/"))
        });
    }
    let mut depth: i32 = 0;
    for component in path.split(['/', '\\']) {
        match component {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => depth += 1,
        }
    }
    true
}

/// PERM-9 (`acceptEdits`): is `command` made only of [`ACCEPT_EDITS_COMMANDS`] on paths in
/// the workspace?
pub fn accept_edits_command(command: &str, workspace: &[String]) -> bool {
    let parts = split_command(command);
    !parts.is_empty()
        && parts.into_iter().all(|part| {
            let mut words = part.split_whitespace();
            let Some(program) = words.next() else {
                return false;
            };
            ACCEPT_EDITS_COMMANDS.contains(&program)
                && words
                    .filter(|word| !word.starts_with('-'))
                    .all(|path| in_workspace(path, workspace))
        })
}

/// One tool call, as the permission check sees it. Build one with [`Call::new`] and
/// struct-update syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// The tool.
    pub tool: &'a str,
    /// What rules match against: the Bash command, the file path, the agent type.
    pub input: Option<&'a str>,
    /// The calling run's effective permission mode ([`effective_mode`]).
    pub mode: PermissionMode,
    /// The caller is a subagent (auto mode names PERM-13 for its calls).
    pub subagent: bool,
    /// An MCP tool marked `requiresUserInteraction` (PERM-9 `dontAsk` row).
    pub requires_user_interaction: bool,
    /// A connector tool the organization set to `ask`, in a session that setting reaches.
    pub org_ask: bool,
    /// Auto mode: the classifier's verdict on this call is "block" (PERM-13, HANDBACK-7).
    pub classifier_blocks: bool,
    /// The working directory and `additionalDirectories`, absolute (acceptEdits).
    pub workspace: &'a [String],
}

impl<'a> Call<'a> {
    /// A plain call of `tool` in `mode`: no input, from main, no flags.
    pub fn new(tool: &'a str, mode: PermissionMode) -> Call<'a> {
        Call {
            tool,
            input: None,
            mode,
            subagent: false,
            requires_user_interaction: false,
            org_ask: false,
            classifier_blocks: false,
            workspace: &[],
        }
    }

    /// Calls that prompt even when allowed: `requiresUserInteraction` MCP tools, `ask`
    /// connector tools, and reads from network paths (D-10).
    pub fn always_asks(&self) -> bool {
        self.requires_user_interaction
            || self.org_ask
            || (READ_TOOLS.contains(&self.tool) && self.input.is_some_and(is_network_path))
    }
}

/// PERM-9 / PERM-13 / PERM-14 / PERM-6: what `call` does, given the session's rules and
/// the tools granted session-wide.
pub fn decide_call(
    call: &Call<'_>,
    rules: &PermissionRules,
    session_grants: &[String],
) -> CallDecision {
    let (tool, input, mode) = (call.tool, call.input, call.mode);
    // PERM-14: deny rules apply to main and to every subagent, in every mode.
    if denied_by_rule(rules, tool, input) {
        return CallDecision::Deny("PERM-14");
    }
    // PERM-9 `dontAsk`: these are denied even if allowed.
    if mode == PermissionMode::DontAsk && (tool == "AskUserQuestion" || call.always_asks()) {
        return CallDecision::Deny("PERM-9");
    }
    let always_asks = call.always_asks();
    if always_asks {
        return match mode {
            PermissionMode::BypassPermissions => CallDecision::Run("PERM-9"),
            PermissionMode::Default
            | PermissionMode::AcceptEdits
            | PermissionMode::Auto
            | PermissionMode::DontAsk
            | PermissionMode::Plan => CallDecision::Prompt("PERM-9"),
        };
    }
    if NEVER_PROMPT.contains(&tool) {
        return CallDecision::Run("PERM-9");
    }
    let is_edit = EDIT_TOOLS.contains(&tool);
    let granted = session_grants.iter().any(|granted| granted == tool);
    let allowed_by_rule = allow_covers(&rules.allow, tool, input);
    let auto_rule = if call.subagent { "PERM-13" } else { "PERM-9" };
    match mode {
        PermissionMode::BypassPermissions => CallDecision::Run("PERM-9"),
        PermissionMode::Plan if is_edit => CallDecision::Deny("PERM-9"),
        _ if granted => CallDecision::Run("PERM-6"),
        _ if allowed_by_rule => CallDecision::Run("PERM-14"),
        // PERM-13: the classifier judges with the main session's rules.
        PermissionMode::Auto if call.classifier_blocks => CallDecision::Deny(auto_rule),
        PermissionMode::Auto => CallDecision::Run(auto_rule),
        PermissionMode::AcceptEdits
            if is_edit && input.is_none_or(|path| in_workspace(path, call.workspace)) =>
        {
            CallDecision::Run("PERM-9")
        }
        PermissionMode::AcceptEdits
            if is_shell(tool)
                && input.is_some_and(|command| accept_edits_command(command, call.workspace)) =>
        {
            CallDecision::Run("PERM-9")
        }
        PermissionMode::DontAsk => CallDecision::Deny("PERM-9"),
        PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::Plan => {
            CallDecision::Prompt("PERM-9")
        }
    }
}

/// PERM-9: what the permission mode alone does with `call`, with no allow or deny rule and
/// no session-wide grant. A trace cites PERM-9 both for a call its mode runs and for one a
/// step's `prompt: false` forced ([`decide_step`]); the narration asks this to tell the two
/// apart, so that it never credits the mode with what the step did.
pub fn mode_alone(call: &Call<'_>) -> CallDecision {
    decide_call(call, &PermissionRules::default(), &[])
}

/// For a call a trace shows running under `rule`: what its mode alone would have done
/// instead ([`mode_alone`]) when that is not to run it — the run then came from the step's
/// `prompt: false`, which the trace also cites as PERM-9 — else `None`.
pub fn step_forced_run(rule: &str, call: &Call<'_>) -> Option<CallDecision> {
    if rule != crate::id::PERM_9 {
        return None;
    }
    match mode_alone(call) {
        CallDecision::Run(_) => None,
        other => Some(other),
    }
}

/// PERM-3 / PERM-9 / PERM-14 / HANDBACK-5: what a scripted tool call does. The scenario's
/// `prompt:` forces a prompt (`Some(true)`: the person is asked as for any prompt, PERM-3)
/// or its absence (`Some(false)`: the call runs, PERM-9, unless a deny rule refuses it,
/// PERM-14, a chained Bash command included). Otherwise `SubagentHandback` runs without a
/// prompt and rules on it do not apply ([`handback_call`], HANDBACK-5, Q-28), and
/// any other call is [`decide_call`]'s.
#[inline]
pub fn decide_step(
    forced: Option<bool>,
    call: &Call<'_>,
    rules: &PermissionRules,
    session_grants: &[String],
) -> CallDecision {
    match forced {
        Some(true) => CallDecision::Prompt("PERM-3"),
        _ if call.tool == crate::tools::HANDBACK => handback_call(rules),
        Some(false) if denied_by_rule(rules, call.tool, call.input) => {
            CallDecision::Deny("PERM-14")
        }
        Some(false) => CallDecision::Run("PERM-9"),
        None => decide_call(call, rules, session_grants),
    }
}

/// HANDBACK-5 / HANDBACK-11 / Q-28: a `SubagentHandback` call always runs without a prompt.
/// Allow and deny rules naming the tool are not applied (Q-28); when one would have matched,
/// the decision cites Q-28 so the trace shows it was ignored.
pub fn handback_call(rules: &PermissionRules) -> CallDecision {
    let named = rules
        .allow
        .iter()
        .chain(&rules.deny)
        .any(|rule| rule_matches(rule, crate::tools::HANDBACK, None));
    CallDecision::Run(if named { "Q-28" } else { "HANDBACK-5" })
}

crate::vocabulary! {
    /// How the person answers a permission prompt.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum Answer {
        /// Approve the call (PERM-3).
        #[default]
        Approve => "approve",
        /// Esc: deny this call only (PERM-4).
        Deny => "deny",
        /// Approve for the rest of the session (PERM-6).
        ApproveSession => "approve_session",
    }
}

/// What an answer does to the call it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answered {
    /// The call runs.
    pub allowed: bool,
    /// The tool is granted for the rest of the session, main included (PERM-6).
    pub grants_session: bool,
    /// The rule of the answer (`permission_answered`).
    pub rule: RuleId,
    /// The rule of the call's outcome (`tool_called`): PERM-3 when it runs, PERM-4 when Esc
    /// denied it (the run goes on without it).
    pub call_rule: RuleId,
}

/// PERM-3 / PERM-4 / PERM-6: what the person's `answer` to a prompt does.
#[inline]
pub fn answered(answer: Answer) -> Answered {
    let allowed = answer != Answer::Deny;
    Answered {
        allowed,
        grants_session: answer == Answer::ApproveSession,
        rule: match answer {
            Answer::ApproveSession => "PERM-6",
            Answer::Deny => "PERM-4",
            Answer::Approve => "PERM-3",
        },
        call_rule: if allowed { "PERM-3" } else { "PERM-4" },
    }
}

/// PERM-14: the `permissions` rule that made `decision` for a call of `tool` with `input`,
/// when a rule did (the first deny rule covering it, or the first allow rule matching it),
/// so that the narration can name it: "denied by the rule `Bash(git push *)`".
///
/// ```
/// use subsim_rules::prompt::{deciding_rule, CallDecision, PermissionRules};
/// let rules = PermissionRules { allow: vec![], deny: vec!["Bash(git push *)".into()] };
/// let rule = deciding_rule(&rules, CallDecision::Deny("PERM-14"), "Bash", Some("git push origin main"));
/// assert_eq!(rule, Some("Bash(git push *)"));
/// ```
pub fn deciding_rule<'r>(
    rules: &'r PermissionRules,
    decision: CallDecision,
    tool: &str,
    input: Option<&str>,
) -> Option<&'r str> {
    match deciding_entry(rules, decision, tool, input)? {
        RuleEntry::Allow(index) => Some(&rules.allow[index]),
        RuleEntry::Deny(index) => Some(&rules.deny[index]),
    }
}

/// One entry of [`PermissionRules`]: its list and its index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleEntry {
    /// `permissions.allow[i]`.
    Allow(usize),
    /// `permissions.deny[i]`.
    Deny(usize),
}

/// PERM-14: [`deciding_rule`]'s entry by position, so that a caller that keeps the rules'
/// texts (shared, made once per session) names it without copying it.
pub fn deciding_entry(
    rules: &PermissionRules,
    decision: CallDecision,
    tool: &str,
    input: Option<&str>,
) -> Option<RuleEntry> {
    match decision {
        CallDecision::Deny("PERM-14") => rules
            .deny
            .iter()
            .position(|rule| deny_covers(rule, tool, input))
            .map(RuleEntry::Deny),
        CallDecision::Run("PERM-14") => rules
            .allow
            .iter()
            .position(|rule| rule_matches(rule, tool, input))
            .or_else(|| {
                rules
                    .allow
                    .iter()
                    .position(|rule| allow_covers(std::slice::from_ref(rule), tool, input))
            })
            .map(RuleEntry::Allow),
        CallDecision::Run(..) | CallDecision::Prompt(..) | CallDecision::Deny(..) => None,
    }
}

/// PERM-9 / PERM-14: what a call of `tool` (with optional `input`) does in `mode`, given
/// the session's rules and the tools granted session-wide (PERM-6). A thin wrapper over
/// [`decide_call`] for a call from main with no flags and no workspace.
pub fn decide(
    tool: &str,
    input: Option<&str>,
    mode: PermissionMode,
    rules: &PermissionRules,
    session_grants: &[String],
) -> CallDecision {
    decide_call(
        &Call {
            input,
            ..Call::new(tool, mode)
        },
        rules,
        session_grants,
    )
}

/// PERM-9: reads a `permissionMode` value. `manual` is an alias of `default` from v2.1.200
/// (DE); before, and for any unknown value, the field counts as unset (`None`).
pub fn parse_mode(text: &str, gates: &Gates) -> Option<(PermissionMode, RuleId)> {
    if text.trim() == "manual" && !gates.manual_alias {
        return None;
    }
    text.trim().parse().ok().map(|mode| (mode, "PERM-9"))
}

/// PERM-10/11/12, DEF-6, D-9: the permission mode a subagent runs in.
///
/// `main` is the main conversation's mode, `declared` the definition's `permissionMode`
/// (`None` when unset; built-ins declare none, PERM-2), `plugin` says the definition comes
/// from a plugin (the field is ignored, DEF-6), and `auto_available` says whether auto mode
/// is available to this subagent (no `disableAutoMode`, and its model supports it).
pub fn effective_mode(
    main: PermissionMode,
    declared: Option<PermissionMode>,
    plugin: bool,
    auto_available: bool,
    gates: &Gates,
) -> (PermissionMode, RuleId) {
    use PermissionMode::*;
    match (main, declared) {
        // PERM-11: these main modes override the definition.
        (BypassPermissions | AcceptEdits | Auto, _) => (main, "PERM-11"),
        // DEF-6 / PERM-9: ignored for plugin subagents.
        (_, Some(_)) if plugin => (main, "DEF-6"),
        // PERM-10: unset → inherit.
        (_, None) => (main, "PERM-10"),
        // PERM-12: declaring bypassPermissions keeps the main mode from v2.1.267.
        (_, Some(BypassPermissions)) if gates.bypass_keeps_main_mode => (main, "PERM-12"),
        // PERM-12 / D-9 (ES): a declared auto that is unavailable keeps the main mode.
        (_, Some(Auto)) if !auto_available => (main, "D-9"),
        (_, Some(mode)) => (mode, "PERM-12"),
    }
}

/// PERM-2: a built-in subagent inherits the main conversation's permissions.
pub fn builtin_mode(main: PermissionMode) -> (PermissionMode, RuleId) {
    (main, "PERM-2")
}

/// What happens at launch, before a subagent's first call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchCheck {
    /// PERM-1: launching does not prompt; the subagent's own calls are checked as it runs.
    NoPrompt,
    /// PERM-1 / HANDBACK-7: in auto mode the delegation prompt is classified first.
    Classified,
}

/// PERM-1: what launching a subagent from a caller in `caller_mode` involves.
pub fn launch_check(caller_mode: PermissionMode) -> (LaunchCheck, RuleId) {
    if caller_mode == PermissionMode::Auto {
        (LaunchCheck::Classified, "HANDBACK-7")
    } else {
        (LaunchCheck::NoPrompt, "PERM-1")
    }
}

/// Who a message comes from (PERM-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageFrom {
    /// The person's own message.
    User,
    /// The permission system's answer (a prompt answered, a rule).
    PermissionSystem,
    /// Any agent: main Claude, a launcher, a subagent, a teammate.
    Agent,
}

/// PERM-8: does a message from `from` count as approval of a pending prompt? Only the
/// permission system or the person's own messages do; no agent message ever does.
pub fn is_approval(from: MessageFrom) -> (bool, RuleId) {
    (from != MessageFrom::Agent, "PERM-8")
}

/// PERM-8: may a message from `from` change a subagent's permission settings, `CLAUDE.md`
/// or configuration? Never from an agent; a launcher's message is task direction, acted on
/// within the subagent's own permission settings.
pub fn may_change_settings(from: MessageFrom) -> (bool, RuleId) {
    (from != MessageFrom::Agent, "PERM-8")
}

/// Where a permission prompt surfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// In the person's terminal, as the call happens (PERM-3, PERM-7).
    Terminal(RuleId),
    /// In the main session, naming the subagent (PERM-4).
    Main(RuleId),
    /// Silently auto-denied; the run goes on without the tool (PERM-5).
    AutoDeny(RuleId),
}

crate::vocabulary! {
    /// Where a prompt that is asked surfaces (`permission_requested.routed_to`; PERM-3/4/7).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum RoutedTo {
        /// The person's terminal (PERM-3, PERM-7).
        Terminal => "terminal",
        /// The main session (PERM-4).
        Main => "main",
    }
}

impl Route {
    /// Where the prompt surfaces (`routed_to`), or `None` for an auto-deny.
    pub fn routed_to(self) -> Option<RoutedTo> {
        match self {
            Route::Terminal(_) => Some(RoutedTo::Terminal),
            Route::Main(_) => Some(RoutedTo::Main),
            Route::AutoDeny(_) => None,
        }
    }

    /// The rule that decided.
    pub fn rule(self) -> RuleId {
        match self {
            Route::Terminal(rule) | Route::Main(rule) | Route::AutoDeny(rule) => rule,
        }
    }
}

/// The facts routing reads about the asking run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asker {
    /// Depth 0 is the main conversation itself (or a teammate, which is not main).
    pub depth: u32,
    /// An agent-team teammate (SPAWN-11): depth 0, but not the main conversation.
    pub teammate: bool,
    /// The run's own mode.
    pub mode: Mode,
    /// The run is a fork (PERM-7).
    pub fork: bool,
    /// Every run from this one up to main is in the foreground (Q-37).
    pub chain_foreground: bool,
}

/// PERM-3/4/5/7 and Q-37: where the prompt of `asker` goes under `gates`.
///
/// A teammate (SPAWN-11) sits at depth 0 but is not the main conversation: main does not
/// wait for it (it reports through team messages, NOTIFY-11) and it runs in the
/// background, so its prompts go where a background subagent's do: to the main session,
/// naming it (PERM-4), or auto-denied before v2.1.186 (PERM-5). The seeds say nothing of a
/// teammate's prompts (docs/decisions.md).
pub fn route(asker: Asker, gates: &Gates) -> Route {
    if asker.depth == 0 && !asker.teammate {
        return Route::Terminal("PERM-3");
    }
    if asker.fork {
        return Route::Terminal("PERM-7");
    }
    if asker.mode == Mode::Foreground && asker.chain_foreground {
        return Route::Terminal("PERM-3");
    }
    if gates.background_prompts {
        Route::Main(if asker.mode == Mode::Background {
            "PERM-4"
        } else {
            "Q-37"
        })
    } else {
        Route::AutoDeny("PERM-5")
    }
}

/// Q-38: is a run's pending permission prompt withdrawn when the run ends? It is: nobody
/// is left to answer it for (`permission_withdrawn`). `None` when no prompt was pending.
pub fn withdrawn_at_run_end(prompt_pending: bool) -> Option<RuleId> {
    prompt_pending.then_some("Q-38")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    #[test]
    fn perm_14_the_allow_rule_that_ran_a_call_is_named() {
        let rules = PermissionRules {
            allow: vec!["Read".into(), "Bash(npm test *)".into()],
            deny: vec![],
        };
        let ran = CallDecision::Run("PERM-14");
        assert_eq!(
            deciding_rule(&rules, ran, "Bash", Some("npm test --watch")),
            Some("Bash(npm test *)")
        );
        assert_eq!(deciding_rule(&rules, ran, "Read", None), Some("Read"));
        // A call that ran for another reason names no rule.
        assert_eq!(
            deciding_rule(&rules, CallDecision::Run("PERM-9"), "Read", None),
            None
        );
    }

    #[test]
    fn scripted_calls_perm_3_9_14_and_handback_5() {
        let rules = PermissionRules {
            allow: vec![],
            deny: vec!["Bash(git push *)".into(), "SubagentHandback".into()],
        };
        let call = |tool, input| Call {
            input,
            ..Call::new(tool, PermissionMode::Default)
        };
        let push = call("Bash", Some("ls && git push origin main"));
        let ls = call("Bash", Some("ls"));
        let handback = call(crate::tools::HANDBACK, None);
        let rows = [
            (Some(true), push, CallDecision::Prompt("PERM-3")),
            (Some(true), handback, CallDecision::Prompt("PERM-3")),
            (Some(false), push, CallDecision::Deny("PERM-14")),
            (Some(false), ls, CallDecision::Run("PERM-9")),
            (Some(false), handback, handback_call(&rules)),
            (None, handback, handback_call(&rules)),
            (None, push, decide_call(&push, &rules, &[])),
            (None, ls, CallDecision::Prompt("PERM-9")),
        ];
        for (forced, call, decision) in rows {
            assert_eq!(
                decide_step(forced, &call, &rules, &[]),
                decision,
                "{forced:?} {call:?}"
            );
        }
        assert_eq!(
            decide_step(None, &handback, &rules, &[]),
            CallDecision::Run("Q-28")
        );
    }

    #[test]
    fn answers_perm_3_4_6() {
        let rows = [
            (Answer::Approve, true, false, "PERM-3", "PERM-3"),
            (Answer::Deny, false, false, "PERM-4", "PERM-4"),
            (Answer::ApproveSession, true, true, "PERM-6", "PERM-3"),
        ];
        for (answer, allowed, grants_session, rule, call_rule) in rows {
            assert_eq!(
                answered(answer),
                Answered {
                    allowed,
                    grants_session,
                    rule,
                    call_rule
                },
                "{answer:?}"
            );
        }
        let spelled: Vec<&str> = Answer::ALL.iter().map(|answer| answer.as_str()).collect();
        assert_eq!(spelled, ["approve", "deny", "approve_session"]);
    }

    #[test]
    fn perm_14_the_deciding_entry_by_position() {
        let rules = PermissionRules {
            allow: vec!["Read".into(), "Bash(npm test *)".into()],
            deny: vec!["Edit".into(), "Bash(git push *)".into()],
        };
        let ran = CallDecision::Run("PERM-14");
        let denied = CallDecision::Deny("PERM-14");
        assert_eq!(
            deciding_entry(&rules, ran, "Bash", Some("npm test --watch")),
            Some(RuleEntry::Allow(1))
        );
        assert_eq!(
            deciding_entry(&rules, denied, "Bash", Some("git push origin main")),
            Some(RuleEntry::Deny(1))
        );
        assert_eq!(
            deciding_entry(&rules, denied, "Edit", None),
            Some(RuleEntry::Deny(0))
        );
        assert_eq!(
            deciding_rule(&rules, denied, "Bash", Some("git push origin main")),
            Some("Bash(git push *)")
        );
        // Another rule than PERM-14 decided: no entry.
        assert_eq!(
            deciding_entry(&rules, CallDecision::Deny("PERM-9"), "Edit", None),
            None
        );
    }

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    fn rules(allow: &[&str], deny: &[&str]) -> PermissionRules {
        PermissionRules {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn check(call: Call<'_>, rules: &PermissionRules, expected: CallDecision) {
        assert_eq!(
            decide_call(&call, rules, &[]),
            expected,
            "{call:?} {rules:?}"
        );
    }

    fn call<'a>(tool: &'a str, input: Option<&'a str>, mode: PermissionMode) -> Call<'a> {
        Call {
            input,
            ..Call::new(tool, mode)
        }
    }

    #[test]
    fn denied_by_rule_covers_any_command_a_shell_input_chains() {
        let rules = PermissionRules {
            allow: vec![],
            deny: vec!["Bash(git push *)".into()],
        };
        let chained = Some("git status && git push origin main");
        assert!(denied_by_rule(&rules, "Bash", chained));
        assert!(denied_by_rule(&rules, "Bash", Some("git push --force")));
        assert!(!denied_by_rule(&rules, "Bash", Some("git status")));
        // The function decide_call refuses with.
        assert_eq!(
            decide("Bash", chained, PermissionMode::Default, &rules, &[]),
            CallDecision::Deny("PERM-14")
        );
    }

    #[test]
    fn perm_14_rule_syntax() {
        // (rule, tool, input, matches)
        let rows = [
            (
                "Bash(git push *)",
                "Bash",
                Some("git push origin main"),
                true,
            ),
            ("Bash(git push *)", "Bash", Some("git status"), false),
            ("Bash", "Bash", Some("ls"), true),
            ("Bash(*)", "Bash", Some("anything"), true),
            ("Edit", "Edit", Some("src/main.rs"), true),
            ("Edit", "Write", None, false),
            ("mcp__github", "mcp__github__create_issue", None, true),
            ("mcp__github__*", "mcp__github__create_issue", None, true),
            (
                "mcp__github__create_issue",
                "mcp__github__create_issue",
                None,
                true,
            ),
            ("mcp__github", "mcp__gitlab__create_issue", None, false),
            ("mcp__github", "mcp__github_enterprise__x", None, false),
            ("Agent(Explore)", "Agent", Some("Explore"), true),
            ("Task(Explore)", "Agent", Some("Explore"), true),
            ("Agent(Explore)", "Agent", Some("Plan"), false),
        ];
        for (rule, tool, input, matches) in rows {
            assert_eq!(
                rule_matches(rule, tool, input),
                matches,
                "{rule} {tool} {input:?}"
            );
        }
        assert!(glob_match("git push *", "git push origin main"));
        assert!(!glob_match("git push *", "git status"));
        assert!(glob_match("*", "anything"));
        assert_eq!(split_rule("Bash(git push *)"), ("Bash", Some("git push *")));
        assert_eq!(split_rule("Read"), ("Read", None));
        assert_eq!(
            split_command("ls && git push o; echo |wc"),
            ["ls", "git push o", "echo", "wc"]
        );
    }

    #[test]
    fn perm_14_compound_commands() {
        let deny_push = rules(&[], &["Bash(git push *)"]);
        let allow_ls = rules(&["Bash(ls*)"], &[]);
        use PermissionMode::*;
        check(
            call("Bash", Some("ls && git push origin"), BypassPermissions),
            &deny_push,
            CallDecision::Deny("PERM-14"),
        );
        check(
            call("Bash", Some("ls -l"), Default),
            &allow_ls,
            CallDecision::Run("PERM-14"),
        );
        check(
            call("Bash", Some("ls && rm -rf x"), Default),
            &allow_ls,
            CallDecision::Prompt("PERM-9"),
        );
    }

    #[test]
    fn perm_9_modes_table() {
        use PermissionMode::*;
        let none = rules(&[], &[]);
        let allow_bash = rules(&["Bash"], &[]);
        let allow_mcp = rules(&["mcp__crm"], &[]);
        let workspace = vec!["/repo".to_string()];
        let ws: &[String] = &workspace;
        let with_ws = |c: Call<'static>| Call { workspace: ws, ..c };
        let interactive_mcp = Call {
            requires_user_interaction: true,
            ..call("mcp__crm__sign", None, Default)
        };
        let org_ask = Call {
            org_ask: true,
            ..call("mcp__crm__sign", None, Default)
        };
        // (call, rules, expected)
        let rows: Vec<(Call<'_>, &PermissionRules, CallDecision)> = vec![
            // default ("Manual"): prompts; reads never do.
            (
                call("Bash", Some("ls"), Default),
                &none,
                CallDecision::Prompt("PERM-9"),
            ),
            (
                call("Read", Some("a.txt"), Default),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            (
                call("Bash", Some("ls"), Default),
                &allow_bash,
                CallDecision::Run("PERM-14"),
            ),
            // acceptEdits: edits and common filesystem commands in the workspace.
            (
                call("Edit", None, AcceptEdits),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            (
                with_ws(call("Write", Some("src/a.rs"), AcceptEdits)),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            (
                with_ws(call("Write", Some("/etc/hosts"), AcceptEdits)),
                &none,
                CallDecision::Prompt("PERM-9"),
            ),
            (
                with_ws(call("Edit", Some("../x"), AcceptEdits)),
                &none,
                CallDecision::Prompt("PERM-9"),
            ),
            (
                with_ws(call("Bash", Some("mkdir -p build/out"), AcceptEdits)),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            (
                with_ws(call("Bash", Some("mv a b && rm c"), AcceptEdits)),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            (
                with_ws(call("Bash", Some("rm -rf /"), AcceptEdits)),
                &none,
                CallDecision::Prompt("PERM-9"),
            ),
            (
                with_ws(call("Bash", Some("curl x"), AcceptEdits)),
                &none,
                CallDecision::Prompt("PERM-9"),
            ),
            // auto: the classifier decides; an allowed call skips it.
            (
                call("Bash", Some("ls"), Auto),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            (
                Call {
                    classifier_blocks: true,
                    ..call("Bash", Some("rm x"), Auto)
                },
                &none,
                CallDecision::Deny("PERM-9"),
            ),
            (
                Call {
                    classifier_blocks: true,
                    subagent: true,
                    ..call("Bash", Some("rm x"), Auto)
                },
                &none,
                CallDecision::Deny("PERM-13"),
            ),
            (
                Call {
                    subagent: true,
                    ..call("Bash", Some("ls"), Auto)
                },
                &none,
                CallDecision::Run("PERM-13"),
            ),
            (
                Call {
                    classifier_blocks: true,
                    ..call("Bash", Some("ls"), Auto)
                },
                &allow_bash,
                CallDecision::Run("PERM-14"),
            ),
            // dontAsk: prompts are denied; explicitly allowed tools work, except four kinds.
            (
                call("Bash", Some("ls"), DontAsk),
                &none,
                CallDecision::Deny("PERM-9"),
            ),
            (
                call("Bash", Some("ls"), DontAsk),
                &allow_bash,
                CallDecision::Run("PERM-14"),
            ),
            (
                call("AskUserQuestion", None, DontAsk),
                &none,
                CallDecision::Deny("PERM-9"),
            ),
            (
                Call {
                    mode: DontAsk,
                    ..interactive_mcp
                },
                &allow_mcp,
                CallDecision::Deny("PERM-9"),
            ),
            (
                Call {
                    mode: DontAsk,
                    ..org_ask
                },
                &allow_mcp,
                CallDecision::Deny("PERM-9"),
            ),
            (
                call("Read", Some("//nas/share/a.txt"), DontAsk),
                &none,
                CallDecision::Deny("PERM-9"),
            ),
            (
                call("Read", Some("a.txt"), DontAsk),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            // Those four ask even when allowed, in the other modes.
            (interactive_mcp, &allow_mcp, CallDecision::Prompt("PERM-9")),
            (org_ask, &allow_mcp, CallDecision::Prompt("PERM-9")),
            (
                call("Read", Some("\\\\nas\\share\\a.txt"), Default),
                &none,
                CallDecision::Prompt("PERM-9"),
            ),
            (
                call("AskUserQuestion", None, Default),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            // bypassPermissions: skips prompts; deny rules still apply (PERM-14).
            (
                call("Bash", Some("rm -rf x"), BypassPermissions),
                &none,
                CallDecision::Run("PERM-9"),
            ),
            (
                Call {
                    mode: BypassPermissions,
                    ..interactive_mcp
                },
                &none,
                CallDecision::Run("PERM-9"),
            ),
            // plan: read-only.
            (
                call("Edit", None, Plan),
                &none,
                CallDecision::Deny("PERM-9"),
            ),
            (call("Read", None, Plan), &none, CallDecision::Run("PERM-9")),
            (
                call("Bash", Some("ls"), Plan),
                &none,
                CallDecision::Prompt("PERM-9"),
            ),
        ];
        for (call, rules, expected) in rows {
            check(call, rules, expected);
        }
    }

    #[test]
    fn decide_wrapper_and_session_grants() {
        let none = rules(&[], &[]);
        assert_eq!(
            decide(
                "Bash",
                Some("ls"),
                PermissionMode::Default,
                &none,
                &["Bash".into()]
            ),
            CallDecision::Run("PERM-6")
        );
        assert_eq!(
            decide("Bash", Some("ls"), PermissionMode::Default, &none, &[]),
            CallDecision::Prompt("PERM-9")
        );
        let deny = rules(&[], &["Bash(git push *)"]);
        assert_eq!(
            decide(
                "Bash",
                Some("git push o"),
                PermissionMode::BypassPermissions,
                &deny,
                &[]
            ),
            CallDecision::Deny("PERM-14")
        );
        assert_eq!(CallDecision::Prompt("PERM-3").rule(), "PERM-3");
    }

    #[test]
    fn workspace_paths() {
        let ws = vec!["/repo".to_string(), "/data/extra".to_string()];
        // (path, inside)
        let rows = [
            ("src/main.rs", true),
            ("./a/../b", true),
            ("../outside", false),
            ("a/../../outside", false),
            ("/repo/src", true),
            ("/repo", true),
            ("/repository", false),
            ("/data/extra/x", true),
            ("/etc/passwd", false),
            ("~/notes", false),
            ("//nas/share", false),
        ];
        for (path, inside) in rows {
            assert_eq!(in_workspace(path, &ws), inside, "{path}");
        }
        assert!(in_workspace("/anything", &[]));
        assert!(accept_edits_command("touch a b c", &ws));
        assert!(!accept_edits_command("touch /etc/x", &ws));
        assert!(!accept_edits_command("", &ws));
    }

    #[test]
    fn perm_9_manual_alias_from_2_1_200() {
        // (text, version, parsed)
        let rows = [
            ("manual", 200, Some(PermissionMode::Default)),
            ("manual", 199, None),
            ("default", 199, Some(PermissionMode::Default)),
            ("acceptEdits", 292, Some(PermissionMode::AcceptEdits)),
            ("auto", 292, Some(PermissionMode::Auto)),
            ("dontAsk", 292, Some(PermissionMode::DontAsk)),
            (
                "bypassPermissions",
                292,
                Some(PermissionMode::BypassPermissions),
            ),
            ("plan", 292, Some(PermissionMode::Plan)),
            ("yolo", 292, None),
        ];
        for (text, version, parsed) in rows {
            assert_eq!(
                parse_mode(text, &gates(version)).map(|(mode, _)| mode),
                parsed,
                "{text} at 2.1.{version}"
            );
        }
    }

    #[test]
    fn perm_10_11_12_effective_mode_table() {
        use PermissionMode::*;
        let new = gates(292);
        let old = gates(266);
        // (main, declared, plugin, auto available, gates, expected, rule)
        let rows = [
            // PERM-11: bypassPermissions / acceptEdits / auto main override the field.
            (
                BypassPermissions,
                Some(Plan),
                false,
                true,
                new,
                BypassPermissions,
                "PERM-11",
            ),
            (
                AcceptEdits,
                Some(Default),
                false,
                true,
                new,
                AcceptEdits,
                "PERM-11",
            ),
            (Auto, Some(Plan), false, true, new, Auto, "PERM-11"),
            (Auto, None, false, false, new, Auto, "PERM-11"),
            // PERM-10: unset inherits.
            (Default, None, false, true, new, Default, "PERM-10"),
            (Plan, None, false, true, new, Plan, "PERM-10"),
            // PERM-12: default / dontAsk / plan main → the declared mode…
            (
                Default,
                Some(AcceptEdits),
                false,
                true,
                new,
                AcceptEdits,
                "PERM-12",
            ),
            (DontAsk, Some(Plan), false, true, new, Plan, "PERM-12"),
            (Plan, Some(Default), false, true, new, Default, "PERM-12"),
            (Default, Some(Auto), false, true, new, Auto, "PERM-12"),
            // …except bypassPermissions (from v2.1.267)…
            (
                Default,
                Some(BypassPermissions),
                false,
                true,
                new,
                Default,
                "PERM-12",
            ),
            (
                Plan,
                Some(BypassPermissions),
                false,
                true,
                new,
                Plan,
                "PERM-12",
            ),
            (
                Default,
                Some(BypassPermissions),
                false,
                true,
                old,
                BypassPermissions,
                "PERM-12",
            ),
            // …and an unavailable auto (ES, D-9).
            (DontAsk, Some(Auto), false, false, new, DontAsk, "D-9"),
            (Default, Some(Auto), false, false, old, Default, "D-9"),
            // DEF-6: ignored for plugin subagents.
            (
                Default,
                Some(AcceptEdits),
                true,
                true,
                new,
                Default,
                "DEF-6",
            ),
        ];
        for (main, declared, plugin, auto_available, gates, expected, rule) in rows {
            assert_eq!(
                effective_mode(main, declared, plugin, auto_available, &gates),
                (expected, rule),
                "{main} {declared:?} plugin={plugin} auto={auto_available} {}",
                gates.version
            );
        }
        assert_eq!(builtin_mode(Plan), (Plan, "PERM-2"));
    }

    #[test]
    fn perm_1_and_perm_8() {
        assert_eq!(
            launch_check(PermissionMode::Default),
            (LaunchCheck::NoPrompt, "PERM-1")
        );
        assert_eq!(
            launch_check(PermissionMode::BypassPermissions),
            (LaunchCheck::NoPrompt, "PERM-1")
        );
        assert_eq!(
            launch_check(PermissionMode::Auto),
            (LaunchCheck::Classified, "HANDBACK-7")
        );
        // (from, approval, may change settings)
        for (from, approves) in [
            (MessageFrom::User, true),
            (MessageFrom::PermissionSystem, true),
            (MessageFrom::Agent, false),
        ] {
            assert_eq!(is_approval(from), (approves, "PERM-8"));
            assert_eq!(may_change_settings(from), (approves, "PERM-8"));
        }
    }

    #[test]
    fn routing_by_mode_fork_and_version() {
        let new = gates(292);
        let old = gates(185);
        let bg = Asker {
            depth: 1,
            teammate: false,
            mode: Mode::Background,
            fork: false,
            chain_foreground: false,
        };
        let fg = Asker {
            depth: 1,
            teammate: false,
            mode: Mode::Foreground,
            fork: false,
            chain_foreground: true,
        };
        let fork = Asker { fork: true, ..bg };
        let fg_under_bg = Asker {
            depth: 2,
            chain_foreground: false,
            ..fg
        };
        let main = Asker { depth: 0, ..fg };
        // SPAWN-11: a teammate is depth 0 in the background, not main.
        let teammate = Asker {
            depth: 0,
            teammate: true,
            ..bg
        };
        // (asker, gates, route)
        let rows = [
            (bg, new, Route::Main("PERM-4")),
            (bg, old, Route::AutoDeny("PERM-5")),
            (fg, new, Route::Terminal("PERM-3")),
            (fg, old, Route::Terminal("PERM-3")),
            (fork, new, Route::Terminal("PERM-7")),
            (fork, old, Route::Terminal("PERM-7")),
            (fg_under_bg, new, Route::Main("Q-37")),
            (main, old, Route::Terminal("PERM-3")),
            (teammate, new, Route::Main("PERM-4")),
            (teammate, old, Route::AutoDeny("PERM-5")),
        ];
        for (asker, gates, expected) in rows {
            assert_eq!(
                route(asker, &gates),
                expected,
                "{asker:?} {}",
                gates.version
            );
        }
        assert_eq!(Route::Main("PERM-4").routed_to(), Some(RoutedTo::Main));
        assert_eq!(RoutedTo::Main.as_str(), "main");
        assert_eq!(Route::AutoDeny("PERM-5").routed_to(), None);
    }

    // Tests that kill the mutants `cargo mutants` found surviving (docs/TESTING.md).

    #[test]
    fn perm_14_split_rule_needs_the_closing_parenthesis() {
        // `ends_with(')')` guard: an unclosed specifier is not a specifier.
        assert_eq!(split_rule("Bash(git push"), ("Bash(git push", None));
        assert_eq!(split_rule("Bash("), ("Bash(", None));
        assert_eq!(split_rule("Bash()"), ("Bash", Some("")));
        assert!(!rule_matches("Bash(git push", "Bash", Some("git pus")));
    }

    #[test]
    fn perm_14_globs_with_several_stars() {
        // No `*`: the whole text, not a prefix of it.
        assert!(glob_match("git", "git"));
        assert!(!glob_match("git", "git push"));
        // The last part must end the text; a middle part may be anywhere after the first.
        assert!(!glob_match("a*b", "abc"));
        assert!(glob_match("a*b", "axxb"));
        assert!(glob_match("a*b*c", "abc"));
        assert!(glob_match("a*b*c", "a-b-b-c"));
        assert!(!glob_match("a*b*c", "acb"));
        // A middle part is consumed: it cannot also be the end.
        assert!(!glob_match("x*ab*b", "xab"));
        assert!(glob_match("x*ab*b", "xabb"));
        assert!(glob_match(
            "git *push* --force",
            "git origin push main --force"
        ));
        assert!(!glob_match(
            "git *push* --force",
            "git push --force-with-lease"
        ));
        assert!(glob_match("**", ""));
    }

    #[test]
    fn perm_14_only_shell_commands_are_split_into_chained_commands() {
        use PermissionMode::*;
        // PowerShell chains like Bash.
        let deny_rm = rules(&[], &["PowerShell(rm *)"]);
        check(
            call("PowerShell", Some("ls; rm -r x"), BypassPermissions),
            &deny_rm,
            CallDecision::Deny("PERM-14"),
        );
        let allow_ls = rules(&["PowerShell(ls*)"], &[]);
        check(
            call("PowerShell", Some("ls; rm -r x"), Default),
            &allow_ls,
            CallDecision::Prompt("PERM-9"),
        );
        // A file path is not a command line: `;` and `|` in it chain nothing.
        let deny_secret = rules(&[], &["Write(secret*)"]);
        check(
            call("Write", Some("notes;secret.env"), Default),
            &deny_secret,
            CallDecision::Prompt("PERM-9"),
        );
        let allow_src = rules(&["Edit(src/*)"], &[]);
        check(
            call("Edit", Some("src/a|b.rs"), Default),
            &allow_src,
            CallDecision::Run("PERM-14"),
        );
        // A deny rule that does not cover the call leaves it alone.
        let deny_push = rules(&[], &["Bash(git push *)"]);
        check(
            call("Bash", Some("git status"), Default),
            &deny_push,
            CallDecision::Prompt("PERM-9"),
        );
    }

    #[test]
    fn perm_9_home_network_and_dot_paths_in_the_workspace() {
        let workspace = vec!["/repo".to_string()];
        // `~` and network paths are outside, each on its own.
        assert!(!in_workspace("~/notes.txt", &workspace));
        assert!(!in_workspace("\\\\host\\share\\x", &workspace));
        assert!(!in_workspace("//host/share/x", &workspace));
        // `.` and empty components do not count as folders to climb out of.
        assert!(!in_workspace("./../secret", &workspace));
        assert!(!in_workspace("src//../../secret", &workspace));
        assert!(in_workspace("./src/./main.rs", &workspace));
        // Quotes around a path (either kind) are not part of it.
        assert!(!in_workspace("'../secret'", &workspace));
        assert!(!in_workspace("\"../secret\"", &workspace));
        assert!(!in_workspace("\"~/notes.txt\"", &workspace));
    }

    #[test]
    fn routes_name_their_rule() {
        assert_eq!(Route::Terminal("PERM-3").rule(), "PERM-3");
        assert_eq!(Route::Main("PERM-4").rule(), "PERM-4");
        assert_eq!(Route::AutoDeny("PERM-5").rule(), "PERM-5");
    }

    #[test]
    fn a_pending_prompt_is_withdrawn_when_its_run_ends() {
        assert_eq!(withdrawn_at_run_end(true), Some("Q-38"));
        assert_eq!(withdrawn_at_run_end(false), None);
    }
}
