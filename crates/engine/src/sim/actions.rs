//! The person's timed actions: `x` in the panel, Ctrl+B, `/subtask`, `/clear`, typing into a transcript.

use std::rc::Rc;
use subsim_rules::panel::{self, RowId};
use subsim_rules::{id, plan, resume};

use subsim_rules::session::PersonAction;
use subsim_rules::Mode;

use crate::event::{AgentId, AgentRef, EventKind, IgnoredAction, MAIN};
use crate::spec::{ActionKind, DefinitionOutcome, Program};

use super::agents::{Block, Status};
use super::Kernel;

impl Kernel<'_> {
    // -- the person's timed actions ----------------------------------------------------

    pub(super) fn user_action(&mut self, index: usize) {
        let action = self.person.actions[index].kind.clone();
        // FGBG-5 / FORK-9 / RESUME-10: Ctrl+B and `/subtask` need the terminal, a stop
        // `/tasks` or the SDK; a session without them ignores the action. FGBG-1 case 2:
        // with background tasks disabled, Ctrl+B does nothing.
        let asked = match &action {
            ActionKind::CtrlB => Some((PersonAction::CtrlB, IgnoredAction::CtrlB)),
            ActionKind::Subtask { .. } => Some((PersonAction::Subtask, IgnoredAction::Subtask)),
            ActionKind::Stop(_) => Some((PersonAction::Stop, IgnoredAction::UserStop)),
            ActionKind::Clear
            | ActionKind::Dismiss(_)
            | ActionKind::Edit { .. }
            | ActionKind::TypeTo { .. } => None,
        };
        if let Some((person, ignored)) = asked {
            // FGBG-5 / FORK-9 / RESUME-10: Ctrl+B and `/subtask` need the terminal, a stop
            // `/tasks` or the SDK.
            if let Some((why, rule)) = self.session.config.person_cannot(person) {
                self.emit(
                    Some(rule),
                    EventKind::ActionIgnored {
                        action: ignored,
                        why: Rc::from(why),
                    },
                );
                return;
            }
        }
        match action {
            ActionKind::Stop(target) => {
                self.stop(None, &target);
            }
            ActionKind::CtrlB => self.ctrl_b(),
            ActionKind::Dismiss(target) => self.dismiss(&target),
            ActionKind::Subtask {
                task,
                name,
                behavior,
            } => self.subtask(&task, name.as_deref(), behavior),
            ActionKind::Clear => {
                // RESUME-13: /clear resets the name-reuse check.
                self.agents.reached.clear();
                self.emit(Some(id::RESUME_13), EventKind::ConversationCleared);
            }
            ActionKind::TypeTo {
                to,
                message: _,
                behavior,
            } => self.type_to(&to, behavior),
            ActionKind::Edit { agent, model } => self.edit_definition(&agent, &model),
        }
    }

    /// DEF-9: a definition file edited on disk. Picked up at once (the watcher's "within a
    /// few seconds" is not modelled, docs/decisions.md) when its directory is watched: the
    /// next delegation uses the new definition, a resumed run keeps the one it started with
    /// (RESUME-7). Elsewhere the change waits for a restart, which a scenario never has.
    fn edit_definition(&mut self, agent: &str, model: &str) {
        let index = self.session.type_index.get(agent).copied();
        let scope = index.map_or(subsim_rules::scope::Scope::BuiltIn, |index| {
            self.session.types[index].def.scope
        });
        let (watched, rule) = subsim_rules::scope::watched(scope);
        let (outcome, reason, path) = match index {
            Some(index) if watched => {
                let types = &mut self.session.types;
                types[index].def.model = Some(model.to_string());
                let choice = self.session.models.choose(
                    &self.session.config,
                    &types[index].def,
                    None,
                    false,
                    false,
                );
                types[index].model = Rc::from(choice.model.as_str());
                types[index].model_rule = choice.rule;
                // Every kept answer may have read the old definition.
                self.memos = super::decide::Memos::default();
                (
                    DefinitionOutcome::Edited,
                    format!("`model: {model}`; the next delegation uses it"),
                    types[index].def.source.clone(),
                )
            }
            Some(index) => (
                DefinitionOutcome::Skipped,
                format!(
                    "the {} scope's definitions are not watched; a restart loads the edit",
                    scope.as_str()
                ),
                self.session.types[index].def.source.clone(),
            ),
            None => (
                DefinitionOutcome::Skipped,
                format!("no definition named {agent}"),
                None,
            ),
        };
        self.emit(
            Some(rule),
            EventKind::DefinitionNoted {
                name: Some(Rc::from(agent)),
                path: Rc::from(path.as_deref().unwrap_or(".")),
                scope,
                outcome,
                reason: Some(Rc::from(reason.as_str())),
            },
        );
    }

    /// PANEL-3 / PANEL-7: `x` on a finished row clears it before its 30 seconds are up.
    pub(super) fn dismiss(&mut self, target: &str) {
        let (why, rule) = match self.agents.lookup(target) {
            Some(id) => {
                // PANEL-7: what `x` does on that row (main's types into the prompt).
                let row = if id == MAIN {
                    RowId::Main
                } else {
                    RowId::Agent(id)
                };
                // PANEL-7: what `x` does on the row.
                let (action, _) = panel::x_key(row, self.agents.is_running(id), false);
                match action.dismiss_ignored() {
                    Some((why, rule)) => (format!("{target} {why}"), rule),
                    None if self.observe_dismiss(id) => return,
                    None => (
                        format!("{target} has no row kept in the panel"),
                        id::PANEL_3,
                    ),
                }
            }
            None => (format!("no agent named {target}"), id::PANEL_3),
        };
        self.emit(
            Some(rule),
            EventKind::ActionIgnored {
                action: IgnoredAction::Dismiss,
                why: Rc::from(why.as_str()),
            },
        );
    }

    /// FGBG-5: Ctrl+B sends the running foreground task into the background.
    pub(super) fn ctrl_b(&mut self) {
        let main = self.agents.get(0);
        if main.block != Block::Foreground {
            self.emit(
                Some(id::FGBG_5),
                EventKind::ActionIgnored {
                    action: IgnoredAction::CtrlB,
                    why: Rc::from("no foreground task is running"),
                },
            );
            return;
        }
        // Every foreground child main is blocked on (a spawn step may have issued several).
        let mut candidates: Vec<(AgentId, u32)> = Vec::new();
        for (slot, agent) in self.agents.iter() {
            if agent.report_to == MAIN
                && agent.awaited
                && agent.mode == Mode::Foreground
                && agent.status == Status::Running
                && agent.id != MAIN
            {
                candidates.push((agent.id, slot));
            }
        }
        candidates.sort();
        for (_, slot) in candidates {
            let agent = self.agents.get_mut(slot);
            agent.mode = Mode::Background;
            agent.awaited = false;
            let reference = agent.reference();
            let running = self.running();
            self.emit(
                Some(id::FGBG_5),
                EventKind::AgentBackgrounded {
                    agent: reference.clone(),
                    running,
                },
            );
            self.observe_backgrounded(reference.id);
            let main = self.agents.get_mut(0);
            main.foreground_pending = main.foreground_pending.saturating_sub(1);
        }
        if self.agents.get(0).foreground_pending == 0 {
            self.wake_now(0);
        }
    }

    /// FORK-9 / CAP-6: `/subtask` starts a fork that takes a slot without a cap check,
    /// through the one start path (`Kernel::start_subtask`).
    pub(super) fn subtask(&mut self, task: &str, given: Option<&str>, behavior: Option<Program>) {
        // FORK-9 / FORK-10 / Q-39: the rules name the fork and place it.
        let Some(fork) = plan::subtask(task, given, &self.session.config.gates) else {
            self.emit(
                Some(id::FORK_9),
                EventKind::ActionIgnored {
                    action: IgnoredAction::Subtask,
                    why: Rc::from("this version has no user fork command"),
                },
            );
            return;
        };
        self.start_subtask(&fork, behavior);
    }

    /// RESUME-11 / Q-7 / Q-24: the person types into an agent's transcript.
    pub(super) fn type_to(&mut self, to: &str, behavior: Option<Program>) {
        let Some(id) = self.agents.lookup(to).filter(|id| *id != MAIN) else {
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action: IgnoredAction::TypeTo,
                    why: Rc::from(format!("no agent named {to}").as_str()),
                },
            );
            return;
        };
        let slot = self.agents.slot_of(id).expect("looked-up agent has a slot");
        if self.agents.is_running(id) {
            let target = self.agents.reference(id);
            self.emit(
                Some(id::RESUME_17),
                EventKind::MessageDelivered {
                    to: target,
                    from: AgentRef::MAIN,
                },
            );
            return;
        }
        let agent = self.agents.get(slot);
        let was_cancelled = agent.user_cancelled;
        let gates = self.session.config.gates;
        // RESUME-3 / RESUME-11 / Q-7: what typing into a finished agent's transcript does.
        let typed = resume::type_to(agent.one_shot, was_cancelled, self.typed_row(slot), &gates);
        let rule = match typed {
            resume::Typed::Resumed(rule) => rule,
            subsim_rules::resume::Typed::Refused(refusal, rule) => {
                self.emit(
                    Some(rule),
                    EventKind::ActionIgnored {
                        action: IgnoredAction::TypeTo,
                        why: Rc::from(refusal.why().as_str()),
                    },
                );
                return;
            }
        };
        // after the person resumes it, Claude may message it again.
        self.agents.get_mut(slot).user_cancelled = false;
        // a resume the person starts bypasses the cap like Claude's.
        self.resume(slot, MAIN, behavior, rule);
    }

    /// RESUME-11 asks whether the finished run in `slot` still has its row in the subagent
    /// panel: the panel model answers ([`subsim_rules::panel::Panel::has_row`]: 30 s
    /// half-open, cleared by `x`, none for foreground runs); a load run keeps no panel model
    /// and asks [`subsim_rules::panel::failed_row_kept`]; `-p` and SDK sessions have no panel
    /// (PANEL-1).
    fn typed_row(&self, slot: u32) -> subsim_rules::resume::TypedRow {
        use subsim_rules::resume::TypedRow;
        let agent = self.agents.get(slot);
        let now = self.clock.now.as_micros();
        let in_panel = match &self.panel {
            Some(state) => state
                .panel
                .has_row(agent.id, now, &self.session.config.gates),
            // PANEL-1: whether the session shows a panel; PANEL-3 / Q-21: whether a failed
            // or stopped run's row is still in a panel nobody keeps.
            None if panel::session_has_panel(self.session.config.kind).0 => {
                let has_rows = !agent.teammate && (agent.mode == Mode::Background || agent.fork);
                panel::failed_row_kept(has_rows, agent.finished_at.as_micros(), now).0
            }
            None => return TypedRow::NoPanel,
        };
        if in_panel {
            TypedRow::InPanel
        } else {
            TypedRow::Gone
        }
    }
}
