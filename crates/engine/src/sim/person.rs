//! The person at the terminal: one prompt at a time, in order, after thinking.

use super::*;

impl Kernel<'_> {
    // -- the person and prompts --------------------------------------------------------

    /// The person answers one prompt at a time, in order, after thinking.
    pub(super) fn person_next(&mut self) {
        if self.person_busy.is_some() {
            return;
        }
        while let Some(number) = self.prompt_queue.pop_front() {
            if self.prompts.contains_key(&number) {
                let think = self.user_think.sample(&mut self.user_rng);
                self.person_busy = Some(number);
                let at = self.now.plus(think);
                self.schedule(at, Wake::Answer(number));
                return;
            }
        }
    }

    pub(super) fn answer(&mut self, number: u64) {
        if self.person_busy == Some(number) {
            self.person_busy = None;
        }
        let Some(pending) = self.prompts.remove(&number) else {
            self.person_next();
            return;
        };
        let reference = self.agent(pending.slot).reference();
        let answer = self
            .user_answers
            .iter()
            .find(|rule| {
                rule.agent
                    .as_deref()
                    .is_none_or(|agent| reference.is(agent))
                    && rule
                        .tool
                        .as_deref()
                        .is_none_or(|tool| tool == &*pending.tool)
                    && rule.prompt.is_none_or(|prompt| prompt == number)
            })
            .map_or(self.user_answer, |rule| rule.answer);
        let waited = self.now.as_micros() - pending.asked_at.as_micros();
        let rule = match answer {
            Answer::ApproveSession => "PERM-6",
            Answer::Deny => "PERM-4",
            Answer::Approve => "PERM-3",
        };
        self.emit(
            Some(rule),
            EventKind::PermissionAnswered {
                agent: reference.clone(),
                tool: pending.tool.clone(),
                answer,
                waited_us: waited,
                prompt: number,
            },
        );
        if answer == Answer::ApproveSession
            && !self.session_grants.iter().any(|t| **t == *pending.tool)
        {
            // PERM-6: the grant applies session-wide, main included.
            self.session_grants.push(pending.tool.to_string());
        }
        let allowed = answer != Answer::Deny;
        let reason = if allowed { None } else { Some("denied") };
        self.emit(
            Some(if allowed { "PERM-3" } else { "PERM-4" }),
            EventKind::ToolCalled {
                agent: reference,
                tool: pending.tool.clone(),
                allowed,
                reason,
                input: pending.input.clone(),
                permission_rule: None,
            },
        );
        if allowed {
            let _ = self.tool_hooks(
                pending.slot,
                &pending.tool,
                subsim_rules::hooks::HookEvent::PostToolUse,
            );
        }
        let agent = self.agent_mut(pending.slot);
        agent.block = Block::Ready;
        // PERM-4: Esc denies the call only; the run goes on.
        let blocked = allowed && self.tool_runs(pending.slot, pending.duration) == Flow::Stop;
        if !blocked {
            self.wake_now(pending.slot);
        }
        self.person_next();
    }
}
