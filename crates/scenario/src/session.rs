//! The `session` block → [`SessionSpec`], plus the `agent_dirs` entries ([`AgentDir`])
//! that the `definitions` module loads.
//!
//! Not for applying version gates or env vars: the rules crate resolves those at run time
//! from the plain values read here.

use std::path::PathBuf;

use subsim_engine::spec::{ClassifierSpec, Limits, Scope, SessionSpec};
use subsim_engine::SimTime;
use subsim_rules::context::SkillState;
use subsim_rules::session::env;
use subsim_rules::{PermissionMode, SessionKind, Version};

use crate::check::require;
use crate::check::Ctx;
use crate::classifier::classifier;
use crate::diagnostic::did_you_mean;
use crate::hooks::hooks;
use crate::raw::{Node, Span, Value};

const SESSION_KEYS: [&str; 34] = [
    "kind",
    "version",
    "seed",
    "model",
    "env",
    "permissions",
    "agent_teams",
    "ultracode",
    "permission_mode",
    "tools",
    "mcp",
    "agent_dirs",
    "agent",
    "limits",
    "hooks",
    "fallback_models",
    "continuations",
    "available_models",
    "provider",
    "effort",
    "trusted_dirs",
    "auto_memory",
    "cross_session_messaging",
    "screen_reader",
    "classifier",
    "disable_auto_mode",
    "append_subagent_system_prompt",
    "append_subagent_system_prompt_file",
    "strict_mcp_config",
    "allowed_mcp_servers",
    "denied_mcp_servers",
    "requires_user_interaction",
    "skills",
    "isolation",
];
/// MEM-5: what `session.skills` says about one skill (its frontmatter's spelling, and
/// whether it is turned off).
const SKILL_KEYS: [&str; 2] = ["disable-model-invocation", "disabled"];
const KINDS: [&str; 3] = ["interactive", "headless", "sdk"];
const PERMISSION_KEYS: [&str; 2] = ["allow", "deny"];
const LIMIT_KEYS: [&str; 9] = [
    "max_events",
    "max_time",
    "max_agents",
    "max_steps",
    "max_running",
    "max_held",
    "max_instant_steps",
    "max_silent_steps",
    "max_explore_steps",
];
const AGENT_DIR_KEYS: [&str; 5] = ["scope", "path", "plugin", "add_dir", "passed_as"];
/// How a `cli` entry's JSON reached Claude Code (DEF-7, DEF-8).
const PASSED_AS: [&str; 2] = ["json", "path"];
/// MODEL-4 / MODEL-12: how the session connects.
pub(crate) const PROVIDERS: [&str; 9] = [
    "anthropic",
    "subscription",
    "console",
    "gateway",
    "bedrock",
    "vertex",
    "foundry",
    "aws",
    "apps_gateway",
];
/// MODEL-14 / DEF-14: effort levels.
pub(crate) const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];
/// Scope names as the scenario format spells them.
pub(crate) const SCOPES: [&str; 5] = ["managed", "cli", "project", "user", "plugin"];

/// One `session.agent_dirs` entry: a directory of agent definition files (or, for
/// `scope: cli`, the `--agents` JSON file), as loaded into [`SimSpec::definitions`].
///
/// [`SimSpec::definitions`]: subsim_engine::SimSpec::definitions
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentDir {
    /// The scope its definitions get.
    pub scope: Scope,
    /// The directory (or JSON file), relative paths resolved against the scenario file's
    /// directory.
    pub path: PathBuf,
    /// The plugin's name (for `scope: plugin`, which requires it).
    pub plugin: Option<String>,
    /// `add_dir: true`: a project directory added with `--add-dir` (DEF-3), ranked below
    /// every working-directory project entry.
    pub add_dir: bool,
    /// `passed_as: path`: the `cli` JSON was passed as a file path (DEF-8), not as JSON text.
    pub passed_as_path: bool,
    /// Where the entry was written, `file:line:col`.
    pub location: String,
}

/// An `agent_dirs` entry with what the loader needs beyond [`AgentDir`].
#[derive(Clone, Debug)]
pub(crate) struct DirEntry {
    /// The entry.
    pub dir: AgentDir,
    /// The path as written, normalised (`a/./b/../c` → `a/c`), for notes.
    pub shown: String,
    /// Where the entry's `path` was written: what warnings about its files point at.
    pub span: Span,
}

/// Reads a scope name.
pub(crate) fn scope_of(name: &str) -> Scope {
    match name {
        "managed" => Scope::Managed,
        "cli" => Scope::Cli,
        "user" => Scope::User,
        "plugin" => Scope::Plugin,
        _ => Scope::Project,
    }
}

/// The `session` block, and where `session.agent` was written (checked once agents are known).
pub(crate) struct Session {
    pub spec: SessionSpec,
    pub agent_dirs: Vec<DirEntry>,
    /// Where `agent_dirs` was written (the SPAWN-15 warning points there).
    pub agent_dirs_span: Option<Span>,
    pub main_agent: Option<(String, Span)>,
}

/// Reads the `session` block; `None` (no block) gives the defaults.
pub(crate) fn session(ctx: &mut Ctx<'_>, node: Option<&Node>) -> Session {
    let mut session = Session {
        spec: SessionSpec::default(),
        agent_dirs: Vec::new(),
        agent_dirs_span: None,
        main_agent: None,
    };
    let Some(node) = node else { return session };
    let Some(fields) = ctx.fields(node, "`session`", &SESSION_KEYS) else {
        return session;
    };
    let spec = &mut session.spec;
    if let Some(value) = fields.get("kind") {
        if let Some(kind) = ctx.choice(value, "session kind", &KINDS) {
            spec.kind = kind.parse::<SessionKind>().unwrap_or_default();
        }
    }
    if let Some(value) = fields.get("version") {
        if let Some(version) = version(ctx, value) {
            spec.version = version;
        }
    }
    if let Some(value) = fields.get("seed") {
        if let Some(seed) = ctx.integer(value, "`seed`", 0) {
            spec.seed = seed;
        }
    }
    if let Some(value) = fields.get("model") {
        if let Some(model) = ctx.name(value, "`model`") {
            spec.model = model;
        }
    }
    if let Some(value) = fields.get("env") {
        spec.env = env_vars(ctx, value);
    }
    // `session.tools` first: the hook matchers and permission rules below are checked
    // against the tools the session can have.
    if let Some(value) = fields.get("tools") {
        spec.tools = ctx.name_list(value, "`tools`");
        ctx.session_tools = spec.tools.clone().unwrap_or_default();
    }
    if let Some(value) = fields.get("permissions") {
        if let Some(permissions) = ctx.fields(value, "`permissions`", &PERMISSION_KEYS) {
            if let Some(allow) = permissions.get("allow") {
                spec.permissions.allow = ctx.string_list(allow, "`allow`").unwrap_or_default();
                check_rule_tools(ctx, allow, &spec.permissions.allow, "allow");
            }
            if let Some(deny) = permissions.get("deny") {
                spec.permissions.deny = ctx.string_list(deny, "`deny`").unwrap_or_default();
                check_rule_tools(ctx, deny, &spec.permissions.deny, "deny");
            }
        }
    }
    if let Some(value) = fields.get("agent_teams") {
        spec.agent_teams = ctx.boolean(value, "`agent_teams`").unwrap_or(false);
    }
    if let Some(value) = fields.get("ultracode") {
        spec.admission.ultracode = ctx.boolean(value, "`ultracode`").unwrap_or(false);
    }
    if let Some(value) = fields.get("permission_mode") {
        if let Some(mode) = ctx.choice(value, "permission_mode", &PermissionMode::NAMES) {
            spec.permission_mode = mode.parse::<PermissionMode>().unwrap_or_default();
        }
    }
    if let Some(value) = fields.get("mcp") {
        spec.mcp = mcp(ctx, value);
    }
    if let Some(value) = fields.get("agent_dirs") {
        session.agent_dirs = agent_dirs(ctx, value);
        session.agent_dirs_span = fields.key("agent_dirs").map(|key| key.span);
    }
    if let Some(value) = fields.get("agent") {
        if let Some(agent) = ctx.name(value, "`agent`") {
            session.main_agent = Some((agent.clone(), value.span));
            session.spec.agent = Some(agent);
        }
    }
    if let Some(value) = fields.get("limits") {
        session.spec.limits = limits(ctx, value);
    }
    extensions(ctx, &fields, &mut session.spec);
    session
}

/// The keys beyond the contract's table (models, errors, trust, hooks, classifier).
fn extensions(ctx: &mut Ctx<'_>, fields: &crate::check::Fields<'_>, spec: &mut SessionSpec) {
    if let Some(value) = fields.get("hooks") {
        spec.hooks = hooks(ctx, value, "`hooks`");
    }
    if let Some(value) = fields.get("fallback_models") {
        spec.fallback_models = ctx
            .string_list(value, "`fallback_models`")
            .unwrap_or_default();
    }
    if let Some(value) = fields.get("continuations") {
        if let Some(count) = ctx.integer_u32(value, "`continuations`", 0) {
            spec.continuations = count;
        }
    }
    if let Some(value) = fields.get("available_models") {
        spec.available_models = ctx.string_list(value, "`available_models`");
    }
    if let Some(value) = fields.get("provider") {
        if let Some(provider) = ctx.choice(value, "provider", &PROVIDERS) {
            spec.provider = provider.to_string();
        }
    }
    if let Some(value) = fields.get("effort") {
        spec.effort = ctx.choice(value, "effort", &EFFORTS).map(str::to_string);
    }
    if let Some(value) = fields.get("trusted_dirs") {
        spec.trusted_dirs = ctx
            .string_list(value, "`trusted_dirs`")
            .unwrap_or_default()
            .iter()
            .map(|dir| normalise(dir))
            .collect();
    }
    for (key, flag) in [
        ("auto_memory", &mut spec.auto_memory),
        ("cross_session_messaging", &mut spec.cross_session_messaging),
        ("screen_reader", &mut spec.screen_reader),
        ("disable_auto_mode", &mut spec.disable_auto_mode),
    ] {
        if let Some(value) = fields.get(key) {
            if let Some(written) = ctx.boolean(value, &format!("`{key}`")) {
                *flag = written;
            }
        }
    }
    if let Some(value) = fields.get("classifier") {
        if let Some(verdicts) = classifier(ctx, value, ClassifierSpec::default()) {
            spec.classifier = verdicts;
        }
    }
    appended_prompt(ctx, fields, spec);
    mcp_policy(ctx, fields, spec);
    if let Some(value) = fields.get("requires_user_interaction") {
        spec.requires_user_interaction = requires_user_interaction(ctx, value);
    }
    if let Some(value) = fields.get("skills") {
        spec.skills = Some(skills(ctx, value));
    }
    // ISO-5: the main conversation itself runs isolated in a worktree.
    if let Some(value) = fields.get("isolation") {
        spec.main_isolated = ctx
            .choice(value, "isolation", &crate::steps::ISOLATIONS)
            .is_some();
    }
}

/// MEM-5: `skills`, the session's skills by name, each `{}` (Claude may invoke it), or
/// with `disable-model-invocation: true` or `disabled: true` (e.g. by policy; it wins
/// over the other). A name a definition lists and this map leaves out is missing.
fn skills(ctx: &mut Ctx<'_>, node: &Node) -> std::collections::BTreeMap<String, SkillState> {
    let mut skills = std::collections::BTreeMap::new();
    let entries = match &node.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) | Value::Seq(..) => {
            ctx.error_help(
                node.span,
                format!(
                    "`skills` must be a map of skill names to their state, found {}",
                    node.describe()
                ),
                "e.g. `skills: {changelog: {}, verify: {disable-model-invocation: true}, \
                 legacy: {disabled: true}}`",
            );
            return skills;
        }
    };
    for (key, value) in entries {
        let Some(name) = ctx.key_name(key) else {
            continue;
        };
        if skills.contains_key(name) {
            ctx.error(key.span, format!("duplicate key `{name}`"));
            continue;
        }
        let Some(fields) = ctx.fields(value, &format!("skill `{name}`"), &SKILL_KEYS) else {
            continue;
        };
        let [not_invocable, disabled] = SKILL_KEYS.map(|key| {
            fields
                .get(key)
                .and_then(|value| ctx.boolean(value, &format!("`{key}`")))
                .unwrap_or(false)
        });
        let state = match (disabled, not_invocable) {
            (true, _) => SkillState::Disabled,
            (false, true) => SkillState::ModelInvocationDisabled,
            (false, false) => SkillState::Available,
        };
        skills.insert(name.to_string(), state);
    }
    skills
}

/// PERM-9: `requires_user_interaction`, the MCP tools marked `requiresUserInteraction`
/// (full names). The mark is an MCP tool's, so another name is a warning: it never
/// changes a call.
fn requires_user_interaction(ctx: &mut Ctx<'_>, node: &Node) -> Vec<String> {
    let Some(tools) = ctx.string_list(node, "`requires_user_interaction`") else {
        return Vec::new();
    };
    if let Value::Seq(items) = &node.value {
        for (item, tool) in items.iter().zip(&tools) {
            if !tool.starts_with("mcp__") || tool.matches("__").count() < 2 {
                ctx.warn(
                    item.span,
                    format!("`requires_user_interaction` entry `{tool}` is not an MCP tool name"),
                    Some(
                        "requiresUserInteraction marks MCP tools: write the full name, \
                         `mcp__SERVER__TOOL`"
                            .to_string(),
                    ),
                );
            }
        }
    }
    tools
}

/// A `permissions.allow` / `.deny` rule whose tool (`Bash` of `Bash(git push *)`; `Task`
/// is `Agent`) no one in the session can have never matches a call: a warning at the
/// entry with the nearest known name. Not an error: Claude Code keeps such a rule.
fn check_rule_tools(ctx: &mut Ctx<'_>, node: &Node, rules: &[String], list: &str) {
    let Value::Seq(items) = &node.value else {
        return;
    };
    for (item, rule) in items.iter().zip(rules) {
        let tool = subsim_rules::tools::entry_base(rule);
        if let Some(hint) = ctx.unknown_tool(tool) {
            let consequence = if list == "deny" {
                "it refuses nothing: no one in this session has that tool (PERM-14)"
            } else {
                "it allows nothing: no one in this session has that tool"
            };
            let names = if tool == rule.trim() {
                String::new()
            } else {
                format!(" names `{tool}`, which")
            };
            ctx.warn(
                item.span,
                format!("`{list}` rule `{rule}`{names} is not a tool the session can call{hint}"),
                Some(consequence.to_string()),
            );
        }
    }
}

/// CTX-8: `append_subagent_system_prompt` (`--append-subagent-system-prompt <text>`) or
/// `append_subagent_system_prompt_file` (`…-file <path>`), one of the two. The text and
/// the file are kept unread: a prompt's text is not observable (DEF-15).
fn appended_prompt(ctx: &mut Ctx<'_>, fields: &crate::check::Fields<'_>, spec: &mut SessionSpec) {
    use subsim_rules::context::Appended;
    let text = fields.get("append_subagent_system_prompt");
    let file = fields.get("append_subagent_system_prompt_file");
    if let (Some(_), Some(second)) = (text, file) {
        ctx.error_help(
            second.span,
            "`append_subagent_system_prompt` and `append_subagent_system_prompt_file` are \
             both given",
            "pass the text or the file, not both",
        );
        return;
    }
    for (value, kind, key) in [
        (text, Appended::Text, "`append_subagent_system_prompt`"),
        (file, Appended::File, "`append_subagent_system_prompt_file`"),
    ] {
        if let Some(value) = value {
            if ctx.text(value, key).is_some() {
                spec.appended_prompt = Some(kind);
            }
        }
    }
}

/// MCP-5: `strict_mcp_config` (`--strict-mcp-config`) and the managed
/// `allowed_mcp_servers` / `denied_mcp_servers` lists.
fn mcp_policy(ctx: &mut Ctx<'_>, fields: &crate::check::Fields<'_>, spec: &mut SessionSpec) {
    if let Some(value) = fields.get("strict_mcp_config") {
        if let Some(strict) = ctx.boolean(value, "`strict_mcp_config`") {
            spec.mcp_policy.strict_mcp_config = strict;
        }
    }
    if let Some(value) = fields.get("allowed_mcp_servers") {
        spec.mcp_policy.allowed = ctx.string_list(value, "`allowed_mcp_servers`");
    }
    if let Some(value) = fields.get("denied_mcp_servers") {
        spec.mcp_policy.denied = ctx
            .string_list(value, "`denied_mcp_servers`")
            .unwrap_or_default();
    }
}

/// A relative path with `/` separators, `.` dropped and `..` folded where it can be
/// (`./a/b/../c/` → `a/c`), so paths written differently compare equal.
pub(crate) fn normalise(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

fn version(ctx: &mut Ctx<'_>, node: &Node) -> Option<Version> {
    let text = ctx.text(node, "`version`")?;
    match text.parse::<Version>() {
        Ok(version) => {
            if version > Version::NEWEST {
                ctx.warn(
                    node.span,
                    format!(
                        "version {version} is newer than the newest the rules know ({})",
                        Version::NEWEST
                    ),
                    Some(format!("the rules of {} apply", Version::NEWEST)),
                );
            }
            Some(version)
        }
        Err(error) => {
            let help = if matches!(node.value, Value::Float(_) | Value::Int(_)) {
                "quote it so YAML keeps it as text: `version: \"2.1.186\"`"
            } else {
                "e.g. `version: \"2.1.186\"`"
            };
            ctx.error_help(node.span, error.to_string(), help);
            None
        }
    }
}

fn env_vars(ctx: &mut Ctx<'_>, node: &Node) -> std::collections::BTreeMap<String, String> {
    let mut vars = std::collections::BTreeMap::new();
    let entries = match &node.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) | Value::Seq(..) => {
            ctx.error(
                node.span,
                format!(
                    "`env` must be a map of variable names to values, found {}",
                    node.describe()
                ),
            );
            return vars;
        }
    };
    for (key, value) in entries {
        let Some(name) = ctx.key_name(key) else {
            continue;
        };
        if vars.contains_key(name) {
            ctx.error(key.span, format!("duplicate key `{name}`"));
            continue;
        }
        if !env::KNOWN.contains(&name) {
            let hint = did_you_mean(name, &env::KNOWN);
            ctx.warn(
                key.span,
                format!("`{name}` is not an environment variable the simulator reads{hint}"),
                Some("it is kept but has no effect".to_string()),
            );
        }
        if let Some(text) = ctx.text(value, &format!("`{name}`")) {
            vars.insert(name.to_string(), text);
        }
    }
    vars
}

fn mcp(ctx: &mut Ctx<'_>, node: &Node) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut servers = std::collections::BTreeMap::new();
    let entries = match &node.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) | Value::Seq(..) => {
            ctx.error_help(
                node.span,
                format!(
                    "`mcp` must be a map of servers to tool lists, found {}",
                    node.describe()
                ),
                "e.g. `mcp: {github: [create_issue, list_prs]}`",
            );
            return servers;
        }
    };
    for (key, value) in entries {
        let Some(server) = ctx.key_name(key) else {
            continue;
        };
        if servers.contains_key(server) {
            ctx.error(key.span, format!("duplicate key `{server}`"));
            continue;
        }
        let tools = if value.value == Value::Null {
            Some(Vec::new())
        } else {
            ctx.name_list(value, &format!("the tools of `{server}`"))
        };
        if let Some(tools) = tools {
            servers.insert(server.to_string(), tools);
        }
    }
    servers
}

fn agent_dirs(ctx: &mut Ctx<'_>, node: &Node) -> Vec<DirEntry> {
    if node.value == Value::Null {
        return Vec::new();
    }
    let Some(items) = ctx.list(node, "`agent_dirs`") else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for item in items {
        let Some(fields) = ctx.fields(item, "an `agent_dirs` entry", &AGENT_DIR_KEYS) else {
            continue;
        };
        let example = "`{scope: project, path: .claude/agents}`";
        let scope = require(ctx, &fields, "an `agent_dirs` entry", "scope", example)
            .and_then(|value| ctx.choice(value, "scope", &SCOPES));
        let path = require(ctx, &fields, "an `agent_dirs` entry", "path", example)
            .and_then(|value| ctx.name(value, "`path`"));
        let plugin = fields
            .get("plugin")
            .and_then(|value| ctx.name(value, "`plugin`"));
        let add_dir = fields
            .get("add_dir")
            .and_then(|value| ctx.boolean(value, "`add_dir`"))
            .unwrap_or(false);
        let passed_as_path = fields
            .get("passed_as")
            .and_then(|value| ctx.choice(value, "passed_as", &PASSED_AS))
            == Some("path");
        match (scope, &plugin) {
            (Some("plugin"), None) => ctx.error_help(
                fields.span,
                "a `plugin` entry needs `plugin: NAME`",
                "plugin definitions are registered as `NAME:agent` (DEF-5)",
            ),
            (Some(other), Some(_)) if other != "plugin" => {
                if let Some(key) = fields.key("plugin") {
                    ctx.error(
                        key.span,
                        format!("`plugin` only goes with `scope: plugin`, not `{other}`"),
                    );
                }
            }
            _ => {}
        }
        if let Some(plugin) = &plugin {
            if plugin.contains(':') {
                if let Some(value) = fields.get("plugin") {
                    ctx.error(value.span, "a plugin name cannot contain `:` (it separates the parts of a scoped id, DEF-5)");
                }
            }
        }
        only_with(
            ctx,
            &fields,
            scope,
            "add_dir",
            "project",
            "an `--add-dir` directory contributes project definitions (DEF-3)",
        );
        only_with(
            ctx,
            &fields,
            scope,
            "passed_as",
            "cli",
            "`passed_as` says how the `--agents` JSON was given (DEF-8)",
        );
        if let (Some(scope), Some(path)) = (scope, path) {
            dirs.push(DirEntry {
                dir: AgentDir {
                    scope: scope_of(scope),
                    path: resolve_dir(ctx, scope, &path),
                    plugin,
                    add_dir,
                    passed_as_path,
                    location: ctx.location(item.span),
                },
                shown: normalise(&path),
                span: fields.get("path").map_or(item.span, |value| value.span),
            });
        }
    }
    dirs
}

/// Where an `agent_dirs` path points: relative to the scenario's folder, except the user
/// scope's documented location written as `~/…` (`~/.claude/agents`), which is in the home
/// folder. Reading either outside the scenario's folder needs `--allow-path`.
fn resolve_dir(ctx: &Ctx<'_>, scope: &str, path: &str) -> PathBuf {
    if scope == "user" {
        if let (Some(rest), Some(home)) = (path.strip_prefix("~/"), std::env::var_os("HOME")) {
            return PathBuf::from(home).join(rest);
        }
    }
    ctx.base_dir.join(path)
}

/// Reports `key` written in an entry whose scope is not `scope`.
fn only_with(
    ctx: &mut Ctx<'_>,
    fields: &crate::check::Fields<'_>,
    written: Option<&str>,
    key: &str,
    scope: &str,
    why: &str,
) {
    if let (Some(written), Some(key_node)) = (written, fields.key(key)) {
        if written != scope {
            ctx.error_help(
                key_node.span,
                format!("`{key}` only goes with `scope: {scope}`, not `{written}`"),
                why,
            );
        }
    }
}

fn limits(ctx: &mut Ctx<'_>, node: &Node) -> Limits {
    let mut limits = Limits::default();
    let Some(fields) = ctx.fields(node, "`limits`", &LIMIT_KEYS) else {
        return limits;
    };
    if let Some(value) = fields.get("max_events") {
        if let Some(max) = ctx.integer(value, "`max_events`", 1) {
            limits.max_events = max;
        }
    }
    if let Some(value) = fields.get("max_time") {
        match ctx.duration(value, "`max_time`") {
            Some(0) => ctx.error(value.span, "`max_time` must be above zero"),
            Some(micros) => limits.max_time = SimTime(micros),
            None => {}
        }
    }
    if let Some(value) = fields.get("max_agents") {
        if let Some(max) = ctx.integer(value, "`max_agents`", 1) {
            limits.max_agents = max;
        }
    }
    if let Some(value) = fields.get("max_steps") {
        if let Some(max) = ctx.integer(value, "`max_steps`", 1) {
            limits.max_steps = Some(max);
        }
    }
    if let Some(value) = fields.get("max_running") {
        if let Some(max) = ctx.integer(value, "`max_running`", 1) {
            limits.max_running = max;
        }
    }
    if let Some(value) = fields.get("max_held") {
        if let Some(max) = ctx.integer(value, "`max_held`", 1) {
            limits.max_held = max;
        }
    }
    if let Some(value) = fields.get("max_instant_steps") {
        if let Some(max) = ctx.integer(value, "`max_instant_steps`", 1) {
            limits.max_instant_steps = max;
        }
    }
    if let Some(value) = fields.get("max_silent_steps") {
        if let Some(max) = ctx.integer(value, "`max_silent_steps`", 1) {
            limits.max_silent_steps = max;
        }
    }
    if let Some(value) = fields.get("max_explore_steps") {
        if let Some(max) = ctx.integer(value, "`max_explore_steps`", 1) {
            limits.max_explore_steps = max;
        }
    }
    limits
}
