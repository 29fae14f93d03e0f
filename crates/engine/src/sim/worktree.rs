//! Worktree isolation in the kernel (ISO, catalog §18): an agent's own temporary worktree
//! (ISO-1: made when its run starts, removed or kept when the run ends, gone on in by a
//! resume) and the checks of an isolated run's Bash, PowerShell and Monitor commands
//! (ISO-2…5). The checks are part of the call's effect (check 4 of the tool-call gate,
//! `gate.rs`): they are asked once checks 1–3 let the call through (its prompt answered,
//! if it asked), and a refused command is its `tool_called` (not allowed, naming the tool
//! and the rule) with no effect and no `PostToolUse`. The rules decide
//! (`rules::isolation`); this file asks them and writes what they answer.

use subsim_rules::isolation::{self, Cwd, Verdict, WorktreeAction};
use subsim_rules::RuleId;

use crate::event::{EventKind, ToolRefusal};
use crate::spec::ToolCall;

use super::agents::Worktree;
use super::Kernel;

/// What the isolation checks make of a `tool` step's call at its effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct AtEffect {
    /// Why the command does not run (ISO-2/3: it failed with an error; ISO-4: blocked or
    /// refused), under `rule`; `None`: it runs.
    pub(super) refusal: Option<ToolRefusal>,
    /// The rule of the refusal, or of a command that ran outside its worktree because the
    /// version's check did not cover the place (ISO-2/3's gates); `None` for a call the
    /// checks let run in its worktree, or did not see: its permission's rule stays.
    pub(super) rule: Option<RuleId>,
    /// Where the command's working directory resolved, for a call the checks saw
    /// (`tool_called.cwd`).
    pub(super) cwd: Option<Cwd>,
}

impl AtEffect {
    /// A call the checks do not see.
    const UNCHECKED: AtEffect = AtEffect {
        refusal: None,
        rule: None,
        cwd: None,
    };
}

impl Kernel<'_> {
    /// ISO-2…5: the isolation checks for `call` by the run in `slot`, once the gate let it
    /// through: what they make of it. Nothing is checked for a run that is not isolated
    /// (its own worktree, ISO-1/2, or main's isolation, ISO-5) or a tool that runs no
    /// command.
    #[inline]
    pub(super) fn at_effect(&self, slot: u32, call: &ToolCall) -> AtEffect {
        let agent = self.agents.get(slot);
        if !self.session.main_isolated && agent.rare.is_none() {
            return AtEffect::UNCHECKED;
        }
        self.isolation_checks(agent.worktree().is_some(), call)
    }

    /// [`Kernel::at_effect`] for a run that may be isolated (`own`: it has its own
    /// worktree).
    #[cold]
    #[inline(never)]
    fn isolation_checks(&self, own: bool, call: &ToolCall) -> AtEffect {
        // ISO-2 / ISO-5: whose worktree the run's commands must stay in.
        let isolated = isolation::isolation(own, self.session.main_isolated);
        // ISO-2 / ISO-3 / ISO-4: the working directory, then (Bash, Monitor) the content.
        let Some(checked) = isolation::check_command(
            isolated,
            &call.name,
            call.cwd,
            call.git,
            &self.session.config.gates,
        ) else {
            return AtEffect::UNCHECKED;
        };
        let (refusal, rule) = match checked.verdict {
            Verdict::Runs => (None, None),
            Verdict::RunsOutside => (None, Some(checked.rule)),
            Verdict::Fails => (Some(ToolRefusal::OutsideWorktree), Some(checked.rule)),
            Verdict::Blocked => (Some(ToolRefusal::GitRedirected), Some(checked.rule)),
            Verdict::Refused => (Some(ToolRefusal::GitUnverifiable), Some(checked.rule)),
        };
        AtEffect {
            refusal,
            rule,
            cwd: Some(call.cwd),
        }
    }

    /// ISO-1: an allowed call of `tool` by the run in `slot` ran; a file-editing tool's is
    /// a change to the agent's own worktree, if it has one.
    #[inline]
    pub(super) fn tool_ran(&mut self, slot: u32, tool: &str) {
        let agent = self.agents.get_mut(slot);
        if agent.rare.is_none() {
            return;
        }
        if let Some(worktree) = agent.worktree_mut() {
            // ISO-1: what counts as a change (docs/decisions.md).
            if isolation::changes(tool) {
                worktree.changes += 1;
            }
        }
    }

    /// ISO-1 / FORK-8: a new run in `slot` gets its own temporary worktree, branched from
    /// the default branch, when its Agent call (`call`) or its definition asks for
    /// `isolation: worktree` (a teammate gets none). Asked by the door right after the
    /// run's `agent_started`.
    #[cold]
    #[inline(never)]
    pub(super) fn worktree_start(&mut self, slot: u32, call: Option<&str>, teammate: bool) {
        let agent = self.agents.get(slot);
        let definition = agent
            .type_index()
            .and_then(|index| self.session.types[index].def.isolation.as_deref());
        // ISO-1: whether the run gets a worktree of its own.
        let Some(rule) = isolation::own_worktree(call, definition, teammate) else {
            return;
        };
        let reference = agent.reference();
        self.agents.get_mut(slot).rare_mut().worktree = Some(Worktree {
            open: true,
            changes: 0,
        });
        self.emit(
            Some(rule),
            EventKind::Worktree {
                agent: reference,
                action: WorktreeAction::Created,
                changes: None,
            },
        );
    }

    /// ISO-1: the run in `slot` ended; its own worktree, if it is in one, is removed when
    /// the agent made no changes in it and kept otherwise.
    #[cold]
    #[inline(never)]
    pub(super) fn worktree_end(&mut self, slot: u32) {
        let agent = self.agents.get_mut(slot);
        let Some(worktree) = agent.worktree_mut().filter(|worktree| worktree.open) else {
            return;
        };
        worktree.open = false;
        let changes = worktree.changes;
        let reference = agent.reference();
        // ISO-1: "cleaned up automatically if the subagent makes no changes".
        let (action, rule) = isolation::at_end(changes);
        self.emit(
            Some(rule),
            EventKind::Worktree {
                agent: reference,
                action,
                changes: Some(changes),
            },
        );
    }

    /// ISO-1 on a resume of the agent in `slot` (docs/decisions.md): the resumed run goes on
    /// in its kept worktree; one whose worktree was removed gets a new one.
    #[cold]
    #[inline(never)]
    pub(super) fn worktree_resumed(&mut self, slot: u32) {
        let agent = self.agents.get_mut(slot);
        let Some(worktree) = agent.worktree_mut() else {
            return;
        };
        worktree.open = true;
        let changes = worktree.changes;
        let reference = agent.reference();
        // ISO-1: a removed worktree is made again; a kept one is gone on in.
        if let Some((action, rule)) = isolation::on_resume(changes) {
            self.emit(
                Some(rule),
                EventKind::Worktree {
                    agent: reference,
                    action,
                    changes: None,
                },
            );
        }
    }
}
