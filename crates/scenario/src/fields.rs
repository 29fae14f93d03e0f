//! The documented definition fields (DEF-13, DEF-14, MCP-1, HOOK-4), read the same way for
//! the scenario's `agents:` block, definition files and `--agents` JSON.
//!
//! Shared by the `agents` and `definitions` modules (each imports it; it imports neither),
//! so that neither has to import the other's field reading.

use subsim_engine::spec::{AgentDef, McpServerRef};
use subsim_rules::{gates_table, prompt, tools, Gates, PermissionMode};

use crate::check::{Ctx, Fields};
use crate::diagnostic::{did_you_mean, list_names};
use crate::hooks::hooks;
use crate::raw::{Node, Value};

use crate::steps::ISOLATIONS;

/// The documented frontmatter fields shared by inline definitions and files (DEF-14),
/// without `name` (an inline definition's name is its key) and `experimental` (files only).
pub(crate) const DEFINITION_KEYS: [&str; 16] = [
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
/// MCP-1: the `.mcp.json` server types.
const MCP_TYPES: [&str; 4] = ["stdio", "http", "sse", "ws"];
/// Keys of an inline MCP server in the scenario: the `.mcp.json` fields the simulator
/// knows, and `tools` (its own: the tools the server offers).
const MCP_SERVER_KEYS: [&str; 7] = ["type", "tools", "command", "args", "url", "env", "headers"];

/// How strictly nested values are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The scenario's own `agents:` block: every key must be known.
    Scenario,
    /// A definition file or `--agents` JSON: `.mcp.json` fields the simulator does not
    /// know are not its business.
    File,
}

/// Warns about `tools` / `disallowedTools` entries that name no tool the session could
/// have: not a built-in, not in `session.tools`, not an MCP pattern. Not an error: at spawn
/// time such an entry resolves to nothing (TOOLS-11), and an allowlist of nothing but such
/// entries is the zero-tools launch error (TOOLS-12) — which a scenario may want to show.
fn warn_unknown_tools(ctx: &mut Ctx<'_>, node: &Node, entries: &[String], field: &str) {
    let mut known = tools::known_builtins();
    known.extend(ctx.session_tools.iter().map(String::as_str));
    let mut warnings = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let base = tools::entry_base(entry);
        if base.is_empty() || base.starts_with("mcp__") || known.contains(&base) {
            continue;
        }
        let span = match &node.value {
            Value::Seq(items) if items.len() == entries.len() => items[index].span,
            Value::Null
            | Value::Bool(..)
            | Value::Int(..)
            | Value::Float(..)
            | Value::Str(..)
            | Value::Seq(..)
            | Value::Map(..) => node.span,
        };
        let hint = did_you_mean(base, &known);
        let consequence = if field == "tools" {
            "at spawn time it resolves to nothing (TOOLS-11); if no entry resolves, the launch \
             fails with the zero-tools error (TOOLS-12)"
        } else {
            "at spawn time it removes nothing (TOOLS-11)"
        };
        warnings.push((
            span,
            format!("`{field}` entry `{entry}` is not a known tool{hint}"),
            consequence,
        ));
    }
    for (span, message, consequence) in warnings {
        ctx.warn(span, message, Some(consequence.to_string()));
    }
}

/// Reads the documented definition fields (everything but `name`) into `def`; `prompt`
/// too when `fields` allows it (inline definitions, `--agents` JSON).
pub(crate) fn definition_fields(
    ctx: &mut Ctx<'_>,
    fields: &Fields<'_>,
    def: &mut AgentDef,
    origin: Origin,
) {
    if let Some(value) = fields.get("description") {
        def.description = ctx.text(value, "`description`").unwrap_or_default();
    }
    if let Some(value) = fields.get("tools") {
        def.tools = ctx.name_list(value, "`tools`");
        if let Some(entries) = &def.tools {
            warn_unknown_tools(ctx, value, entries, "tools");
        }
    }
    if let Some(value) = fields.get("disallowedTools") {
        def.disallowed_tools = ctx
            .name_list(value, "`disallowedTools`")
            .unwrap_or_default();
        let entries = def.disallowed_tools.clone();
        warn_unknown_tools(ctx, value, &entries, "disallowedTools");
    }
    if let Some(value) = fields.get("model") {
        def.model = ctx.name(value, "`model`");
    }
    if let Some(value) = fields.get("permissionMode") {
        let chosen = ctx.choice(value, "permissionMode", &PermissionMode::NAMES);
        let gates = Gates::for_version(ctx.version);
        def.permission_mode = match chosen.map(|text| (text, prompt::parse_mode(text, &gates))) {
            Some((_, Some((mode, _)))) => Some(mode),
            Some((text, None)) => {
                // PERM-9: `manual` is an alias of `default` only from v2.1.200; before, it
                // names no mode; we ignore the field, so the run inherits (docs/decisions.md, "`permissionMode: manual` before v2.1.200").
                ctx.warn(
                    value.span,
                    format!(
                        "`permissionMode: {text}` is not a mode at v{} (the `manual` alias of `default` came in v{}, PERM-9)",
                        ctx.version,
                        gates_table::since("manual_alias"),
                    ),
                    Some("the field is ignored: the subagent inherits the main mode; write `default`".to_string()),
                );
                None
            }
            None => None,
        };
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
        def.mcp_servers = mcp_servers(ctx, value, origin);
    }
    if let Some(value) = fields.get("hooks") {
        def.hooks = hooks(ctx, value, "`hooks`");
    }
    if let Some(value) = fields.get("omitClaudeMd") {
        def.omit_claude_md = ctx.boolean(value, "`omitClaudeMd`").unwrap_or(false);
    }
    if let Some(value) = fields.get("color") {
        def.color = ctx.name(value, "`color`");
    }
    if let Some(value) = fields.get("initialPrompt") {
        def.initial_prompt = ctx.text(value, "`initialPrompt`");
    }
    if let Some(value) = fields.get("prompt") {
        def.prompt = ctx.text(value, "`prompt`");
    }
}

/// `mcpServers` (MCP-1): a list whose items are server names (references to configured
/// servers) or `{NAME: CONFIG}` maps (inline servers); a map of inline servers is also
/// accepted. An inline server's `tools` is the simulator's stand-in for connecting to it.
fn mcp_servers(ctx: &mut Ctx<'_>, node: &Node, origin: Origin) -> Vec<McpServerRef> {
    let mut servers: Vec<McpServerRef> = Vec::new();
    let mut add = |ctx: &mut Ctx<'_>, at: &Node, server: McpServerRef| {
        if servers.iter().any(|known| known.name == server.name) {
            ctx.error(
                at.span,
                format!("MCP server `{}` is listed twice", server.name),
            );
        } else {
            servers.push(server);
        }
    };
    let example = "e.g. `[github, {db: {type: stdio, tools: [query]}}]`";
    match &node.value {
        Value::Null => {}
        Value::Seq(items) => {
            for item in items {
                match &item.value {
                    Value::Map(entries) => {
                        for (key, config) in entries {
                            if let Some(server) = inline_server(ctx, key, config, origin) {
                                add(ctx, key, server);
                            }
                        }
                    }
                    Value::Null
                    | Value::Bool(..)
                    | Value::Int(..)
                    | Value::Float(..)
                    | Value::Str(..)
                    | Value::Seq(..) => {
                        if let Some(name) = ctx.name(item, "an `mcpServers` entry") {
                            add(
                                ctx,
                                item,
                                McpServerRef {
                                    name,
                                    inline: false,
                                    tools: Vec::new(),
                                },
                            );
                        }
                    }
                }
            }
        }
        Value::Map(entries) => {
            for (key, config) in entries {
                if let Some(server) = inline_server(ctx, key, config, origin) {
                    add(ctx, key, server);
                }
            }
        }
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) => ctx.error_help(
            node.span,
            format!(
                "`mcpServers` must be a list or a map, found {}",
                node.describe()
            ),
            example,
        ),
    }
    servers
}

/// One inline server `NAME: CONFIG`.
fn inline_server(
    ctx: &mut Ctx<'_>,
    key: &Node,
    config: &Node,
    origin: Origin,
) -> Option<McpServerRef> {
    let name = ctx.key_name(key)?.to_string();
    let what = format!("MCP server `{name}`");
    let config = match origin {
        Origin::Scenario => config.clone(),
        Origin::File => drop_unknown(ctx, config, &what, &MCP_SERVER_KEYS, &[], false)?,
    };
    let fields = ctx.fields(&config, &what, &MCP_SERVER_KEYS)?;
    if let Some(kind) = fields.get("type") {
        ctx.choice(kind, "MCP server type", &MCP_TYPES);
    }
    let tools = match fields.get("tools") {
        Some(value) => ctx
            .name_list(value, &format!("the tools of `{name}`"))
            .unwrap_or_default(),
        None => Vec::new(),
    };
    Some(McpServerRef {
        name,
        inline: true,
        tools,
    })
}

/// The map `node` without its unknown keys. Those are reported as warnings when `warn`
/// (DEF-13 ignores unknown frontmatter fields silently; a typo deserves a hint), and
/// dropped either way. Keys in `ignored` are kept, without a warning. Anything but a map
/// is an error.
pub(crate) fn drop_unknown(
    ctx: &mut Ctx<'_>,
    node: &Node,
    what: &str,
    known: &[&str],
    ignored: &[&str],
    warn: bool,
) -> Option<Node> {
    let entries = match &node.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) | Value::Seq(..) => {
            ctx.error(
                node.span,
                format!("{what} must be a map of fields, found {}", node.describe()),
            );
            return None;
        }
    };
    let mut kept = Vec::new();
    for (key, value) in entries {
        match &key.value {
            Value::Str(name)
                if !known.contains(&name.as_str()) && !ignored.contains(&name.as_str()) =>
            {
                if warn {
                    let hint = did_you_mean(name, known);
                    ctx.warn(
                        key.span,
                        format!("unrecognised field `{name}` of {what} is ignored{hint}"),
                        Some(format!("fields are {}", list_names(known))),
                    );
                }
            }
            _ => kept.push((key.clone(), value.clone())),
        }
    }
    Some(Node {
        value: Value::Map(kept),
        span: node.span,
    })
}
