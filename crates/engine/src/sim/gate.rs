//! The tool-call gate (issue #30): every step that stands for a tool call — `tool`,
//! `spawn` / `fork` (Agent, a load stream's arrivals included), `send` (SendMessage),
//! `stop` (TaskStop), `bash_background` (Bash) — passes through [`Kernel::gate`] before its
//! effect and [`Kernel::post_tool_use`] after it, in the order `rules::toolcall` documents
//! and whose table ([`ToolStep`]) says which step calls which tool and who checks what:
//!
//! 1. the caller's resolved tool set (TOOLS-4; an Agent call's is the spawn plan's
//!    DEPTH-3/4/5, asked before the gate, `Kernel::spawn`);
//! 2. `PreToolUse` hooks matched on the tool's name (HOOK-1), exit code 2 blocks (HOOK-7);
//! 3. permission rules, mode and prompt (PERM-3/9/14; an Agent call's are its plan's);
//! 4. the call's own effect (the step's own code);
//! 5. `PostToolUse` hooks.
//!
//! A refusal at 1–3 is one `tool_called` (not allowed) naming the step, the tool, the
//! reason and the rule; a refused call has no effect. The gate asks the rules and writes
//! what they answer; it decides nothing itself.

use std::rc::Rc;

use subsim_rules::hooks::HookEvent;
use subsim_rules::prompt::{self, CallDecision};
use subsim_rules::toolcall::{self, ToolSetCheck, ToolStep};
use subsim_rules::RuleId;

use crate::event::{EventKind, ToolRefusal};

use super::Kernel;

/// What the gate answers before a call's effect.
#[derive(Debug)]
pub(super) enum Gated {
    /// Refused at check 1, 2 or 3: its `tool_called` is written and the call has no
    /// effect.
    Refused,
    /// Check 3 asks the person (only a `tool` step's permission may prompt).
    Prompt,
    /// The call goes on to its effect: under the permission system's rule and the
    /// `permissions` entry that decided, or `None` where the step's own path decides its
    /// permission (an Agent call's plan).
    Run(Option<(RuleId, Option<Rc<str>>)>),
}

/// A call at the gate.
pub(super) struct GateCall<'c> {
    /// The step that makes it.
    pub(super) step: ToolStep,
    /// The tool it calls (shared: the step's, or `Session::step_tools`).
    pub(super) tool: &'c Rc<str>,
    /// Its input, which permission rules match (a `tool` step's).
    pub(super) input: Option<&'c Rc<str>>,
    /// A `tool` step's `prompt:`.
    pub(super) forced: Option<bool>,
}

impl Kernel<'_> {
    /// The tool a step that is a tool call calls, shared by every call of it (a `tool`
    /// step names its own).
    #[inline]
    pub(super) fn step_tool(&self, step: ToolStep) -> Rc<str> {
        self.session.step_tools[step as usize].clone()
    }

    /// Checks 1–3 of the gate for `call` by the run in `slot` (see the module's header).
    pub(super) fn gate(&mut self, slot: u32, call: &GateCall<'_>) -> Gated {
        // 1. TOOLS-4: a tool the run was not given cannot be called; the trace says which
        // step of the resolution removed it, and by which rule.
        match call.step.facts().tool_set {
            ToolSetCheck::Gate => {
                if !self.run_has_tool(slot, call.tool) {
                    let (reason, rule) = self.removal_of(slot, call.tool);
                    self.refuse_call(slot, call, reason, rule, None);
                    return Gated::Refused;
                }
            }
            // The spawn plan's DEPTH-3/4/5, which `spawn` asked before coming here.
            ToolSetCheck::Plan => {}
        }
        // 2. HOOK-1: PreToolUse hooks fire for every tool call, subagents' included;
        // HOOK-7: one that exits with code 2 blocks the call and its stderr goes back to
        // the agent.
        if let Some(rule) = self.tool_hooks(slot, call.tool, HookEvent::PreToolUse) {
            self.refuse_call(slot, call, ToolRefusal::HookBlocked, rule, None);
            return Gated::Refused;
        }
        // 3. PERM-3/9/14, HANDBACK-5: the scenario's forced `prompt:`, else the mode, the
        // allow/deny rules and session-wide grants decide (PERM-9…16); a step the rules
        // check by deny rules alone never prompts; an Agent call's plan decides its own.
        let agent = self.agents.get(slot);
        let asked = prompt::Call {
            input: call.input.map(|input| &**input),
            subagent: agent.depth > 0,
            // PERM-9: an MCP tool marked `requiresUserInteraction` always asks.
            requires_user_interaction: self
                .session
                .requires_user_interaction
                .iter()
                .any(|marked| **marked == **call.tool),
            ..prompt::Call::new(call.tool, agent.permission_mode)
        };
        let Some(decision) = toolcall::permission(
            call.step,
            call.forced,
            &asked,
            &self.session.permissions,
            &self.person.grants,
        ) else {
            return Gated::Run(None);
        };
        // PERM-14: the permission rule that decided, by its position.
        let permission_rule = prompt::deciding_entry(
            &self.session.permissions,
            decision,
            call.tool,
            call.input.map(|input| &**input),
        )
        .map(|entry| self.session.permission_text(entry));
        match decision {
            CallDecision::Run(rule) => Gated::Run(Some((rule, permission_rule))),
            CallDecision::Deny(rule) => {
                self.refuse_call(slot, call, ToolRefusal::Denied, rule, permission_rule);
                Gated::Refused
            }
            CallDecision::Prompt(_) => Gated::Prompt,
        }
    }

    /// Check 5 of the gate: `PostToolUse` hooks for a call whose effect took place
    /// (HOOK-1; they cannot block, HOOK-7).
    #[inline]
    pub(super) fn post_tool_use(&mut self, slot: u32, tool: &str) {
        self.tool_hooks(slot, tool, HookEvent::PostToolUse);
    }

    /// A call refused at the gate (TOOLS-4, HOOK-7, PERM-14): its `tool_called`, not
    /// allowed, under `rule`, naming the step (for every step but `tool`).
    pub(super) fn refuse_call(
        &mut self,
        slot: u32,
        call: &GateCall<'_>,
        reason: ToolRefusal,
        rule: RuleId,
        permission_rule: Option<Rc<str>>,
    ) {
        let kind = EventKind::ToolCalled {
            agent: self.agents.get(slot).reference(),
            tool: call.tool.clone(),
            step: call.step,
            allowed: false,
            reason: Some(reason),
            input: call.input.cloned(),
            permission_rule,
            cwd: None,
        };
        self.emit(Some(rule), kind);
    }
}
