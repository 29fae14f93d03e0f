//! The spawn plan: an Agent call's whole resolution up to the cap check, as one value.
//!
//! An Agent call is decided in the order Q-11 adopts: deny rules and the `--agent`
//! allowlist, the type (SPAWN-3…11, FORK-3/4/7) → the caller's own Agent tool (DEPTH-3/4/5)
//! → the child's tools (TOOLS, zero tools: TOOLS-12) → placement (FGBG-1) → the auto-mode
//! launch check (HANDBACK-7) → the cap (CAP-1…5, CAP-10). Everything before the cap depends
//! only on the call, the caller's situation and the session, never on the moment, so
//! [`plan`] answers it once as a [`SpawnPlan`] and the engine may keep that answer for every
//! call of the same kind. The cap (and every other check of the moment, [`cap::admit`]) is
//! the one question asked at the moment of each call: [`Launch::admit`].
//!
//! This module composes the other modules' decisions; it decides nothing of its own but
//! the person's fork, [`subtask`], which is not an Agent call (FORK-9, FORK-10, CAP-6).

use crate::cap::{self, Admission};
use crate::placement::{self, Placement, PlacementInput};
use crate::spawn::{self, Caller, Resolution, SpawnRequest};
use crate::tools::{self, Fields, ToolRequest};
use crate::{depth, handback, messages, prompt};
use crate::{Mode, PermissionMode, RejectReason, RuleId, SessionConfig};

/// What a plan reads of the definition a call resolved to (a built-in's or a custom one).
#[derive(Clone, Copy, Debug, Default)]
pub struct DefinitionFacts<'a> {
    /// `background: true` (FGBG-3).
    pub background: bool,
    /// `tools` / `disallowedTools`.
    pub fields: Fields<'a>,
    /// `memory` is set (TOOLS-17 adds Read, Write and Edit when auto memory is on).
    pub memory: bool,
    /// `permissionMode`, if declared (PERM-10…12).
    pub permission_mode: Option<PermissionMode>,
    /// A plugin definition (DEF-6: its `permissionMode` is ignored).
    pub plugin: bool,
}

/// Everything [`plan`] reads besides the resolved definition.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// The type question (SPAWN), including who calls.
    pub request: SpawnRequest<'a>,
    /// The caller's depth (main = 0; an in-process teammate counts as 0, Q-44).
    pub caller_depth: u32,
    /// DEPTH-5: the caller's tool set has `Agent` (the main conversation always does).
    pub caller_has_agent_tool: bool,
    /// The call's `run_in_background`, if passed.
    pub run_in_background: Option<bool>,
    /// the caller needs the result before going on.
    pub needs_result: bool,
    /// HANDBACK-7: the auto-mode classifier would block this delegation.
    pub classifier_blocks_launch: bool,
    /// The main conversation's tools (TOOLS-1).
    pub pool: &'a [String],
    /// MEM-2: auto memory is on.
    pub auto_memory: bool,
    /// The session after version gates and env vars.
    pub config: &'a SessionConfig,
}

/// What runs, as the plan names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launched {
    /// A subagent of this type (its canonical name).
    Subagent(String),
    /// A fork of the main conversation (FORK-3).
    Fork,
    /// An agent-team teammate reusing this type (SPAWN-11).
    Teammate(String),
}

/// The tool set a planned run gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanTools {
    /// FORK-5 / TOOLS-2: a fork runs with the main conversation's own tools.
    Main,
    /// The resolved set (TOOLS-1…20), and whether `Agent` errors when called (DEPTH-4).
    Resolved {
        /// The tools, in resolution order.
        tools: Vec<String>,
        /// `Agent` is present but errors (a fork at the limit).
        agent_errors: bool,
    },
}

/// A call that passes every check before the cap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// What runs.
    pub launched: Launched,
    /// The child's depth (DEPTH-1, Q-10, Q-44); a teammate is depth 0 (SPAWN-11).
    pub depth: u32,
    /// Foreground or background.
    pub mode: Mode,
    /// The rule that started it: the placement's (FGBG-1, FGBG-3, …) or SPAWN-11.
    pub rule: RuleId,
    /// CAP-5 / CAP-8 / CAP-10 / Q-44: whether the start is checked against the cap.
    pub cap_checked: (bool, RuleId),
    /// The child's effective permission mode (PERM-10/11/12).
    pub permission_mode: PermissionMode,
    /// The child's tools.
    pub tools: PlanTools,
}

impl Launch {
    /// CAP-5 / CAP-8, then [`cap::admit`] (CAP-1/3/4, Q-34, CAP-10 and every other check
    /// made at the moment of the call): may this planned start, of the type at `type_key`
    /// (as [`cap::Occupancy`] is given it), take a slot while `occupancy` runs? A start the
    /// plan does not check (a teammate, CAP-8) is always admitted.
    #[inline]
    pub fn admit(
        &self,
        type_key: Option<usize>,
        occupancy: &cap::Occupancy,
        config: &SessionConfig,
    ) -> Admission {
        let (checked, rule) = self.cap_checked;
        if !checked {
            return Ok(rule);
        }
        let call = cap::Call {
            fork: matches!(self.launched, Launched::Fork),
            type_key,
        };
        cap::admit(call, occupancy, config)
    }
}

/// An Agent call's plan: it launches (subject to the cap), or it is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpawnPlan {
    /// Passes every check before the cap.
    Launch(Launch),
    /// Refused before the cap.
    Reject {
        /// The trace reason.
        reason: RejectReason,
        /// The rule that refused.
        rule: RuleId,
        /// The message the Agent tool returns.
        message: String,
    },
}

fn reject(reason: RejectReason, rule: RuleId, message: impl Into<String>) -> SpawnPlan {
    SpawnPlan::Reject {
        reason,
        rule,
        message: message.into(),
    }
}

/// Q-11's checks up to the cap for the call in `input`. `definition` answers for a
/// canonical type name what the plan reads of its definition; `None` means no such type is
/// loaded (SPAWN-3).
pub fn plan<'d>(
    input: &PlanInput<'_>,
    definition: &dyn Fn(&str) -> Option<DefinitionFacts<'d>>,
) -> SpawnPlan {
    let config = input.config;
    let gates = config.gates;
    let caller = input.request.caller;
    let unknown = |name: &str| {
        reject(
            RejectReason::UnknownType,
            "SPAWN-3",
            format!("Agent type '{name}' not found"),
        )
    };
    // SPAWN-3…11, FORK-3/4/7, Q-29, Q-32, SPAWN-5: what the call resolves to.
    let resolution = spawn::resolve(&input.request);
    let cap_checked = spawn::cap_checked(&resolution, &caller);
    let (launched, facts) = match resolution {
        Resolution::Type { name, .. } => match definition(&name) {
            Some(facts) => (Launched::Subagent(name), facts),
            None => return unknown(&name),
        },
        Resolution::Fork { .. } => (Launched::Fork, DefinitionFacts::default()),
        Resolution::Teammate { agent_type, .. } => match definition(&agent_type) {
            Some(facts) => return teammate(input, agent_type, facts, cap_checked),
            None => return unknown(&agent_type),
        },
        Resolution::Reject {
            reason,
            rule,
            message,
        } => return reject(reason, rule, message),
    };
    let fork = launched == Launched::Fork;
    // DEPTH-3/4/5: the caller's own Agent tool.
    let caller_is_fork = caller == Caller::Fork;
    let (state, depth_rule) =
        depth::agent_tool(input.caller_depth, config.depth_limit, caller_is_fork);
    match state {
        depth::AgentTool::Removed => {
            return reject(
                RejectReason::DepthLimit,
                depth_rule,
                messages::NO_AGENT_TOOL,
            )
        }
        depth::AgentTool::Errors => {
            return reject(RejectReason::DepthLimit, depth_rule, messages::FORK_DEPTH)
        }
        depth::AgentTool::Available => {}
    }
    if !input.caller_has_agent_tool {
        return reject(
            RejectReason::NoAgentTool,
            "DEPTH-5",
            messages::NO_AGENT_TOOL_DEFINED,
        );
    }
    // FGBG-1: where it would run.
    let placement = placement::place(
        PlacementInput {
            by_teammate: caller.is_teammate(),
            definition_background: facts.background,
            run_in_background: input.run_in_background,
            needs_result: input.needs_result,
        },
        config,
    );
    let (depth, _) = spawn::child_depth(&caller, input.caller_depth);
    // PERM-10/11/12, D-9, DEF-6: the child's mode (a fork runs in main's).
    let permission_mode = if fork {
        config.permission_mode
    } else {
        prompt::effective_mode(
            config.permission_mode,
            facts.permission_mode,
            facts.plugin,
            config.auto_mode_available,
            &gates,
        )
        .0
    };
    // TOOLS: the child's tool set for that placement (a refused placement is resolved as
    // foreground, so that zero tools is reported first, as Q-11 orders it).
    let mode_for_tools = match placement {
        Placement::Run(mode, _) => mode,
        Placement::Reject(..) => Mode::Foreground,
    };
    let tools = if fork {
        PlanTools::Main
    } else {
        let request = ToolRequest {
            fields: facts.fields,
            handback: tools::handback_attached(permission_mode, false, &gates),
            // TOOLS-17 / MEM-2: persistent memory adds Read, Write and Edit.
            memory: facts.memory && input.auto_memory,
            ..ToolRequest::new(
                input.pool,
                tools::Placement {
                    depth,
                    depth_limit: config.depth_limit,
                    mode: mode_for_tools,
                    fork: false,
                    teammate: false,
                    first_ran_foreground: false,
                    permission_mode,
                },
                gates,
            )
        };
        match tools::resolve_with(&request) {
            Ok(resolved) => PlanTools::Resolved {
                tools: resolved.tools,
                agent_errors: resolved.agent_errors,
            },
            Err(zero) => {
                let message = format!(
                    "{}: no entry in tools resolves to a usable tool ({})",
                    messages::ZERO_TOOLS,
                    zero.unresolved.join(", ")
                );
                return reject(RejectReason::ZeroTools, "TOOLS-12", message);
            }
        }
    };
    let (mode, rule) = match placement {
        Placement::Run(mode, rule) => (mode, rule),
        Placement::Reject(reason, rule, message) => return reject(reason, rule, message),
    };
    // HANDBACK-7: in auto mode the classifier reviews the delegation before launch; it is
    // the only checkpoint that stops a subagent.
    if let handback::LaunchVerdict::Blocked { message, rule, .. } = handback::launch_check(
        input.classifier_blocks_launch,
        permission_mode,
        fork,
        &gates,
    ) {
        return reject(RejectReason::ClassifierBlocked, rule, message.to_string());
    }
    SpawnPlan::Launch(Launch {
        launched,
        depth,
        mode,
        rule,
        cap_checked,
        permission_mode,
        tools,
    })
}

/// SPAWN-11 / CAP-8 / TOOLS-9: an agent-team teammate follows its own limits (no cap
/// check), runs in the background at depth 0, and keeps the task and cron tools.
fn teammate(
    input: &PlanInput<'_>,
    agent_type: String,
    facts: DefinitionFacts<'_>,
    cap_checked: (bool, RuleId),
) -> SpawnPlan {
    let config = input.config;
    let permission_mode = prompt::effective_mode(
        config.permission_mode,
        facts.permission_mode,
        facts.plugin,
        config.auto_mode_available,
        &config.gates,
    )
    .0;
    let request = ToolRequest {
        fields: facts.fields,
        ..ToolRequest::new(
            input.pool,
            tools::Placement {
                depth: 0,
                depth_limit: config.depth_limit,
                mode: Mode::Background,
                fork: false,
                teammate: true,
                first_ran_foreground: false,
                permission_mode,
            },
            config.gates,
        )
    };
    let tools = match tools::resolve_with(&request) {
        Ok(resolved) => resolved.tools,
        Err(_) => Vec::new(),
    };
    SpawnPlan::Launch(Launch {
        launched: Launched::Teammate(agent_type),
        depth: 0,
        mode: Mode::Background,
        rule: "SPAWN-11",
        cap_checked,
        permission_mode,
        tools: PlanTools::Resolved {
            tools,
            agent_errors: false,
        },
    })
}

/// The person's fork (`/subtask <task>`, or `/fork` in v2.1.161–v2.1.211): not an Agent
/// call, so no plan and no cap check (FORK-10, CAP-6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subtask {
    /// Its name: the one given, else the task's first three words, lowercased and joined by
    /// `-` (FORK-9: "named from the first words of the task"), `subtask` for an empty task.
    pub name: String,
    /// A fork of main: depth 1.
    pub depth: u32,
    /// It runs in the background (FORK-9).
    pub mode: Mode,
    /// Main's own tools (Q-39: the exact parent pool, no `SubagentHandback`).
    pub tools: PlanTools,
    /// The slot is taken without a cap check (CAP-6).
    pub unchecked: cap::Unchecked,
    /// The rule its start is traced under: CAP-6 for `/subtask`, FORK-9 for `/fork`.
    pub rule: RuleId,
}

impl Subtask {
    /// The fork's start as a planned launch, for the engine's one start path: a fork
    /// (FORK-9) at [`Subtask::depth`], in [`Subtask::mode`], traced under
    /// [`Subtask::rule`], with [`Subtask::tools`], not checked against the cap
    /// ([`Subtask::unchecked`], CAP-6), in main's permission mode (a fork runs in the mode
    /// of the conversation it forks, as [`plan`] gives an Agent-call fork).
    pub fn launch(&self, config: &SessionConfig) -> Launch {
        Launch {
            launched: Launched::Fork,
            depth: self.depth,
            mode: self.mode,
            rule: self.rule,
            cap_checked: (false, self.unchecked.rule()),
            permission_mode: config.permission_mode,
            tools: self.tools.clone(),
        }
    }
}

/// FORK-9: the fork the person's `/subtask <task>` starts, named `name` if given; `None`
/// when the version has no user fork command (before v2.1.161).
pub fn subtask(task: &str, name: Option<&str>, gates: &crate::Gates) -> Option<Subtask> {
    let command = gates.user_fork_command?;
    let name = match name {
        Some(name) => name.to_string(),
        None => {
            let words: Vec<String> = task
                .split_whitespace()
                .take(3)
                .map(str::to_lowercase)
                .collect();
            if words.is_empty() {
                "subtask".to_string()
            } else {
                words.join("-")
            }
        }
    };
    Some(Subtask {
        name,
        depth: 1,
        mode: Mode::Background,
        tools: PlanTools::Main,
        unchecked: cap::Unchecked::Subtask,
        rule: if command == "/subtask" {
            cap::Unchecked::Subtask.rule()
        } else {
            "FORK-9"
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SessionKind, Version};

    fn config(cap: &str) -> SessionConfig {
        let env = [(
            "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS".to_string(),
            cap.to_string(),
        )]
        .into_iter()
        .collect();
        SessionConfig::resolve(
            Version::NEWEST,
            SessionKind::Headless,
            &env,
            &cap::Settings::default(),
            false,
            PermissionMode::Default,
        )
        .0
    }

    fn input<'a>(
        config: &'a SessionConfig,
        pool: &'a [String],
        request: SpawnRequest<'a>,
    ) -> PlanInput<'a> {
        PlanInput {
            request: SpawnRequest {
                session: config.kind,
                fork_mode: config.fork_mode,
                ..request
            },
            caller_depth: 0,
            caller_has_agent_tool: true,
            run_in_background: None,
            needs_result: false,
            classifier_blocks_launch: false,
            pool,
            auto_memory: false,
            config,
        }
    }

    fn known(name: &str) -> Option<DefinitionFacts<'static>> {
        (name == "general-purpose").then(DefinitionFacts::default)
    }

    #[test]
    fn subtask_names_its_fork_from_the_task_under_the_version_s_command() {
        let gates = |patch| crate::Gates::for_version(crate::Version::v2_1(patch));
        let fork = subtask("Fix the Flaky login test", None, &gates(212)).expect("v2.1.212");
        assert_eq!(fork.name, "fix-the-flaky");
        assert_eq!(
            (fork.depth, fork.mode, fork.rule),
            (1, Mode::Background, "CAP-6")
        );
        assert_eq!(fork.tools, PlanTools::Main);
        assert_eq!(
            subtask("  ", None, &gates(212)).map(|f| f.name),
            Some("subtask".into())
        );
        assert_eq!(
            subtask("x", Some("mine"), &gates(212)).map(|f| f.name),
            Some("mine".into())
        );
        assert_eq!(
            subtask("x", None, &gates(200)).map(|f| f.rule),
            Some("FORK-9")
        );
        assert_eq!(subtask("x", None, &gates(160)), None);
    }

    #[test]
    fn a_subtask_launches_like_a_fork_of_main_but_unchecked_at_the_cap() {
        let config = config("1");
        let fork = subtask("draft tests", None, &config.gates).expect("the newest version");
        let launch = fork.launch(&config);
        // FORK-9 / Q-10 / Q-39: a fork of main, depth 1, background, main's tools and mode.
        assert_eq!(
            (&launch.launched, launch.depth, launch.mode, launch.rule),
            (&Launched::Fork, 1, Mode::Background, "CAP-6")
        );
        assert_eq!(launch.tools, PlanTools::Main);
        assert_eq!(launch.permission_mode, config.permission_mode);
        // CAP-6 / FORK-10: never blocked by the cap, even past it.
        assert_eq!(launch.cap_checked, (false, "CAP-6"));
        assert_eq!(launch.admit(None, &cap::occupied(5), &config), Ok("CAP-6"));
    }

    #[test]
    fn a_plain_call_from_main_launches_a_checked_subagent() {
        let config = config("2");
        let pool = tools::default_main_tools();
        let request = SpawnRequest::new(Caller::Main, config.gates);
        let SpawnPlan::Launch(launch) = plan(&input(&config, &pool, request), &known) else {
            panic!("launches");
        };
        assert_eq!(
            launch.launched,
            Launched::Subagent("general-purpose".into())
        );
        assert_eq!((launch.depth, launch.cap_checked), (1, (true, "CAP-5")));
        let general_purpose = Some(0);
        assert!(launch
            .admit(general_purpose, &cap::occupied(1), &config)
            .is_ok());
        assert_eq!(
            launch.admit(general_purpose, &cap::occupied(2), &config),
            Err((RejectReason::ConcurrentLimit, "CAP-1"))
        );
    }

    #[test]
    fn a_fork_at_the_cap_is_refused_by_cap_10() {
        let config = config("1");
        let pool = tools::default_main_tools();
        let request = SpawnRequest {
            fork: true,
            fork_mode: true,
            ..SpawnRequest::new(Caller::Main, config.gates)
        };
        let mut planned = input(&config, &pool, request);
        planned.request.fork_mode = true;
        let SpawnPlan::Launch(launch) = plan(&planned, &known) else {
            panic!("a fork launches when fork mode is on");
        };
        assert_eq!(launch.tools, PlanTools::Main);
        assert_eq!(
            launch.admit(None, &cap::occupied(1), &config),
            Err((RejectReason::ConcurrentLimit, "CAP-10"))
        );
    }

    #[test]
    fn a_type_nobody_loaded_is_spawn_3() {
        let config = config("2");
        let pool = tools::default_main_tools();
        let request = SpawnRequest::new(Caller::Main, config.gates);
        let none = |_: &str| None;
        assert!(matches!(
            plan(&input(&config, &pool, request), &none),
            SpawnPlan::Reject {
                reason: RejectReason::UnknownType,
                rule: "SPAWN-3",
                ..
            }
        ));
    }

    fn launched_tools(spawn_plan: SpawnPlan) -> Vec<String> {
        match spawn_plan {
            SpawnPlan::Launch(Launch {
                tools: PlanTools::Resolved { tools, .. },
                ..
            }) => tools,
            other => panic!("a launch with resolved tools, got {other:?}"),
        }
    }

    /// `general-purpose` with a `tools` field and `memory` set or not.
    fn general_purpose<'d>(
        tools: &'d [String],
        memory: bool,
    ) -> impl Fn(&str) -> Option<DefinitionFacts<'d>> + 'd {
        move |name: &str| {
            (name == "general-purpose").then_some(DefinitionFacts {
                fields: Fields {
                    tools: Some(tools),
                    disallowed: &[],
                },
                memory,
                ..DefinitionFacts::default()
            })
        }
    }

    #[test]
    fn depth_3_and_4_a_fork_at_the_limit_errors_where_a_subagent_lost_the_tool() {
        let config = config("20");
        let limit = config.depth_limit;
        let pool = tools::default_main_tools();
        for (caller, rule, message) in [
            (Caller::Subagent, "DEPTH-3", messages::NO_AGENT_TOOL),
            (Caller::Fork, "DEPTH-4", messages::FORK_DEPTH),
        ] {
            let mut planned = input(&config, &pool, SpawnRequest::new(caller, config.gates));
            planned.caller_depth = limit;
            assert_eq!(
                plan(&planned, &known),
                SpawnPlan::Reject {
                    reason: RejectReason::DepthLimit,
                    rule,
                    message: message.to_string(),
                },
                "{caller:?} at depth {limit}"
            );
        }
    }

    #[test]
    fn the_child_s_tools_read_its_fields_memory_and_auto_mode() {
        let pool = tools::default_main_tools();
        let bash = ["Bash".to_string()];
        // TOOLS-4: the definition's `tools` field is the child's allowlist.
        let config = config("20");
        let request = SpawnRequest::new(Caller::Main, config.gates);
        let tools = launched_tools(plan(
            &input(&config, &pool, request),
            &general_purpose(&bash, false),
        ));
        assert_eq!(tools, ["Bash"]);
        // TOOLS-17 / MEM-2: `memory` adds Read, Write and Edit only while auto memory is on.
        let mut planned = input(&config, &pool, request);
        let tools = launched_tools(plan(&planned, &general_purpose(&bash, true)));
        assert_eq!(tools, ["Bash"], "auto memory off");
        planned.auto_memory = true;
        let tools = launched_tools(plan(&planned, &general_purpose(&bash, true)));
        for tool in ["Bash", "Read", "Write", "Edit"] {
            assert!(tools.iter().any(|t| t == tool), "{tool} in {tools:?}");
        }
        // HANDBACK-1: a child in auto mode gets SubagentHandback; in default mode it does not.
        let has_handback = |mode| {
            let (config, _) = SessionConfig::resolve(
                Version::NEWEST,
                SessionKind::Headless,
                &Default::default(),
                &cap::Settings::default(),
                false,
                mode,
            );
            let request = SpawnRequest::new(Caller::Main, config.gates);
            launched_tools(plan(&input(&config, &pool, request), &known))
                .iter()
                .any(|tool| tool == "SubagentHandback")
        };
        assert!(has_handback(PermissionMode::Auto));
        assert!(!has_handback(PermissionMode::Default));
    }

    #[test]
    fn spawn_11_a_teammate_keeps_its_definition_s_tools_field() {
        let (config, _) = SessionConfig::resolve(
            Version::NEWEST,
            SessionKind::Interactive,
            &Default::default(),
            &cap::Settings::default(),
            true,
            PermissionMode::Default,
        );
        let pool = tools::default_main_tools();
        let read = ["Read".to_string()];
        let request = SpawnRequest {
            name: Some("t1"),
            agent_teams: true,
            ..SpawnRequest::new(Caller::Main, config.gates)
        };
        let definition = general_purpose(&read, false);
        let spawn_plan = plan(&input(&config, &pool, request), &definition);
        let SpawnPlan::Launch(launch) = &spawn_plan else {
            panic!("a teammate launches: {spawn_plan:?}");
        };
        assert_eq!(
            launch.launched,
            Launched::Teammate("general-purpose".into())
        );
        let tools = launched_tools(spawn_plan);
        assert!(tools.iter().any(|tool| tool == "Read"), "{tools:?}");
        assert!(!tools.iter().any(|tool| tool == "Bash"), "{tools:?}");
    }

    #[test]
    fn a_caller_without_the_agent_tool_is_depth_5() {
        let config = config("2");
        let pool = tools::default_main_tools();
        let request = SpawnRequest::new(Caller::Subagent, config.gates);
        let mut planned = input(&config, &pool, request);
        planned.caller_depth = 1;
        planned.caller_has_agent_tool = false;
        assert!(matches!(
            plan(&planned, &known),
            SpawnPlan::Reject {
                reason: RejectReason::NoAgentTool,
                rule: "DEPTH-5",
                ..
            }
        ));
    }
}
