//! Waits, SendMessage (resume, direction, rejections), TaskStop and progress questions.

use std::rc::Rc;

use subsim_rules::hooks::RunTransition;
use subsim_rules::id;
use subsim_rules::{messages, notify, placement, resume, Mode, RuleId};

use crate::event::{
    AgentId, AgentRef, EventKind, IgnoredAction, MessageRejection, Outcome, StopSource, MAIN,
};
use crate::spec::{Program, WaitTarget};

use super::agents::Block;
use super::{Flow, Kernel};

impl Kernel<'_> {
    // -- waits, messages, stops --------------------------------------------------------

    /// `Flow::Stop` if the run blocked.
    pub(super) fn wait_for(&mut self, slot: u32, target: &WaitTarget) -> Flow {
        match target {
            WaitTarget::Agent(text) => {
                let Some(id) = self.agents.lookup(text) else {
                    return Flow::Continue;
                };
                if !self.agents.is_running(id) || id == self.agents.get(slot).id {
                    return Flow::Continue;
                }
                let waiter = self.agents.get(slot).id;
                if let Some(target_slot) = self.agents.slot_of(id) {
                    self.agents
                        .get_mut(target_slot)
                        .rare_mut()
                        .waiters
                        .push(waiter);
                }
                self.agents.get_mut(slot).block = Block::Agent;
                Flow::Stop
            }
            WaitTarget::Children => {
                if self.agents.get(slot).children_running == 0 {
                    return Flow::Continue;
                }
                self.agents.get_mut(slot).block = Block::Children;
                Flow::Stop
            }
            WaitTarget::Notification => {
                let agent = self.agents.get_mut(slot);
                if agent.inbox > 0 {
                    agent.inbox -= 1;
                    return Flow::Continue;
                }
                agent.block = Block::Notification;
                Flow::Stop
            }
        }
    }

    /// SendMessage from `caller` (RESUME-5…13). `Flow::Stop` if the caller blocked on a
    /// foreground resume (Q-14, FGBG-4); with whether the message was delivered or resumed
    /// its agent (the call succeeded: `PostToolUse`, HOOK-1), not refused.
    pub(super) fn send(
        &mut self,
        caller: AgentId,
        to: &str,
        behavior: Option<Program>,
    ) -> (Flow, bool) {
        let by = self.agents.reference(caller);
        // The target's text is copied only for a refusal or a name seen the first time: a
        // delivered message or a resume allocates nothing.
        let reject =
            |kernel: &mut Kernel<'_>, reason: MessageRejection, rule: RuleId, message: String| {
                kernel.emit(
                    Some(rule),
                    EventKind::MessageRejected {
                        to: Rc::from(to),
                        by: by.clone(),
                        reason,
                        message: Rc::from(message.as_str()),
                    },
                );
                (Flow::Continue, false)
            };
        // RESUME-3/5/10/12, Q-8, NOTIFY-9, CAP-7: the rules decide from what is known of
        // the agent `to` names.
        let id = self.agents.lookup(to);
        let first = id.and_then(|_| self.agents.reached.get(to).copied());
        let slot = id.and_then(|id| self.agents.slot_of(id));
        let record = slot.map(|slot| self.agents.get(slot));
        let addressee = resume::Addressee {
            found: id.is_some(),
            name_reached_another: first.is_some() && first != id,
            main: id == Some(MAIN),
            running: id.is_some_and(|id| self.agents.is_running(id)),
            kept: slot.is_some(),
            one_shot: record.is_some_and(|agent| agent.one_shot),
            cancelled: record.is_some_and(|agent| agent.user_cancelled),
        };
        let decision = resume::send(&addressee, &self.session.config.gates);
        // An agent without a record is neither main nor running: the rules refuse it.
        let (Some(id), Some(slot)) = (id, slot) else {
            let (reason, rule) = match decision {
                resume::Send::Refused(reason, rule) => (reason, rule),
                _ => (MessageRejection::UnknownAgent, id::RESUME_5),
            };
            let message = self.refusal_message(reason, to, id, first);
            return reject(self, reason, rule, message);
        };
        if let resume::Send::Refused(MessageRejection::NameReused, rule) = decision {
            let message = self.refusal_message(MessageRejection::NameReused, to, Some(id), first);
            return reject(self, MessageRejection::NameReused, rule, message);
        }
        if self.agents.names.contains_key(to) && !self.agents.reached.contains_key(to) {
            self.agents.reached.insert(Rc::from(to), id);
        }
        let rule = match decision {
            resume::Send::Refused(reason, rule) => {
                let message = self.refusal_message(reason, to, Some(id), first);
                return reject(self, reason, rule, message);
            }
            resume::Send::Delivered(rule) => {
                // RESUME-17 / Q-8: a message to a running agent is direction, not a new run.
                let target = self.agents.reference(id);
                self.emit(
                    Some(rule),
                    EventKind::MessageDelivered {
                        to: target,
                        from: by.clone(),
                    },
                );
                return (Flow::Continue, true);
            }
            resume::Send::Resumed(rule) => rule,
        };
        let mode = self.resume(slot, caller, behavior, rule);
        // Q-14 / FGBG-4: a foreground resume blocks the resumer until its result comes back
        // as the tool's result (NOTIFY-2), as any foreground run does.
        let result_to_resumer = self.agents.get(slot).report_to == caller;
        let (waits, _) = placement::resumer_waits(mode, result_to_resumer);
        if waits {
            if let Some(caller_slot) = self.agents.slot_of(caller) {
                self.agents.get_mut(slot).awaited = true;
                let resumer = self.agents.get_mut(caller_slot);
                resumer.foreground_pending += 1;
                resumer.block = Block::Foreground;
                return (Flow::Stop, true);
            }
        }
        (Flow::Continue, true)
    }

    /// What a refused SendMessage's sender is told (`message_rejected.message`): `id` is
    /// the agent `to` names now, `first` the one the name reached first.
    fn refusal_message(
        &self,
        reason: MessageRejection,
        to: &str,
        id: Option<AgentId>,
        first: Option<AgentId>,
    ) -> String {
        match (reason, id, first) {
            (MessageRejection::NameReused, Some(id), Some(first)) => {
                let now_reaches = self.agents.reference(id).id_string();
                let earlier = crate::event::id_string(first);
                format!(
                    "The name '{to}' now reaches {now_reaches}, not {earlier}; address {earlier} by its agent ID"
                )
            }
            (MessageRejection::NotResumable, ..) => messages::NOT_RESUMABLE.into(),
            (MessageRejection::Cancelled, ..) => messages::CANCELLED.into(),
            _ => format!("{}: {to}", messages::UNKNOWN_AGENT),
        }
    }

    /// RESUME-6/8/9, CAP-7, FGBG-7: a finished agent runs again under the same id. Returns
    /// the mode the run resumed in; blocking the resumer is the caller's part.
    pub(super) fn resume(
        &mut self,
        slot: u32,
        by: AgentId,
        behavior: Option<Program>,
        rule: RuleId,
    ) -> Mode {
        // FGBG-7 / Q-14: whether the resumed run is in the foreground or the background.
        let (mode, _) = placement::resume_mode(&self.session.config);
        // NOTIFY-9: an agent resumed by one that reports to it (its launcher, or further up
        // the chain) keeps its own recipient; otherwise it reports to whoever resumed it.
        let target = self.agents.get(slot).id;
        let (redirect, _) = notify::redirected_on_resume(self.reports_to(by, target));
        // RESUME-14: the model of the resumed run (the per-invocation value persists from
        // v2.1.211; before, a resume fell back to the definition's model or main's). Forks
        // and runs without a per-invocation model keep the model they ran on.
        let (resumed_model, model_rule) = self.resumed_model(slot);
        let agent = self.agents.get_mut(slot);
        if agent.profile.model != resumed_model {
            let mut profile = (*agent.profile).clone();
            profile.model = resumed_model.clone();
            profile.model_rule = model_rule;
            agent.profile = Rc::new(profile);
        }
        // RESUME-6: the next run under the same id, under the next generation.
        let program = behavior
            .as_ref()
            .unwrap_or(&self.session.default_resume_program);
        agent.begin_run(program, mode, agent.gen.wrapping_add(1), agent.run + 1);
        if redirect {
            agent.report_to = by;
        }
        let report_to = agent.report_to;
        // RESUME-7: tools, model and history are kept as they were.
        let reference = agent.reference();
        // RESUME-15: the effort the run started with (a per-invocation one included) stays.
        let effort = agent.profile.effort.clone();
        let (gen, type_key) = (agent.gen, agent.type_index());
        let recipient_slot = self.agents.slot_of(report_to);
        // CAP-7: a resume takes a slot unchecked.
        let running = self.take_slot(recipient_slot, true, type_key);
        let kind = EventKind::AgentResumed {
            agent: reference,
            by: self.agents.reference(by),
            cap_checked: false,
            running,
            mode,
            model: resumed_model,
            effort,
        };
        self.trace.event(self.clock.now, Some(rule), kind);
        // ISO-1: a resumed run goes on in its kept worktree, or gets a new one.
        if self.agents.get(slot).rare.is_some() {
            self.worktree_resumed(slot);
        }
        self.run_started(slot, gen, RunTransition::Resume);
        mode
    }

    /// RESUME-14: the model the run in `slot` resumes on, and the rule that says so.
    fn resumed_model(&self, slot: u32) -> (Rc<str>, RuleId) {
        let agent = self.agents.get(slot);
        let invocation = agent.invocation_model();
        let (how, rule) = resume::resumed_model(invocation.is_some(), agent.fork);
        let model = match (how, invocation) {
            (resume::ResumedModel::ChooseAgain, Some(invocation)) => {
                self.run_model(agent.type_index(), Some(invocation), false, true)
                    .0
            }
            (resume::ResumedModel::ChooseAgain, None) | (resume::ResumedModel::Keep, _) => {
                agent.profile.model.clone()
            }
        };
        (model, rule)
    }

    /// Does `agent`'s result go, directly or up its chain of recipients, to `ancestor`?
    pub(super) fn reports_to(&self, agent: AgentId, ancestor: AgentId) -> bool {
        let mut current = agent;
        // The chain is finite; the bound guards against a cycle all the same.
        for _ in 0..=self.agents.capacity() {
            if current == MAIN {
                return ancestor == MAIN;
            }
            let Some(slot) = self.agents.slot_of(current) else {
                return false;
            };
            let next = self.agents.get(slot).report_to;
            if next == ancestor {
                return true;
            }
            current = next;
        }
        false
    }

    /// TaskStop from `caller`: whether it stopped a run (the call succeeded).
    pub(super) fn task_stop(&mut self, caller: AgentId, target: &str) -> bool {
        self.stop(Some(caller), target)
    }

    /// TaskStop from `caller`, or the person's `x` when `caller` is `None`: whether it
    /// stopped a run (not ignored).
    pub(super) fn stop(&mut self, caller: Option<AgentId>, target: &str) -> bool {
        let action = if caller.is_some() {
            IgnoredAction::Stop
        } else {
            IgnoredAction::UserStop
        };
        let Some(id) = self.agents.lookup(target).filter(|id| *id != MAIN) else {
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action,
                    why: Rc::from(format!("no agent named {target}").as_str()),
                },
            );
            return false;
        };
        if !self.agents.is_running(id) {
            let why = format!("{target} is not running");
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action,
                    why: Rc::from(why.as_str()),
                },
            );
            return false;
        }
        let slot = self.agents.slot_of(id).expect("a running agent has a slot");
        let reference = self.agents.get(slot).reference();
        // RESUME-6 / RESUME-10 / Q-6: a TaskStop, or the person's stop.
        let stopping = resume::stop(caller.is_none());
        let (by, source) = match caller {
            Some(caller) => (self.agents.reference(caller), StopSource::TaskStop),
            None => (AgentRef::MAIN, StopSource::User),
        };
        let outcome = if stopping.cancelled {
            Outcome::Cancelled
        } else {
            Outcome::Stopped
        };
        self.emit(
            Some(stopping.request_rule),
            EventKind::StopRequested {
                agent: reference,
                by,
                source,
            },
        );
        if stopping.cancelled {
            self.agents.get_mut(slot).user_cancelled = true;
        }
        // the slot is released when the stopped run exits (no stop latency).
        self.finish(slot, outcome, Some(stopping.end_rule), None);
        true
    }

    pub(super) fn ask_progress(&mut self, slot: u32, target: &str) {
        let asker = self.agents.get(slot).reference();
        let Some(id) = self.agents.lookup(target) else {
            self.emit(
                None,
                EventKind::ActionIgnored {
                    action: IgnoredAction::AskProgress,
                    why: Rc::from(format!("no agent named {target}").as_str()),
                },
            );
            return;
        };
        let from = self.agents.reference(id);
        // NOTIFY-4: a finished run's result, or (still running) what Claude says of it.
        let (what, rule) = notify::progress(self.agents.is_running(id), &self.session.config.gates);
        self.emit(
            Some(rule),
            EventKind::Notification {
                to: asker,
                from,
                what,
            },
        );
    }
}
