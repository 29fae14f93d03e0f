//! The tool-call gate's tables (issue #30): which scenario steps stand for a tool call,
//! under which tool name, and what each check of the gate answers.
//!
//! Every step that stands for a tool call goes through one gate in the kernel, in one
//! order:
//!
//! 1. the caller's resolved tool set (TOOLS-4; for `Agent`, the spawn plan's DEPTH-3/4/5);
//! 2. `PreToolUse` hooks matched on the tool's name (HOOK-1); exit code 2 blocks (HOOK-7,
//!    [`crate::hooks::blocks_call`]);
//! 3. permission rules, mode and prompt (PERM-3/9/14; for `Agent`, the plan's SPAWN-5/7);
//! 4. the call's own effect (a tool's run, a spawn, a resume or message, a stop, a shell);
//! 5. `PostToolUse` hooks (HOOK-1).
//!
//! A refusal at 1–3 is a `tool_called` (not allowed) naming the step, the tool and the
//! rule, or the step's own refusal where its own path checks (`spawn_rejected`); a refused
//! call has no effect. What is not a tool call stays outside: the person's `/subtask`
//! (FORK-9), the person's stop and Ctrl+B, the main session's own decisions.
//!
//! A new step that is a tool call is one entry of [`ToolStep`] plus its effect.

use crate::prompt::{self, CallDecision, PermissionRules};
use crate::{tools, RejectReason, RuleId};

/// Who checks the caller's tool set for a step (the gate's first check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolSetCheck {
    /// The gate: the run's resolved tools must name the tool (TOOLS-4).
    Gate,
    /// The spawn plan, as Q-11 orders it: the caller's own `Agent` tool (DEPTH-3/4/5),
    /// refused as `spawn_rejected` ([`tool_set_refusal`]).
    Plan,
}

/// Who decides a step's permission (the gate's third check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionCheck {
    /// The call's mode, the allow/deny rules and grants, or the step's forced `prompt:`
    /// ([`prompt::decide_step`]).
    Call,
    /// The spawn plan: `Agent(…)` deny rules and the `--agent` allowlist (SPAWN-5/7).
    Plan,
    /// The deny rules only (PERM-14), as for a `tool` step with `prompt: false`: the step
    /// stands for a call the scenario says runs, so it never prompts (docs/decisions.md).
    DenyRules,
}

/// What the gate reads of a step that is a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolStepFacts {
    /// The tool it calls; `None` when the step names it (`tool: NAME`).
    pub tool: Option<&'static str>,
    /// Who checks the caller's tool set.
    pub tool_set: ToolSetCheck,
    /// Who decides permission.
    pub permission: PermissionCheck,
    /// An allowed call writes its own `tool_called` (a `tool` step's; the others' effects
    /// are their own events).
    pub announced: bool,
}

crate::vocabulary! {
    /// A scenario step that stands for a tool call (`tool_called.step`, written for every
    /// step but `tool`). The one table of which steps are tool calls and under which name.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ToolStep {
        /// `tool: NAME`: the tool it names.
        Tool => "tool" {
            tool: None,
            tool_set: ToolSetCheck::Gate,
            permission: PermissionCheck::Call,
            announced: true,
        },
        /// `spawn` / `fork`: an Agent call (each call of a step's `count`).
        Spawn => "spawn" {
            tool: Some(tools::AGENT),
            tool_set: ToolSetCheck::Plan,
            permission: PermissionCheck::Plan,
            announced: false,
        },
        /// `send`: a SendMessage call (RESUME-5…13).
        Send => "send" {
            tool: Some(tools::SEND_MESSAGE),
            tool_set: ToolSetCheck::Gate,
            permission: PermissionCheck::DenyRules,
            announced: false,
        },
        /// `stop`: a TaskStop call (RESUME-10).
        Stop => "stop" {
            tool: Some(tools::TASK_STOP),
            tool_set: ToolSetCheck::Gate,
            permission: PermissionCheck::DenyRules,
            announced: false,
        },
        /// `bash_background`: a Bash call whose shell runs on past the turn (NOTIFY-5).
        BashBackground => "bash_background" {
            tool: Some(tools::BASH),
            tool_set: ToolSetCheck::Gate,
            permission: PermissionCheck::DenyRules,
            announced: false,
        },
    }
    /// What the gate reads of this step ([`ToolStepFacts`]).
    pub fn facts -> ToolStepFacts;
}

/// Gate check 1 for an `Agent` call: is the plan's refusal (`reason` under `rule`) the
/// caller's tool set — no `Agent` tool (DEPTH-3: removed at the depth limit; DEPTH-5: not
/// in its tools) — which comes before the hooks? A fork at the depth limit is not: it
/// keeps `Agent` in its inherited tools (TOOLS-2) and "calling it returns an error instead
/// of spawning" (DEPTH-4), so the call is made, its `PreToolUse` hooks fire, and the
/// Agent tool's error comes after them, like every other refusal of the plan (its type,
/// its permission rules, its placement).
pub fn tool_set_refusal(reason: RejectReason, rule: RuleId) -> bool {
    match reason {
        RejectReason::DepthLimit => rule != crate::id::DEPTH_4,
        RejectReason::NoAgentTool => true,
        RejectReason::ConcurrentLimit
        | RejectReason::Denied
        | RejectReason::UnknownType
        | RejectReason::TypeRequired
        | RejectReason::ZeroTools
        | RejectReason::ForkInFork
        | RejectReason::TeammateBackground
        | RejectReason::ForkUnavailable
        | RejectReason::ForkFromSubagent
        | RejectReason::NotAllowed
        | RejectReason::Ambiguous
        | RejectReason::ClassifierBlocked => false,
    }
}

/// Gate check 3: what the permission system does with a call of `step` (`forced` is a
/// `tool` step's `prompt:`), or `None` when the step's own path decides (the spawn plan).
/// A step checked by the deny rules alone runs (PERM-9) unless a deny rule covers it
/// (PERM-14): it never prompts.
#[inline]
pub fn permission(
    step: ToolStep,
    forced: Option<bool>,
    call: &prompt::Call<'_>,
    rules: &PermissionRules,
    session_grants: &[String],
) -> Option<CallDecision> {
    match step.facts().permission {
        PermissionCheck::Call => Some(prompt::decide_step(forced, call, rules, session_grants)),
        PermissionCheck::DenyRules => Some(prompt::decide_step(
            Some(false),
            call,
            rules,
            session_grants,
        )),
        PermissionCheck::Plan => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PermissionMode;

    #[test]
    fn every_step_but_tool_names_its_tool_and_only_tool_announces_itself() {
        for step in ToolStep::ALL {
            let facts = step.facts();
            assert_eq!(facts.tool.is_none(), step == ToolStep::Tool, "{step}");
            assert_eq!(facts.announced, step == ToolStep::Tool, "{step}");
        }
        assert_eq!(ToolStep::Stop.facts().tool, Some("TaskStop"));
        assert_eq!(ToolStep::Send.facts().tool, Some("SendMessage"));
        assert_eq!(ToolStep::BashBackground.facts().tool, Some("Bash"));
        assert_eq!(ToolStep::Spawn.facts().tool, Some("Agent"));
    }

    #[test]
    fn a_deny_rule_refuses_task_stop_and_nothing_else_does() {
        let rules = PermissionRules {
            allow: vec![],
            deny: vec!["TaskStop".into()],
        };
        let call = |tool| prompt::Call::new(tool, PermissionMode::Default);
        assert_eq!(
            permission(ToolStep::Stop, None, &call("TaskStop"), &rules, &[]),
            Some(CallDecision::Deny("PERM-14"))
        );
        // A background shell never prompts, even in the default mode.
        assert_eq!(
            permission(ToolStep::BashBackground, None, &call("Bash"), &rules, &[]),
            Some(CallDecision::Run("PERM-9"))
        );
        assert_eq!(
            permission(ToolStep::Tool, None, &call("Bash"), &rules, &[]),
            Some(CallDecision::Prompt("PERM-9"))
        );
        assert_eq!(
            permission(ToolStep::Spawn, None, &call("Agent"), &rules, &[]),
            None
        );
    }

    #[test]
    fn only_a_missing_agent_tool_is_a_tool_set_refusal() {
        let refusals: Vec<_> = RejectReason::ALL
            .into_iter()
            .filter(|reason| tool_set_refusal(*reason, "DEPTH-3"))
            .collect();
        assert_eq!(
            refusals,
            [RejectReason::DepthLimit, RejectReason::NoAgentTool]
        );
        // DEPTH-4: a fork at the limit has the tool; its call errors after the hooks.
        assert!(!tool_set_refusal(RejectReason::DepthLimit, "DEPTH-4"));
        assert!(tool_set_refusal(RejectReason::NoAgentTool, "DEPTH-5"));
    }
}
