//! Valid scenarios: a rich file using every key of the contract, and agent files loaded
//! (or skipped) the documented way.

use std::path::{Path, PathBuf};

use subsim_engine::dist::Dist;
use subsim_engine::expect::{Compare, Expectation};
use subsim_engine::spec::{
    ActionKind, Answer, ApiError, Arrivals, ClassifierSpec, FailSpec, HookSpec, LoadUntil,
    McpServerRef, Retry, Scope, Step, WaitTarget,
};
use subsim_engine::SimTime;
use subsim_rules::handback::ReviewOutcome;
use subsim_rules::{PermissionMode, SessionKind, Version};
use subsim_scenario::{load_scenario, parse_scenario, Loaded};

fn valid_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/valid")
}

fn load_rich() -> Loaded {
    match load_scenario(&valid_dir().join("rich.yaml")) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("rich.yaml should be valid:\n{problems}"),
    }
}

#[test]
fn rich_session() {
    let loaded = load_rich();
    let spec = &loaded.spec;
    assert_eq!(spec.name, "Fan-out of 25 researchers hits the cap");
    assert!(spec
        .description
        .as_deref()
        .is_some_and(|text| text.starts_with("Main fans out")));
    let session = &spec.session;
    assert_eq!(session.kind, SessionKind::Interactive);
    assert_eq!(session.version, Version::v2_1(250));
    assert_eq!(session.seed, 42);
    assert_eq!(session.model, "sonnet");
    assert_eq!(
        session
            .env
            .get("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS")
            .map(String::as_str),
        Some("20")
    );
    assert_eq!(
        session
            .env
            .get("CLAUDE_CODE_FORK_SUBAGENT")
            .map(String::as_str),
        Some("0")
    );
    assert_eq!(
        session
            .env
            .get("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS")
            .map(String::as_str),
        Some("false")
    );
    assert_eq!(
        session
            .env
            .get("CLAUDE_CODE_SUBAGENT_MODEL")
            .map(String::as_str),
        Some("haiku")
    );
    assert_eq!(
        session.permissions.allow,
        vec!["Agent(Explore)", "Bash(git status)"]
    );
    assert_eq!(session.permissions.deny, vec!["Bash(git push *)"]);
    assert!(!session.agent_teams && session.admission.ultracode);
    assert_eq!(session.permission_mode, PermissionMode::AcceptEdits);
    assert_eq!(session.tools.as_ref().map(Vec::len), Some(6));
    assert_eq!(
        session.mcp.get("github"),
        Some(&vec!["create_issue".to_string(), "list_prs".to_string()])
    );
    assert_eq!(session.agent.as_deref(), Some("lead"));
    assert_eq!(session.limits.max_events, 100_000);
    assert_eq!(session.limits.max_time, SimTime::from_secs(7_200));
    assert_eq!(session.limits.max_agents, 500);

    assert_eq!(loaded.agent_dirs.len(), 2);
    assert_eq!(loaded.agent_dirs[0].scope, Scope::Project);
    assert_eq!(
        loaded.agent_dirs[0].path,
        valid_dir().join(".claude/agents")
    );
    assert_eq!(loaded.agent_dirs[1].plugin.as_deref(), Some("review"));
    assert!(
        loaded.agent_dirs[1].location.ends_with("rich.yaml:27:7"),
        "{}",
        loaded.agent_dirs[1].location
    );
    assert!(
        loaded.warnings.is_empty(),
        "unexpected warnings: {:?}",
        loaded.warnings
    );
}

#[test]
fn rich_agents() {
    let loaded = load_rich();
    let agents = &loaded.spec.agents;
    let researcher = &agents["researcher"];
    assert_eq!(researcher.description, "Finds things");
    assert_eq!(
        researcher.tools,
        Some(vec!["Read".into(), "Grep".into(), "Glob".into()])
    );
    assert_eq!(researcher.disallowed_tools, vec!["Bash".to_string()]);
    assert_eq!(researcher.permission_mode, Some(PermissionMode::DontAsk));
    assert_eq!(researcher.max_turns, Some(5));
    assert!(researcher.background && researcher.omit_claude_md);
    assert_eq!(researcher.isolation.as_deref(), Some("worktree"));
    assert_eq!(researcher.memory.as_deref(), Some("project"));
    assert_eq!(researcher.skills, vec!["search".to_string()]);
    assert_eq!(researcher.color.as_deref(), Some("cyan"));
    assert_eq!(researcher.scope, Scope::User);
    assert_eq!(
        researcher.behavior.as_ref().map(|steps| steps.len()),
        Some(3)
    );

    // The file's frontmatter names the definition.
    assert!(!agents.contains_key("reviewer"));
    let reviewer = &agents["code-reviewer"];
    assert_eq!(reviewer.description, "Reviews diffs for mistakes");
    assert_eq!(reviewer.tools, Some(vec!["Read".into(), "Grep".into()]));
    assert_eq!(reviewer.max_turns, Some(8));
    assert_eq!(reviewer.behavior.as_ref().map(|steps| steps.len()), Some(1));
    assert_eq!(
        loaded.agent_files,
        vec![(
            "reviewer".to_string(),
            valid_dir().join("agents/reviewer.md")
        )]
    );
}

#[test]
fn rich_main_user_load() {
    let loaded = load_rich();
    let main = &loaded.spec.main;
    assert_eq!(main.len(), 18);
    assert!(matches!(main[0], Step::Work(Dist::Const(2_000_000))));
    let Step::Spawn(spawn) = &main[3] else {
        panic!("{:?}", main[3])
    };
    assert_eq!(
        (spawn.count, spawn.background, spawn.name.as_deref()),
        (25, Some(true), Some("r"))
    );
    let Step::Spawn(fork) = &main[6] else {
        panic!("{:?}", main[6])
    };
    assert!(fork.fork && fork.needs_result && fork.count == 2);
    assert!(matches!(&main[10], Step::WaitFor(WaitTarget::Children)));
    assert!(matches!(&main[14], Step::AskProgress(name) if name == "r-4"));
    assert!(matches!(&main[15], Step::Repeat { times: 3, steps } if steps.len() == 2));
    let Step::Spawn(failing) = &main[16] else {
        panic!("{:?}", main[16])
    };
    let behavior = failing.behavior.as_ref().expect("a behavior");
    assert!(
        matches!(&behavior[0], Step::Fail(fail) if fail.api_error == ApiError::Overloaded && fail.after_output)
    );

    let user = &loaded.spec.user;
    assert_eq!(user.answer, Answer::ApproveSession);
    assert_eq!(user.think, Dist::Exp { mean: 3e6 });
    assert_eq!(user.actions.len(), 6);
    assert!(matches!(&user.actions[0].kind, ActionKind::Stop(name) if name == "r-3"));
    assert!(
        matches!(&user.actions[1].kind, ActionKind::Subtask { task, name: None, behavior: Some(_) } if task == "draft tests")
    );
    assert!(matches!(
        &user.actions[2].kind,
        ActionKind::Subtask { behavior: None, .. }
    ));
    assert!(matches!(user.actions[3].kind, ActionKind::CtrlB));
    assert!(matches!(user.actions[4].kind, ActionKind::Clear));
    assert!(
        matches!(&user.actions[5].kind, ActionKind::TypeTo { to, message, behavior: Some(_) } if to == "r-3" && message == "go on")
    );
    assert_eq!(user.actions[5].at, SimTime::from_secs(25));

    let load = &loaded.spec.load.as_ref().expect("load block").streams[0];
    assert_eq!(load.arrivals, Arrivals::Poisson(20.0));
    assert_eq!(load.until, LoadUntil::Count(100_000));
    assert_eq!(load.spawn.agent.as_deref(), Some("researcher"));
    assert_eq!(load.retry, Retry::Backoff(Dist::Exp { mean: 1e6 }));
}

#[test]
fn rich_expect() {
    let loaded = load_rich();
    assert_eq!(loaded.expect.len(), 11);
    assert!(loaded
        .expect
        .iter()
        .all(|located| located.location.is_some()));
    assert!(
        loaded.expect[0]
            .location
            .as_deref()
            .is_some_and(|at| at.ends_with("rich.yaml:100:5")),
        "{:?}",
        loaded.expect[0].location
    );
    assert_eq!(
        loaded.expect[5].expectation,
        Expectation::MaxRunning(Compare::AtMost(20))
    );
    assert_eq!(
        loaded.expect[6].expectation,
        Expectation::RunningAt {
            at: SimTime::from_secs(10),
            running: 20
        }
    );
}

/// Parses `yaml` against the agent files in `tests/valid/agents`.
fn with_agent_files(yaml: &str) -> Loaded {
    match parse_scenario(yaml, "agents.yaml", &valid_dir()) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("should be valid:\n{problems}"),
    }
}

#[test]
fn a_file_without_frontmatter_is_skipped_with_the_documented_reason() {
    let loaded = with_agent_files(
        "name: x\nagents:\n  ghost: {file: agents/notes.md}\nmain: [{spawn: {agent: ghost}}]\n",
    );
    assert!(loaded.spec.agents.is_empty());
    let messages: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert!(
        messages[0].contains("is skipped") && messages[0].contains("DEF-10"),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|message| message.contains("unknown agent type `ghost`")),
        "{messages:?}"
    );
}

#[test]
fn a_plugin_file_without_frontmatter_loads_under_its_file_name() {
    let loaded =
        with_agent_files("name: x\nagents:\n  ghost: {file: agents/notes.md, scope: plugin}\n");
    assert!(
        loaded.spec.agents.contains_key("notes"),
        "{:?}",
        loaded.spec.agents.keys()
    );
    assert_eq!(loaded.spec.agents["notes"].scope, Scope::Plugin);
}

#[test]
fn unrecognised_frontmatter_fields_are_ignored_with_a_hint() {
    let loaded = with_agent_files("name: x\nagents:\n  typo: {file: agents/typo.md}\n");
    assert!(loaded.spec.agents.contains_key("typo"));
    let warning = loaded
        .warnings
        .first()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(warning.contains("in `agents/typo.md` at 4:1"), "{warning}");
    assert!(warning.contains("did you mean `background`?"), "{warning}");
    // The warning points at the `file:` value in the scenario.
    assert_eq!(
        (loaded.warnings[0].line, loaded.warnings[0].column),
        (3, 16)
    );
}

#[test]
fn warnings_do_not_stop_a_run() {
    let loaded = with_agent_files(
        "name: x\nsession:\n  version: \"2.1.999\"\n  env: {CLAUDE_CODE_MAX_CONCURENT_SUBAGENTS: 3}\nmain: [{spawn: {agent: Explor}}]\n",
    );
    let messages: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].contains("newer than the newest"));
    assert!(messages[1].contains("did you mean `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`?"));
    assert!(messages[2].contains("unknown agent type `Explor`, did you mean `Explore`?"));
    assert_eq!(
        loaded
            .spec
            .session
            .env
            .get("CLAUDE_CODE_MAX_CONCURENT_SUBAGENTS")
            .map(String::as_str),
        Some("3")
    );
}

#[test]
fn a_missing_scenario_file_is_reported_without_a_line_and_column() {
    // It was `no-such-file.yaml:1:1: cannot read …`, a position in text that is not there.
    let problems = load_scenario(&valid_dir().join("no-such-file.yaml")).expect_err("missing file");
    let shown = problems.problems[0].to_string();
    assert!(
        shown.starts_with(&format!(
            "{}: cannot read the scenario file",
            valid_dir().join("no-such-file.yaml").display()
        )),
        "{shown}"
    );
}

#[test]
fn an_unreadable_scenario_file_is_a_diagnostic() {
    let problems = load_scenario(&valid_dir().join("no-such-file.yaml")).expect_err("missing file");
    assert_eq!(problems.problems.len(), 1);
    assert!(problems.problems[0]
        .message
        .contains("cannot read the scenario file"));
    assert_eq!(
        (problems.problems[0].line, problems.problems[0].column),
        (0, 0)
    );
}

#[test]
fn rich_agent_dirs_load() {
    let loaded = load_rich();
    let planner = &loaded.spec.agents["planner"];
    assert_eq!(planner.scope, Scope::Project);
    assert_eq!(planner.source.as_deref(), Some(".claude/agents/planner.md"));
    assert_eq!(
        planner.prompt.as_deref(),
        Some("You plan. You never edit files.")
    );
    let security = &loaded.spec.agents["review:security"];
    assert_eq!(security.scope, Scope::Plugin);
    assert_eq!(security.plugin.as_deref(), Some("review"));
    let outcomes: Vec<(&str, &str)> = loaded
        .spec
        .definitions
        .iter()
        .map(|note| (note.outcome.as_str(), note.path.as_str()))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("loaded", ".claude/agents/planner.md"),
            ("loaded", "agents/reviewer.md"),
            ("loaded", "plugins/review/agents/security.md"),
        ]
    );
}

fn load_extended() -> Loaded {
    // Its `agent_dirs` reach `../fixtures`, outside its folder: allowed as `--allow-path`.
    let options = subsim_scenario::Options {
        allowed: vec![valid_dir().join("../fixtures")],
        ..subsim_scenario::Options::default()
    };
    match subsim_scenario::load_scenario_under(&valid_dir().join("extended.yaml"), &[], &options) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("extended.yaml should be valid:\n{problems}"),
    }
}

#[test]
fn agent_dirs_outside_the_scenario_folder_need_allow_path() {
    let problems = match load_scenario(&valid_dir().join("extended.yaml")) {
        Err(problems) => problems.to_string(),
        Ok(_) => panic!("extended.yaml reads ../fixtures, outside its folder"),
    };
    assert!(
        problems.contains("is outside the scenario's folder") && problems.contains("--allow-path"),
        "{problems}"
    );
}

#[test]
fn extended_session_keys() {
    let loaded = load_extended();
    let session = &loaded.spec.session;
    assert_eq!(
        session.hooks,
        vec![
            HookSpec {
                event: "SubagentStart".into(),
                matcher: Some("db-agent".into()),
                command: "./log-start.sh".into(),
                exit_code: None,
            },
            HookSpec {
                event: "SubagentStop".into(),
                matcher: None,
                command: "./log-stop.sh".into(),
                exit_code: None,
            },
        ]
    );
    assert_eq!(session.fallback_models, vec!["sonnet", "haiku"]);
    assert_eq!(session.continuations, 2);
    assert_eq!(
        session.available_models,
        Some(vec!["opus".to_string(), "sonnet".to_string()])
    );
    assert_eq!(session.provider, "bedrock");
    assert_eq!(session.effort.as_deref(), Some("xhigh"));
    assert_eq!(session.trusted_dirs, vec![".", "repo"]);
    assert!(!session.auto_memory);
    assert!(session.cross_session_messaging && session.screen_reader);
    assert_eq!(
        session.classifier,
        ClassifierSpec {
            launch_blocks: true,
            review: ReviewOutcome::Flagged
        }
    );
    // The agent_dirs entry keys beyond the contract.
    assert!(loaded.agent_dirs[1].add_dir && !loaded.agent_dirs[0].add_dir);
    assert!(loaded.agent_dirs[2].passed_as_path);
    assert_eq!(loaded.spec.agents["helper"].scope, Scope::Project);
    assert_eq!(loaded.spec.agents["deployer"].scope, Scope::Cli);
}

#[test]
fn the_defaults_of_the_extension_keys() {
    let loaded = with_agent_files("name: x\n");
    let session = &loaded.spec.session;
    let defaults = subsim_engine::spec::SessionSpec::default();
    assert_eq!(session.hooks, defaults.hooks);
    assert_eq!(session.continuations, 3);
    assert_eq!(session.available_models, None);
    assert_eq!(session.provider, "anthropic");
    assert_eq!(session.effort, None);
    assert!(session.auto_memory && !session.cross_session_messaging && !session.screen_reader);
    assert_eq!(session.classifier, ClassifierSpec::default());
    assert!(loaded.spec.definitions.is_empty());
}

#[test]
fn extended_agent_and_step_keys() {
    let loaded = load_extended();
    let db = &loaded.spec.agents["db-agent"];
    assert_eq!(
        db.mcp_servers,
        vec![
            McpServerRef {
                name: "github".into(),
                inline: false,
                tools: vec![],
            },
            McpServerRef {
                name: "db".into(),
                inline: true,
                tools: vec!["query".into(), "schema".into()],
            },
        ]
    );
    assert_eq!(db.hooks.len(), 2);
    assert_eq!(db.hooks[1].event, "Stop");
    assert_eq!(db.initial_prompt.as_deref(), Some("Check the schema first"));
    assert_eq!(
        db.prompt.as_deref(),
        Some("You query databases. Read only.")
    );
    assert_eq!(db.source, None);

    let main = &loaded.spec.main;
    let Step::Spawn(spawn) = &main[0] else {
        panic!("{:?}", main[0])
    };
    assert_eq!(spawn.prompt.as_deref(), Some("Find slow queries"));
    // A verdict the spawn leaves out is the session's.
    assert_eq!(
        spawn.classifier,
        Some(ClassifierSpec {
            launch_blocks: true,
            review: ReviewOutcome::Refused
        })
    );
    let Step::Spawn(fork) = &main[1] else {
        panic!("{:?}", main[1])
    };
    assert!(fork.fork);
    assert_eq!(
        fork.classifier,
        Some(ClassifierSpec {
            launch_blocks: false,
            review: ReviewOutcome::Unavailable
        })
    );
    let Step::Spawn(failing) = &main[2] else {
        panic!("{:?}", main[2])
    };
    let fails: Vec<FailSpec> = failing
        .behavior
        .as_ref()
        .expect("a behavior")
        .iter()
        .map(|step| match step {
            Step::Fail(fail) => *fail,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(fails[0].api_error, ApiError::ModelUnavailable);
    assert!(!fails[0].mid_stream && fails[0].recovers_after.is_none());
    // ERR-1: a mid-stream cut has produced text unless `after_output` says otherwise.
    assert!(fails[1].mid_stream && fails[1].after_output && !fails[1].tool_calls);
    assert_eq!(fails[1].recovers_after, Some(2));
    assert!(fails[2].mid_stream && fails[2].tool_calls && !fails[2].after_output);

    assert!(
        matches!(&loaded.spec.user.actions[0].kind, ActionKind::Dismiss(name) if name == "db-agent")
    );
    assert_eq!(loaded.spec.user.actions[0].at, SimTime::from_secs(40));
}

#[test]
fn a_misspelt_tool_in_a_definition_is_a_warning_with_a_suggestion() {
    let yaml = "name: x\nsession: {tools: [Read, Grep, Bash, CustomThing]}\nagents:\n  w: {description: d, tools: [Reed, Grep, CustomThing, \"Bash(git *)\", mcp__db__query], disallowedTools: \"Bsh\"}\n";
    let loaded = match parse_scenario(yaml, "t.yaml", &valid_dir()) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("a misspelt tool is not an error:\n{problems}"),
    };
    // The definition keeps the entry as written: resolution at spawn time decides.
    assert_eq!(
        loaded.spec.agents["w"]
            .tools
            .as_deref()
            .map(<[String]>::len),
        Some(5)
    );
    let messages: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("t.yaml:4:31"), "{}", messages[0]);
    assert!(
        messages[0].contains("`tools` entry `Reed` is not a known tool, did you mean `Read`?"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1]
            .contains("`disallowedTools` entry `Bsh` is not a known tool, did you mean `Bash`?"),
        "{}",
        messages[1]
    );
}

/// Issue #32 item 7: a run named by `send.to`, `stop`, `wait.for` or the person's actions
/// that no `spawn` names, but one nearly does, was taken as it is; now it warns with a
/// did-you-mean. Ids (`a1`, `main`) and a counted spawn's `NAME-N` are run names too.
#[test]
fn a_misspelt_run_name_gets_a_did_you_mean() {
    let loaded = with_agent_files(
        "name: x\nmain:\n  - spawn: {agent: Explore, name: researcher, background: true}\n  \
         - spawn: {agent: Explore, count: 3, name: scout, background: true}\n  \
         - send: {to: reseracher, message: hi}\n  - stop: scout-3\n  - stop: a1\n  \
         - wait: {for: scuot-2}\nuser:\n  actions:\n    - {at: 1s, stop: scout-1}\n",
    );
    let messages: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[0].contains("`send.to` `reseracher`") && messages[0].contains("`researcher`"),
        "{messages:?}"
    );
    assert!(messages[1].contains("`wait.for` `scuot-2`"), "{messages:?}");
}

/// Issue #30 item 5: a hook matcher, a permission rule or a `tools:` entry naming a tool no
/// one in the session can call is a warning with the nearest name, never an error.
#[test]
fn what_can_never_happen_is_a_warning_with_a_did_you_mean() {
    let yaml = "name: x\nsession:\n  tools: [Bash, Read, Deploy]\n  permissions: {deny: [TaskStp, \"Bsh(git *)\", Deploy, mcp__github], allow: [Reed]}\n  hooks:\n    - {event: PreToolUse, matcher: \"SendMesage|TaskStop\", command: a}\n    - {event: PostToolUse, matcher: Agnt, command: b}\n    - {event: PreToolUse, matcher: \"mcp__.*\", command: c}\n    - {event: SubagentStart, matcher: Agnt, command: d}\nagents:\n  w:\n    description: x\n    tools: [Reed, Deploy]\n    hooks: {PreToolUse: [{matcher: Bassh, hooks: [{type: command, command: e}]}]}\n";
    let loaded = match parse_scenario(yaml, "x.yaml", Path::new(".")) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("should load with warnings only:\n{problems}"),
    };
    let messages: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    for wanted in [
        "`deny` rule `TaskStp` is not a tool the session can call, did you mean `TaskStop`?",
        "`deny` rule `Bsh(git *)` names `Bsh`, which is not a tool the session can call, did you mean `Bash`?",
        "`allow` rule `Reed` is not a tool the session can call, did you mean `Read`?",
        "`PreToolUse` matcher names `SendMesage`, which is not a tool the session can call, did you mean `SendMessage`?",
        "`PostToolUse` matcher names `Agnt`, which is not a tool the session can call, did you mean `Agent`?",
        "`tools` entry `Reed` is not a known tool, did you mean `Read`?",
        "`PreToolUse` matcher names `Bassh`, which is not a tool the session can call, did you mean `Bash`?",
    ] {
        assert!(
            messages.iter().any(|message| message.contains(wanted)),
            "no warning `{wanted}` in {messages:#?}"
        );
    }
    // A session's own tool (`Deploy`), an MCP name, a regex matcher and a lifecycle
    // event's matcher (an agent type) are not judged.
    assert_eq!(messages.len(), 7, "{messages:#?}");
}

/// Issue #30 item 4: the session keys of disableAutoMode, CTX-8, MCP-5 and PERM-9's
/// `requiresUserInteraction` read into the spec; both CTX-8 keys at once is an error.
#[test]
fn settings_keys_of_issue_30_read_into_the_session() {
    let yaml = "name: x\nsession:\n  disable_auto_mode: true\n  append_subagent_system_prompt_file: p.md\n  strict_mcp_config: true\n  allowed_mcp_servers: [github]\n  denied_mcp_servers: [jira]\n  requires_user_interaction: [mcp__github__create_issue]\n";
    let loaded = match parse_scenario(yaml, "x.yaml", Path::new(".")) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("should load:\n{problems}"),
    };
    let session = &loaded.spec.session;
    assert!(session.disable_auto_mode);
    assert_eq!(
        session.appended_prompt,
        Some(subsim_rules::context::Appended::File)
    );
    assert!(session.mcp_policy.strict_mcp_config);
    assert_eq!(session.mcp_policy.allowed, Some(vec!["github".to_string()]));
    assert_eq!(session.mcp_policy.denied, ["jira"]);
    assert_eq!(
        session.requires_user_interaction,
        ["mcp__github__create_issue"]
    );
    let both = "name: x\nsession:\n  append_subagent_system_prompt: hi\n  append_subagent_system_prompt_file: p.md\n";
    let problems = parse_scenario(both, "x.yaml", Path::new("."))
        .err()
        .map(|problems| problems.to_string())
        .unwrap_or_default();
    assert!(problems.contains("are both given"), "{problems}");
}

/// MEM-5: `session.skills` reads each skill's state; `disabled` wins over
/// `disable-model-invocation`; a list is an error.
#[test]
fn session_skills_read_into_the_session() {
    use subsim_rules::context::SkillState;
    let yaml = "name: x\nsession:\n  skills:\n    changelog: {}\n    notes:\n    release-notes: {disable-model-invocation: true}\n    legacy: {disabled: true, disable-model-invocation: true}\n";
    let loaded = match parse_scenario(yaml, "x.yaml", Path::new(".")) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("should load:\n{problems}"),
    };
    let skills = loaded.spec.session.skills.expect("declared");
    let states: Vec<(&str, SkillState)> = skills
        .iter()
        .map(|(name, state)| (name.as_str(), *state))
        .collect();
    assert_eq!(
        states,
        [
            ("changelog", SkillState::Available),
            ("legacy", SkillState::Disabled),
            ("notes", SkillState::Available),
            ("release-notes", SkillState::ModelInvocationDisabled),
        ]
    );
    let undeclared = parse_scenario("name: x\n", "x.yaml", Path::new(".")).expect("loads");
    assert_eq!(undeclared.spec.session.skills, None);
    let list = "name: x\nsession:\n  skills: [changelog]\n";
    let problems = parse_scenario(list, "x.yaml", Path::new("."))
        .err()
        .map(|problems| problems.to_string())
        .unwrap_or_default();
    assert!(problems.contains("`skills` must be a map"), "{problems}");
}

/// ISO-5: `session.isolation: worktree` says the main conversation runs isolated; another
/// value is an error with a suggestion, and leaving it out leaves main unisolated.
#[test]
fn session_isolation_reads_into_the_session() {
    let isolated = "name: x\nsession:\n  isolation: worktree\n";
    let loaded = match parse_scenario(isolated, "x.yaml", Path::new(".")) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("should load:\n{problems}"),
    };
    assert!(loaded.spec.session.main_isolated);
    let plain = match parse_scenario("name: x\n", "x.yaml", Path::new(".")) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("should load:\n{problems}"),
    };
    assert!(!plain.spec.session.main_isolated);
    let wrong = "name: x\nsession:\n  isolation: worktre\n";
    let problems = parse_scenario(wrong, "x.yaml", Path::new("."))
        .err()
        .map(|problems| problems.to_string())
        .unwrap_or_default();
    assert!(problems.contains("did you mean `worktree`?"), "{problems}");
}
