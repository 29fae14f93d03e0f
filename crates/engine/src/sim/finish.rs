//! Ending runs and delivering their one result (NOTIFY), children bookkeeping, background shells, API errors.

use super::*;

impl Kernel<'_> {
    // -- finishing and delivering -----------------------------------------------------

    pub(super) fn finish(
        &mut self,
        slot: u32,
        outcome: Outcome,
        rule: Option<RuleId>,
        detail: Option<String>,
    ) {
        let agent = self.agent(slot);
        if agent.status != Status::Running || agent.id == MAIN {
            return;
        }
        if let Block::Prompt(number) = agent.block {
            let reference = agent.reference();
            // a pending prompt is withdrawn when its run ends.
            if let Some(pending) = self.prompts.remove(&number) {
                self.emit(
                    Some("Q-38"),
                    EventKind::PermissionWithdrawn {
                        agent: reference,
                        tool: pending.tool,
                        prompt: number,
                    },
                );
                if self.person_busy == Some(number) {
                    self.person_busy = None;
                    self.person_next();
                }
            }
        }
        let now = self.now;
        let agent = self.agent_mut(slot);
        agent.status = Status::Finished(outcome);
        agent.block = Block::Ready;
        agent.gen = agent.gen.wrapping_add(1);
        agent.stack.clear();
        agent.pc = agent.program.len();
        // A run that ends is no longer blocked on anything it launched, and its shells no
        // longer report to it.
        agent.foreground_pending = 0;
        agent.bash_running = 0;
        agent.finished_at = now;
        let reference = agent.reference();
        let (mode, fork, report_to, awaited, resumed, waiters, from_load) = (
            agent.mode,
            agent.fork,
            agent.report_to,
            agent.awaited,
            agent.resumed,
            std::mem::take(&mut agent.waiters),
            agent.from_load,
        );
        self.running -= 1;
        let running = self.running;
        self.emit(
            rule,
            EventKind::AgentFinished {
                agent: reference.clone(),
                outcome,
                running,
                detail: detail.map(|d| Rc::from(d.as_str())),
            },
        );
        self.observe_end(slot, outcome);
        // NOTIFY-1…10: one result, to one recipient.
        let caller_slot = self.slot_of(report_to);
        let caller_running = caller_slot.is_some_and(|s| self.agent(s).status == Status::Running);
        let (recipient, delivery, notify_rule) = notify::completion(Finishing {
            mode: if awaited { mode } else { Mode::Background },
            fork,
            caller_is_main: report_to == MAIN,
            caller_running,
            resumed,
        });
        let what = match (delivery, outcome) {
            (Delivery::ToolResult, _) => "result",
            (_, Outcome::Completed | Outcome::Partial) => "completion",
            (_, Outcome::Failed) => "failed",
            (_, Outcome::Stopped | Outcome::Cancelled) => "stopped",
        };
        let to_id = match recipient {
            Recipient::Caller => report_to,
            Recipient::Main => MAIN,
        };
        let to = self.reference(to_id);
        let rule = if outcome == Outcome::Failed && delivery == Delivery::Notification {
            "NOTIFY-12"
        } else {
            notify_rule
        };
        self.emit(
            Some(rule),
            EventKind::Notification {
                to,
                from: reference,
                what,
            },
        );
        // The caller's bookkeeping. Its count of running children stays exact even while
        // the caller is not running (a stopped launcher may be resumed later).
        if let Some(caller_slot) = caller_slot {
            let caller = self.agent_mut(caller_slot);
            caller.children_running = caller.children_running.saturating_sub(1);
        }
        if let Some(caller_slot) = caller_slot.filter(|_| caller_running) {
            let caller = self.agent_mut(caller_slot);
            if delivery == Delivery::ToolResult {
                caller.foreground_pending = caller.foreground_pending.saturating_sub(1);
                if caller.foreground_pending == 0 && caller.block == Block::Foreground {
                    self.wake_now(caller_slot);
                }
            }
        }
        if delivery == Delivery::Notification {
            if let Some(recipient_slot) = self.slot_of(to_id) {
                self.deliver_to(recipient_slot);
            }
        }
        if let Some(caller_slot) = caller_slot.filter(|_| caller_running) {
            self.after_child_finished(caller_slot);
        }
        for waiter in waiters {
            if let Some(waiter_slot) = self.slot_of(waiter) {
                if self.agent(waiter_slot).block == Block::Agent {
                    self.wake_now(waiter_slot);
                }
            }
        }
        // CAP-3: a freed slot lets one waiting load retry go.
        if self.retry_waiting > 0 {
            self.retry_waiting -= 1;
            self.schedule(self.now, Wake::Retry);
        }
        if from_load && self.agent(slot).name.is_none() {
            self.release(slot);
        }
    }

    /// A notification reached the agent in `slot`: wake a notification wait, or keep it.
    pub(super) fn deliver_to(&mut self, slot: u32) {
        let agent = self.agent_mut(slot);
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
    pub(super) fn after_child_finished(&mut self, slot: u32) {
        let agent = self.agent(slot);
        if agent.children_running > 0 {
            return;
        }
        match agent.block {
            Block::Children => self.wake_now(slot),
            Block::EndChildren => self.finish(slot, Outcome::Completed, Some("NOTIFY-6"), None),
            _ => {}
        }
    }

    pub(super) fn release(&mut self, slot: u32) {
        if let Some(agent) = self.slots[slot as usize].take() {
            self.by_id.remove(&agent.id);
            self.free.push((slot, agent.gen.wrapping_add(1)));
        }
    }

    pub(super) fn bash_done(&mut self, id: AgentId, run: u32) {
        let Some(slot) = self.slot_of(id) else { return };
        let agent = self.agent_mut(slot);
        // A shell of an earlier run (the run ended, or was stopped and resumed) reports to
        // nobody: its run no longer waits for it.
        if agent.status != Status::Running || agent.run != run {
            return;
        }
        agent.bash_running -= 1;
        let reference = agent.reference();
        // NOTIFY-5: the shell's end is reported to the subagent itself.
        self.emit(
            Some("NOTIFY-5"),
            EventKind::Notification {
                to: reference.clone(),
                from: reference,
                what: "bash_done",
            },
        );
        let agent = self.agent(slot);
        if agent.block == Block::EndBash && agent.bash_running == 0 {
            self.agent_mut(slot).block = Block::Ready;
            self.end_of_steps(slot);
        } else {
            self.deliver_to(slot);
        }
    }

    pub(super) fn fail(&mut self, slot: u32, error: ApiError, after_output: bool) {
        let agent = self.agent(slot);
        if agent.id == MAIN {
            return;
        }
        if agent.mode == Mode::Foreground && agent.awaited {
            if after_output {
                // ERR-3: partial output with a note.
                let detail = format!("{} error: the subagent was cut off and did not complete its task; partial output returned", error.as_str());
                self.finish(slot, Outcome::Partial, Some("ERR-3"), Some(detail));
            } else {
                let detail = format!("{}: {}", messages::API_ERROR_TERMINATED, error.as_str());
                self.finish(slot, Outcome::Failed, Some("ERR-3"), Some(detail));
            }
        } else {
            // ERR-4: marked failed; the notification names the error and carries the last output.
            let detail = format!("{} error; last output included", error.as_str());
            self.finish(slot, Outcome::Failed, Some("ERR-4"), Some(detail));
        }
    }
}
