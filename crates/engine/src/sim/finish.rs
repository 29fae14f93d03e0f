//! Ending runs and delivering their one result (NOTIFY), children bookkeeping, background shells, API errors.

use subsim_rules::handback::ReviewOutcome;
use subsim_rules::notify::Notice;
use subsim_rules::version::Gates;
use subsim_rules::{errors, handback, scan};

use super::*;
use crate::spec::FailSpec;

/// The last report delivery built (see `Kernel::reuses_delivery`), holding its report text
/// so that pointer equality means equal text. What it delivered (the text, the scan's note
/// and the review verdict) is in the kept `report_delivered` event (`HotEvents::delivered`),
/// which nothing else writes: a delivery again writes only who from and who to.
#[derive(Clone)]
pub(super) struct Delivered {
    report: Rc<str>,
    /// The inputs of `handback::review` that vary by run (`Kernel::handback_key`): with
    /// the same report text they decide everything the delivery writes.
    key: HandbackKey,
    rule: RuleId,
    /// What the review put in front of the report, the text, the scan's note and the
    /// verdict (checked again in debug builds).
    #[cfg(debug_assertions)]
    prefix: Option<&'static str>,
    #[cfg(debug_assertions)]
    text: Rc<str>,
    #[cfg(debug_assertions)]
    scan: Option<Rc<str>>,
    #[cfg(debug_assertions)]
    review: Option<ReviewOutcome>,
}

/// What `handback::review` is given for a run besides the session's gates, which do not
/// change: the classifier's verdict, the run's permission mode, whether it is a fork.
#[derive(Clone, Copy, PartialEq, Eq)]
struct HandbackKey {
    verdict: ReviewOutcome,
    mode: PermissionMode,
    fork: bool,
}

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
            self.finish_run(launcher, Outcome::Completed, Some("NOTIFY-6"), None)
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
            let reference = agent.reference();
            // a pending prompt is withdrawn when its run ends.
            let pending = self.person.prompts.remove(number);
            if let (Some(pending), Some(rule)) = (
                &pending,
                subsim_rules::prompt::withdrawn_at_run_end(pending.is_some()),
            ) {
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
        let teammate = agent.teammate;
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
            self.agents.running -= 1;
        }
        emit_hot!(self, finished, rule, |kind| {
            if let EventKind::AgentFinished {
                agent,
                outcome: kept_outcome,
                running,
                detail: kept_detail,
            } = kind
            {
                agent.id = own_id;
                agent.name.clone_from(&own_name);
                *kept_outcome = outcome;
                *running = self.agents.running;
                *kept_detail = detail.as_deref().map(Rc::from);
            }
        });
        self.observe_end(slot, outcome);
        // NOTIFY-1…10: one result, to one recipient.
        let caller_slot = self.agents.slot_of(report_to);
        let caller_running =
            caller_slot.is_some_and(|s| self.agents.get(s).status == Status::Running);
        let ended = match outcome {
            Outcome::Completed | Outcome::Partial => notify::Ended::Completed,
            Outcome::Failed => notify::Ended::Failed,
            Outcome::Stopped | Outcome::Cancelled => notify::Ended::Stopped,
        };
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
            ended,
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
        emit_hot!(self, notification, Some(rule), |kind| {
            if let EventKind::Notification {
                to,
                from,
                what: kept_what,
            } = kind
            {
                to.id = to_id;
                to.name = to_name;
                from.id = own_id;
                from.name = own_name;
                *kept_what = what;
            }
        });
        // The caller's bookkeeping. Its count of running children stays exact even while
        // the caller is not running (a stopped launcher may be resumed later).
        if let Some(caller_slot) = caller_slot {
            let caller = self.agents.get_mut(caller_slot);
            caller.children_running = caller.children_running.saturating_sub(1);
        }
        if let Some(caller_slot) = caller_slot.filter(|_| caller_running) {
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
        let cascade = match caller_slot.filter(|_| caller_running) {
            Some(caller_slot) => self.after_child_finished(caller_slot),
            None => None,
        };
        let rest = FinishRest { slot, forget };
        Some((rest, cascade))
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
            _ => None,
        }
    }

    pub(super) fn bash_done(&mut self, id: AgentId, run: u32) {
        self.clock.shells_queued -= 1;
        let Some(slot) = self.agents.slot_of(id) else {
            return;
        };
        let agent = self.agents.get_mut(slot);
        // A shell of an earlier run (the run ended, or was stopped and resumed) reports to
        // nobody: its run no longer waits for it.
        let Some(rule) = notify::shell_done(agent.status == Status::Running && agent.run == run)
        else {
            return;
        };
        agent.bash_running -= 1;
        let reference = agent.reference();
        // NOTIFY-5: the shell's end is reported to the subagent itself.
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
                    .map(|model| subsim_rules::model::expand_alias(model, None))
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
                let agent = self.agents.get_mut(slot);
                agent.continuations = attempt;
                if fail.recovers_after.is_some_and(|needed| attempt >= needed) {
                    // The continuation succeeded: the run goes on past the cut.
                    return Flow::Continue;
                }
                // Cut again: the same step runs again at once.
                agent.pc = agent.pc.saturating_sub(1);
                if let Some(frame) = agent.stack_last_mut() {
                    frame.pc = frame.pc.saturating_sub(1);
                    agent.pc += 1;
                }
                Flow::Continue
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

    /// NOTIFY-13, SCAN, HANDBACK-8: the text the recipient reads of a finished run's report.
    /// Runs without a report and without an error to name deliver no text event: that is
    /// decided here, inline in `finish`, so that such a run (every run of W1) makes no call.
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
    /// as the last one (`Caches::last_delivery`): the delivered text is shared, not
    /// rebuilt (scanned, prefixed, copied). The kept event (`emit_hot!`) holds the last
    /// delivery's text, note and verdict already: only who from and who to are written.
    #[inline(always)]
    fn deliver_again(&mut self, slot: u32, to_id: AgentId, to_name: &Option<Rc<str>>) {
        let last = self.caches.last_delivery.as_ref();
        let last = last.expect("reuses_delivery found the last delivery");
        emit_hot!(self, delivered, Some(last.rule), |kind| {
            if let EventKind::ReportDelivered { agent, to, .. } = kind {
                let from = self.agents.get(slot);
                agent.id = from.id;
                share(&mut agent.name, &from.name);
                to.id = to_id;
                share(&mut to.name, to_name);
            }
            #[cfg(debug_assertions)]
            if let EventKind::ReportDelivered {
                text, scan, review, ..
            } = kind
            {
                debug_assert!(
                    Rc::ptr_eq(text, &last.text)
                        && scan.as_deref() == last.scan.as_deref()
                        && *review == last.review,
                    "the kept report_delivered is not the last delivery's"
                );
            }
        });
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
        let key = self.handback_key(slot);
        let (text, scan_note, rule, review) =
            build_delivery(&body, key, &self.session.config.gates);
        let agent = self.agents.get(slot);
        let reference = agent.reference();
        let text: Rc<str> = Rc::from(text);
        let scan_note: Option<Rc<str>> = scan_note.map(Rc::from);
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
        self.caches.last_delivery = Some(Delivered {
            report: reused.clone(),
            key,
            rule,
            #[cfg(debug_assertions)]
            prefix: handback_of(key, &self.session.config.gates).0.prefix,
            #[cfg(debug_assertions)]
            text: text.clone(),
            #[cfg(debug_assertions)]
            scan: scan_note.clone(),
            #[cfg(debug_assertions)]
            review,
        });
        emit_hot!(self, delivered, Some(rule), |kind| {
            if let EventKind::ReportDelivered {
                agent,
                to,
                text: kept_text,
                scan,
                review: kept_review,
            } = kind
            {
                *agent = reference;
                to.id = to_id;
                to.name.clone_from(to_name);
                *kept_text = text;
                *scan = scan_note;
                *kept_review = review;
            }
        });
    }

    /// HANDBACK-8 / SCAN: whether the delivery of `report` by the run in `slot` is the last
    /// one built (`Caches::last_delivery`): the same text, and the same inputs to the
    /// review (`handback_key`) — everything a delivery writes depends only on those (and
    /// on the session, which does not change). So the review is decided once per distinct
    /// input, not per delivery; debug builds decide it again and compare.
    #[inline(always)]
    fn reuses_delivery(&self, slot: u32, report: &Rc<str>) -> bool {
        let Some(last) = self.caches.last_delivery.as_ref() else {
            return false;
        };
        if !Rc::ptr_eq(&last.report, report) || self.handback_key(slot) != last.key {
            return false;
        }
        #[cfg(debug_assertions)]
        {
            // The review decided again (it allocates nothing): the same prefix, verdict and
            // rule as the kept delivery's.
            let (delivery, review) =
                handback_of(self.handback_key(slot), &self.session.config.gates);
            let rule = delivery_rule(last.scan.is_some().then_some(last.rule), delivery);
            debug_assert_eq!(
                (delivery.prefix, review, rule),
                (last.prefix, last.review, last.rule),
                "a reused delivery differs from the one its inputs give"
            );
        }
        true
    }

    /// The inputs of `handback::review` for the run in `slot` that are not the session's.
    #[inline]
    fn handback_key(&self, slot: u32) -> HandbackKey {
        let agent = self.agents.get(slot);
        HandbackKey {
            verdict: agent.classifier.unwrap_or(self.session.classifier).review,
            mode: agent.profile.permission_mode,
            fork: agent.fork,
        }
    }
}

/// NOTIFY-13, SCAN, HANDBACK-8/9: what the recipient of `body` reads — the delivered text,
/// the scan's note when it changed the text, the event's rule, and the review verdict the
/// trace names when a review ran — for a run whose review inputs are `key`.
fn build_delivery(
    body: &str,
    key: HandbackKey,
    gates: &Gates,
) -> (String, Option<String>, RuleId, Option<ReviewOutcome>) {
    let scanned = scan::scan(body, gates);
    let scan_note = (!scanned.changes.is_empty()).then(|| {
        scanned
            .changes
            .iter()
            .map(|change| match change {
                scan::ScanChange::Backslash { pattern, line, .. } => {
                    format!("backslash before {} on line {line}", pattern.name())
                }
                scan::ScanChange::Marker { .. } => "marker line prepended".to_string(),
            })
            .collect::<Vec<_>>()
            .join("; ")
    });
    let (delivery, review) = handback_of(key, gates);
    let mut text = String::new();
    text.push_str(scan::header());
    text.push('\n');
    if let Some(prefix) = delivery.prefix {
        text.push_str(prefix);
        text.push('\n');
    }
    text.push_str(&scanned.text);
    let rule = delivery_rule(
        (!scanned.changes.is_empty()).then_some(scanned.rule),
        delivery,
    );
    (text, scan_note, rule, review)
}

/// HANDBACK-8/9: how a report is handed over (`handback::review` with the run's classifier
/// verdict and permission mode), and the verdict the trace names when a review ran.
fn handback_of(key: HandbackKey, gates: &Gates) -> (handback::Delivery, Option<ReviewOutcome>) {
    let delivery = handback::review(key.verdict, key.mode, key.fork, gates);
    (delivery, delivery.reviewed.then_some(key.verdict))
}

/// `*kept = shared.clone()`, skipped when `kept` already holds the same text (both `None`,
/// or the same `Rc`): a field of a kept event is rewritten only when it changed.
#[inline]
fn share(kept: &mut Option<Rc<str>>, shared: &Option<Rc<str>>) {
    let same = match (&*kept, shared) {
        (None, None) => true,
        (Some(kept), Some(shared)) => Rc::ptr_eq(kept, shared),
        _ => false,
    };
    if !same {
        kept.clone_from(shared);
    }
}

/// The rule of a `report_delivered` ([`scan::delivered_rule`]).
fn delivery_rule(scan_rule: Option<RuleId>, delivery: handback::Delivery) -> RuleId {
    scan::delivered_rule(scan_rule, delivery.reviewed.then_some(delivery.rule))
}
