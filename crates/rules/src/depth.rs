//! DEPTH — the nesting depth limit.
//!
//! Depth 0 is the main conversation; a subagent main spawns is at depth 1. A subagent at
//! depth `d` keeps a working `Agent` tool iff `d < limit` (DEPTH-3).

use crate::RuleId;

/// What the `Agent` tool looks like to a caller at some depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AgentTool {
    /// Present and working.
    Available,
    /// DEPTH-3: removed by filter 1 (non-fork subagent at the limit).
    Removed,
    /// DEPTH-4: a fork at the limit keeps `Agent` but calling it returns an error.
    Errors,
}

/// DEPTH-1…4: the state of `Agent` for a caller at `depth` under `limit`.
///
/// The main conversation (depth 0) always has it. A fork keeps it in its inherited list
/// (TOOLS-2) but it only works below the limit (DEPTH-4, Q-10).
pub fn agent_tool(depth: u32, limit: u32, is_fork: bool) -> (AgentTool, RuleId) {
    if depth == 0 {
        return (AgentTool::Available, "DEPTH-1");
    }
    if depth < limit {
        (AgentTool::Available, "DEPTH-1")
    } else if is_fork {
        (AgentTool::Errors, "DEPTH-4")
    } else {
        (AgentTool::Removed, "DEPTH-3")
    }
}

/// The tool that spawns subagents (DEPTH-5: a caller needs it to spawn).
pub const AGENT: &str = "Agent";

/// DEPTH-5: can this caller spawn at all? A subagent needs `Agent` in its own tools; the
/// main conversation always has it. `tools` are the caller's resolved tools.
pub fn has_agent_tool<'a>(
    is_main: bool,
    mut tools: impl Iterator<Item = &'a str>,
) -> (bool, RuleId) {
    (is_main || tools.any(|tool| tool == AGENT), "DEPTH-5")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_tool_by_depth() {
        assert_eq!(agent_tool(0, 1, false).0, AgentTool::Available);
        // DEPTH-2: a limit of 1 turns nesting off.
        assert_eq!(agent_tool(1, 1, false), (AgentTool::Removed, "DEPTH-3"));
        assert_eq!(agent_tool(2, 3, false).0, AgentTool::Available);
        assert_eq!(agent_tool(3, 3, false), (AgentTool::Removed, "DEPTH-3"));
        assert_eq!(agent_tool(3, 3, true), (AgentTool::Errors, "DEPTH-4"));
        // below 2.1.172 the limit is 0 and no subagent may spawn.
        assert_eq!(agent_tool(1, 0, false).0, AgentTool::Removed);
    }

    #[test]
    fn main_always_has_the_agent_tool_a_subagent_when_listed() {
        assert_eq!(has_agent_tool(true, [].into_iter()), (true, "DEPTH-5"));
        assert!(has_agent_tool(false, ["Read", "Agent"].into_iter()).0);
        assert!(!has_agent_tool(false, ["Read", "Agents"].into_iter()).0);
    }
}
