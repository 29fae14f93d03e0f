//! PERM — whether a tool call asks permission, and where the prompt goes.
//!
//! Two pure questions: [`decide`] (does this call prompt, run, or get denied?) and
//! [`route`] (who sees the prompt: the terminal, the main session, or nobody because the
//! version auto-denies).

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
const EDIT_TOOLS: [&str; 3] = ["Edit", "Write", "NotebookEdit"];

/// What happens to one tool call before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallDecision {
    /// Runs without asking.
    Run(RuleId),
    /// Asks the person.
    Prompt(RuleId),
    /// Refused without asking (a deny rule, `dontAsk`, `plan`).
    Deny(RuleId),
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

/// Does one permission rule cover a call of `tool` with `input`?
pub fn rule_matches(rule: &str, tool: &str, input: Option<&str>) -> bool {
    let (rule_tool, specifier) = split_rule(rule.trim());
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

/// PERM-9 / PERM-14: what a call of `tool` (with optional `input`) does in `mode`, given
/// the session's rules and the tools granted session-wide (PERM-6).
pub fn decide(
    tool: &str,
    input: Option<&str>,
    mode: PermissionMode,
    rules: &PermissionRules,
    session_grants: &[String],
) -> CallDecision {
    // PERM-14: deny rules apply to main and to every subagent, in every mode.
    if rules
        .deny
        .iter()
        .any(|rule| rule_matches(rule, tool, input))
    {
        return CallDecision::Deny("PERM-14");
    }
    if NEVER_PROMPT.contains(&tool) {
        return CallDecision::Run("PERM-9");
    }
    let is_edit = EDIT_TOOLS.contains(&tool);
    let allowed_by_rule = rules
        .allow
        .iter()
        .any(|rule| rule_matches(rule, tool, input));
    let granted = session_grants.iter().any(|granted| granted == tool);
    match mode {
        PermissionMode::BypassPermissions | PermissionMode::Auto => CallDecision::Run("PERM-9"),
        PermissionMode::Plan if is_edit => CallDecision::Deny("PERM-9"),
        _ if granted => CallDecision::Run("PERM-6"),
        _ if allowed_by_rule => CallDecision::Run("PERM-14"),
        PermissionMode::AcceptEdits if is_edit => CallDecision::Run("PERM-9"),
        PermissionMode::DontAsk => CallDecision::Deny("PERM-9"),
        _ => CallDecision::Prompt("PERM-9"),
    }
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

impl Route {
    /// The trace spelling of `routed_to`, or `None` for an auto-deny.
    pub fn routed_to(self) -> Option<&'static str> {
        match self {
            Route::Terminal(_) => Some("terminal"),
            Route::Main(_) => Some("main"),
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
    /// Depth 0 is the main conversation itself.
    pub depth: u32,
    /// The run's own mode.
    pub mode: Mode,
    /// The run is a fork (PERM-7).
    pub fork: bool,
    /// Every run from this one up to main is in the foreground.
    pub chain_foreground: bool,
}

/// PERM-3/4/5/7 and Q-37: where the prompt of `asker` goes under `gates`.
pub fn route(asker: Asker, gates: &Gates) -> Route {
    if asker.depth == 0 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    #[test]
    fn glob_and_rules() {
        assert!(glob_match("git push *", "git push origin main"));
        assert!(!glob_match("git push *", "git status"));
        assert!(glob_match("*", "anything"));
        assert!(rule_matches(
            "Bash(git push *)",
            "Bash",
            Some("git push origin")
        ));
        assert!(!rule_matches("Bash(git push *)", "Bash", Some("ls")));
        assert!(rule_matches("Bash", "Bash", Some("ls")));
        assert!(rule_matches(
            "mcp__github",
            "mcp__github__create_issue",
            None
        ));
        assert!(rule_matches(
            "mcp__github__*",
            "mcp__github__create_issue",
            None
        ));
    }

    #[test]
    fn decide_by_mode_and_rules() {
        let none = PermissionRules::default();
        let deny_push = PermissionRules {
            allow: vec![],
            deny: vec!["Bash(git push *)".into()],
        };
        assert_eq!(
            decide("Read", None, PermissionMode::Default, &none, &[]),
            CallDecision::Run("PERM-9")
        );
        assert_eq!(
            decide("Bash", Some("ls"), PermissionMode::Default, &none, &[]),
            CallDecision::Prompt("PERM-9")
        );
        assert_eq!(
            decide("Edit", None, PermissionMode::AcceptEdits, &none, &[]),
            CallDecision::Run("PERM-9")
        );
        assert_eq!(
            decide("Bash", Some("ls"), PermissionMode::DontAsk, &none, &[]),
            CallDecision::Deny("PERM-9")
        );
        assert_eq!(
            decide("Edit", None, PermissionMode::Plan, &none, &[]),
            CallDecision::Deny("PERM-9")
        );
        assert_eq!(
            decide(
                "Bash",
                Some("git push o"),
                PermissionMode::BypassPermissions,
                &deny_push,
                &[]
            ),
            CallDecision::Deny("PERM-14")
        );
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
        let allow_ls = PermissionRules {
            allow: vec!["Bash(ls*)".into()],
            deny: vec![],
        };
        assert_eq!(
            decide(
                "Bash",
                Some("ls -l"),
                PermissionMode::Default,
                &allow_ls,
                &[]
            ),
            CallDecision::Run("PERM-14")
        );
    }

    #[test]
    fn routing_by_mode_fork_and_version() {
        let new = Gates::for_version(Version::NEWEST);
        let old = Gates::for_version(Version::v2_1(185));
        let bg = Asker {
            depth: 1,
            mode: Mode::Background,
            fork: false,
            chain_foreground: false,
        };
        let fg = Asker {
            depth: 1,
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
        assert_eq!(route(bg, &new), Route::Main("PERM-4"));
        assert_eq!(route(bg, &old), Route::AutoDeny("PERM-5"));
        assert_eq!(route(fg, &new), Route::Terminal("PERM-3"));
        assert_eq!(route(fg, &old), Route::Terminal("PERM-3"));
        assert_eq!(route(fork, &new), Route::Terminal("PERM-7"));
        assert_eq!(route(fg_under_bg, &new), Route::Main("Q-37"));
    }
}
