//! TOOLS — a subagent's tool set: the base pool, filter 1, `tools` / `disallowedTools`,
//! filter 2 for background runs, and `SubagentHandback`.
//!
//! [`resolve`] returns the final set *and* the steps that produced it, each with its rule,
//! so the same function serves the engine and the teaching output.

use crate::depth::{agent_tool, AgentTool};
use crate::{Gates, Mode, PermissionMode, RejectReason, RuleId};

/// The main conversation's built-in tools when a scenario does not list them: every
/// built-in the catalog names, less `ListAgents` (cross-session messaging is off by
/// default, TOOLS-8), `PowerShell` (Windows only) and `SubagentHandback` (never main's).
pub const DEFAULT_MAIN_TOOLS: [&str; 36] = [
    "Agent",
    "AskUserQuestion",
    "Bash",
    "Edit",
    "EndConversation",
    "EnterPlanMode",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "LSP",
    "Monitor",
    "NotebookEdit",
    "Read",
    "ScheduleWakeup",
    "SendMessage",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "TodoWrite",
    "ToolSearch",
    "WebFetch",
    "WebSearch",
    "Write",
    "EnterWorktree",
    "ExitWorktree",
    "Workflow",
    "WaitForMcpServers",
    "Artifact",
    "CronCreate",
    "CronDelete",
    "CronList",
    "ScheduleWakeup",
];

/// TOOLS-5: the built-ins a background subagent keeps (LSP gated at v2.1.280).
pub const BACKGROUND_ALLOW: [&str; 20] = [
    "Read",
    "Grep",
    "Glob",
    "LSP",
    "Bash",
    "PowerShell",
    "Edit",
    "Write",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "Skill",
    "ToolSearch",
    "EnterWorktree",
    "ExitWorktree",
    "Monitor",
    "TaskStop",
    "SendMessage",
    "Artifact",
];

/// TOOLS-9: what agent-team teammates keep on top of the background allow-list.
pub const TEAMMATE_EXTRA: [&str; 7] = [
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "CronCreate",
    "CronDelete",
    "CronList",
];

/// The subagent's situation, as the filters see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Depth of the subagent (main = 0).
    pub depth: u32,
    /// The session's depth limit.
    pub depth_limit: u32,
    /// Foreground or background.
    pub mode: Mode,
    /// A fork skips both filters (TOOLS-2).
    pub fork: bool,
    /// A teammate keeps the task and cron tools (TOOLS-9).
    pub teammate: bool,
    /// A resumed run that first ran in the foreground keeps that set (TOOLS-6).
    pub first_ran_foreground: bool,
    /// The subagent's effective permission mode (Q-18: it decides `ExitPlanMode`).
    pub permission_mode: PermissionMode,
}

/// A definition's `tools` / `disallowedTools` fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fields<'a> {
    /// The allowlist, if set.
    pub tools: Option<&'a [String]>,
    /// The denylist.
    pub disallowed: &'a [String],
}

/// One step of the resolution, for the trace and `subsim tools`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// What the step did, in words.
    pub what: &'static str,
    /// The tools it removed (or, for additions, added).
    pub tools: Vec<String>,
    /// The rule behind it.
    pub rule: RuleId,
}

/// The resolved tool set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The tools the run has, in pool order.
    pub tools: Vec<String>,
    /// How it got there.
    pub steps: Vec<Step>,
    /// `tools` entries that matched nothing usable.
    pub unresolved: Vec<String>,
    /// `Agent` is present but errors when called (DEPTH-4).
    pub agent_errors: bool,
}

/// Why a spawn cannot get a tool set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZeroTools {
    /// Entries that resolved to nothing.
    pub unresolved: Vec<String>,
    /// The reason code.
    pub reason: RejectReason,
}

fn is_mcp(tool: &str) -> bool {
    tool.starts_with("mcp__")
}

/// Does a `tools`/`disallowedTools` entry name `tool`? Handles `Agent(x)`, the `Task`
/// alias (TOOLS-20), `Bash(spec)` (TOOLS-14), `mcp__server`, `mcp__server__*` and, when
/// `allow_mcp_star`, `mcp__*` (TOOLS-13).
pub fn entry_matches(entry: &str, tool: &str, allow_mcp_star: bool) -> bool {
    let entry = entry.trim();
    let base = entry.split('(').next().unwrap_or(entry).trim();
    let base = if base == "Task" { "Agent" } else { base };
    if base == tool {
        return true;
    }
    if let Some(rest) = base.strip_prefix("mcp__") {
        if !is_mcp(tool) {
            return false;
        }
        if rest == "*" {
            return allow_mcp_star;
        }
        let server = rest.strip_suffix("__*").unwrap_or(rest);
        if !server.contains("__") {
            return tool.starts_with(&format!("mcp__{server}__"));
        }
    }
    false
}

/// Resolves a non-fork or fork subagent's tools from the main pool (TOOLS-1…16).
///
/// `pool` is the main conversation's tools (built-ins then MCP tools). `handback` says
/// whether `SubagentHandback` is attached (HANDBACK-1), computed by the caller.
pub fn resolve(
    pool: &[String],
    fields: Fields<'_>,
    placement: Placement,
    gates: &Gates,
    handback: bool,
) -> Result<Resolved, ZeroTools> {
    let mut steps = Vec::new();
    let (agent_state, agent_rule) =
        agent_tool(placement.depth, placement.depth_limit, placement.fork);
    if placement.fork {
        // TOOLS-2: a fork gets exactly the main pool; DEPTH-4: Agent errors at the limit.
        return Ok(Resolved {
            tools: pool.to_vec(),
            steps: vec![Step {
                what: "fork: the main pool, both filters skipped",
                tools: vec![],
                rule: "TOOLS-2",
            }],
            unresolved: vec![],
            agent_errors: agent_state == AgentTool::Errors,
        });
    }
    // Filter 1 (TOOLS-3).
    let mut filter_one: Vec<String> = Vec::new();
    let mut available: Vec<String> = Vec::new();
    for tool in pool {
        let removed = match tool.as_str() {
            "Agent" => agent_state != AgentTool::Available,
            "AskUserQuestion" | "EndConversation" | "EnterPlanMode" | "ScheduleWakeup"
            | "WaitForMcpServers" | "Workflow" => true,
            "ExitPlanMode" => placement.permission_mode != PermissionMode::Plan,
            "TaskOutput" => gates.task_output_filtered,
            "SubagentHandback" => true,
            _ => false,
        };
        if removed {
            filter_one.push(tool.clone());
        } else if !available.contains(tool) {
            available.push(tool.clone());
        }
    }
    if !filter_one.is_empty() {
        let rule = if filter_one.iter().any(|t| t == "Agent") {
            agent_rule
        } else {
            "TOOLS-3"
        };
        steps.push(Step {
            what: "filter 1 removed",
            tools: filter_one,
            rule,
        });
    }
    // TOOLS-11: disallowedTools first.
    if !fields.disallowed.is_empty() {
        let (removed, kept): (Vec<String>, Vec<String>) = available.into_iter().partition(|tool| {
            fields
                .disallowed
                .iter()
                .any(|entry| entry_matches(entry, tool, true))
        });
        available = kept;
        if !removed.is_empty() {
            let rule = if fields.disallowed.iter().any(|entry| entry.contains('(')) {
                "TOOLS-14"
            } else {
                "TOOLS-11"
            };
            steps.push(Step {
                what: "disallowedTools removed",
                tools: removed,
                rule,
            });
        }
    }
    // TOOLS-11 / TOOLS-15: the allowlist, resolved against what is left.
    let mut unresolved = Vec::new();
    if let Some(list) = fields.tools {
        let mut kept = Vec::new();
        for entry in list {
            let matched: Vec<&String> = available
                .iter()
                .filter(|tool| entry_matches(entry, tool, false))
                .collect();
            if matched.is_empty() {
                unresolved.push(entry.clone());
            }
            for tool in matched {
                if !kept.contains(tool) {
                    kept.push(tool.clone());
                }
            }
        }
        let dropped: Vec<String> = available
            .iter()
            .filter(|tool| !kept.contains(tool))
            .cloned()
            .collect();
        // Keep pool order.
        available.retain(|tool| kept.contains(tool));
        if !dropped.is_empty() {
            steps.push(Step {
                what: "not in tools",
                tools: dropped,
                rule: "TOOLS-11",
            });
        }
    }
    // Filter 2 (TOOLS-5), except forks and resumed foreground runs (TOOLS-6).
    if placement.mode == Mode::Background && !placement.first_ran_foreground {
        let (kept, removed): (Vec<String>, Vec<String>) = available.into_iter().partition(|tool| {
            is_mcp(tool)
                || (tool == "LSP" && gates.lsp_in_background)
                || (tool != "LSP" && BACKGROUND_ALLOW.contains(&tool.as_str()))
                || tool == "Agent"
                || tool == "ExitPlanMode"
                || (placement.teammate && TEAMMATE_EXTRA.contains(&tool.as_str()))
        });
        available = kept;
        if !removed.is_empty() {
            steps.push(Step {
                what: "filter 2 (background) removed",
                tools: removed,
                rule: "TOOLS-5",
            });
        }
        if let Some(list) = fields.tools {
            // Entries whose every match fell to filter 2 now resolve to nothing (TOOLS-12).
            for entry in list {
                if !unresolved.contains(entry)
                    && !available
                        .iter()
                        .any(|tool| entry_matches(entry, tool, false))
                {
                    unresolved.push(entry.clone());
                }
            }
        }
    }
    // TOOLS-12 / Q-19: the explicit list resolving to nothing, before auto-added tools.
    if let Some(list) = fields.tools {
        if !list.is_empty() && unresolved.len() == list.len() && gates.zero_tools_refused {
            return Err(ZeroTools {
                unresolved,
                reason: RejectReason::ZeroTools,
            });
        }
    }
    // TOOLS-16 / HANDBACK-3/4: attached whatever the fields and filters say.
    if handback && !available.iter().any(|tool| tool == "SubagentHandback") {
        available.push("SubagentHandback".to_string());
        steps.push(Step {
            what: "attached",
            tools: vec!["SubagentHandback".into()],
            rule: "TOOLS-16",
        });
    }
    Ok(Resolved {
        tools: available,
        steps,
        unresolved,
        agent_errors: false,
    })
}

/// HANDBACK-1: `SubagentHandback` is attached iff the run is in auto mode, is not a fork,
/// and the version has it.
pub fn handback_attached(mode: PermissionMode, fork: bool, gates: &Gates) -> bool {
    mode == PermissionMode::Auto && !fork && gates.handback
}

/// The default main pool as owned strings.
pub fn default_main_tools() -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for tool in DEFAULT_MAIN_TOOLS {
        if !tools.iter().any(|known| known == tool) {
            tools.push(tool.to_string());
        }
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    fn placement(mode: Mode, depth: u32) -> Placement {
        Placement {
            depth,
            depth_limit: 3,
            mode,
            fork: false,
            teammate: false,
            first_ran_foreground: false,
            permission_mode: PermissionMode::Default,
        }
    }

    fn pool() -> Vec<String> {
        let mut pool = default_main_tools();
        pool.push("mcp__github__create_issue".into());
        pool
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn filter_one_removes_even_if_listed() {
        let gates = Gates::for_version(Version::NEWEST);
        let listed = strings(&["AskUserQuestion", "Read"]);
        let resolved = resolve(
            &pool(),
            Fields {
                tools: Some(&listed),
                disallowed: &[],
            },
            placement(Mode::Foreground, 1),
            &gates,
            false,
        )
        .unwrap();
        assert_eq!(resolved.tools, strings(&["Read"]));
        assert_eq!(resolved.unresolved, strings(&["AskUserQuestion"]));
    }

    #[test]
    fn agent_removed_at_depth_limit() {
        let gates = Gates::for_version(Version::NEWEST);
        let below = resolve(
            &pool(),
            Fields::default(),
            placement(Mode::Background, 2),
            &gates,
            false,
        )
        .unwrap();
        assert!(below.tools.contains(&"Agent".to_string()));
        let at = resolve(
            &pool(),
            Fields::default(),
            placement(Mode::Background, 3),
            &gates,
            false,
        )
        .unwrap();
        assert!(!at.tools.contains(&"Agent".to_string()));
        assert_eq!(at.steps[0].rule, "DEPTH-3");
    }

    #[test]
    fn background_allow_list_by_version() {
        let new = Gates::for_version(Version::NEWEST);
        let old = Gates::for_version(Version::v2_1(279));
        let bg = resolve(
            &pool(),
            Fields::default(),
            placement(Mode::Background, 1),
            &new,
            false,
        )
        .unwrap();
        assert!(bg.tools.contains(&"LSP".to_string()));
        assert!(bg.tools.contains(&"mcp__github__create_issue".to_string()));
        assert!(!bg.tools.contains(&"TaskCreate".to_string()));
        let bg_old = resolve(
            &pool(),
            Fields::default(),
            placement(Mode::Background, 1),
            &old,
            false,
        )
        .unwrap();
        assert!(!bg_old.tools.contains(&"LSP".to_string()));
        let fg = resolve(
            &pool(),
            Fields::default(),
            placement(Mode::Foreground, 1),
            &new,
            false,
        )
        .unwrap();
        assert!(fg.tools.contains(&"TaskCreate".to_string()));
    }

    #[test]
    fn disallowed_wins_and_specifier_removes_whole_tool() {
        let gates = Gates::for_version(Version::NEWEST);
        let tools = strings(&["Read", "Bash"]);
        let disallowed = strings(&["Bash(git push *)"]);
        let resolved = resolve(
            &pool(),
            Fields {
                tools: Some(&tools),
                disallowed: &disallowed,
            },
            placement(Mode::Foreground, 1),
            &gates,
            false,
        )
        .unwrap();
        assert_eq!(resolved.tools, strings(&["Read"]));
    }

    #[test]
    fn zero_tools_is_refused_from_2_1_208() {
        let tools = strings(&["Raed"]);
        let fields = Fields {
            tools: Some(&tools),
            disallowed: &[],
        };
        let new = Gates::for_version(Version::NEWEST);
        let err =
            resolve(&pool(), fields, placement(Mode::Foreground, 1), &new, false).unwrap_err();
        assert_eq!(err.unresolved, strings(&["Raed"]));
        let old = Gates::for_version(Version::v2_1(207));
        assert!(
            resolve(&pool(), fields, placement(Mode::Foreground, 1), &old, false)
                .unwrap()
                .tools
                .is_empty()
        );
    }

    #[test]
    fn handback_survives_everything() {
        let gates = Gates::for_version(Version::NEWEST);
        let disallowed = strings(&["SubagentHandback"]);
        let resolved = resolve(
            &pool(),
            Fields {
                tools: None,
                disallowed: &disallowed,
            },
            placement(Mode::Background, 1),
            &gates,
            true,
        )
        .unwrap();
        assert!(resolved.tools.contains(&"SubagentHandback".to_string()));
    }

    #[test]
    fn forks_get_the_pool() {
        let gates = Gates::for_version(Version::NEWEST);
        let mut at_limit = placement(Mode::Background, 3);
        at_limit.fork = true;
        let resolved = resolve(&pool(), Fields::default(), at_limit, &gates, false).unwrap();
        assert_eq!(resolved.tools, pool());
        assert!(resolved.agent_errors);
    }
}
