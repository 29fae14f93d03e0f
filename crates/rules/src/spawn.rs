//! SPAWN — what one Agent-tool call launches: a subagent of some type, a fork, an
//! agent-team teammate, or nothing (a rejection that names its rule).
//!
//! [`resolve`] runs the checks this module owns, in the order of Q-11 ([`CHECK_ORDER`],
//! `docs/decisions.md`): fork rules → deny rules → the `--agent` allowlist → type
//! resolution → the caller's `Agent` tool. The checks after those — the child's tools
//! ([`crate::tools`]), placement ([`crate::placement`]) and the cap ([`crate::cap`]) — belong
//! to their own modules; the engine runs them in the same list's order. [`visible_types`]
//! is what the caller's Agent tool offers (SPAWN-5: an allowlisted agent sees only the
//! allowed types), [`registered`] is SPAWN-8's built-in registration, [`lookup`] is the name
//! resolution on its own (also used for `--agent`, MAIN-4), and [`child_depth`] /
//! [`cap_checked`] answer Q-44 and CAP-8 for the engine.
//!
//! This module is not for the depth limit (the engine asks [`crate::depth::agent_tool`]
//! for the caller's depth), for loading definition files (the scenario crate does), or for
//! the model ([`crate::model`]).
//!
//! # Decisions where the catalog is silent
//! - `subagent_type: "fork"` is always the fork request, whatever definitions exist.
//! - A `permissions.deny` entry `Agent(x)` (or `Task(x)`, TOOLS-20) names `x` by the
//!   requested string, the definition's `name` field, or a plugin definition's scoped id;
//!   `Agent(a, b)` names both. Matching is exact. Deny rules do not hide types from
//!   [`visible_types`] (the seeds say only that the allowlist does).
//! - The `--agent` allowlist (SPAWN-5) also covers `fork`: `Agent(worker)` allows only
//!   `worker`. A type-less call under an allowlist without `general-purpose` fails like
//!   SPAWN-4 (`subagent_type is required`), under rule SPAWN-5.
//! - Custom definitions of every non-plugin scope override a built-in of the same name
//!   (SPAWN-10 names user and project; managed and `--agents` outrank both, DEF-1). Plugin
//!   definitions never take a bare name from a built-in or another scope: they answer to
//!   their scoped id (DEF-5), or to their bare name when nothing else has it (MAIN-4).
//! - Same name twice in one scope: the first in the slice wins (the loader orders files
//!   lexicographically, Q-31).
//! - An in-process teammate asking for `fork` is refused like a subagent (Q-29: only the
//!   main conversation forks). Its other children run at depth 1 and count toward the
//!   session cap; the teammate itself does not (CAP-8).
//! - SPAWN-11's teammate conversion happens after every check has passed, so a named call
//!   still needs a valid type (or `general-purpose`).

use std::collections::BTreeMap;

use crate::model::BuiltIn;
use crate::prompt::split_rule;
use crate::{messages, Gates, RejectReason, RuleId, SessionKind};

/// One spawn-time check, in Q-11's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// FORK-7, Q-29, FORK-3, FORK-4: who may fork, and whether forks are on and allowed.
    ForkRules,
    /// SPAWN-7: `permissions.deny` `Agent` / `Agent(type)`.
    Deny,
    /// SPAWN-5 / MAIN-6: the `--agent` main thread's `Agent(type, …)` allowlist.
    Allowlist,
    /// SPAWN-3/4/8/10, MAIN-4, Q-32: which type the name means.
    Type,
    /// DEPTH-3/4/5, SPAWN-5: the caller has a working `Agent` tool.
    CallerAgentTool,
    /// TOOLS-12: the child would have at least one tool.
    ChildTools,
    /// FGBG-1: the teammate rejections of case 1.
    Placement,
    /// CAP-1: the concurrency cap.
    Cap,
}

impl Check {
    /// The trace spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::ForkRules => "fork_rules",
            Check::Deny => "deny",
            Check::Allowlist => "allowlist",
            Check::Type => "type",
            Check::CallerAgentTool => "caller_agent_tool",
            Check::ChildTools => "child_tools",
            Check::Placement => "placement",
            Check::Cap => "cap",
        }
    }

    /// The rules the check applies.
    pub fn rules(self) -> &'static [RuleId] {
        match self {
            Check::ForkRules => &["FORK-7", "Q-29", "FORK-3", "FORK-4"],
            Check::Deny => &["SPAWN-7"],
            Check::Allowlist => &["SPAWN-5", "MAIN-6"],
            Check::Type => &[
                "SPAWN-3", "SPAWN-4", "SPAWN-8", "SPAWN-10", "MAIN-4", "Q-32",
            ],
            Check::CallerAgentTool => &["DEPTH-3", "DEPTH-4", "DEPTH-5", "SPAWN-5"],
            Check::ChildTools => &["TOOLS-12"],
            Check::Placement => &["FGBG-1"],
            Check::Cap => &["CAP-1"],
        }
    }

    /// Whether [`resolve`] runs this check (the others live in the modules named in the
    /// module docs). For [`Check::CallerAgentTool`], [`resolve`] covers only SPAWN-5's `--agent`
    /// main thread without `Agent`; the depth part is [`crate::depth::agent_tool`].
    pub fn in_resolve(self) -> bool {
        matches!(
            self,
            Check::ForkRules
                | Check::Deny
                | Check::Allowlist
                | Check::Type
                | Check::CallerAgentTool
        )
    }
}

/// the spawn-time checks in the order the simulator runs them; the first that fails
/// names the rejection.
pub const CHECK_ORDER: [Check; 8] = [
    Check::ForkRules,
    Check::Deny,
    Check::Allowlist,
    Check::Type,
    Check::CallerAgentTool,
    Check::ChildTools,
    Check::Placement,
    Check::Cap,
];

/// Where a definition came from (DEF-1): the crate's one [`crate::scope::Scope`]. A
/// [`Definition`] is never [`Scope::BuiltIn`]: [`registered`] decides the built-ins.
pub use crate::scope::Scope;

/// One loaded custom definition, as spawn resolution sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Definition<'a> {
    /// The `name` field (for a plugin definition, the bare name).
    pub name: &'a str,
    /// Where it came from.
    pub scope: Scope,
    /// For a plugin definition: the plugin and any subfolders, e.g. `my-plugin` or
    /// `my-plugin:review`; the scoped id is `{plugin}:{name}` (DEF-5).
    pub plugin: Option<&'a str>,
}

impl Definition<'_> {
    /// The type's canonical id: the name, or `plugin:sub:name` for a plugin (DEF-5).
    pub fn id(&self) -> String {
        match self.plugin {
            Some(plugin) if self.scope == Scope::Plugin => format!("{plugin}:{}", self.name),
            _ => self.name.to_string(),
        }
    }
}

/// The two env vars of SPAWN-8.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuiltinEnv {
    /// `CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS=1` (v2.1.198+).
    pub disable_explore_plan: bool,
    /// `CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS=1` (non-interactive sessions only).
    pub sdk_disable_builtins: bool,
}

impl BuiltinEnv {
    /// Reads both variables from `env` (`1`/`true` set them; anything else leaves them off).
    pub fn read(env: &BTreeMap<String, String>) -> BuiltinEnv {
        let on = |name: &str| {
            env.get(name)
                .is_some_and(|value| matches!(value.trim(), "1" | "true"))
        };
        BuiltinEnv {
            disable_explore_plan: on(crate::session::env::DISABLE_EXPLORE_PLAN),
            sdk_disable_builtins: on(crate::session::env::SDK_DISABLE_BUILTINS),
        }
    }
}

/// SPAWN-8: whether `builtin` is registered in a session of `kind` under `env`.
///
/// Built-ins are registered by default. `CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS` removes
/// every one of them, in non-interactive sessions only; `CLAUDE_CODE_DISABLE_EXPLORE_PLAN_AGENTS`
/// removes Explore and Plan, from v2.1.198.
pub fn registered(builtin: BuiltIn, kind: SessionKind, env: BuiltinEnv, gates: &Gates) -> bool {
    if env.sdk_disable_builtins && !kind.is_interactive() {
        return false;
    }
    let explore_or_plan = matches!(builtin, BuiltIn::Explore | BuiltIn::Plan);
    !(explore_or_plan && env.disable_explore_plan && gates.disable_explore_plan_env)
}

/// Who makes the Agent call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller<'a> {
    /// The main conversation.
    Main,
    /// The main conversation running as an agent with `--agent` or the `agent` setting
    /// (MAIN-1): its definition's `tools` (`None` when unset) and `disallowedTools`.
    MainAgent {
        /// The definition's `tools`, if set.
        tools: Option<&'a [String]>,
        /// The definition's `disallowedTools`.
        disallowed: &'a [String],
    },
    /// A non-fork subagent (its `Agent(…)` type list is ignored, SPAWN-6).
    Subagent,
    /// A fork (FORK-7).
    Fork,
    /// An in-process agent-team teammate (FGBG-1 case 1, Q-44).
    Teammate,
}

impl Caller<'_> {
    /// The caller is the main conversation, plain or as an agent.
    pub fn is_main(&self) -> bool {
        matches!(self, Caller::Main | Caller::MainAgent { .. })
    }

    /// FGBG-1 case 1: the caller is an in-process teammate (for
    /// [`crate::placement::PlacementInput::by_teammate`]).
    pub fn is_teammate(&self) -> bool {
        matches!(self, Caller::Teammate)
    }
}

/// Everything the spawn checks read for one Agent call, as plain values.
///
/// Build one with [`SpawnRequest::new`] and struct-update syntax.
#[derive(Clone, Copy, Debug)]
pub struct SpawnRequest<'a> {
    /// The call's `subagent_type`, if any (`fork` is the fork request).
    pub subagent_type: Option<&'a str>,
    /// The call asks for a fork (the same as `subagent_type: "fork"`).
    pub fork: bool,
    /// The call's `name`, if any (SPAWN-11, SPAWN-12).
    pub name: Option<&'a str>,
    /// The call's own `isolation` parameter (not the definition's), if any (SPAWN-11).
    pub isolation: Option<&'a str>,
    /// Who calls.
    pub caller: Caller<'a>,
    /// The loaded custom definitions (built-ins come from [`registered`]).
    pub definitions: &'a [Definition<'a>],
    /// SPAWN-8's env vars.
    pub env: BuiltinEnv,
    /// `permissions.deny` plus `--disallowedTools` (SPAWN-7).
    pub deny: &'a [String],
    /// Session kind (SPAWN-8, SPAWN-11).
    pub session: SessionKind,
    /// Agent teams are enabled (SPAWN-11).
    pub agent_teams: bool,
    /// Fork mode is on (FORK-1/2/3).
    pub fork_mode: bool,
    /// The version gates in force.
    pub gates: Gates,
}

impl<'a> SpawnRequest<'a> {
    /// A type-less, unnamed call from `caller` in an interactive session with no
    /// definitions, no deny rules, agent teams off and fork mode as the version's
    /// interactive default (FORK-1).
    pub fn new(caller: Caller<'a>, gates: Gates) -> SpawnRequest<'a> {
        SpawnRequest {
            subagent_type: None,
            fork: false,
            name: None,
            isolation: None,
            caller,
            definitions: &[],
            env: BuiltinEnv::default(),
            deny: &[],
            session: SessionKind::Interactive,
            agent_teams: false,
            fork_mode: gates.fork_mode_interactive_default,
            gates,
        }
    }

    /// The call asks for a fork.
    pub fn is_fork(&self) -> bool {
        self.fork || self.subagent_type == Some(FORK_TYPE)
    }
}

/// FORK-3 (1): the `subagent_type` that asks for a fork of the main conversation.
pub const FORK_TYPE: &str = "fork";

/// SPAWN-13 / FORK-3 (1): the `subagent_type` an Agent call passes: [`FORK_TYPE`] for a
/// fork request, else the type it names, if any.
pub fn call_type(agent: Option<&str>, fork: bool) -> Option<&str> {
    if fork {
        Some(FORK_TYPE)
    } else {
        agent
    }
}

/// SPAWN-3 / FORK-3: the type an Agent call asks for, as the trace names it
/// (`spawn_requested.agent_type`) and the later checks talk about it: [`FORK_TYPE`] for a
/// fork request, the named type, or `general-purpose` for a type-less call (SPAWN-3 case
/// 3; whether the session still has it is [`resolve`]'s question, SPAWN-4).
pub fn requested_type(subagent_type: Option<&str>, fork: bool) -> &str {
    call_type(subagent_type, fork).unwrap_or(BuiltIn::GeneralPurpose.name())
}

/// SPAWN-13 / FORK-3 (5): the `run_in_background` parameter an Agent call passes, as the
/// trace shows it (`spawn_requested.background`): absent while fork mode is on, because
/// fork mode removes the parameter from the Agent tool; else the call's own value.
pub fn run_in_background_param(run_in_background: Option<bool>, fork_mode: bool) -> Option<bool> {
    if fork_mode {
        None
    } else {
        run_in_background
    }
}

/// What a type name resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A custom definition: its index in [`SpawnRequest::definitions`] and its id.
    Custom {
        /// Index into the definitions slice.
        index: usize,
        /// The canonical id ([`Definition::id`]).
        id: String,
        /// The rule that decided (SPAWN-3, DEF-1, SPAWN-10, DEF-5 or MAIN-4).
        rule: RuleId,
    },
    /// A registered built-in (SPAWN-8).
    BuiltIn(BuiltIn),
    /// Nothing by that name: SPAWN-3, or SPAWN-8 when it names an unregistered built-in.
    Missing(RuleId),
    /// a bare name that several plugins provide; their scoped ids.
    Ambiguous(Vec<String>),
}

/// SPAWN-3 / DEF-1 / DEF-5 / SPAWN-8 / SPAWN-10 / MAIN-4 / Q-32: what `name` means among
/// `definitions` and the built-ins registered for `kind` and `env`.
pub fn lookup(
    name: &str,
    definitions: &[Definition<'_>],
    kind: SessionKind,
    env: BuiltinEnv,
    gates: &Gates,
) -> Lookup {
    // DEF-1: among non-plugin definitions of that name, the highest priority wins; the
    // first in slice order on a tie.
    let mut best: Option<(usize, &Definition<'_>)> = None;
    let mut collisions = 0;
    for (index, definition) in definitions.iter().enumerate() {
        if definition.scope == Scope::Plugin || definition.name != name {
            continue;
        }
        collisions += 1;
        if best.is_none_or(|(_, current)| definition.scope.priority() < current.scope.priority()) {
            best = Some((index, definition));
        }
    }
    let builtin = BuiltIn::from_name(name);
    if let Some((index, definition)) = best {
        let rule = if builtin.is_some() {
            // SPAWN-10: a custom definition of a built-in's name overrides it.
            "SPAWN-10"
        } else if collisions > 1 {
            "DEF-1"
        } else {
            "SPAWN-3"
        };
        return Lookup::Custom {
            index,
            id: definition.id(),
            rule,
        };
    }
    if let Some(builtin) = builtin {
        // SPAWN-8: a built-in answers only while it is registered.
        return if registered(builtin, kind, env, gates) {
            Lookup::BuiltIn(builtin)
        } else {
            Lookup::Missing("SPAWN-8")
        };
    }
    // DEF-5: a plugin definition by its scoped id.
    if name.contains(':') {
        return definitions
            .iter()
            .position(|definition| definition.scope == Scope::Plugin && definition.id() == name)
            .map_or(Lookup::Missing("SPAWN-3"), |index| Lookup::Custom {
                index,
                id: name.to_string(),
                rule: "DEF-5",
            });
    }
    // MAIN-4 / Q-32: a plugin definition by its bare name, unless several plugins have it.
    let mut ids: Vec<(usize, String)> = Vec::new();
    for (index, definition) in definitions.iter().enumerate() {
        if definition.scope == Scope::Plugin && definition.name == name {
            let id = definition.id();
            if !ids.iter().any(|(_, known)| *known == id) {
                ids.push((index, id));
            }
        }
    }
    match ids.len() {
        0 => Lookup::Missing("SPAWN-3"),
        1 => {
            let (index, id) = ids.remove(0);
            Lookup::Custom {
                index,
                id,
                rule: "MAIN-4",
            }
        }
        _ => Lookup::Ambiguous(ids.into_iter().map(|(_, id)| id).collect()),
    }
}

/// Which types an agent's own `Agent` tool lets it spawn (SPAWN-5, SPAWN-6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spawnable {
    /// No `Agent` tool: no spawning at all.
    Nothing,
    /// Bare `Agent` (or `tools` unset): every type.
    Everything,
    /// `Agent(a, b)`: only these types.
    Only(Vec<String>),
}

/// Is `entry` a `tools` entry for the spawn tool (`Agent` or its alias `Task`, TOOLS-20)?
fn spawn_tool_entry(entry: &str) -> Option<Option<&str>> {
    let (tool, specifier) = split_rule(entry.trim());
    matches!(tool.trim(), "Agent" | "Task").then_some(specifier)
}

fn type_list(specifier: &str) -> impl Iterator<Item = &str> {
    specifier
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
}

/// SPAWN-5 / MAIN-6: the `--agent` main thread's allowlist, read from its definition's
/// `tools` and `disallowedTools`.
///
/// `tools` unset or a bare `Agent` allows everything; `Agent(worker, researcher)` (or
/// `Task(…)`, TOOLS-20) allows only those types, several such entries adding up; no `Agent`
/// entry means no spawning. `Agent` in `disallowedTools`, with or without a type list,
/// removes the tool (TOOLS-11, TOOLS-14).
pub fn spawnable(tools: Option<&[String]>, disallowed: &[String]) -> (Spawnable, RuleId) {
    if disallowed
        .iter()
        .any(|entry| spawn_tool_entry(entry).is_some())
    {
        return (Spawnable::Nothing, "TOOLS-14");
    }
    let Some(tools) = tools else {
        return (Spawnable::Everything, "TOOLS-11");
    };
    let mut only: Vec<String> = Vec::new();
    let mut any = false;
    for specifier in tools.iter().filter_map(|entry| spawn_tool_entry(entry)) {
        any = true;
        match specifier {
            None => return (Spawnable::Everything, "SPAWN-5"),
            Some(list) => {
                for name in type_list(list) {
                    if !only.iter().any(|known| known == name) {
                        only.push(name.to_string());
                    }
                }
            }
        }
    }
    if any {
        (Spawnable::Only(only), "SPAWN-5")
    } else {
        (Spawnable::Nothing, "SPAWN-5")
    }
}

/// SPAWN-7 / FORK-4 / TOOLS-20: does a deny rule name the spawn tool as a whole (`Some(None)`),
/// or one of `names` (`Some(Some(name))`)?
fn denied<'d>(deny: &'d [String], names: &[&str]) -> Option<Option<&'d str>> {
    let mut named = None;
    for rule in deny {
        match spawn_tool_entry(rule) {
            Some(None) => return Some(None),
            Some(Some(list)) => {
                if let Some(hit) = type_list(list).find(|listed| names.contains(listed)) {
                    named.get_or_insert(hit);
                }
            }
            None => {}
        }
    }
    named.map(Some)
}

/// What an Agent call launches, or why it launches nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// A subagent of this type.
    Type {
        /// The canonical type: a built-in's name, a custom definition's name, or a plugin
        /// definition's scoped id.
        name: String,
        /// The custom definition's index in [`SpawnRequest::definitions`]; `None` for a
        /// built-in.
        definition: Option<usize>,
        /// The rule that decided.
        rule: RuleId,
    },
    /// A fork of the main conversation (FORK-3).
    Fork {
        /// The rule that decided.
        rule: RuleId,
    },
    /// An agent-team teammate instead of a subagent (SPAWN-11).
    Teammate {
        /// The call's `name`.
        name: String,
        /// The type the teammate reuses (DEF-16).
        agent_type: String,
        /// The custom definition's index, `None` for a built-in.
        definition: Option<usize>,
        /// The rule that decided.
        rule: RuleId,
    },
    /// Refused at spawn time.
    Reject {
        /// The trace reason.
        reason: RejectReason,
        /// The rule that refused.
        rule: RuleId,
        /// The message the Agent tool returns.
        message: String,
    },
}

impl Resolution {
    /// The rule that decided.
    pub fn rule(&self) -> RuleId {
        match self {
            Resolution::Type { rule, .. }
            | Resolution::Fork { rule }
            | Resolution::Teammate { rule, .. }
            | Resolution::Reject { rule, .. } => rule,
        }
    }

    fn reject(reason: RejectReason, rule: RuleId, message: String) -> Resolution {
        Resolution::Reject {
            reason,
            rule,
            message,
        }
    }
}

/// The type a lookup found: canonical name, definition index, deciding rule.
struct Found {
    name: String,
    definition: Option<usize>,
    rule: RuleId,
}

fn found(lookup: &Lookup) -> Option<Found> {
    match lookup {
        Lookup::Custom { index, id, rule } => Some(Found {
            name: id.clone(),
            definition: Some(*index),
            rule,
        }),
        Lookup::BuiltIn(builtin) => Some(Found {
            name: builtin.name().to_string(),
            definition: None,
            rule: "SPAWN-8",
        }),
        Lookup::Missing(_) | Lookup::Ambiguous(_) => None,
    }
}

/// The names a deny rule or an allowlist may use for a type: as requested, its canonical
/// id, and the definition's `name` field.
fn names_for(
    requested: &str,
    found: Option<&Found>,
    definitions: &[Definition<'_>],
) -> Vec<String> {
    let mut names = vec![requested.to_string()];
    if let Some(found) = found {
        names.push(found.name.clone());
        if let Some(index) = found.definition {
            names.push(definitions[index].name.to_string());
        }
    }
    names
}

/// SPAWN-3…11, FORK-3/4/7, Q-29, Q-32: what the Agent call in `request` launches.
///
/// Runs the checks of [`CHECK_ORDER`] that [`Check::in_resolve`] names, in that order; the
/// first failure is the answer. On success the engine still runs the depth check
/// ([`crate::depth::agent_tool`]), the child's tools, placement and the cap.
pub fn resolve(request: &SpawnRequest<'_>) -> Resolution {
    let fork = request.is_fork();
    let deny = request.deny;
    // Check::ForkRules.
    if fork {
        match request.caller {
            // FORK-7: a fork cannot spawn further forks.
            Caller::Fork => {
                return Resolution::reject(
                    RejectReason::ForkInFork,
                    "FORK-7",
                    messages::FORK_IN_FORK.into(),
                )
            }
            // only the main conversation holds fork mode.
            Caller::Subagent | Caller::Teammate => {
                return Resolution::reject(
                    RejectReason::ForkFromSubagent,
                    "Q-29",
                    messages::FORK_FROM_SUBAGENT.into(),
                )
            }
            Caller::Main | Caller::MainAgent { .. } => {}
        }
        // FORK-3: `fork` exists only while fork mode is on.
        if !request.fork_mode {
            return Resolution::reject(
                RejectReason::ForkUnavailable,
                "FORK-3",
                messages::FORK_UNAVAILABLE.into(),
            );
        }
        // FORK-4: `Agent(fork)` keeps fork mode on but stops forks.
        if let Some(Some(_)) = denied(deny, &[FORK_TYPE]) {
            return Resolution::reject(
                RejectReason::Denied,
                "FORK-4",
                format!("{} (fork)", messages::DENIED),
            );
        }
    }
    // The name the later checks talk about (type-less calls mean general-purpose, SPAWN-3).
    let requested = requested_type(request.subagent_type, fork);
    let lookup_result = if fork {
        Lookup::Missing("FORK-3")
    } else {
        lookup(
            requested,
            request.definitions,
            request.session,
            request.env,
            &request.gates,
        )
    };
    let target = found(&lookup_result);
    let owned_names = names_for(requested, target.as_ref(), request.definitions);
    let names: Vec<&str> = owned_names.iter().map(String::as_str).collect();
    // Check::Deny. SPAWN-7: bare `Agent` stops all delegation; `Agent(x)` blocks x.
    match denied(deny, &names) {
        Some(None) => {
            return Resolution::reject(RejectReason::Denied, "SPAWN-7", messages::DENIED.into())
        }
        Some(Some(name)) if request.subagent_type.is_some() => {
            return Resolution::reject(
                RejectReason::Denied,
                "SPAWN-7",
                format!("{} ({name})", messages::DENIED),
            )
        }
        // SPAWN-4: a denied general-purpose leaves type-less calls with nothing to fall
        // back on (Check::Type below).
        _ => {}
    }
    // Check::Allowlist (SPAWN-5 / MAIN-6) — only a `--agent` main thread has one; in a
    // subagent definition the list is ignored (SPAWN-6).
    let allowlist = match request.caller {
        Caller::MainAgent { tools, disallowed } => Some(spawnable(tools, disallowed)),
        _ => None,
    };
    let allowed = |names: &[&str]| match &allowlist {
        Some((Spawnable::Only(list), _)) => names.iter().any(|name| list.iter().any(|a| a == name)),
        _ => true,
    };
    if (fork || request.subagent_type.is_some()) && !allowed(&names) {
        let list = match &allowlist {
            Some((Spawnable::Only(list), _)) => list.join(", "),
            _ => String::new(),
        };
        return Resolution::reject(
            RejectReason::NotAllowed,
            "SPAWN-5",
            format!("{} ({requested}; allowed: {list})", messages::NOT_ALLOWED),
        );
    }
    // Check::Type.
    let target = if fork {
        None
    } else {
        match (request.subagent_type, &lookup_result, target) {
            (Some(_), _, Some(target)) => Some(target),
            (Some(name), Lookup::Ambiguous(ids), None) => {
                return Resolution::reject(
                    RejectReason::Ambiguous,
                    "Q-32",
                    format!("{} ({name}: {})", messages::AMBIGUOUS_TYPE, ids.join(", ")),
                )
            }
            (Some(name), lookup, None) => {
                let rule = match lookup {
                    Lookup::Missing(rule) => rule,
                    Lookup::Custom { .. } | Lookup::BuiltIn(..) | Lookup::Ambiguous(..) => {
                        "SPAWN-3"
                    }
                };
                return Resolution::reject(
                    RejectReason::UnknownType,
                    rule,
                    format!("{} ({name})", messages::UNKNOWN_TYPE),
                );
            }
            // SPAWN-3/4: no type → general-purpose, if the session still has it.
            (None, _, target) => {
                let gone = if denied(deny, &names).is_some() {
                    Some("SPAWN-4")
                } else if !allowed(&names) {
                    Some("SPAWN-5")
                } else if target.is_none() {
                    Some("SPAWN-4")
                } else {
                    None
                };
                if let Some(rule) = gone {
                    return Resolution::reject(
                        RejectReason::TypeRequired,
                        rule,
                        messages::TYPE_REQUIRED.into(),
                    );
                }
                target.map(|found| Found {
                    rule: "SPAWN-3",
                    ..found
                })
            }
        }
    };
    // Check::CallerAgentTool — SPAWN-5: a `--agent` main thread without `Agent` cannot
    // spawn. (The depth part is the engine's.)
    if let Some((Spawnable::Nothing, rule)) = &allowlist {
        return Resolution::reject(
            RejectReason::NoAgentTool,
            rule,
            messages::NO_AGENT_IN_TOOLS.into(),
        );
    }
    let Some(target) = target else {
        return Resolution::Fork { rule: "FORK-3" };
    };
    // SPAWN-11: a named call from the main conversation becomes a teammate in an
    // interactive session with agent teams on — unless it is a fork or passes `isolation`
    // itself (the definition's `isolation` does not prevent it).
    if request.caller.is_main()
        && request.session.is_interactive()
        && request.agent_teams
        && request.isolation.is_none()
    {
        if let Some(name) = request.name {
            return Resolution::Teammate {
                name: name.to_string(),
                agent_type: target.name,
                definition: target.definition,
                rule: "SPAWN-11",
            };
        }
    }
    Resolution::Type {
        name: target.name,
        definition: target.definition,
        rule: target.rule,
    }
}

/// SPAWN-5 / SPAWN-8 / FORK-3: the types the caller's Agent tool offers, in SPAWN-9's
/// order for the built-ins and then the definitions' order. An allowlisted `--agent` main
/// thread sees only the allowed ones, one without `Agent` sees none; `fork` is offered to
/// the main conversation while fork mode is on.
pub fn visible_types(request: &SpawnRequest<'_>) -> Vec<String> {
    let mut types: Vec<String> = Vec::new();
    let mut push = |name: String| {
        if !types.contains(&name) {
            types.push(name);
        }
    };
    for builtin in BuiltIn::ALL {
        let overridden = request
            .definitions
            .iter()
            .any(|d| d.scope != Scope::Plugin && d.name == builtin.name());
        if overridden || registered(builtin, request.session, request.env, &request.gates) {
            push(builtin.name().to_string());
        }
    }
    for definition in request.definitions {
        push(definition.id());
    }
    if request.fork_mode && request.caller.is_main() {
        push(FORK_TYPE.to_string());
    }
    match request.caller {
        Caller::MainAgent { tools, disallowed } => match spawnable(tools, disallowed).0 {
            Spawnable::Nothing => Vec::new(),
            Spawnable::Everything => types,
            Spawnable::Only(list) => types
                .into_iter()
                .filter(|id| {
                    let bare = id.rsplit(':').next().unwrap_or(id);
                    list.iter().any(|allowed| allowed == id || allowed == bare)
                })
                .collect(),
        },
        Caller::Main | Caller::Subagent | Caller::Fork | Caller::Teammate => types,
    }
}

/// Q-44 / Q-10 / DEPTH-1: the depth a child of `caller` (itself at `caller_depth`) runs at.
/// An in-process teammate counts as depth 0 for its own children.
pub fn child_depth(caller: &Caller<'_>, caller_depth: u32) -> (u32, RuleId) {
    match caller {
        Caller::Teammate => (1, "Q-44"),
        Caller::Fork => (caller_depth + 1, "Q-10"),
        Caller::Main | Caller::MainAgent { .. } | Caller::Subagent => (caller_depth + 1, "DEPTH-1"),
    }
}

/// CAP-5 / CAP-8 / CAP-10 / Q-44: whether launching `resolution` for `caller` is checked
/// against the session's concurrency cap (and takes a slot).
pub fn cap_checked(resolution: &Resolution, caller: &Caller<'_>) -> (bool, RuleId) {
    match resolution {
        // CAP-8: a teammate follows its own limits.
        Resolution::Teammate { .. } => (false, "CAP-8"),
        // CAP-10: a fork Claude spawns is an Agent-tool spawn.
        Resolution::Fork { .. } => (true, "CAP-10"),
        // a teammate's children count toward the session cap.
        Resolution::Type { .. } if caller.is_teammate() => (true, "Q-44"),
        Resolution::Type { .. } => (true, "CAP-5"),
        Resolution::Reject { rule, .. } => (false, rule),
    }
}

/// SPAWN-15: the budget for the combined descriptions of the non-built-in definitions in
/// effect, in tokens.
pub const DESCRIPTION_BUDGET_TOKENS: usize = 15_000;
/// the stand-in tokenizer, characters per token.
pub const CHARS_PER_TOKEN: usize = 4;

/// SPAWN-15 / Q-33: are definitions' descriptions over the token budget? `chars` is the
/// combined length of the non-built-in descriptions in effect; the answer is their size in
/// tokens when it is over (a warning: every subagent is still loaded), else `None`.
pub fn description_budget(chars: usize) -> Option<(usize, RuleId)> {
    let tokens = chars / CHARS_PER_TOKEN;
    (tokens > DESCRIPTION_BUDGET_TOKENS).then_some((tokens, "SPAWN-15"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;

    fn gates() -> Gates {
        Gates::for_version(Version::NEWEST)
    }

    /// `(kind, text prefix, rule)`: see [`check`].
    type Expected = (&'static str, &'static str, RuleId);
    /// `(deny rules, subagent_type, expected)`.
    type DenyRow<'a> = (&'a [String], Option<&'static str>, Expected);
    /// `(tools, disallowedTools, expected, rule)`.
    type SpawnableRow = (
        Option<&'static [&'static str]>,
        &'static [&'static str],
        Spawnable,
        RuleId,
    );

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// The expected outcome, compactly: `("type", name, rule)`, `("fork", "", rule)`,
    /// `("teammate", agent_type, rule)`, or `(reason, message prefix, rule)`.
    fn check(request: SpawnRequest<'_>, expected: (&str, &str, RuleId)) {
        let got = resolve(&request);
        let (kind, text) = match &got {
            Resolution::Type { name, .. } => ("type", name.clone()),
            Resolution::Fork { .. } => ("fork", String::new()),
            Resolution::Teammate { agent_type, .. } => ("teammate", agent_type.clone()),
            Resolution::Reject {
                reason, message, ..
            } => (reason.as_str(), message.clone()),
        };
        assert_eq!(kind, expected.0, "{request:?} → {got:?}");
        assert!(
            text.starts_with(expected.1),
            "{request:?} → {got:?}, expected text {:?}",
            expected.1
        );
        assert_eq!(got.rule(), expected.2, "{request:?} → {got:?}");
    }

    const DEFS: [Definition<'static>; 8] = [
        Definition {
            name: "worker",
            scope: Scope::Project,
            plugin: None,
        },
        Definition {
            name: "worker",
            scope: Scope::User,
            plugin: None,
        },
        Definition {
            name: "researcher",
            scope: Scope::User,
            plugin: None,
        },
        Definition {
            name: "Explore",
            scope: Scope::User,
            plugin: None,
        },
        Definition {
            name: "security",
            scope: Scope::Plugin,
            plugin: Some("my-plugin:review"),
        },
        Definition {
            name: "security",
            scope: Scope::Plugin,
            plugin: Some("other-plugin"),
        },
        Definition {
            name: "linter",
            scope: Scope::Plugin,
            plugin: Some("my-plugin"),
        },
        Definition {
            name: "managed-only",
            scope: Scope::Managed,
            plugin: None,
        },
    ];

    fn main_call(subagent_type: Option<&'static str>) -> SpawnRequest<'static> {
        SpawnRequest {
            subagent_type,
            definitions: &DEFS,
            ..SpawnRequest::new(Caller::Main, gates())
        }
    }

    #[test]
    fn check_order_is_q11() {
        let order: Vec<&str> = CHECK_ORDER.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            order,
            [
                "fork_rules",
                "deny",
                "allowlist",
                "type",
                "caller_agent_tool",
                "child_tools",
                "placement",
                "cap"
            ]
        );
        let here: Vec<bool> = CHECK_ORDER.iter().map(|c| c.in_resolve()).collect();
        assert_eq!(here, [true, true, true, true, true, false, false, false]);
        assert!(CHECK_ORDER.iter().all(|c| !c.rules().is_empty()));
        // Each check names the rules it applies (Q-11's table), e.g. the first and last.
        assert_eq!(
            Check::ForkRules.rules(),
            ["FORK-7", "Q-29", "FORK-3", "FORK-4"]
        );
        assert_eq!(Check::Cap.rules(), ["CAP-1"]);
    }

    #[test]
    fn spawn_3_type_resolution() {
        // SPAWN-3: omitted → general-purpose; a named type; DEF-1 priority.
        check(main_call(None), ("type", "general-purpose", "SPAWN-3"));
        check(main_call(Some("Plan")), ("type", "Plan", "SPAWN-8"));
        check(main_call(Some("worker")), ("type", "worker", "DEF-1"));
        check(
            main_call(Some("researcher")),
            ("type", "researcher", "SPAWN-3"),
        );
        check(
            main_call(Some("managed-only")),
            ("type", "managed-only", "SPAWN-3"),
        );
        check(
            main_call(Some("nobody")),
            ("unknown_type", messages::UNKNOWN_TYPE, "SPAWN-3"),
        );
        // DEF-1: the project `worker` (priority 3) beats the user one (4).
        let Resolution::Type { definition, .. } = resolve(&main_call(Some("worker"))) else {
            panic!()
        };
        assert_eq!(definition, Some(0));
    }

    #[test]
    fn def_1_and_q_31_priority_then_load_order_decide_a_collision() {
        // DEF-1: managed 1, `--agents` 2, project 3, user 4, plugin 5; the lower wins.
        let order = [
            Scope::Managed,
            Scope::Cli,
            Scope::Project,
            Scope::User,
            Scope::Plugin,
        ];
        let priorities: Vec<u8> = order.iter().map(|scope| scope.priority()).collect();
        assert_eq!(priorities, [1, 2, 3, 4, 5]);
        // A user definition listed before the project one of the same name still loses.
        let defs = [
            Definition {
                name: "worker",
                scope: Scope::User,
                plugin: None,
            },
            Definition {
                name: "worker",
                scope: Scope::Project,
                plugin: None,
            },
        ];
        assert_eq!(
            lookup(
                "worker",
                &defs,
                SessionKind::Interactive,
                BuiltinEnv::default(),
                &gates()
            ),
            Lookup::Custom {
                index: 1,
                id: "worker".into(),
                rule: "DEF-1"
            }
        );
        // on a tie (same scope) the first in load order wins.
        let same_scope = [defs[1], defs[1]];
        assert!(matches!(
            lookup(
                "worker",
                &same_scope,
                SessionKind::Interactive,
                BuiltinEnv::default(),
                &gates()
            ),
            Lookup::Custom {
                index: 0,
                rule: "DEF-1",
                ..
            }
        ));
        // DEF-5: only a plugin definition's id is scoped.
        let project = Definition {
            name: "worker",
            scope: Scope::Project,
            plugin: Some("my-plugin"),
        };
        assert_eq!(project.id(), "worker");
        let plugin = Definition {
            scope: Scope::Plugin,
            ..project
        };
        assert_eq!(plugin.id(), "my-plugin:worker");
    }

    #[test]
    fn spawn_10_custom_overrides_builtin() {
        let got = resolve(&main_call(Some("Explore")));
        assert_eq!(
            got,
            Resolution::Type {
                name: "Explore".into(),
                definition: Some(3),
                rule: "SPAWN-10"
            }
        );
        // The override survives the env var that removes the built-in (it is custom).
        let env = BuiltinEnv {
            disable_explore_plan: true,
            sdk_disable_builtins: false,
        };
        check(
            SpawnRequest {
                env,
                ..main_call(Some("Explore"))
            },
            ("type", "Explore", "SPAWN-10"),
        );
    }

    #[test]
    fn q32_and_main_4_plugin_names() {
        // DEF-5: scoped ids, subfolders included.
        check(
            main_call(Some("my-plugin:review:security")),
            ("type", "my-plugin:review:security", "DEF-5"),
        );
        check(
            main_call(Some("my-plugin:security")),
            ("unknown_type", messages::UNKNOWN_TYPE, "SPAWN-3"),
        );
        // MAIN-4: a unique bare plugin name works.
        check(
            main_call(Some("linter")),
            ("type", "my-plugin:linter", "MAIN-4"),
        );
        // a bare name two plugins provide is an error asking for the scoped name.
        check(
            main_call(Some("security")),
            ("ambiguous", messages::AMBIGUOUS_TYPE, "Q-32"),
        );
        let Resolution::Reject { message, .. } = resolve(&main_call(Some("security"))) else {
            panic!()
        };
        assert!(message.contains("my-plugin:review:security, other-plugin:security"));
    }

    #[test]
    fn spawn_8_registration_table() {
        let new = gates();
        let old = Gates::for_version(Version::v2_1(197));
        let explore_plan = BuiltinEnv {
            disable_explore_plan: true,
            sdk_disable_builtins: false,
        };
        let sdk = BuiltinEnv {
            disable_explore_plan: false,
            sdk_disable_builtins: true,
        };
        let none = BuiltinEnv::default();
        use SessionKind::*;
        // (built-in, kind, env, gates, registered)
        let rows = [
            (BuiltIn::Explore, Interactive, none, new, true),
            (BuiltIn::GeneralPurpose, Headless, none, new, true),
            (BuiltIn::Explore, Interactive, explore_plan, new, false),
            (BuiltIn::Plan, Sdk, explore_plan, new, false),
            (
                BuiltIn::GeneralPurpose,
                Interactive,
                explore_plan,
                new,
                true,
            ),
            (BuiltIn::Explore, Interactive, explore_plan, old, true),
            (BuiltIn::GeneralPurpose, Headless, sdk, new, false),
            (BuiltIn::ClaudeCodeGuide, Sdk, sdk, new, false),
            (BuiltIn::GeneralPurpose, Interactive, sdk, new, true),
        ];
        for (builtin, kind, env, gates, expected) in rows {
            assert_eq!(
                registered(builtin, kind, env, &gates),
                expected,
                "{builtin:?} {kind:?} {env:?} {}",
                gates.version
            );
        }
        // Spawning an unregistered built-in names SPAWN-8.
        check(
            SpawnRequest {
                env: explore_plan,
                ..main_call(Some("Plan"))
            },
            ("unknown_type", messages::UNKNOWN_TYPE, "SPAWN-8"),
        );
        let map = [(
            crate::session::env::SDK_DISABLE_BUILTINS.to_string(),
            "1".to_string(),
        )]
        .into_iter()
        .collect();
        assert_eq!(BuiltinEnv::read(&map), sdk);
    }

    #[test]
    fn spawn_4_type_required() {
        let sdk = BuiltinEnv {
            disable_explore_plan: false,
            sdk_disable_builtins: true,
        };
        let deny_gp = strings(&["Agent(general-purpose)"]);
        check(
            SpawnRequest {
                env: sdk,
                session: SessionKind::Sdk,
                ..main_call(None)
            },
            ("type_required", messages::TYPE_REQUIRED, "SPAWN-4"),
        );
        check(
            SpawnRequest {
                deny: &deny_gp,
                ..main_call(None)
            },
            ("type_required", messages::TYPE_REQUIRED, "SPAWN-4"),
        );
        // The SDK env var does nothing in an interactive session.
        check(
            SpawnRequest {
                env: sdk,
                ..main_call(None)
            },
            ("type", "general-purpose", "SPAWN-3"),
        );
    }

    #[test]
    fn spawn_7_deny_rules() {
        let deny_all = strings(&["Agent"]);
        let deny_explore = strings(&["Agent(Explore)"]);
        let task_alias = strings(&["Task(researcher, worker)"]);
        let deny_plugin = strings(&["Agent(security)"]);
        let rows: [DenyRow<'_>; 7] = [
            (
                &deny_all,
                Some("worker"),
                ("denied", messages::DENIED, "SPAWN-7"),
            ),
            (&deny_all, None, ("denied", messages::DENIED, "SPAWN-7")),
            (
                &deny_explore,
                Some("Explore"),
                ("denied", messages::DENIED, "SPAWN-7"),
            ),
            (&deny_explore, Some("Plan"), ("type", "Plan", "SPAWN-8")),
            (
                &task_alias,
                Some("worker"),
                ("denied", messages::DENIED, "SPAWN-7"),
            ),
            // The definition's `name` field matches a plugin type asked for by its id.
            (
                &deny_plugin,
                Some("my-plugin:review:security"),
                ("denied", messages::DENIED, "SPAWN-7"),
            ),
            // Deny comes before type resolution: even an unknown type is "denied".
            (
                &deny_all,
                Some("nobody"),
                ("denied", messages::DENIED, "SPAWN-7"),
            ),
        ];
        for (deny, subagent_type, expected) in rows {
            check(
                SpawnRequest {
                    deny,
                    ..main_call(subagent_type)
                },
                expected,
            );
        }
    }

    #[test]
    fn fork_rules_fork_3_4_7_q29() {
        let on = SpawnRequest {
            fork: true,
            fork_mode: true,
            ..main_call(None)
        };
        let deny_fork = strings(&["Agent(fork)"]);
        let deny_all = strings(&["Agent"]);
        let rows: [(SpawnRequest<'_>, (&str, &str, RuleId)); 8] = [
            (on, ("fork", "", "FORK-3")),
            (
                SpawnRequest {
                    fork: false,
                    subagent_type: Some("fork"),
                    ..on
                },
                ("fork", "", "FORK-3"),
            ),
            (
                SpawnRequest {
                    fork_mode: false,
                    ..on
                },
                ("fork_unavailable", messages::FORK_UNAVAILABLE, "FORK-3"),
            ),
            (
                SpawnRequest {
                    deny: &deny_fork,
                    ..on
                },
                ("denied", messages::DENIED, "FORK-4"),
            ),
            (
                SpawnRequest {
                    deny: &deny_all,
                    ..on
                },
                ("denied", messages::DENIED, "SPAWN-7"),
            ),
            (
                SpawnRequest {
                    caller: Caller::Fork,
                    ..on
                },
                ("fork_in_fork", messages::FORK_IN_FORK, "FORK-7"),
            ),
            (
                SpawnRequest {
                    caller: Caller::Subagent,
                    ..on
                },
                ("fork_from_subagent", messages::FORK_FROM_SUBAGENT, "Q-29"),
            ),
            (
                SpawnRequest {
                    caller: Caller::Teammate,
                    ..on
                },
                ("fork_from_subagent", messages::FORK_FROM_SUBAGENT, "Q-29"),
            ),
        ];
        for (request, expected) in rows {
            check(request, expected);
        }
        // FORK-4: Agent(fork) leaves ordinary subagents alone.
        check(
            SpawnRequest {
                deny: &deny_fork,
                fork_mode: true,
                ..main_call(Some("worker"))
            },
            ("type", "worker", "DEF-1"),
        );
    }

    #[test]
    fn spawnable_table_spawn_5_6() {
        let rows: [SpawnableRow; 8] = [
            (None, &[], Spawnable::Everything, "TOOLS-11"),
            (
                Some(&["Agent", "Read"]),
                &[],
                Spawnable::Everything,
                "SPAWN-5",
            ),
            (Some(&["Read", "Bash"]), &[], Spawnable::Nothing, "SPAWN-5"),
            (
                Some(&["Agent(worker, researcher)", "Read", "Bash"]),
                &[],
                Spawnable::Only(strings(&["worker", "researcher"])),
                "SPAWN-5",
            ),
            (
                Some(&["Task(worker)", "Agent(researcher)"]),
                &[],
                Spawnable::Only(strings(&["worker", "researcher"])),
                "SPAWN-5",
            ),
            (
                Some(&["Agent(worker)", "Agent"]),
                &[],
                Spawnable::Everything,
                "SPAWN-5",
            ),
            (None, &["Agent"], Spawnable::Nothing, "TOOLS-14"),
            (
                Some(&["Agent"]),
                &["Task(worker)"],
                Spawnable::Nothing,
                "TOOLS-14",
            ),
        ];
        for (tools, disallowed, expected, rule) in rows {
            let tools = tools.map(strings);
            let disallowed = strings(disallowed);
            assert_eq!(
                spawnable(tools.as_deref(), &disallowed),
                (expected, rule),
                "{tools:?} {disallowed:?}"
            );
        }
    }

    #[test]
    fn main_agent_allowlist_spawn_5_main_6() {
        let coordinator = strings(&["Agent(worker, researcher)", "Read", "Bash"]);
        let no_agent = strings(&["Read"]);
        let bare = strings(&["Agent", "Read"]);
        fn as_agent(tools: &[String]) -> Caller<'_> {
            Caller::MainAgent {
                tools: Some(tools),
                disallowed: &[],
            }
        }
        fn call<'a>(caller: Caller<'a>, subagent_type: Option<&'static str>) -> SpawnRequest<'a> {
            SpawnRequest {
                caller,
                ..main_call(subagent_type)
            }
        }
        let rows = [
            (
                call(as_agent(&coordinator), Some("worker")),
                ("type", "worker", "DEF-1"),
            ),
            (
                call(as_agent(&coordinator), Some("Explore")),
                ("not_allowed", messages::NOT_ALLOWED, "SPAWN-5"),
            ),
            // Type-less: general-purpose is not allowed, so nothing to fall back on.
            (
                call(as_agent(&coordinator), None),
                ("type_required", messages::TYPE_REQUIRED, "SPAWN-5"),
            ),
            (
                SpawnRequest {
                    fork: true,
                    fork_mode: true,
                    ..call(as_agent(&coordinator), None)
                },
                ("not_allowed", messages::NOT_ALLOWED, "SPAWN-5"),
            ),
            (
                call(as_agent(&bare), Some("Explore")),
                ("type", "Explore", "SPAWN-10"),
            ),
            (
                call(as_agent(&no_agent), Some("worker")),
                ("no_agent_tool", messages::NO_AGENT_IN_TOOLS, "SPAWN-5"),
            ),
            // SPAWN-6: a subagent's type list is ignored; only the main thread has one.
            (
                call(Caller::Subagent, Some("Explore")),
                ("type", "Explore", "SPAWN-10"),
            ),
        ];
        for (request, expected) in rows {
            check(request, expected);
        }
        // The refusal names the allowlist, so the fix is in the message.
        let Resolution::Reject { message, .. } =
            resolve(&call(as_agent(&coordinator), Some("Explore")))
        else {
            panic!("Explore is not allowed");
        };
        assert_eq!(
            message,
            format!(
                "{} (Explore; allowed: worker, researcher)",
                messages::NOT_ALLOWED
            )
        );
        // The agent sees only the allowed types.
        let request = call(as_agent(&coordinator), None);
        assert_eq!(visible_types(&request), strings(&["worker", "researcher"]));
        assert!(visible_types(&call(as_agent(&no_agent), None)).is_empty());
        // MAIN-4: a plugin type is allowed by its bare name or by its scoped id.
        for entry in ["Agent(linter)", "Agent(my-plugin:linter)"] {
            let tools = strings(&[entry]);
            assert_eq!(
                visible_types(&call(as_agent(&tools), None)),
                strings(&["my-plugin:linter"]),
                "{entry}"
            );
        }
    }

    #[test]
    fn spawn_11_teammate_conversion() {
        let named = SpawnRequest {
            name: Some("ana"),
            agent_teams: true,
            ..main_call(Some("worker"))
        };
        let rows: [(SpawnRequest<'_>, (&str, &str, RuleId)); 7] = [
            (named, ("teammate", "worker", "SPAWN-11")),
            (
                SpawnRequest {
                    agent_teams: false,
                    ..named
                },
                ("type", "worker", "DEF-1"),
            ),
            (
                SpawnRequest {
                    session: SessionKind::Headless,
                    ..named
                },
                ("type", "worker", "DEF-1"),
            ),
            (
                SpawnRequest {
                    name: None,
                    ..named
                },
                ("type", "worker", "DEF-1"),
            ),
            (
                SpawnRequest {
                    isolation: Some("worktree"),
                    ..named
                },
                ("type", "worker", "DEF-1"),
            ),
            (
                SpawnRequest {
                    subagent_type: None,
                    fork: true,
                    fork_mode: true,
                    ..named
                },
                ("fork", "", "FORK-3"),
            ),
            (
                SpawnRequest {
                    caller: Caller::Subagent,
                    ..named
                },
                ("type", "worker", "DEF-1"),
            ),
        ];
        for (request, expected) in rows {
            check(request, expected);
        }
    }

    #[test]
    fn visible_types_by_caller_and_env() {
        let request = SpawnRequest {
            fork_mode: true,
            ..main_call(None)
        };
        let all = visible_types(&request);
        assert_eq!(
            &all[..6],
            &strings(&[
                "Explore",
                "Plan",
                "general-purpose",
                "claude",
                "statusline-setup",
                "claude-code-guide"
            ])[..]
        );
        assert!(all.contains(&"my-plugin:review:security".to_string()));
        assert_eq!(all.last().map(String::as_str), Some("fork"));
        let from_subagent = SpawnRequest {
            caller: Caller::Subagent,
            ..request
        };
        assert!(!visible_types(&from_subagent).contains(&"fork".to_string()));
        let no_builtins = SpawnRequest {
            env: BuiltinEnv {
                disable_explore_plan: false,
                sdk_disable_builtins: true,
            },
            session: SessionKind::Sdk,
            definitions: &[],
            fork_mode: false,
            ..request
        };
        assert!(visible_types(&no_builtins).is_empty());
        // SPAWN-10: a custom (non-plugin) definition of a built-in's name keeps it offered
        // when SPAWN-8 unregisters the built-in; a plugin's of that name does not, and an
        // unrelated custom definition keeps no built-in.
        let unregistered = SpawnRequest {
            env: BuiltinEnv {
                disable_explore_plan: true,
                sdk_disable_builtins: false,
            },
            fork_mode: false,
            ..request
        };
        let defs = [
            Definition {
                name: "Explore",
                scope: Scope::Project,
                plugin: None,
            },
            Definition {
                name: "Plan",
                scope: Scope::Plugin,
                plugin: Some("p"),
            },
        ];
        let types = visible_types(&SpawnRequest {
            definitions: &defs,
            ..unregistered
        });
        assert!(types.contains(&"Explore".to_string()), "{types:?}");
        assert!(!types.contains(&"Plan".to_string()), "{types:?}");
        assert!(types.contains(&"p:Plan".to_string()), "{types:?}");
        let worker = [Definition {
            name: "worker",
            scope: Scope::Project,
            plugin: None,
        }];
        let only_custom = visible_types(&SpawnRequest {
            definitions: &worker,
            ..no_builtins
        });
        assert_eq!(only_custom, strings(&["worker"]));
    }

    #[test]
    fn q44_cap_8_depth_and_cap() {
        assert_eq!(child_depth(&Caller::Teammate, 0), (1, "Q-44"));
        assert_eq!(child_depth(&Caller::Main, 0), (1, "DEPTH-1"));
        assert_eq!(child_depth(&Caller::Subagent, 2), (3, "DEPTH-1"));
        assert_eq!(child_depth(&Caller::Fork, 1), (2, "Q-10"));
        let teammate = Resolution::Teammate {
            name: "ana".into(),
            agent_type: "worker".into(),
            definition: Some(0),
            rule: "SPAWN-11",
        };
        let child = Resolution::Type {
            name: "worker".into(),
            definition: Some(0),
            rule: "SPAWN-3",
        };
        assert_eq!(cap_checked(&teammate, &Caller::Main), (false, "CAP-8"));
        assert_eq!(cap_checked(&child, &Caller::Teammate), (true, "Q-44"));
        assert_eq!(cap_checked(&child, &Caller::Main), (true, "CAP-5"));
        assert_eq!(
            cap_checked(&Resolution::Fork { rule: "FORK-3" }, &Caller::Main),
            (true, "CAP-10")
        );
        assert!(Caller::Teammate.is_teammate());
    }

    #[test]
    fn spawn_3_fork_3_the_requested_type_and_the_call_s_subagent_type() {
        // FORK-3 (1): a fork request passes `fork`, whatever type the call also names.
        assert_eq!(call_type(Some("worker"), true), Some(FORK_TYPE));
        assert_eq!(call_type(None, true), Some("fork"));
        assert_eq!(call_type(Some("worker"), false), Some("worker"));
        assert_eq!(call_type(None, false), None);
        // SPAWN-3: a type-less call asks for general-purpose; a named one for its name.
        assert_eq!(requested_type(None, false), "general-purpose");
        assert_eq!(requested_type(Some("Explore"), false), "Explore");
        assert_eq!(requested_type(Some("Explore"), true), "fork");
        assert_eq!(requested_type(Some("fork"), false), "fork");
        // The same name `resolve` launches for a type-less call from main.
        match resolve(&SpawnRequest::new(Caller::Main, gates())) {
            Resolution::Type { name, rule, .. } => {
                assert_eq!(
                    (name.as_str(), rule),
                    (requested_type(None, false), "SPAWN-3")
                )
            }
            other => panic!("a type-less call launches general-purpose, got {other:?}"),
        }
    }

    #[test]
    fn spawn_13_fork_3_run_in_background_is_absent_while_fork_mode_is_on() {
        for value in [None, Some(true), Some(false)] {
            assert_eq!(run_in_background_param(value, true), None, "{value:?}");
            assert_eq!(run_in_background_param(value, false), value, "{value:?}");
        }
    }

    #[test]
    fn descriptions_over_fifteen_thousand_tokens_are_over_budget() {
        assert_eq!(description_budget(60_003), None);
        assert_eq!(description_budget(60_004), Some((15_001, "SPAWN-15")));
    }
}
