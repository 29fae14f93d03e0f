//! The texts the simulator shows for errors and notes, in one module.
//!
//! Strings the seeds print verbatim are marked *verbatim*; the others are placeholders the
//! project wrote because the seeds give only a heading or nothing, and say so.

/// CAP-1, *verbatim* (the seeds give only this part of the message).
pub const CONCURRENT_LIMIT: &str = "Concurrent subagent limit reached";
/// CAP-2: the don't-retry instruction; placeholder wording.
pub const CONCURRENT_LIMIT_NO_RETRY: &str = "do not retry; wait for a running subagent to finish";
/// SPAWN-3, *verbatim*.
pub const TYPE_REQUIRED: &str = "subagent_type is required";
/// TOOLS-12: placeholder built on the docs heading "Agent would be spawned with zero tools".
pub const ZERO_TOOLS: &str = "Agent would be spawned with zero tools";
/// ERR-3, *verbatim*.
pub const API_ERROR_TERMINATED: &str = "Agent terminated early due to an API error";
/// DEPTH-4: placeholder (the seeds give no text).
pub const FORK_DEPTH: &str = "Agent tool unavailable: this fork is at the nesting depth limit";
/// DEPTH-3: placeholder: a non-fork subagent at the limit has no Agent tool at all.
pub const NO_AGENT_TOOL: &str = "Agent tool not available at the nesting depth limit";
/// FORK-7: placeholder.
pub const FORK_IN_FORK: &str = "A fork cannot spawn further forks";
/// placeholder.
pub const FORK_FROM_SUBAGENT: &str = "Only the main conversation can fork";
/// FORK-3/4: placeholder.
pub const FORK_UNAVAILABLE: &str = "subagent_type \"fork\" is not available in this session";
/// SPAWN-7: placeholder.
pub const DENIED: &str = "This agent type is denied by permission rules";
/// FGBG-1 case 1: placeholder for the teammate `background: true` rejection.
pub const TEAMMATE_BACKGROUND_DEF: &str =
    "Teammates cannot spawn a subagent whose definition sets background: true";
/// FGBG-1 case 1: placeholder for the teammate `run_in_background: true` rejection.
pub const TEAMMATE_RUN_IN_BACKGROUND: &str =
    "Teammates cannot spawn subagents with run_in_background: true";
/// RESUME-10: placeholder.
pub const CANCELLED: &str = "This agent was cancelled by the user and cannot be resumed by Claude";
/// RESUME-3: placeholder.
pub const NOT_RESUMABLE: &str =
    "This agent is one-shot and returned no agent ID; it cannot be resumed";
/// Unknown SendMessage target: placeholder.
pub const UNKNOWN_AGENT: &str = "No agent with that ID or name";
