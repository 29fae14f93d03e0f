//! The person at the terminal: one prompt at a time, in order, after thinking.
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use crate::event::ToolRefusal;

use super::agents::Block;
use super::clock::Wake;
use super::{Flow, Kernel, PendingPrompt};

impl Kernel<'_> {
    // -- the person and prompts --------------------------------------------------------

    /// The person answers one prompt at a time, in order, after thinking.
    pub(super) fn person_next(&mut self) {
        if self.person.busy.is_some() {
            return;
        }
        // Not busy: every prompt held waits, and the first shown is the first number.
        if let Some(number) = self.person.prompts.first_key() {
            let person = &mut self.person;
            let think = person.think_exp.sample(&person.think, &mut person.rng);
            self.person.busy = Some(number);
            self.person.thought = think;
            let at = self.clock.now.plus(think);
            self.clock.schedule(at, Wake::Answer(number));
            self.load_answer_ahead(number);
        }
    }

    /// The person answers prompt `number` (its `Wake::Answer`). Out of line: only runs with
    /// prompts take it, and inlined it makes `dispatch` too large to be inlined into the
    /// run loop.
    #[inline(never)]
    pub(super) fn answer(&mut self, number: u64) {
        // The draw behind this answer: the think time of the prompt the person was on.
        let thought = self.person.busy == Some(number);
        if thought {
            self.person.busy = None;
        }
        let Some(pending) = self.person.prompts.remove(number) else {
            self.person_next();
            return;
        };
        let agent = self.agents.get(pending.slot);
        let reference = agent.reference();
        let program = PendingPrompt::program(agent).clone();
        let call = pending.call(&program);
        let answer = self
            .person
            .answers
            .iter()
            .find(|rule| {
                rule.agent
                    .as_deref()
                    .is_none_or(|agent| reference.is(agent))
                    && rule.tool.as_deref().is_none_or(|tool| tool == &*call.name)
                    && rule.prompt.is_none_or(|prompt| prompt == number)
            })
            .map_or(self.person.answer, |rule| rule.answer);
        let waited = self.clock.now.as_micros() - pending.asked_at.as_micros();
        // PERM-3 / PERM-4 / PERM-6: what the answer does to the call.
        let answered = subsim_rules::prompt::answered(answer);
        self.trace.permission_answered(
            self.clock.now,
            answered.rule,
            &reference,
            &call.name,
            answer,
            waited,
            number,
            thought.then_some((self.person.thought, &self.person.think_from)),
        );
        if answered.grants_session && !self.person.grants.iter().any(|t| **t == *call.name) {
            // PERM-6: the grant applies session-wide, main included.
            self.person.grants.push(call.name.to_string());
        }
        // The call's effect, once allowed: an isolated run's command is checked first
        // (ISO-2…5, `sim/worktree`); a refused one has no effect and no `PostToolUse`.
        let (allowed, reason, rule, cwd) = if answered.allowed {
            let effect = self.at_effect(pending.slot, call);
            (
                effect.refusal.is_none(),
                effect.refusal,
                effect.rule.unwrap_or(answered.call_rule),
                effect.cwd,
            )
        } else {
            (false, Some(ToolRefusal::Denied), answered.call_rule, None)
        };
        self.trace.tool_called_answered(
            self.clock.now,
            rule,
            reference,
            &call.name,
            &call.input,
            allowed,
            reason,
            cwd,
        );
        if allowed {
            self.tool_ran(pending.slot, &call.name);
            let _ = self.tool_hooks(
                pending.slot,
                &call.name,
                subsim_rules::hooks::HookEvent::PostToolUse,
            );
        }
        let agent = self.agents.get_mut(pending.slot);
        agent.block = Block::Ready;
        // PERM-4: Esc denies the call only; the run goes on.
        let blocked = allowed && self.tool_runs(pending.slot, call.duration) == Flow::Stop;
        if !blocked {
            self.wake_now(pending.slot);
        }
        self.person_next();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A waiting prompt's size, pinned: W4 holds 80,000 of them at once in the prompts
    /// window, an `Option` each.
    #[test]
    fn pending_prompt_size_is_pinned() {
        assert_eq!(std::mem::size_of::<Option<PendingPrompt>>(), 16);
    }
}
