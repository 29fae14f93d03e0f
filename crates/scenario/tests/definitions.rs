//! The definition fixture tree (`tests/fixtures/agents`, see its README): exactly what
//! loads, what is shadowed by what, and why each skipped file is skipped (DEF-1…11,
//! SPAWN-15, Q-30, Q-31).

use std::path::{Path, PathBuf};

use subsim_engine::spec::{DefinitionOutcome, HookSpec, McpServerRef, Scope};
use subsim_scenario::{load_scenario, parse_scenario, Loaded};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents")
}

fn load_tree() -> Loaded {
    match load_scenario(&fixture_dir().join("scenario.yaml")) {
        Ok(loaded) => loaded,
        Err(problems) => panic!("the fixture scenario should load:\n{problems}"),
    }
}

/// Parses `yaml` as if it were a file in the fixture tree.
fn parse_in_tree(yaml: &str) -> Result<Loaded, String> {
    parse_scenario(yaml, "t.yaml", &fixture_dir()).map_err(|problems| problems.to_string())
}

/// One note as `(outcome, path, name, rule, reason)`.
type Row = (
    &'static str,
    String,
    Option<String>,
    &'static str,
    Option<String>,
);

fn rows(loaded: &Loaded) -> Vec<Row> {
    loaded
        .spec
        .definitions
        .iter()
        .map(|note| {
            (
                note.outcome.as_str(),
                note.path.clone(),
                note.name.clone(),
                note.rule,
                note.reason.clone(),
            )
        })
        .collect()
}

fn row(
    outcome: &'static str,
    path: &str,
    name: Option<&str>,
    rule: &'static str,
    reason: Option<&str>,
) -> Row {
    (
        outcome,
        path.to_string(),
        name.map(str::to_string),
        rule,
        reason.map(str::to_string),
    )
}

const REPO: &str = "repo/.claude/agents";
const DOCTOR: &str = "the same name twice in one directory tree; the first in path order loads (Q-31); `/doctor` reports this duplicate";

#[test]
fn exactly_these_definitions_are_in_effect() {
    let loaded = load_tree();
    let agents = &loaded.spec.agents;
    let in_effect: Vec<(&str, Scope, Option<&str>)> = agents
        .iter()
        .map(|(name, def)| (name.as_str(), def.scope, def.source.as_deref()))
        .collect();
    assert_eq!(
        in_effect,
        vec![
            ("deployer", Scope::Cli, Some("agents.json")),
            (
                "helper",
                Scope::Project,
                Some("extra/.claude/agents/helper.md")
            ),
            (
                "kit:broken",
                Scope::Plugin,
                Some("plugin-kit/agents/broken.md")
            ),
            (
                "kit:nameless",
                Scope::Plugin,
                Some("plugin-kit/agents/nameless.md")
            ),
            (
                "kit:review:security",
                Scope::Plugin,
                Some("plugin-kit/agents/review/security.md")
            ),
            ("reviewer", Scope::Managed, Some("managed/reviewer.md")),
            (
                "scout",
                Scope::Project,
                Some("repo/.claude/agents/scout.md")
            ),
            (
                "tester",
                Scope::Project,
                Some("repo/pkg/.claude/agents/tester.md")
            ),
            (
                "twin",
                Scope::Project,
                Some("repo/.claude/agents/dup/a-twin.md")
            ),
            ("writer", Scope::User, None),
        ]
    );
    // Every definition is named by its key, plugin ones by their scoped id (DEF-5).
    assert!(agents.iter().all(|(key, def)| *key == def.name));
    assert_eq!(agents["kit:review:security"].plugin.as_deref(), Some("kit"));
    assert_eq!(agents["scout"].plugin, None);
    // The inline `writer` keeps its behavior; definitions from files have none.
    assert!(agents["writer"].behavior.is_some());
    assert!(agents["tester"].behavior.is_none());
}

#[test]
fn every_file_gets_one_outcome_and_the_notes_are_ordered() {
    let loaded = load_tree();
    let long_name = "x".repeat(257);
    let expected = vec![
        row("loaded", "managed/reviewer.md", Some("reviewer"), "DEF-1", None),
        row("skipped", "agents.json", Some("-hidden"), "DEF-7", Some("name starts with `-`")),
        row("loaded", "agents.json", Some("deployer"), "DEF-1", None),
        row("warning", "agents.json", Some("deployer"), "DEF-7", Some("`color` is ignored in `--agents` JSON")),
        row("shadowed", "agents.json", Some("reviewer"), "DEF-1", Some("shadowed by `managed/reviewer.md`: the managed scope outranks the cli scope")),
        row("loaded", "extra/.claude/agents/helper.md", Some("helper"), "DEF-1", None),
        row("shadowed", "extra/.claude/agents/scout.md", Some("scout"), "DEF-3", Some("shadowed by `repo/.claude/agents/scout.md`: `--add-dir` directories rank below the working directory's project directories (Q-30)")),
        row("loaded", &format!("{REPO}/dup/a-twin.md"), Some("twin"), "DEF-1", None),
        row("loaded", &format!("{REPO}/scout.md"), Some("scout"), "DEF-1", None),
        row("skipped", &format!("{REPO}/skipped/bad-yaml.md"), None, "DEF-10", Some("YAML fails to parse: line 3: unclosed bracket '['")),
        row("skipped", &format!("{REPO}/skipped/colon-name.md"), Some("team:lead"), "DEF-10", Some("name contains `:`")),
        row("skipped", &format!("{REPO}/skipped/dash-name.md"), Some("-lead"), "DEF-10", Some("name starts with `-`")),
        row("skipped", &format!("{REPO}/skipped/long-name.md"), Some(&long_name), "DEF-10", Some("name is longer than 256 characters")),
        row("skipped", &format!("{REPO}/skipped/no-description.md"), Some("undescribed"), "DEF-10", Some("name present but no description")),
        row("skipped", &format!("{REPO}/skipped/no-frontmatter.md"), None, "DEF-10", Some("no frontmatter; treated as documentation")),
        row("skipped", &format!("{REPO}/skipped/no-name.md"), None, "DEF-10", Some("treated as documentation")),
        row("shadowed", &format!("{REPO}/tester.md"), Some("tester"), "DEF-2", Some("shadowed by `repo/pkg/.claude/agents/tester.md`: the project directory nearer the working directory (listed first) wins")),
        row("shadowed", &format!("{REPO}/z-twin.md"), Some("twin"), "DEF-4", Some(&format!("shadowed by `{REPO}/dup/a-twin.md`: {DOCTOR}"))),
        row("loaded", "repo/pkg/.claude/agents/tester.md", Some("tester"), "DEF-1", None),
        row("shadowed", "home/.claude/agents/tester.md", Some("tester"), "DEF-1", Some("shadowed by `repo/pkg/.claude/agents/tester.md`: the project scope outranks the user scope")),
        row("shadowed", "home/.claude/agents/writer.md", Some("writer"), "DEF-4", Some("shadowed by `agents.writer` in `scenario.yaml`: the scenario's inline definitions come before the user directories")),
        row("loaded", "plugin-kit/agents/broken.md", Some("kit:broken"), "DEF-1", None),
        row("warning", "plugin-kit/agents/broken.md", Some("kit:broken"), "DEF-11", Some("its frontmatter is not YAML: loaded under its file name")),
        row("loaded", "plugin-kit/agents/nameless.md", Some("kit:nameless"), "DEF-1", None),
        row("warning", "plugin-kit/agents/nameless.md", Some("kit:nameless"), "DEF-11", Some("no `name` in its frontmatter: loaded under its file name")),
        row("loaded", "plugin-kit/agents/review/security.md", Some("kit:review:security"), "DEF-1", None),
        row("warning", "plugin-kit/agents/review/security.md", Some("kit:review:security"), "DEF-6", Some("`hooks` is ignored for plugin subagents")),
        row("warning", "plugin-kit/agents/review/security.md", Some("kit:review:security"), "DEF-6", Some("`mcpServers` is ignored for plugin subagents")),
        row("warning", "plugin-kit/agents/review/security.md", Some("kit:review:security"), "DEF-6", Some("`permissionMode` is ignored for plugin subagents")),
        row("warning", "plugin-kit/agents/review/security.md", Some("kit:review:security"), "DEF-6", Some("`initialPrompt` is ignored for plugin subagents")),
    ];
    let found = rows(&loaded);
    for (index, (found, wanted)) in found.iter().zip(&expected).enumerate() {
        assert_eq!(found, wanted, "note {index}");
    }
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    // Scope priority, then path.
    let order: Vec<(Scope, &str)> = loaded
        .spec
        .definitions
        .iter()
        .map(|note| (note.scope, note.path.as_str()))
        .collect();
    assert!(order.windows(2).all(|pair| pair[0] <= pair[1]), "{order:?}");
}

#[test]
fn the_fields_of_a_file_reach_the_definition() {
    let loaded = load_tree();
    let scout = &loaded.spec.agents["scout"];
    assert_eq!(scout.description, "Finds where things are");
    assert_eq!(
        scout.tools,
        Some(vec!["Read".into(), "Grep".into(), "Glob".into()])
    );
    assert_eq!(scout.disallowed_tools, vec!["Bash".to_string()]);
    assert_eq!(scout.max_turns, Some(6));
    assert!(scout.background && scout.omit_claude_md);
    assert_eq!(scout.effort.as_deref(), Some("low"));
    assert_eq!(scout.memory.as_deref(), Some("project"));
    assert_eq!(scout.skills, vec!["search".to_string()]);
    assert_eq!(scout.color.as_deref(), Some("green"));
    assert_eq!(
        scout.prompt.as_deref(),
        Some("You find files. Answer with paths only.")
    );
    // HOOK-4: the documented hooks map, one spec per command; `Stop` stays `Stop` (the
    // engine turns it into `SubagentStop` when the agent runs as a subagent, HOOK-5).
    assert_eq!(
        scout.hooks,
        vec![
            HookSpec {
                event: "PreToolUse".into(),
                matcher: Some("Grep".into()),
                command: "./scripts/log-search.sh".into(),
                exit_code: None,
            },
            HookSpec {
                event: "Stop".into(),
                matcher: None,
                command: "./scripts/done.sh".into(),
                exit_code: None,
            },
        ]
    );
    // MCP-1: a reference and an inline server.
    assert_eq!(
        scout.mcp_servers,
        vec![
            McpServerRef {
                name: "github".into(),
                inline: false,
                tools: vec![],
            },
            McpServerRef {
                name: "docs".into(),
                inline: true,
                tools: vec![],
            },
        ]
    );

    let deployer = &loaded.spec.agents["deployer"];
    assert_eq!(
        deployer.prompt.as_deref(),
        Some("You deploy. Never force-push.")
    );
    assert_eq!(deployer.model.as_deref(), Some("haiku"));
    assert_eq!(
        deployer.color, None,
        "DEF-7: `color` is ignored in --agents JSON"
    );

    // DEF-6: the fields plugin subagents ignore are gone; the rest is kept.
    let security = &loaded.spec.agents["kit:review:security"];
    assert!(security.hooks.is_empty() && security.mcp_servers.is_empty());
    assert_eq!(security.permission_mode, None);
    assert_eq!(security.initial_prompt, None);
    assert_eq!(security.description, "Reviews for security problems");
    // DEF-11: loaded under the file name, with its body.
    assert_eq!(
        loaded.spec.agents["kit:broken"].prompt.as_deref(),
        Some("Loads under its file name too.")
    );
}

#[test]
fn skips_and_duplicates_are_warnings_at_their_agent_dirs_entry() {
    let loaded = load_tree();
    let at = |fragment: &str| -> (usize, usize) {
        let warning = loaded
            .warnings
            .iter()
            .find(|warning| warning.message.contains(fragment))
            .unwrap_or_else(|| panic!("no warning with {fragment:?}: {:#?}", loaded.warnings));
        (warning.line, warning.column)
    };
    // They point at the entry's `path`: line 10 is `repo/.claude/agents`, 8 the JSON,
    // 12 the user directory.
    assert_eq!(at("skipped/no-name.md` is skipped"), (10, 30));
    assert_eq!(at("`agents.json` is skipped (agent `-hidden`)"), (8, 26));
    assert_eq!(at("z-twin.md` is shadowed"), (10, 30));
    assert_eq!(at("home/.claude/agents/writer.md` is shadowed"), (12, 27));
    // DEF-13: an unknown field is ignored, with a warning saying where it is.
    assert_eq!(
        at("in `repo/.claude/agents/scout.md` at 24:1: unrecognised field `favouriteColour`"),
        (10, 30)
    );
    // A bare plugin name that one plugin agent has is not an unknown type (MAIN-4).
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|warning| warning.message.contains("unknown agent type")),
        "{:#?}",
        loaded.warnings
    );
    // Ordinary cross-scope shadowing is only a note.
    assert!(!loaded
        .warnings
        .iter()
        .any(|warning| warning.message.contains("named `tester`")));
}

#[test]
fn names_with_a_colon_load_before_2_1_218() {
    let yaml = "name: old\nsession:\n  version: \"2.1.217\"\n  agent_dirs: [{scope: project, path: repo/.claude/agents}]\n";
    let loaded = parse_in_tree(yaml).unwrap_or_else(|problems| panic!("{problems}"));
    assert!(loaded.spec.agents.contains_key("team:lead"));
    let yaml = yaml.replace("2.1.217", "2.1.218");
    let loaded = parse_in_tree(&yaml).unwrap_or_else(|problems| panic!("{problems}"));
    assert!(!loaded.spec.agents.contains_key("team:lead"));
}

#[test]
fn an_interactive_session_rejects_an_agents_file_path() {
    let entry = "{scope: cli, path: agents.json, passed_as: path}";
    let problems = parse_in_tree(&format!("name: x\nsession:\n  agent_dirs: [{entry}]\n"))
        .map(|_| String::new())
        .unwrap_or_else(|problems| problems);
    assert!(
        problems.contains(
            "t.yaml:3:35: an interactive session rejects a file path for `--agents` (DEF-8)"
        ),
        "{problems}"
    );
    let problems = parse_in_tree(&format!(
        "name: x\nsession:\n  kind: headless\n  version: \"2.1.280\"\n  agent_dirs: [{entry}]\n"
    ))
    .map(|_| String::new())
    .unwrap_or_else(|problems| problems);
    assert!(
        problems.contains("`--agents` takes a file path from v2.1.281"),
        "{problems}"
    );
    // Passed as JSON text, the same file works in any session.
    let loaded =
        parse_in_tree("name: x\nsession:\n  agent_dirs: [{scope: cli, path: agents.json}]\n")
            .unwrap_or_else(|problems| panic!("{problems}"));
    assert!(loaded.spec.agents.contains_key("deployer"));
}

#[test]
fn an_empty_agents_prompt_needs_2_1_281() {
    let dir = std::env::temp_dir().join(format!("subsim-empty-prompt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
    std::fs::write(
        dir.join("agents.json"),
        r#"{"quiet": {"description": "Says nothing", "prompt": ""}}"#,
    )
    .unwrap_or_else(|error| panic!("{error}"));
    let check = |version: &str| {
        let yaml = format!("name: x\nsession:\n  version: \"{version}\"\n  agent_dirs: [{{scope: cli, path: agents.json}}]\n");
        parse_scenario(&yaml, "t.yaml", &dir).unwrap_or_else(|problems| panic!("{problems}"))
    };
    let new = check("2.1.281");
    assert_eq!(new.spec.agents["quiet"].prompt.as_deref(), Some(""));
    let old = check("2.1.280");
    assert!(old.spec.agents.is_empty());
    assert_eq!(
        rows(&old),
        vec![row(
            "skipped",
            "agents.json",
            Some("quiet"),
            "DEF-8",
            Some("empty prompt (allowed from v2.1.281)")
        )]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inline_definitions_take_part_in_scope_priority() {
    // An inline `project` definition beats every project directory (it stands for the
    // working directory's own `.claude/agents/`), and a managed file beats it.
    let yaml = "name: x\nsession:\n  agent_dirs:\n    - {scope: managed, path: managed}\n    - {scope: project, path: repo/pkg/.claude/agents}\nagents:\n  tester: {description: Inline tester}\n  reviewer: {description: Inline reviewer}\n";
    let loaded = parse_in_tree(yaml).unwrap_or_else(|problems| panic!("{problems}"));
    assert_eq!(loaded.spec.agents["tester"].description, "Inline tester");
    assert_eq!(loaded.spec.agents["reviewer"].scope, Scope::Managed);
    let shadowed: Vec<(String, &'static str)> = loaded
        .spec
        .definitions
        .iter()
        .filter(|note| note.outcome == DefinitionOutcome::Shadowed)
        .map(|note| (note.path.clone(), note.rule))
        .collect();
    assert_eq!(
        shadowed,
        vec![
            ("repo/pkg/.claude/agents/tester.md".to_string(), "DEF-2"),
            ("t.yaml".to_string(), "DEF-1"),
        ]
    );
}

#[test]
fn descriptions_over_15000_tokens_are_a_warning_and_everything_still_loads() {
    let description = "d".repeat(20_000);
    let mut yaml = String::from("name: budget\nagents:\n");
    for index in 0..3 {
        yaml.push_str(&format!("  a{index}: {{description: {description}}}\n"));
    }
    let loaded = parse_scenario(&yaml, "b.yaml", Path::new("."))
        .unwrap_or_else(|problems| panic!("{problems}"));
    assert_eq!(loaded.spec.agents.len(), 3);
    assert!(
        rows(&loaded).is_empty(),
        "exactly 15,000 tokens is not over the limit"
    );
    yaml.push_str("  a3: {description: dddd}\n");
    let loaded = parse_scenario(&yaml, "b.yaml", Path::new("."))
        .unwrap_or_else(|problems| panic!("{problems}"));
    assert_eq!(
        rows(&loaded),
        vec![row(
            "warning",
            "b.yaml",
            None,
            "SPAWN-15",
            Some("agent descriptions total 15001 tokens (60004 characters / 4, Q-33), over the 15000-token limit; every subagent is still loaded")
        )]
    );
    assert_eq!(loaded.spec.agents.len(), 4);
    assert!(loaded
        .warnings
        .iter()
        .any(|warning| warning.message.contains("(SPAWN-15)") && warning.line == 2));
}

#[test]
fn an_ambiguous_bare_plugin_name_is_a_warning() {
    let yaml = "name: x\nagents:\n  a:b:security: {scope: plugin, description: One}\n  c:security: {scope: plugin, description: Two}\nmain: [{spawn: {agent: security}}]\n";
    let loaded = parse_scenario(yaml, "p.yaml", Path::new("."))
        .unwrap_or_else(|problems| panic!("{problems}"));
    let messages: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert!(
        messages.iter().any(
            |message| message.contains("`security` is ambiguous") && message.contains("(Q-32)")
        ),
        "{messages:?}"
    );
}

#[test]
fn missing_or_wrong_directories_are_located_errors() {
    for (entry, fragment) in [
        (
            "{scope: project, path: nowhere}",
            "cannot read agent directory `nowhere`",
        ),
        (
            "{scope: project, path: managed/reviewer.md}",
            "is a file, not a directory",
        ),
        (
            "{scope: cli, path: repo}",
            "cannot read the `--agents` JSON file `repo`",
        ),
        (
            "{scope: project, path: x, add_dir: true, plugin: p}",
            "`plugin` only goes with `scope: plugin`",
        ),
        (
            "{scope: user, path: home, add_dir: true}",
            "`add_dir` only goes with `scope: project`",
        ),
        (
            "{scope: plugin, path: plugin-kit/agents, plugin: \"a:b\"}",
            "a plugin name cannot contain `:`",
        ),
    ] {
        let problems = parse_in_tree(&format!("name: x\nsession:\n  agent_dirs: [{entry}]\n"))
            .map(|_| String::new())
            .unwrap_or_else(|problems| problems);
        assert!(problems.contains(fragment), "{entry}: {problems}");
        assert!(problems.starts_with("t.yaml:3:"), "{entry}: {problems}");
    }
}
