//! Ending runs and delivering their one result (NOTIFY), children bookkeeping, background shells, API errors.
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::rc::Rc;

use subsim_rules::id;
use subsim_rules::notify::{Delivery, Finishing, Notice, Recipient};
use subsim_rules::{errors, model, notify, Mode, RuleId};

use crate::event::{AgentId, AgentRef, EventKind, Outcome, MAIN};
use crate::spec::{ApiError, FailSpec};

use super::agents::{Block, Status};
use super::clock::Wake;
use super::{trace, Flow, Kernel, PendingPrompt};

/// What is left of a run's end once its launcher's end, if it caused one, is done. The
/// run's waiters stay in its record until then (nothing adds one to a run that is not
/// running), so this fits in registers.
struct FinishRest {
    slot: u32,
    /// An anonymous load run, forgotten at its end (its record's slot is released).
    forget: bool,
}

impl Kernel<'_> {
    // -- finishing and delivering -----------------------------------------------------

    /// A run ends. When it was the last child of a launcher that waits for its children
    /// (NOTIFY-6), that launcher ends too, and so on up the tree: the chain is walked with
    /// an explicit stack, not recursion, so a chain of any depth ends in constant stack
    /// space. Everything happens in the order the recursive walk had: each run's end up
    /// to its launcher's, then each run's wake-ups and release, innermost first.
    ///
    /// The first run's `finish_run` and `finish_rest` are inlined here (a run's end costs
    /// no calls of its own parts); a cascade is [`Kernel::finish_cascade`], out of line.
    #[inline(never)]
    pub(super) fn finish(
        &mut self,
        slot: u32,
        outcome: Outcome,
        rule: Option<RuleId>,
        detail: Option<String>,
    ) {
        let Some((rest, cascade)) = self.finish_run(slot, outcome, rule, detail) else {
            return;
        };
        match cascade {
            None => self.finish_rest(rest),
            Some(launcher) => self.finish_cascade(rest, launcher),
        }
    }

    /// [`Kernel::finish`] when the run's end ends its launcher (NOTIFY-6): the chain up
    /// the tree, then each run's rest, innermost first.
    #[cold]
    #[inline(never)]
    fn finish_cascade(&mut self, rest: FinishRest, mut launcher: u32) {
        let mut pending = vec![rest];
        while let Some((rest, cascade)) =
            self.finish_run(launcher, Outcome::Completed, Some(id::NOTIFY_6), None)
        {
            pending.push(rest);
            match cascade {
                Some(next) => launcher = next,
                None => break,
            }
        }
        while let Some(rest) = pending.pop() {
            self.finish_rest(rest);
        }
    }

    /// The first part of a run's end, up to its launcher's bookkeeping. Returns what is
    /// left to do, and the launcher that ends now because of it (NOTIFY-6), if any.
    #[inline(always)]
    fn finish_run(
        &mut self,
        slot: u32,
        outcome: Outcome,
        rule: Option<RuleId>,
        detail: Option<String>,
    ) -> Option<(FinishRest, Option<u32>)> {
        let agent = self.agents.get(slot);
        if agent.status != Status::Running || agent.id == MAIN {
            return None;
        }
        if let Block::Prompt(number) = agent.block {
            self.withdraw_prompt(slot, number);
        }
        let now = self.clock.now;
        let agent = self.agents.get_mut(slot);
        agent.status = Status::Finished(outcome);
        agent.block = Block::Ready;
        agent.gen = agent.gen.wrapping_add(1);
        agent.clear_stack();
        agent.pc = agent.program.len() as u32;
        // A run that ends is no longer blocked on anything it launched, and its shells no
        // longer report to it.
        agent.foreground_pending = 0;
        agent.bash_running = 0;
        agent.finished_at = now;
        let (teammate, type_key) = (agent.teammate, agent.type_index());
        // The run's id and name, kept apart: events build their references from them.
        let (own_id, own_name) = (agent.id, agent.name.clone());
        let (mode, fork, report_to, awaited, resumed, from_load) = (
            agent.mode,
            agent.fork,
            agent.report_to,
            agent.awaited,
            agent.resumed,
            agent.from_load,
        );
        // A record's name does not change while it is held.
        let forget = from_load && own_name.is_none();
        // CAP-8: a teammate held no slot.
        if !teammate {
            self.count_end(type_key);
        }
        let (now, running) = (self.clock.now, self.running());
        let detail_text = detail.as_deref();
        self.trace
            .agent_finished(now, rule, own_id, &own_name, outcome, running, detail_text);
        // ISO-1: the run's own worktree, if it is in one, is removed or kept.
        if self.agents.get(slot).rare.is_some() {
            self.worktree_end(slot);
        }
        self.observe_end(slot, outcome);
        // NOTIFY-1…10: one result, to one recipient.
        let caller_slot = self.agents.slot_of(report_to);
        let caller_running =
            caller_slot.is_some_and(|s| self.agents.get(s).status == Status::Running);
        let notify::Notified {
            recipient,
            delivery,
            notice: what,
            rule,
        } = notify::result(
            Finishing {
                mode: if awaited { mode } else { Mode::Background },
                fork,
                caller_is_main: report_to == MAIN,
                caller_running,
                resumed,
            },
            outcome,
            teammate,
        );
        // The recipient's record: the caller's, already found, or main's.
        let (to_id, to_slot) = match recipient {
            Recipient::Caller => (report_to, caller_slot),
            Recipient::Main => (MAIN, self.agents.slot_of(MAIN)),
        };
        let to_name = match to_slot {
            Some(to_slot) => self.agents.get(to_slot).name.clone(),
            None => None,
        };
        self.deliver_report(slot, to_id, &to_name, outcome, detail.as_deref());
        let to = AgentRef {
            id: to_id,
            name: to_name,
        };
        let from = AgentRef {
            id: own_id,
            name: own_name,
        };
        self.trace
            .notification(self.clock.now, rule, to, from, what);
        let running_caller = caller_slot.filter(|_| caller_running);
        let cascade = self.result_delivered(caller_slot, running_caller, to_slot, delivery);
        let rest = FinishRest { slot, forget };
        Some((rest, cascade))
    }

    /// the pending prompt `number` of the run in `slot`, which ends, is withdrawn;
    /// the person moves on if it was the one they were thinking about.
    fn withdraw_prompt(&mut self, slot: u32, number: u64) {
        let reference = self.agents.get(slot).reference();
        let Some(pending) = self.person.prompts.remove(number) else {
            return;
        };
        // the rule by which the pending prompt of a run that ends is withdrawn.
        let Some(rule) = subsim_rules::prompt::withdrawn_at_run_end(true) else {
            return;
        };
        let program = PendingPrompt::program(self.agents.get(slot));
        let tool = pending.call(program).name.clone();
        self.emit(
            Some(rule),
            EventKind::PermissionWithdrawn {
                agent: reference,
                tool,
                prompt: number,
            },
        );
        if self.person.busy == Some(number) {
            self.person.busy = None;
            self.person_next();
        }
    }

    /// A run's result has gone out (`delivery`, to the run in `to_slot`): its caller's
    /// bookkeeping (in `caller_slot`; `running_caller` when the caller still runs) — its
    /// count of running children, which stays exact even while it is not running (a
    /// stopped launcher may be resumed later), a foreground caller woken once its last
    /// foreground child is done (FGBG-4) — and a notification delivered. Returns the
    /// caller if it ends now because of it (NOTIFY-6).
    #[inline(always)]
    fn result_delivered(
        &mut self,
        caller_slot: Option<u32>,
        running_caller: Option<u32>,
        to_slot: Option<u32>,
        delivery: Delivery,
    ) -> Option<u32> {
        if let Some(caller_slot) = caller_slot {
            let caller = self.agents.get_mut(caller_slot);
            caller.children_running = caller.children_running.saturating_sub(1);
        }
        if let Some(caller_slot) = running_caller {
            let caller = self.agents.get_mut(caller_slot);
            if delivery == Delivery::ToolResult {
                caller.foreground_pending = caller.foreground_pending.saturating_sub(1);
                if caller.foreground_pending == 0 && caller.block == Block::Foreground {
                    self.wake_now(caller_slot);
                }
            }
        }
        if delivery == Delivery::Notification {
            if let Some(recipient_slot) = to_slot {
                self.deliver_to(recipient_slot);
            }
        }
        running_caller.and_then(|caller_slot| self.after_child_finished(caller_slot))
    }

    /// The rest of a run's end (see [`Kernel::finish`]): its waiters wake, a freed slot
    /// lets a waiting load retry go, an anonymous load run is forgotten.
    #[inline(always)]
    fn finish_rest(&mut self, rest: FinishRest) {
        let FinishRest { slot, forget } = rest;
        if self.agents.get(slot).has_waiters() {
            let waiters = self.agents.get_mut(slot).take_waiters();
            for waiter in waiters {
                if let Some(waiter_slot) = self.agents.slot_of(waiter) {
                    if self.agents.get(waiter_slot).block == Block::Agent {
                        self.wake_now(waiter_slot);
                    }
                }
            }
        }
        // CAP-3: a freed slot lets one waiting load retry go.
        if let Some(index) = self.load.retry_waiting.pop_front() {
            self.clock.schedule(self.clock.now, Wake::Retry(index));
        }
        if forget {
            self.agents.release(slot);
        }
    }

    /// A notification reached the agent in `slot`: wake a notification wait, or keep it.
    pub(super) fn deliver_to(&mut self, slot: u32) {
        let agent = self.agents.get_mut(slot);
        if agent.status != Status::Running {
            return;
        }
        if agent.block == Block::Notification {
            self.wake_now(slot);
        } else {
            agent.inbox += 1;
        }
    }

    /// A child of the agent in `slot` ended: end a children wait if it was the last.
    /// Returns `slot` when the agent was waiting for its children to end its run
    /// (NOTIFY-6): [`Kernel::finish`] ends it next.
    fn after_child_finished(&mut self, slot: u32) -> Option<u32> {
        let agent = self.agents.get(slot);
        if agent.children_running > 0 {
            return None;
        }
        match agent.block {
            Block::Children => {
                self.wake_now(slot);
                None
            }
            Block::EndChildren => Some(slot),
            Block::Ready
            | Block::Timer
            | Block::Foreground
            | Block::Prompt(..)
            | Block::Agent
            | Block::Notification
            | Block::EndBash
            | Block::Idle => None,
        }
    }

    pub(super) fn bash_done(&mut self, id: AgentId, run: u32) {
        self.clock.shells_queued -= 1;
        let Some(slot) = self.agents.slot_of(id) else {
            return;
        };
        // NOTIFY-5: the shell's end is reported to the subagent itself; a shell of an
        // earlier run (the run ended, or was stopped and resumed) reports to nobody.
        let agent = self.agents.get(slot);
        let heard = agent.status == Status::Running && agent.run == run;
        let Some(rule) = notify::shell_done(heard) else {
            return;
        };
        let agent = self.agents.get_mut(slot);
        agent.bash_running -= 1;
        let reference = agent.reference();
        self.emit(
            Some(rule),
            EventKind::Notification {
                to: reference.clone(),
                from: reference,
                what: Notice::BashDone,
            },
        );
        let agent = self.agents.get(slot);
        if agent.block == Block::EndBash && agent.bash_running == 0 {
            self.agents.get_mut(slot).block = Block::Ready;
            self.end_of_steps(slot);
        } else {
            self.deliver_to(slot);
        }
    }

    /// A `fail` step (ERR-1…5). `Flow::Continue` if the run goes on (a continuation that
    /// recovered, or a fallback model), `Flow::Stop` if it ended or waits on a retried step.
    pub(super) fn fail(&mut self, slot: u32, fail: &FailSpec) -> Flow {
        let agent = self.agents.get(slot);
        if agent.id == MAIN {
            return Flow::Continue;
        }
        let kind = match fail.api_error {
            ApiError::RateLimit => errors::ApiErrorKind::RateLimit,
            ApiError::Overloaded => errors::ApiErrorKind::Overloaded,
            ApiError::Server => errors::ApiErrorKind::Server,
            ApiError::ModelUnavailable => errors::ApiErrorKind::ModelUnavailable,
        };
        let mode = if agent.mode == Mode::Foreground && agent.awaited {
            Mode::Foreground
        } else {
            Mode::Background
        };
        // ERR-5: the chain covers an unavailable model; the first model that is not the
        // failing one accepts the request.
        let current = agent.profile.model.clone();
        // Chain entries may be aliases; they name models like every other model field.
        let fallback = (fail.api_error == ApiError::ModelUnavailable)
            .then(|| {
                self.session
                    .fallback_models
                    .iter()
                    // MODEL-4: an alias expanded to its target.
                    .map(|fallback| model::expand_alias(fallback, None))
                    .find(|model| model.as_str() != &*current)
            })
            .flatten();
        let input = errors::ApiErrorInput {
            produced_text: fail.after_output,
            tool_calls_only: fail.tool_calls && !fail.after_output,
            // ERR-1 covers cuts whose partial response has text and no tool calls.
            mid_stream: fail.mid_stream && !fail.tool_calls,
            continuations_used: agent.continuations,
            budget: self.session.continuation_budget,
            fallback_chain_covers: fallback.is_some(),
            fallback_model: fallback.as_deref(),
            ..errors::ApiErrorInput::new(kind, mode)
        };
        // ERR-1…5: what the API error does to the run.
        let decision = errors::on_api_error(input, &self.session.config.gates);
        let reference = agent.reference();
        match decision.action {
            errors::ErrorAction::Continue { attempt } => {
                self.emit(
                    Some(decision.rule),
                    EventKind::ContinuationRequested {
                        agent: reference,
                        attempt,
                    },
                );
                self.continuation(slot, attempt, fail.recovers_after)
            }
            errors::ErrorAction::SwitchModel(model) => {
                let model: Rc<str> = Rc::from(model.as_str());
                self.emit(
                    Some(decision.rule),
                    EventKind::ModelSwitched {
                        agent: reference,
                        from_model: current,
                        model: model.clone(),
                    },
                );
                let agent = self.agents.get_mut(slot);
                let mut profile = (*agent.profile).clone();
                profile.model = model;
                // ERR-5: the model now comes from the fallback chain.
                profile.model_rule = decision.rule;
                agent.profile = Rc::new(profile);
                Flow::Continue
            }
            errors::ErrorAction::Partial { note, empty } => {
                let detail = if empty {
                    format!("{note} (empty partial result)")
                } else {
                    note.to_string()
                };
                self.finish(slot, Outcome::Partial, Some(decision.rule), Some(detail));
                Flow::Stop
            }
            errors::ErrorAction::Failed { message } => {
                self.finish(slot, Outcome::Failed, Some(decision.rule), Some(message));
                Flow::Stop
            }
            errors::ErrorAction::FailedBackground { message, .. } => {
                self.finish(slot, Outcome::Failed, Some(decision.rule), Some(message));
                Flow::Stop
            }
            errors::ErrorAction::ErrorAsFindings { text } => {
                // ERR-2, before v2.1.199: the error text comes back as if it were findings.
                self.agents.get_mut(slot).report = Some(Rc::from(text.as_str()));
                self.finish(slot, Outcome::Completed, Some(decision.rule), Some(text));
                Flow::Stop
            }
        }
    }

    /// ERR-1: continuation `attempt` of the run in `slot` was asked for: it succeeds once
    /// `recovers_after` attempts were made (the run goes on past the cut), else the cut
    /// step runs again at once.
    fn continuation(&mut self, slot: u32, attempt: u32, recovers_after: Option<u32>) -> Flow {
        let agent = self.agents.get_mut(slot);
        agent.continuations = attempt;
        if recovers_after.is_some_and(|needed| attempt >= needed) {
            return Flow::Continue;
        }
        agent.pc = agent.pc.saturating_sub(1);
        if let Some(frame) = agent.stack_last_mut() {
            frame.pc = frame.pc.saturating_sub(1);
            agent.pc += 1;
        }
        Flow::Continue
    }

    /// NOTIFY-13, SCAN, HANDBACK-8: the text the recipient reads of a finished run's report.
    /// Runs without a report and without an error to name deliver no text event: that is
    /// decided here, inline in `finish`, so that such a run (every run of a plain load) makes no call.
    /// A report delivered as the last one was (`Kernel::reuses_delivery`: every run of a
    /// definition ending in one `report` step) is written here too, into the kept event;
    /// every other delivery is built out of line ([`Kernel::deliver_text`]).
    #[inline(always)]
    fn deliver_report(
        &mut self,
        slot: u32,
        to_id: AgentId,
        to_name: &Option<Rc<str>>,
        outcome: Outcome,
        detail: Option<&str>,
    ) {
        let failed_with_detail = outcome == Outcome::Failed && detail.is_some();
        match &self.agents.get(slot).report {
            Some(report) if !failed_with_detail => {
                if self.reuses_delivery(slot, report) {
                    self.deliver_again(slot, to_id, to_name);
                } else {
                    self.deliver_text(slot, to_id, to_name, outcome, detail);
                }
            }
            None if !failed_with_detail => {}
            _ => self.deliver_text(slot, to_id, to_name, outcome, detail),
        }
    }

    /// The delivery of the run in `slot`'s report, the same text delivered the same way
    /// as the last one (`Memos::last_delivery`): the delivered text is shared, not
    /// rebuilt (scanned, prefixed, copied). The trace writer's kept event holds the last
    /// delivery's text, note and verdict already: only who from and who to are written.
    #[inline(always)]
    fn deliver_again(&mut self, slot: u32, to_id: AgentId, to_name: &Option<Rc<str>>) {
        let last = self.memos.last_delivery();
        #[cfg(debug_assertions)]
        debug_assert!(
            self.trace
                .holds_delivery(&last.text, last.scan.as_deref(), last.review),
            "the kept report_delivered is not the last delivery's"
        );
        let from = self.agents.get(slot);
        self.trace.report_delivered_again(
            self.clock.now,
            last.rule,
            (from.id, &from.name),
            (to_id, to_name),
        );
    }

    /// [`Kernel::deliver_report`] of a run with an error to name, or with a report not
    /// delivered as the last one was.
    #[cold]
    #[inline(never)]
    fn deliver_text(
        &mut self,
        slot: u32,
        to_id: AgentId,
        to_name: &Option<Rc<str>>,
        outcome: Outcome,
        detail: Option<&str>,
    ) {
        let agent = self.agents.get(slot);
        let body = match (&agent.report, outcome, detail) {
            (Some(report), Outcome::Failed, Some(detail)) => format!("{detail}\n{report}"),
            (Some(report), _, _) => report.to_string(),
            (None, Outcome::Failed, Some(detail)) => detail.to_string(),
            (None, _, _) => return,
        };
        let (key, text, scan_note, rule, review) = self.delivery_of(slot, &body);
        let agent = self.agents.get(slot);
        let reference = agent.reference();
        let reused = match &agent.report {
            Some(report) if !(outcome == Outcome::Failed && detail.is_some()) => report,
            _ => {
                self.emit(
                    Some(rule),
                    EventKind::ReportDelivered {
                        agent: reference,
                        to: AgentRef {
                            id: to_id,
                            name: to_name.clone(),
                        },
                        text,
                        scan: scan_note,
                        review,
                    },
                );
                return;
            }
        };
        // Kept for the next run that delivers the same report the same way: written into
        // the kept event, which `deliver_again` then leaves as it is but for who from and
        // who to.
        let reused = reused.clone();
        self.keep_delivery(reused, key, rule, &text, &scan_note, review);
        let delivery = trace::Delivery {
            agent: reference,
            to: AgentRef {
                id: to_id,
                name: to_name.clone(),
            },
            text,
            scan: scan_note,
            review,
        };
        self.trace.report_delivered(self.clock.now, rule, delivery);
    }
}
