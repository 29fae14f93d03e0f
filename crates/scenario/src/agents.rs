//! The `agents` block → [`AgentDef`]s, inline or loaded from agent Markdown files
//! (`file:`), the way Claude Code loads definition files (DEF-10, DEF-11, DEF-13).
//!
//! Not for scanning definition directories (`session.agent_dirs`): those are only kept
//! by the session module for a later loader.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use subsim_engine::spec::{AgentDef, Scope};
use subsim_rules::{PermissionMode, Version};

use crate::check::{Ctx, Fields};
use crate::diagnostic::{did_you_mean, list_names, Diagnostic};
use crate::raw::{self, Node, Span, Value};
use crate::session::{scope_of, SCOPES};
use crate::steps::{steps, Script, ISOLATIONS};

/// The built-in agent types, which exist without being defined.
pub(crate) const BUILT_IN: [&str; 7] = [
    "general-purpose",
    "Explore",
    "Plan",
    "claude",
    "statusline-setup",
    "claude-code-guide",
    "fork",
];

/// The documented frontmatter fields shared by inline definitions and files (DEF-14),
/// without `name` (an inline definition's name is its key) and `experimental` (files only).
const DEFINITION_KEYS: [&str; 16] = [
    "description",
    "tools",
    "disallowedTools",
    "model",
    "permissionMode",
    "maxTurns",
    "background",
    "isolation",
    "effort",
    "memory",
    "skills",
    "mcpServers",
    "hooks",
    "omitClaudeMd",
    "color",
    "initialPrompt",
];
/// Keys the simulator adds to inline definitions.
const SIMULATOR_KEYS: [&str; 3] = ["scope", "behavior", "file"];
/// Keys a definition with `file:` may still carry inline.
const WITH_FILE_KEYS: [&str; 3] = ["scope", "behavior", "file"];
/// Longest definition name (DEF-10, ES).
const MAX_NAME_CHARS: usize = 256;

/// What the `agents` block produced.
pub(crate) struct Agents {
    /// Definitions by name.
    pub defs: BTreeMap<String, AgentDef>,
    /// `(agent key, resolved path)` of every `file:` definition.
    pub files: Vec<(String, PathBuf)>,
}

fn all_inline_keys() -> Vec<&'static str> {
    DEFINITION_KEYS
        .iter()
        .chain(SIMULATOR_KEYS.iter())
        .copied()
        .collect()
}

fn frontmatter_keys() -> Vec<&'static str> {
    let mut keys = vec!["name"];
    keys.extend(DEFINITION_KEYS);
    keys.push("experimental");
    keys
}

/// Reads the `agents` block.
pub(crate) fn agents(ctx: &mut Ctx<'_>, node: Option<&Node>, version: Version) -> Agents {
    let mut agents = Agents {
        defs: BTreeMap::new(),
        files: Vec::new(),
    };
    let Some(node) = node else { return agents };
    let entries = match &node.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        _ => {
            ctx.error_help(
                node.span,
                format!(
                    "`agents` must be a map from agent names to definitions, found {}",
                    node.describe()
                ),
                "e.g. `agents: {researcher: {description: \"Finds things\", tools: [Read, Grep]}}`",
            );
            return agents;
        }
    };
    let mut seen: Vec<&str> = Vec::new();
    for (key, value) in entries {
        let Some(name) = ctx.key_name(key) else {
            continue;
        };
        if name.trim().is_empty() {
            ctx.error(key.span, "an agent name must not be empty");
            continue;
        }
        if seen.contains(&name) {
            ctx.error(key.span, format!("duplicate agent `{name}`"));
            continue;
        }
        seen.push(name);
        let Some(def) = definition(ctx, name, value, version, &mut agents.files) else {
            continue;
        };
        insert(ctx, &mut agents.defs, def, key.span);
    }
    agents
}

/// Adds a definition; same-named ones are resolved by scope priority (DEF-1).
fn insert(ctx: &mut Ctx<'_>, defs: &mut BTreeMap<String, AgentDef>, def: AgentDef, span: Span) {
    let Some(existing) = defs.get(&def.name) else {
        defs.insert(def.name.clone(), def);
        return;
    };
    let name = def.name.clone();
    if def.scope < existing.scope {
        ctx.warn(
            span,
            format!("two definitions are named `{name}`; this one wins by scope priority (DEF-1)"),
            None,
        );
        defs.insert(name, def);
    } else if def.scope == existing.scope {
        ctx.warn(
            span,
            format!("two definitions in the same scope are named `{name}`; only the first is used (DEF-4)"),
            Some("give each definition its own `name`".to_string()),
        );
    } else {
        ctx.warn(
            span,
            format!(
                "two definitions are named `{name}`; the other one wins by scope priority (DEF-1)"
            ),
            None,
        );
    }
}

fn definition(
    ctx: &mut Ctx<'_>,
    key: &str,
    node: &Node,
    version: Version,
    files: &mut Vec<(String, PathBuf)>,
) -> Option<AgentDef> {
    let known = all_inline_keys();
    let fields = ctx.fields(node, &format!("agent `{key}`"), &known)?;
    let scope = fields
        .get("scope")
        .and_then(|value| ctx.choice(value, "scope", &SCOPES))
        .map(scope_of)
        .unwrap_or_default();
    let behavior = fields
        .get("behavior")
        .map(|value| steps(ctx, value, "`behavior`", Script::Behavior));
    let mut def = match fields.get("file") {
        Some(file) => {
            for name in fields.names() {
                if !WITH_FILE_KEYS.contains(&name) {
                    if let Some(key_node) = fields.key(name) {
                        ctx.error_help(
                            key_node.span,
                            format!("`{name}` cannot be written inline next to `file:`"),
                            "with `file:`, the definition's fields come from the file's frontmatter; only `scope` and `behavior` may be added",
                        );
                    }
                }
            }
            let path_text = ctx.name(file, "`file`")?;
            let path = ctx.base_dir.join(&path_text);
            files.push((key.to_string(), path.clone()));
            load_file(ctx, key, file, &path_text, &path, scope, version)?
        }
        None => {
            let mut def = AgentDef {
                name: key.to_string(),
                ..AgentDef::default()
            };
            definition_fields(ctx, &fields, &mut def);
            def
        }
    };
    def.scope = scope;
    def.behavior = behavior;
    Some(def)
}

/// Reads the documented frontmatter fields (everything but `name`) into `def`.
fn definition_fields(ctx: &mut Ctx<'_>, fields: &Fields<'_>, def: &mut AgentDef) {
    if let Some(value) = fields.get("description") {
        def.description = ctx.text(value, "`description`").unwrap_or_default();
    }
    if let Some(value) = fields.get("tools") {
        def.tools = ctx.name_list(value, "`tools`");
    }
    if let Some(value) = fields.get("disallowedTools") {
        def.disallowed_tools = ctx
            .name_list(value, "`disallowedTools`")
            .unwrap_or_default();
    }
    if let Some(value) = fields.get("model") {
        def.model = ctx.name(value, "`model`");
    }
    if let Some(value) = fields.get("permissionMode") {
        def.permission_mode = ctx
            .choice(value, "permissionMode", &PermissionMode::NAMES)
            .and_then(|mode| mode.parse().ok());
    }
    if let Some(value) = fields.get("maxTurns") {
        def.max_turns = ctx.integer_u32(value, "`maxTurns`", 1);
    }
    if let Some(value) = fields.get("background") {
        def.background = ctx.boolean(value, "`background`").unwrap_or(false);
    }
    if let Some(value) = fields.get("isolation") {
        def.isolation = ctx
            .choice(value, "isolation", &ISOLATIONS)
            .map(str::to_string);
    }
    if let Some(value) = fields.get("effort") {
        def.effort = ctx.name(value, "`effort`");
    }
    if let Some(value) = fields.get("memory") {
        def.memory = ctx.name(value, "`memory`");
    }
    if let Some(value) = fields.get("skills") {
        def.skills = ctx.name_list(value, "`skills`").unwrap_or_default();
    }
    if let Some(value) = fields.get("mcpServers") {
        // A list of server names or `{name: config}` maps; the simulator reads MCP tools
        // from `session.mcp`, so only the shape is checked.
        if !matches!(value.value, Value::Seq(_) | Value::Map(_) | Value::Null) {
            ctx.error(
                value.span,
                format!(
                    "`mcpServers` must be a list or a map, found {}",
                    value.describe()
                ),
            );
        }
    }
    if let Some(value) = fields.get("hooks") {
        if !matches!(value.value, Value::Map(_) | Value::Null) {
            ctx.error(
                value.span,
                format!("`hooks` must be a map, found {}", value.describe()),
            );
        }
    }
    if let Some(value) = fields.get("omitClaudeMd") {
        def.omit_claude_md = ctx.boolean(value, "`omitClaudeMd`").unwrap_or(false);
    }
    if let Some(value) = fields.get("color") {
        def.color = ctx.name(value, "`color`");
    }
    if let Some(value) = fields.get("initialPrompt") {
        // Only used when the agent is the main-session agent, which the simulator does not
        // model beyond `session.agent`; checked, not kept.
        ctx.text(value, "`initialPrompt`");
    }
}

/// Loads an agent Markdown file. `None` when the file is skipped (DEF-10) or broken.
fn load_file(
    ctx: &mut Ctx<'_>,
    key: &str,
    file_node: &Node,
    shown: &str,
    path: &Path,
    scope: Scope,
    version: Version,
) -> Option<AgentDef> {
    let text = match read_limited(path) {
        Ok(text) => text,
        Err(message) => {
            ctx.error_help(
                file_node.span,
                format!("cannot read agent file `{shown}`: {message}"),
                format!(
                    "`file:` paths are relative to the scenario file's directory ({})",
                    ctx.base_dir.display()
                ),
            );
            return None;
        }
    };
    let plugin = scope == Scope::Plugin;
    let file_stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| key.to_string());
    // DEF-11: a plugin file without a name, or whose frontmatter does not parse, still
    // loads under its file name.
    let skip = |ctx: &mut Ctx<'_>, why: String| -> Option<AgentDef> {
        if plugin {
            ctx.warn(file_node.span, format!("agent file `{shown}` {why}; as a plugin file it loads as `{file_stem}` (DEF-11)"), None);
            Some(AgentDef {
                name: file_stem.clone(),
                ..AgentDef::default()
            })
        } else {
            ctx.warn(
                file_node.span,
                format!("agent file `{shown}` is skipped: it {why} (DEF-10)"),
                Some(format!(
                    "agent `{key}` is not defined; spawning it is rejected as an unknown type"
                )),
            );
            None
        }
    };
    let Some((frontmatter, offset)) = split_frontmatter(&text) else {
        return skip(
            ctx,
            "has no `---` on its first line, so it is read as documentation".to_string(),
        );
    };
    let Some(frontmatter) = frontmatter else {
        return skip(
            ctx,
            "has no closing `---` after its frontmatter, so the frontmatter does not parse"
                .to_string(),
        );
    };
    let root = match raw::parse(frontmatter) {
        Ok(root) => root,
        Err(error) => {
            let line = error.span.line + line_of(&text, offset) - 1;
            return skip(
                ctx,
                format!(
                    "has frontmatter that does not parse (line {line}: {})",
                    error.message
                ),
            );
        }
    };

    // Validate the frontmatter in a context of its own, then report its findings at the
    // `file:` value, since the diagnostics' snippets point into the scenario file.
    let mut inner = Ctx::new(shown, ctx.base_dir);
    let mut def = AgentDef::default();
    let name = frontmatter_fields(&mut inner, &root, &mut def);
    relay(
        ctx,
        file_node.span,
        shown,
        &text,
        offset,
        inner.errors,
        true,
    );
    relay(
        ctx,
        file_node.span,
        shown,
        &text,
        offset,
        inner.warnings,
        false,
    );

    let Some(name) = name else {
        return skip(
            ctx,
            "has no `name`, so it is treated as documentation".to_string(),
        );
    };
    if let Some(why) = bad_name(&name, version) {
        return skip(ctx, why);
    }
    if def.description.is_empty() && !plugin {
        return skip(ctx, format!("names `{name}` but has no `description`"));
    }
    def.name = name;
    Some(def)
}

/// Reads the frontmatter map; returns its `name`. Unknown fields are ignored with a
/// warning (DEF-13 ignores them silently; a typo deserves a hint).
fn frontmatter_fields(ctx: &mut Ctx<'_>, root: &Node, def: &mut AgentDef) -> Option<String> {
    let known = frontmatter_keys();
    let entries = match &root.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        _ => {
            ctx.error(
                root.span,
                format!(
                    "the frontmatter must be a map of fields, found {}",
                    root.describe()
                ),
            );
            return None;
        }
    };
    let mut kept = Vec::new();
    for (key, value) in entries {
        match &key.value {
            Value::Str(name) if !known.contains(&name.as_str()) => {
                let hint = did_you_mean(name, &known);
                ctx.warn(
                    key.span,
                    format!("unrecognised frontmatter field `{name}` is ignored{hint}"),
                    Some(format!("fields are {}", list_names(&known))),
                );
            }
            _ => kept.push((key.clone(), value.clone())),
        }
    }
    let filtered = Node {
        value: Value::Map(kept),
        span: root.span,
    };
    let fields = ctx.fields(&filtered, "the frontmatter", &known)?;
    definition_fields(ctx, &fields, def);
    if let Some(value) = fields.get("experimental") {
        if !matches!(value.value, Value::Map(_) | Value::Null) {
            ctx.error(
                value.span,
                format!("`experimental` must be a map, found {}", value.describe()),
            );
        }
    }
    fields
        .get("name")
        .and_then(|value| ctx.text(value, "`name`"))
}

/// Why a frontmatter `name` makes the file skipped (DEF-10), if it does.
fn bad_name(name: &str, version: Version) -> Option<String> {
    if name.trim().is_empty() {
        Some("has an empty `name`".to_string())
    } else if name.starts_with('-') {
        Some(format!("has a `name` starting with `-` (`{name}`)"))
    } else if name.contains(':') && version >= Version::v2_1(218) {
        // DEF-10 gate: names containing `:` are rejected from v2.1.218.
        Some(format!("has a `name` containing `:` (`{name}`)"))
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some(format!(
            "has a `name` longer than {MAX_NAME_CHARS} characters"
        ))
    } else {
        None
    }
}

/// Copies diagnostics found inside an agent file onto the `file:` value, saying where in
/// the file they are.
fn relay(
    ctx: &mut Ctx<'_>,
    at: Span,
    shown: &str,
    text: &str,
    offset: usize,
    found: Vec<Diagnostic>,
    errors: bool,
) {
    let first_line = line_of(text, offset);
    for diagnostic in found {
        let line = diagnostic.line + first_line - 1;
        let message = format!(
            "in `{shown}` at {line}:{}: {}",
            diagnostic.column, diagnostic.message
        );
        if errors {
            match diagnostic.help {
                Some(help) => ctx.error_help(at, message, help),
                None => ctx.error(at, message),
            }
        } else {
            ctx.warn(at, message, diagnostic.help);
        }
    }
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map(|before| before.matches('\n').count())
        .unwrap_or(0)
        + 1
}

/// Splits a Markdown agent file: `None` if the first line is not `---`; otherwise the
/// frontmatter text (`None` when unterminated) and its byte offset in the file.
fn split_frontmatter(text: &str) -> Option<(Option<&str>, usize)> {
    let text_start = text
        .strip_prefix('\u{feff}')
        .map(|_| '\u{feff}'.len_utf8())
        .unwrap_or(0);
    let body = &text[text_start..];
    let (first, rest) = body.split_once('\n').unwrap_or((body, ""));
    if first.trim_end() != "---" {
        return None;
    }
    let start = text_start + first.len() + 1;
    let mut position = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((Some(&rest[..position]), start));
        }
        position += line.len();
    }
    Some((None, start))
}

/// Reads a file, refusing anything larger than a scenario may be.
fn read_limited(path: &Path) -> Result<String, String> {
    let metadata = std::fs::metadata(path).map_err(|error| error.to_string())?;
    if metadata.len() > raw::MAX_FILE_BYTES as u64 {
        return Err(format!("it is larger than {} bytes", raw::MAX_FILE_BYTES));
    }
    std::fs::read_to_string(path).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_splits() {
        assert_eq!(
            split_frontmatter("---\nname: a\n---\nbody\n"),
            Some((Some("name: a\n"), 4))
        );
        assert_eq!(
            split_frontmatter("---\r\nname: a\r\n---\r\n"),
            Some((Some("name: a\r\n"), 5))
        );
        assert_eq!(split_frontmatter("# Title\n---\n"), None);
        assert_eq!(split_frontmatter("---\nname: a\n"), Some((None, 4)));
        assert_eq!(split_frontmatter(""), None);
    }

    #[test]
    fn names_that_skip_a_file() {
        let new = Version::NEWEST;
        assert!(bad_name("reviewer", new).is_none());
        assert!(bad_name("-x", new).is_some());
        assert!(bad_name("a:b", new).is_some());
        assert!(bad_name("a:b", Version::v2_1(200)).is_none());
        assert!(bad_name(&"x".repeat(257), new).is_some());
    }
}
