//! What people and hooks see of runs: definition notes at time 0 (DEF), the subagent panel
//! and `/tasks` (PANEL), and lifecycle and tool hooks (HOOK). None of this changes what the
//! runs do; it turns their starts and ends into the events a person would notice.

use std::rc::Rc;

use subsim_rules::hooks::{self, HookEvent, HookOrigin, RunTransition};
use subsim_rules::panel::{PanelChange, RowId, Started};
use subsim_rules::{Mode, RuleId, SessionConfig};

use crate::event::{AgentId, AgentRef, EventKind, HookSource, Outcome, MAIN};
use crate::spec::{AgentDef, HookSpec};
use crate::time::SimTime;

use super::clock::Wake;
use super::{agents, Kernel};

/// A registered hook as the kernel keeps it: its event read once, its texts shared with
/// every `hook_fired` it writes (no copy per tool call).
pub(super) struct Hook {
    /// The event it was declared for.
    declared: HookEvent,
    /// That event as written (`hook_skipped.hook`).
    declared_name: Rc<str>,
    /// The event `hook_fired.hook` names when it fires (HOOK-5: a frontmatter `Stop` fires
    /// as `SubagentStop`).
    fires_as: Rc<str>,
    matcher: Option<Rc<str>>,
    command: Rc<str>,
    /// HOOK-7: it exits with code 2.
    blocks: bool,
}

impl Hook {
    /// A hook of `origin` as the scenario declared it.
    pub(super) fn new(spec: &HookSpec, origin: HookOrigin) -> Hook {
        let declared = HookEvent::parse(&spec.event);
        // HOOK-5: the event a frontmatter hook listens for at runtime.
        let (fires_as, _) = hooks::runtime_event(declared, origin == HookOrigin::Frontmatter);
        Hook {
            declared,
            declared_name: Rc::from(spec.event.as_str()),
            fires_as: Rc::from(fires_as.as_str()),
            matcher: spec.matcher.as_deref().map(Rc::from),
            command: Rc::from(spec.command.as_str()),
            blocks: spec.exit_code == Some(2),
        }
    }

    /// HOOK-1 / HOOK-4 / HOOK-5 / Q-25: the rule it fires by on `occasion`, if it does
    /// ([`hooks::hook_fires`]).
    fn fires(
        &self,
        origin: HookOrigin,
        occasion: &hooks::Occasion<'_>,
        gates: &subsim_rules::Gates,
    ) -> Option<RuleId> {
        hooks::hook_fires(
            origin,
            self.declared,
            self.matcher.as_deref(),
            occasion,
            gates,
        )
    }
}

/// A definition's frontmatter hooks, and whether they run (HOOK-6, DEF-6): decided once
/// per session, as nothing it reads changes during a run.
pub(super) struct OwnHooks {
    hooks: Box<[Hook]>,
    /// [`hooks::frontmatter_hooks_run`]'s answer, its rule, and the `hook_skipped.why`.
    run: bool,
    rule: RuleId,
    skip_why: Rc<str>,
}

impl OwnHooks {
    /// The hooks of `def` (none: `None`) in a session with `trusted_dirs` trusted.
    pub(super) fn of(
        def: &AgentDef,
        trusted_dirs: &[String],
        config: &SessionConfig,
    ) -> Option<Rc<OwnHooks>> {
        if def.hooks.is_empty() {
            return None;
        }
        let (run, rule, log) = hooks::frontmatter_hooks_run(
            def.scope,
            trusted(trusted_dirs, def),
            config.kind.is_interactive(),
            &config.gates,
        );
        Some(Rc::new(OwnHooks {
            hooks: def
                .hooks
                .iter()
                .map(|hook| Hook::new(hook, HookOrigin::Frontmatter))
                .collect(),
            run,
            rule,
            skip_why: Rc::from(log.unwrap_or("plugin definitions' hooks are ignored (DEF-6)")),
        }))
    }
}

/// The panel's state inside the kernel: the pure model (which remembers what it last
/// showed), the pending expiry wake, and a buffer for the changes of one update.
pub(super) struct PanelState {
    pub(super) panel: subsim_rules::panel::Panel,
    pub(super) tick: Option<SimTime>,
    pub(super) screen_reader: bool,
    pub(super) changes: Vec<PanelChange>,
}

impl Kernel<'_> {
    /// DEF: report what loading the definition files did, in the order the loader gave.
    pub(super) fn announce_definitions(&mut self) {
        let notes = std::mem::take(&mut self.session.definitions);
        for note in &notes {
            self.emit(
                Some(note.rule),
                EventKind::DefinitionNoted {
                    name: note.name.as_deref().map(Rc::from),
                    path: Rc::from(note.path.as_str()),
                    scope: note.scope,
                    outcome: note.outcome,
                    reason: note.reason.as_deref().map(Rc::from),
                },
            );
        }
        self.session.definitions = notes;
    }

    /// A run started or resumed: its panel row (PANEL-1, RESUME-8) and `SubagentStart`
    /// hooks (HOOK-1, Q-25). Nothing to do without a panel and hooks (every load run).
    #[inline]
    pub(super) fn observe_start(&mut self, slot: u32, transition: RunTransition) {
        if self.panel.is_some() || self.session.hooks_present {
            self.observe_start_of(slot, transition);
        }
    }

    fn observe_start_of(&mut self, slot: u32, transition: RunTransition) {
        // Teammates are not subagents: the subagent panel has no row for them.
        if self.panel.is_some() && !self.agents.get(slot).teammate {
            let agent = self.agents.get(slot);
            let (id, background) = (agent.id, agent.mode == Mode::Background);
            if transition == RunTransition::Resume {
                if let Some(state) = self.panel.as_mut() {
                    state
                        .panel
                        .on_resume(id, background, self.clock.now.as_micros());
                }
            } else {
                let name = agent.name.clone();
                let parent = (agent.report_to != MAIN).then_some(agent.report_to);
                let profile = agent.profile.clone();
                let fork = agent.fork;
                if let Some(state) = self.panel.as_mut() {
                    let entry = state.panel.on_start(
                        Started {
                            id,
                            parent,
                            name,
                            fork,
                            background,
                            model: &profile.model,
                            effort: profile.effort.as_deref(),
                        },
                        self.clock.now.as_micros(),
                    );
                    self.agents.get_mut(slot).panel_entry = entry;
                }
            }
            self.panel_update_near(Some(slot));
        }
        self.lifecycle_hooks(slot, HookEvent::SubagentStart, transition);
    }

    /// A run ended: `SubagentStop` hooks first (frontmatter hooks are cleaned up when the
    /// run finishes, HOOK-4), then its panel row.
    #[inline]
    pub(super) fn observe_end(&mut self, slot: u32, outcome: Outcome) {
        if self.panel.is_some() || self.session.hooks_present {
            self.observe_end_of(slot, outcome);
        }
    }

    fn observe_end_of(&mut self, slot: u32, outcome: Outcome) {
        self.lifecycle_hooks(slot, HookEvent::SubagentStop, RunTransition::End(outcome));
        if self.panel.is_some() && !self.agents.get(slot).teammate {
            let agent = self.agents.get(slot);
            let (id, entry) = (agent.id, agent.panel_entry);
            if let Some(state) = self.panel.as_mut() {
                // The entry where `on_start` put it, not looked up by id.
                let now = self.clock.now.as_micros();
                match entry {
                    agents::NO_PANEL_ENTRY => state.panel.on_finish(id, outcome, now),
                    entry => state.panel.on_finish_at(entry, id, outcome, now),
                }
            }
            self.panel_update_near(Some(slot));
        }
    }

    /// FGBG-5: a run moved to the background gets its panel row.
    pub(super) fn observe_backgrounded(&mut self, id: AgentId) {
        if let Some(state) = self.panel.as_mut() {
            state.panel.on_background(id, self.clock.now.as_micros());
            self.panel_update();
        }
    }

    /// PANEL-3: `x` on a finished row. Returns false when there is no row to clear.
    pub(super) fn observe_dismiss(&mut self, id: AgentId) -> bool {
        let gates = self.session.config.gates;
        let Some(state) = self.panel.as_mut() else {
            return false;
        };
        let (cleared, _) = state
            .panel
            .on_dismiss(id, self.clock.now.as_micros(), &gates);
        if cleared {
            self.panel_update();
        }
        cleared
    }

    /// Emits what changed in the panel since it was last shown, and schedules the next
    /// change that time alone brings (a 30-second window ending).
    pub(super) fn panel_update(&mut self) {
        self.panel_update_near(None);
    }

    /// [`Kernel::panel_update`] right after a change to the run in `slot` (if any): a row
    /// of that run is named from its record at hand, not looked up by id.
    fn panel_update_near(&mut self, slot: Option<u32>) {
        let near = slot.map(|slot| (self.agents.get(slot).id, slot));
        let gates = self.session.config.gates;
        let now = self.clock.now;
        let Some(state) = self.panel.as_mut() else {
            return;
        };
        let mut changes = std::mem::take(&mut state.changes);
        let next = state
            .panel
            .update(now.as_micros(), &gates, state.screen_reader, &mut changes)
            .map(SimTime)
            .filter(|at| *at > now && state.tick != Some(*at));
        if let Some(at) = next {
            state.tick = Some(at);
        }
        for change in changes.drain(..) {
            let (row, reason, status) = match &change {
                PanelChange::RowAdded { row, .. } => (*row, None, None),
                PanelChange::RowRemoved { row, reason, .. } => (*row, Some(*reason), None),
                PanelChange::RowStatusChanged { row, to, .. } => (*row, None, Some(*to)),
                PanelChange::FooterHintShown { .. } | PanelChange::FooterHintCleared { .. } => {
                    (RowId::Main, None, None)
                }
            };
            let row = match row {
                RowId::Main => AgentRef::MAIN,
                RowId::Agent(id) => match near {
                    Some((near_id, slot)) if near_id == id => self.agents.get(slot).reference(),
                    _ => self.agents.reference(id),
                },
            };
            self.emit(
                Some(change.rule()),
                EventKind::PanelChanged {
                    change: change.kind(),
                    row,
                    reason,
                    status,
                },
            );
        }
        if let Some(state) = self.panel.as_mut() {
            state.changes = changes;
        }
        if let Some(at) = next {
            self.clock.schedule(at, Wake::PanelTick);
        }
    }

    /// The panel wake: a window ended; show what changed.
    pub(super) fn panel_tick(&mut self) {
        if let Some(state) = self.panel.as_mut() {
            if state.tick == Some(self.clock.now) {
                state.tick = None;
            }
        }
        self.panel_update();
    }

    /// HOOK-1…8: `SubagentStart` / `SubagentStop` hooks of the session and of the run's own
    /// definition (frontmatter `Stop` counts as `SubagentStop`, HOOK-5).
    #[inline]
    fn lifecycle_hooks(&mut self, slot: u32, event: HookEvent, transition: RunTransition) {
        // Most sessions (every load run so far) have no hooks at all.
        if self.session.hooks_present {
            self.lifecycle_hooks_of(slot, event, transition);
        }
    }

    fn lifecycle_hooks_of(&mut self, slot: u32, event: HookEvent, transition: RunTransition) {
        let agent = self.agents.get(slot);
        // HOOK-1 / SPAWN-11: `SubagentStart` / `SubagentStop` are a subagent's, and a
        // teammate runs instead of one; DEF-16: its definition's hooks are not applied,
        // which its start says.
        if !hooks::lifecycle_fires_for(agent.teammate).0 {
            if transition == RunTransition::Start {
                self.teammate_hooks_skipped(slot);
            }
            return;
        }
        // A fork has no definition; main never starts as a subagent.
        let type_def = match agent.type_index() {
            Some(index) => Some(&self.session.types[index]),
            None if agent.fork => None,
            None => return,
        };
        let own = type_def.and_then(|type_def| type_def.own_hooks.clone());
        let main_own = self.session_agent_hooks();
        if self.session.hooks.is_empty() && own.is_none() && main_own.is_none() {
            return;
        }
        // HOOK-2 / HOOK-8: the definition's name, `fork` for a fork (Claude's or `/subtask`).
        let name = type_def.map(|type_def| type_def.name.clone());
        let (agent_type, _) = hooks::lifecycle_agent_type(name.as_deref());
        // Shared, not copied: the kernel's hooks do not change during a run.
        let session_hooks = self.session.hooks.clone();
        let Some(occasion) = hooks::Occasion::run(event, transition, agent_type) else {
            return;
        };
        let reference = agent.reference();
        let gates = self.session.config.gates;
        for hook in session_hooks.iter() {
            if let Some(rule) = hook.fires(HookOrigin::Session, &occasion, &gates) {
                self.hook_fired(rule, &reference, hook, HookSource::Session);
            }
        }
        // HOOK-4: the session agent's hooks fire alongside the settings hooks.
        if let Some(main_own) = main_own {
            for hook in main_own.hooks.iter() {
                if let Some(rule) = hook.fires(HookOrigin::SessionAgent, &occasion, &gates) {
                    self.hook_fired(rule, &reference, hook, HookSource::Frontmatter);
                }
            }
        }
        let Some(own) = own else {
            return;
        };
        for hook in own.hooks.iter() {
            if let Some(rule) = hook.fires(HookOrigin::Frontmatter, &occasion, &gates) {
                if own.run {
                    self.hook_fired(rule, &reference, hook, HookSource::Frontmatter);
                } else {
                    // HOOK-6: each hook that would have fired is skipped, and says so (one
                    // `hook_skipped` per hook, in the definition's order: an earlier
                    // version kept only the last of an occasion's).
                    self.emit(
                        Some(own.rule),
                        EventKind::HookSkipped {
                            agent: reference.clone(),
                            hook: hook.declared_name.clone(),
                            why: own.skip_why.clone(),
                        },
                    );
                }
            }
        }
    }

    /// DEF-16: a teammate's start says, one `hook_skipped` per hook, that its definition's
    /// frontmatter hooks are not applied to it.
    fn teammate_hooks_skipped(&mut self, slot: u32) {
        let agent = self.agents.get(slot);
        let Some(own) = agent
            .type_index()
            .and_then(|index| self.session.types[index].own_hooks.clone())
        else {
            return;
        };
        let (applies, rule, why) = hooks::frontmatter_hooks_apply(agent.teammate);
        if applies {
            return;
        }
        let reference = agent.reference();
        let why: Rc<str> = Rc::from(why.unwrap_or_default());
        for hook in own.hooks.iter() {
            self.emit(
                Some(rule),
                EventKind::HookSkipped {
                    agent: reference.clone(),
                    hook: hook.declared_name.clone(),
                    why: why.clone(),
                },
            );
        }
    }

    /// HOOK-4: the hooks of the agent main runs as (`--agent` or the `agent` setting), when
    /// they run (HOOK-6, DEF-6).
    fn session_agent_hooks(&self) -> Option<Rc<OwnHooks>> {
        let index = self.session.main_agent?;
        self.session.types[index]
            .own_hooks
            .clone()
            .filter(|own| own.run)
    }

    /// HOOK-4 / HOOK-6 / DEF-6: at the start, one `hook_skipped` per hook of the session
    /// agent whose hooks do not run (an untrusted project folder, a `-p` or SDK session, a
    /// plugin agent): the agent still runs as main, without them.
    pub(super) fn announce_session_agent_hooks(&mut self) {
        let Some(index) = self.session.main_agent else {
            return;
        };
        let Some(own) = self.session.types[index].own_hooks.clone() else {
            return;
        };
        if own.run {
            return;
        }
        for hook in own.hooks.iter() {
            self.emit(
                Some(own.rule),
                EventKind::HookSkipped {
                    agent: AgentRef::MAIN,
                    hook: hook.declared_name.clone(),
                    why: own.skip_why.clone(),
                },
            );
        }
    }

    /// One `hook_fired`, its texts shared with the hook.
    fn hook_fired(&mut self, rule: RuleId, agent: &AgentRef, hook: &Hook, source: HookSource) {
        self.emit(
            Some(rule),
            EventKind::HookFired {
                agent: agent.clone(),
                hook: hook.fires_as.clone(),
                matcher: hook.matcher.clone(),
                command: hook.command.clone(),
                source,
            },
        );
    }

    /// HOOK-1 / HOOK-4: `PreToolUse` / `PostToolUse` hooks for a tool call, matched on the
    /// tool's name.
    /// Returns true if a `PreToolUse` hook exits with code 2: the call is blocked (HOOK-7).
    #[inline]
    pub(super) fn tool_hooks(&mut self, slot: u32, tool: &str, event: HookEvent) -> Option<RuleId> {
        // Most sessions have no hooks at all: two tests per call, not a look at the run.
        if !self.session.hooks_present {
            return None;
        }
        self.tool_hooks_of(slot, tool, event)
    }

    fn tool_hooks_of(&mut self, slot: u32, tool: &str, event: HookEvent) -> Option<RuleId> {
        let agent = self.agents.get(slot);
        // HOOK-6 / DEF-6: a definition's hooks that do not run are not asked about, nor
        // are a teammate's (DEF-16); the session's apply to it (HOOK-1).
        let own = agent
            .type_index()
            .and_then(|index| self.session.types[index].own_hooks.clone())
            .filter(|own| own.run && hooks::frontmatter_hooks_apply(agent.teammate).0);
        let occasion = hooks::Occasion::tool(event, tool);
        // HOOK-4: the session agent's hooks see main's own calls.
        let main_own = self
            .session_agent_hooks()
            .filter(|_| hooks::session_agent_sees(&occasion, agent.id == MAIN).0);
        if self.session.hooks.is_empty() && own.is_none() && main_own.is_none() {
            return None;
        }
        let session_hooks = self.session.hooks.clone();
        let reference = agent.reference();
        let gates = self.session.config.gates;
        let mut blocks = false;
        let own_hooks = own.as_ref().map_or(&[][..], |own| &own.hooks[..]);
        let main_hooks = main_own.as_ref().map_or(&[][..], |own| &own.hooks[..]);
        let all = session_hooks
            .iter()
            .map(|hook| (hook, HookOrigin::Session, HookSource::Session))
            .chain(
                main_hooks
                    .iter()
                    .map(|hook| (hook, HookOrigin::SessionAgent, HookSource::Frontmatter)),
            )
            .chain(
                own_hooks
                    .iter()
                    .map(|hook| (hook, HookOrigin::Frontmatter, HookSource::Frontmatter)),
            );
        for (hook, origin, source) in all {
            if let Some(rule) = hook.fires(origin, &occasion, &gates) {
                blocks |= hook.blocks;
                self.hook_fired(rule, &reference, hook, source);
            }
        }
        // HOOK-7: a hook that exits with code 2 blocks the call.
        hooks::blocks_call(event, blocks)
    }

    /// The folder whose trust counts for a definition ([`trust_folder`]).
    pub(super) fn trust_folder(&self, def: &AgentDef) -> String {
        trust_folder(def)
    }
}

/// HOOK-6 / MCP-3: is the folder holding the definition's file among `trusted_dirs`? A
/// definition written inline in the scenario lives in the scenario's folder (`.`).
/// Trusting a parent folder is not enough: the folder itself must be listed.
fn trusted(trusted_dirs: &[String], def: &AgentDef) -> bool {
    let normal = |text: &str| {
        let trimmed = text.trim_end_matches('/');
        if trimmed.is_empty() {
            ".".to_string()
        } else {
            trimmed.to_string()
        }
    };
    let folder = normal(&trust_folder(def));
    trusted_dirs.iter().any(|dir| normal(dir) == folder)
}

/// The folder whose trust counts for a definition: the one holding its agents
/// directory (the project root for `<root>/.claude/agents/…`), else the file's own
/// folder; `.` (the scenario's folder) for a definition written inline.
pub(super) fn trust_folder(def: &AgentDef) -> String {
    match &def.source {
        Some(path) => match path.find("/.claude/agents/") {
            Some(index) => path[..index].to_string(),
            None if path.starts_with(".claude/agents/") => ".".to_string(),
            None => std::path::Path::new(path)
                .parent()
                .map(|parent| parent.to_string_lossy().into_owned())
                .unwrap_or_default(),
        },
        None => ".".to_string(),
    }
}
