//! The step interpreter: `advance` runs a run's steps until it blocks; tool calls.
//!
//! Its `#[inline(…)]` and `#[cold]` attributes are measured: docs/PERFORMANCE.md, "Choices
//! that need a benchmark".

use std::rc::Rc;

use subsim_rules::prompt::{self, Asker, Route};
use subsim_rules::toolcall::ToolStep;
use subsim_rules::{notify, resume, Mode};

use crate::dist::Dist;
use crate::event::{DrawnFor, EventKind, IgnoredAction, Outcome, ToolRefusal, WaitingFor, MAIN};
use crate::spec::{Program, Step, ToolCall};

use super::agents::{Agent, Block, Frame, Status};
use super::clock::Wake;
use super::gate::{GateCall, Gated};
use super::{trace, Flow, Kernel, PendingPrompt};

/// Where a run's next step lies (see [`Kernel::next_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StepIn {
    /// The run's own program.
    Own,
    /// Its innermost `repeat` frame.
    Frame,
}

impl Kernel<'_> {
    // -- the step interpreter ----------------------------------------------------------

    /// Moves the run in `agent` to its next step: where that step lies (its own program or
    /// its innermost `repeat` frame, see [`Kernel::program_at`]) and its index there;
    /// `None` when its steps are done.
    pub(super) fn next_step(agent: &mut Agent) -> Option<(StepIn, usize)> {
        if let Some(rare) = agent.rare.as_deref_mut() {
            while let Some(frame) = rare.stack.last_mut() {
                if frame.pc < frame.program.len() {
                    let pc = frame.pc;
                    frame.pc += 1;
                    return Some((StepIn::Frame, pc));
                }
                if frame.remaining > 1 {
                    frame.remaining -= 1;
                    frame.pc = 0;
                    continue;
                }
                rare.stack.pop();
            }
        }
        let pc = agent.pc as usize;
        if pc < agent.program.len() {
            agent.pc += 1;
            return Some((StepIn::Own, pc));
        }
        None
    }

    /// The program a step given by [`Kernel::next_step`] lies in: borrowed, so that taking
    /// a step costs no reference-count increment and decrement of its program (only the
    /// step kinds [`Kernel::other_step`] takes, which may outlive the borrow, clone it).
    #[inline]
    pub(super) fn program_at(agent: &Agent, at: StepIn) -> &Program {
        match at {
            StepIn::Own => &agent.program,
            StepIn::Frame => match agent.stack().last() {
                Some(frame) => &frame.program,
                None => unreachable!("next_step took the step from the innermost frame"),
            },
        }
    }

    /// Whether the run in `slot` may take a step now: the trace is not at a limit, and
    /// the run is running and not blocked (see [`Kernel::advance`]).
    #[inline(always)]
    fn may_step(&self, slot: u32) -> bool {
        let agent = self.agents.get(slot);
        self.trace.limit.is_none() && agent.status == Status::Running && agent.block == Block::Ready
    }

    /// Runs the run in `slot` until it blocks or ends; the caller has checked
    /// [`Kernel::may_step`]. The steps every run takes (`work`, `sleep`, `report`) are
    /// handled here; every other kind in [`Kernel::other_step`], out of line: with all of
    /// them inline, the loop's entry spilled a dozen hoisted addresses to the stack on
    /// every call. A `report` step changes nothing `may_step` reads, so the step after it
    /// is taken in the same turn of the loop without asking again (a run whose last step
    /// is its report ends there); after any other step kind that lets the run go on, the
    /// loop asks again.
    #[inline(never)]
    pub(super) fn advance(&mut self, slot: u32) {
        debug_assert!(self.may_step(slot), "advance on a run that may not step");
        loop {
            let agent = self.agents.get_mut(slot);
            let Some((at, pc)) = Self::next_step(agent) else {
                self.end_of_steps(slot);
                return;
            };
            // Steps that take no time and write nothing would loop forever at one instant
            // without reaching `max_events` or `max_time`: every step counts. (The run's
            // record is looked up again only after a new block of steps was granted.)
            let agent = if self.trace.steps_left != 0 {
                agent
            } else if self.next_step_block() {
                self.agents.get_mut(slot)
            } else {
                return;
            };
            self.trace.steps_left -= 1;
            match &Self::program_at(agent, at)[pc] {
                Step::Work(dist) => {
                    let dist = *dist;
                    agent.turns += 1;
                    if let Some(max_turns) = agent.max_turns {
                        if agent.turns > max_turns {
                            self.stop_at_max_turns(slot, max_turns);
                            return;
                        }
                    }
                    let micros = self.sample(slot, &dist, DrawnFor::Work);
                    self.sleep(slot, micros);
                    return;
                }
                Step::Sleep(dist) => {
                    let dist = *dist;
                    let micros = self.sample(slot, &dist, DrawnFor::Wait);
                    self.sleep(slot, micros);
                    return;
                }
                Step::Report(text) => {
                    // NOTIFY-1: the run's single text result is its last report. Nothing
                    // `may_step` reads has changed: on to the next step.
                    agent.report = Some(text.clone());
                }
                Step::Tool(..)
                | Step::Spawn(..)
                | Step::SpawnTogether(..)
                | Step::Send(..)
                | Step::Stop(..)
                | Step::WaitFor(..)
                | Step::BashBackground(..)
                | Step::Fail(..)
                | Step::AskProgress(..)
                | Step::Repeat { .. } => {
                    let program = Self::program_at(agent, at).clone();
                    if self.other_step(slot, &program, pc) == Flow::Stop || !self.may_step(slot) {
                        return;
                    }
                }
            }
        }
    }

    /// RESUME-4: a run past its `maxTurns` stops; partial from v2.1.246, before that an
    /// ordinary result.
    #[cold]
    #[inline(never)]
    fn stop_at_max_turns(&mut self, slot: u32, max_turns: u32) {
        // RESUME-4: whether a run that hits its `maxTurns` returns its partial result.
        let (partial, rule) = resume::max_turns_partial(&self.session.config.gates);
        let outcome = if partial {
            Outcome::Partial
        } else {
            Outcome::Completed
        };
        self.finish(
            slot,
            outcome,
            Some(rule),
            Some(format!("stopped at maxTurns ({max_turns})")),
        );
    }

    /// A step of `program` at `pc` other than `work`, `sleep` and `report` (see
    /// [`Kernel::advance`]). `Flow::Stop` if the run blocked or ended.
    #[inline(never)]
    fn other_step(&mut self, slot: u32, program: &Program, pc: usize) -> Flow {
        // Every step kind but these may hand the run's id out (its children report to it,
        // a shell's end or a wait comes back to it by id): an anonymous load run is
        // indexed first, so it is found by id without a scan (`Agents::index`).
        if !matches!(
            &program[pc],
            Step::Tool(_) | Step::Fail(_) | Step::Repeat { .. }
        ) {
            self.agents.index(slot);
        }
        match &program[pc] {
            Step::Work(_) | Step::Sleep(_) | Step::Report(_) => {
                unreachable!("advance takes work, sleep and report steps itself")
            }
            Step::Tool(call) => return self.tool_call(slot, call, program, pc),
            Step::Spawn(spec) => return self.spawn_step(slot, std::slice::from_ref(spec)),
            Step::SpawnTogether(specs) => return self.spawn_step(slot, specs),
            Step::Send(send) => {
                let tool = self.step_tool(ToolStep::Send);
                if !self.gate_passes(slot, ToolStep::Send, &tool) {
                    return Flow::Continue;
                }
                let caller = self.agents.get(slot).id;
                let (flow, made) = self.send(caller, &send.to, send.behavior.clone());
                if made {
                    self.post_tool_use(slot, &tool);
                }
                return flow;
            }
            Step::Stop(target) => {
                let tool = self.step_tool(ToolStep::Stop);
                if !self.gate_passes(slot, ToolStep::Stop, &tool) {
                    return Flow::Continue;
                }
                let caller = self.agents.get(slot).id;
                if self.task_stop(caller, target) {
                    self.post_tool_use(slot, &tool);
                }
            }
            Step::WaitFor(target) => return self.wait_for(slot, target),
            Step::BashBackground(dist) => {
                let tool = self.step_tool(ToolStep::BashBackground);
                if !self.gate_passes(slot, ToolStep::BashBackground, &tool) {
                    return Flow::Continue;
                }
                // A queued shell is held memory like an agent record (`max_held`).
                if self.held_full() {
                    return Flow::Stop;
                }
                self.clock.shells_queued += 1;
                let micros = self.sample(slot, dist, DrawnFor::BashBackground);
                let agent = self.agents.get_mut(slot);
                agent.bash_running += 1;
                let (id, run) = (agent.id, agent.run);
                let at = self.clock.now.plus(micros);
                self.clock.schedule(at, Wake::BashDone { agent: id, run });
                self.post_tool_use(slot, &tool);
            }
            Step::Fail(_) if slot == 0 => {
                // The scenario crate rejects `fail` in `main`; a spec built in code gets
                // a visible no-op rather than a silent stall.
                let why = "the main conversation's API errors are not simulated; use fail in a subagent's behavior";
                self.emit(
                    None,
                    EventKind::ActionIgnored {
                        action: IgnoredAction::Fail,
                        why: Rc::from(why),
                    },
                );
            }
            Step::Fail(fail) => return self.fail(slot, fail),
            Step::AskProgress(target) => self.ask_progress(slot, target),
            Step::Repeat { times, steps } => {
                if *times > 0 && !steps.is_empty() {
                    let frame = Frame {
                        program: steps.clone(),
                        pc: 0,
                        remaining: *times,
                    };
                    self.agents.get_mut(slot).rare_mut().stack.push(frame);
                }
            }
        }
        Flow::Continue
    }

    pub(super) fn sleep(&mut self, slot: u32, micros: u64) {
        let agent = self.agents.get_mut(slot);
        agent.block = Block::Timer;
        let gen = agent.gen;
        let at = self.clock.now.plus(micros);
        self.clock.schedule(at, Wake::Step { slot, gen });
    }

    /// The steps are done: wait for shells and children where the rules say so, else end.
    /// A subagent with no shell and no child running has nothing to wait for, whatever
    /// the session (NOTIFY-5, NOTIFY-6): it ends here, inline in `advance`; the rest is
    /// [`Kernel::end_of_steps_waiting`].
    #[inline]
    pub(super) fn end_of_steps(&mut self, slot: u32) {
        let agent = self.agents.get(slot);
        if agent.id != MAIN && agent.bash_running == 0 && agent.children_running == 0 {
            self.finish(slot, Outcome::Completed, None, None);
            return;
        }
        self.end_of_steps_waiting(slot);
    }

    /// [`Kernel::end_of_steps`] for main, and for a run that may wait for its shells or
    /// its children.
    #[inline(never)]
    fn end_of_steps_waiting(&mut self, slot: u32) {
        let agent = self.agents.get(slot);
        if agent.id == MAIN {
            self.agents.get_mut(slot).block = Block::Idle;
            return;
        }
        let reference = agent.reference();
        // NOTIFY-5 / Q-5: whether the run, its steps done, stays alive for its shells.
        let (waits_for_shells, rule) = notify::waits_for_shells(agent.bash_running);
        if waits_for_shells {
            // NOTIFY-5 / Q-5: the shell reports to this run, which stays alive for it.
            let count = agent.bash_running;
            self.agents.get_mut(slot).block = Block::EndBash;
            self.emit(
                Some(rule),
                EventKind::AgentWaiting {
                    agent: reference,
                    waiting_for: WaitingFor::Bash,
                    count,
                },
            );
            return;
        }
        // NOTIFY-6 / NOTIFY-7: whether a launcher whose steps are done waits for its
        // background children.
        let (waits, rule) = notify::launcher_waits(self.session.config.kind);
        if agent.children_running > 0 && waits {
            // NOTIFY-6 / Q-4: an interactive launcher waits for its children, keeping its slot.
            let count = agent.children_running;
            self.agents.get_mut(slot).block = Block::EndChildren;
            self.emit(
                Some(rule),
                EventKind::AgentWaiting {
                    agent: reference,
                    waiting_for: WaitingFor::Children,
                    count,
                },
            );
            return;
        }
        self.finish(slot, Outcome::Completed, None, None);
    }

    /// A `tool` step: `call`, at `pc` of `program`, through the tool-call gate
    /// ([`Kernel::gate`]): refused, asked, or run — at its effect an isolated run's command
    /// is checked first (ISO-2…5, `sim/worktree`), then its `tool_called` and
    /// `PostToolUse`. `Flow::Stop` if the run blocked.
    pub(super) fn tool_call(
        &mut self,
        slot: u32,
        call: &ToolCall,
        program: &Program,
        pc: usize,
    ) -> Flow {
        let at_gate = GateCall {
            step: ToolStep::Tool,
            tool: &call.name,
            input: call.input.as_ref(),
            forced: call.prompt,
        };
        match self.gate(slot, &at_gate) {
            Gated::Refused => Flow::Continue,
            Gated::Prompt => self.ask_person(slot, call, program, pc),
            Gated::Run(Some((rule, permission_rule))) => {
                // 4. The call's effect: an isolated run's command is checked first
                // (ISO-2…5); a refused one has no effect and no `PostToolUse`.
                let effect = self.at_effect(slot, call);
                let allowed = effect.refusal.is_none();
                self.emit(
                    Some(effect.rule.unwrap_or(rule)),
                    EventKind::ToolCalled {
                        agent: self.agents.get(slot).reference(),
                        tool: call.name.clone(),
                        step: ToolStep::Tool,
                        allowed,
                        reason: effect.refusal,
                        input: call.input.clone(),
                        permission_rule: permission_rule.filter(|_| allowed),
                        cwd: effect.cwd,
                    },
                );
                if !allowed {
                    return Flow::Continue;
                }
                self.tool_ran(slot, &call.name);
                self.post_tool_use(slot, &call.name);
                self.tool_runs(slot, call.duration)
            }
            Gated::Run(None) => unreachable!("a `tool` step's permission is the gate's"),
        }
    }

    /// Checks 1–3 of the tool-call gate for a step other than `tool` whose permission the
    /// gate decides (`send`, `stop`, `bash_background`: they never prompt): whether the
    /// call goes on to its effect (its refusal is written otherwise).
    fn gate_passes(&mut self, slot: u32, step: ToolStep, tool: &Rc<str>) -> bool {
        let call = GateCall {
            step,
            tool,
            input: None,
            forced: None,
        };
        match self.gate(slot, &call) {
            Gated::Refused => false,
            Gated::Run(_) => true,
            Gated::Prompt => unreachable!("a {step} step's permission never prompts"),
        }
    }

    /// PERM-4/5, Q-37: a tool call that needs the person's permission: routed by the rules
    /// ([`prompt::route`]) to the terminal or main, or auto-denied (a background run that
    /// cannot ask); a prompt shown blocks the run until the person answers it.
    fn ask_person(&mut self, slot: u32, call: &ToolCall, program: &Program, pc: usize) -> Flow {
        let agent = self.agents.get(slot);
        let reference = agent.reference();
        let (tool, input) = (call.name.clone(), call.input.clone());
        let asker = Asker {
            depth: agent.depth,
            teammate: agent.teammate,
            mode: agent.mode,
            fork: agent.fork,
            chain_foreground: self.chain_foreground(slot),
        };
        // PERM-3 / PERM-4 / PERM-5 / PERM-7 / Q-37: who is asked.
        let route = prompt::route(asker, &self.session.config.gates);
        let agent_type = agent.profile.agent_type.clone();
        let number = self.person.next_prompt;
        self.person.next_prompt += 1;
        match route {
            Route::AutoDeny(rule) => {
                self.emit(
                    Some(rule),
                    EventKind::PermissionRequested {
                        agent: reference.clone(),
                        agent_type: agent_type.clone(),
                        tool: tool.clone(),
                        routed_to: None,
                        auto_denied: true,
                        prompt: number,
                    },
                );
                self.emit(
                    Some(rule),
                    EventKind::ToolCalled {
                        agent: reference,
                        tool,
                        step: ToolStep::Tool,
                        allowed: false,
                        reason: Some(ToolRefusal::AutoDenied),
                        input,
                        permission_rule: None,
                        cwd: None,
                    },
                );
                Flow::Continue
            }
            Route::Terminal(rule) | Route::Main(rule) => {
                let route = route.routed_to();
                let shown = trace::Prompted {
                    agent: reference,
                    agent_type: &agent_type,
                    tool: &tool,
                    routed_to: route,
                    prompt: number,
                };
                self.trace.permission_requested(self.clock.now, rule, shown);
                debug_assert!(
                    Rc::ptr_eq(program, PendingPrompt::program(self.agents.get(slot))),
                    "the answer finds the call in the program the run took it from"
                );
                let pending = PendingPrompt::new(slot, pc, self.clock.now);
                self.person.prompts.insert(number, pending);
                let agent = self.agents.get_mut(slot);
                agent.block = Block::Prompt(number);
                self.person_next();
                Flow::Stop
            }
        }
    }

    /// An allowed tool call runs for its duration, if it has one. `Flow::Stop` if blocked.
    pub(super) fn tool_runs(&mut self, slot: u32, duration: Option<Dist>) -> Flow {
        match duration {
            Some(dist) => {
                let micros = self.sample(slot, &dist, DrawnFor::Tool);
                self.sleep(slot, micros);
                Flow::Stop
            }
            None => Flow::Continue,
        }
    }

    /// is every run from this one up to main in the foreground?
    pub(super) fn chain_foreground(&self, slot: u32) -> bool {
        let mut current = self.agents.get(slot);
        loop {
            if current.id == MAIN {
                return true;
            }
            if current.mode != Mode::Foreground || !current.awaited {
                return false;
            }
            match self.agents.slot_of(current.report_to) {
                Some(parent) => current = self.agents.get(parent),
                None => return false,
            }
        }
    }
}
