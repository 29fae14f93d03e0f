//! The `agents` block → candidate [`AgentDef`]s, inline or loaded from agent Markdown
//! files (`file:`). The definition fields themselves are read by the `fields` module, the
//! same way as for definition files and `--agents` JSON.
//!
//! Not for resolving same-named definitions or scanning directories: the `definitions`
//! module does both, for inline and file definitions alike.

use std::path::PathBuf;
use subsim_rules::id;

use subsim_engine::spec::AgentDef;

use crate::check::Ctx;
use crate::definitions::{Candidate, Group, Loader, Markdown};
use crate::fields::{definition_fields, Origin, DEFINITION_KEYS};
use crate::raw::{Node, Value};
use crate::session::{normalise, scope_of, SCOPES};
use crate::steps::{steps, Script};

/// The agent types that exist without being defined: the built-ins
/// (`rules::model::BuiltIn`, the one list) and `fork`.
pub(crate) fn built_in_types() -> impl Iterator<Item = &'static str> {
    subsim_rules::model::BuiltIn::REGISTRATION
        .into_iter()
        .map(subsim_rules::model::BuiltIn::name)
        .chain(["fork"])
}

/// Keys the simulator adds to inline definitions (`prompt` is `--agents` JSON's field).
const SIMULATOR_KEYS: [&str; 4] = ["scope", "behavior", "file", "prompt"];
/// Keys a definition with `file:` may still carry inline.
const WITH_FILE_KEYS: [&str; 3] = ["scope", "behavior", "file"];
fn all_inline_keys() -> Vec<&'static str> {
    DEFINITION_KEYS
        .iter()
        .chain(SIMULATOR_KEYS.iter())
        .copied()
        .collect()
}

/// Reads the `agents` block into `loader`; returns `(agent key, resolved path)` of every
/// `file:` definition.
pub(crate) fn agents(
    ctx: &mut Ctx<'_>,
    node: Option<&Node>,
    loader: &mut Loader,
) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    let Some(node) = node else { return files };
    let entries = match &node.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        Value::Bool(..) | Value::Int(..) | Value::Float(..) | Value::Str(..) | Value::Seq(..) => {
            ctx.error_help(
                node.span,
                format!(
                    "`agents` must be a map from agent names to definitions, found {}",
                    node.describe()
                ),
                "e.g. `agents: {researcher: {description: \"Finds things\", tools: [Read, Grep]}}`",
            );
            return files;
        }
    };
    let mut seen: Vec<&str> = Vec::new();
    for (index, (key, value)) in entries.iter().enumerate() {
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
        if let Some(candidate) = definition(ctx, name, key, value, index, loader, &mut files) {
            loader.add(ctx, candidate);
        }
    }
    files
}

fn definition(
    ctx: &mut Ctx<'_>,
    key: &str,
    key_node: &Node,
    node: &Node,
    index: usize,
    loader: &mut Loader,
    files: &mut Vec<(String, PathBuf)>,
) -> Option<Candidate> {
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
    let (mut def, shown, span) = match fields.get("file") {
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
            let shown = normalise(&path_text);
            match loader.markdown(ctx, file.span, &shown, &path, scope, None) {
                Markdown::Unreadable(message) => {
                    ctx.error_help(
                        file.span,
                        format!("cannot read agent file `{path_text}`: {message}"),
                        format!(
                            "`file:` paths are relative to the scenario file's directory ({}) and \
                             stay inside it; to read a file elsewhere, run with `--allow-path DIR`",
                            ctx.folder().display()
                        ),
                    );
                    return None;
                }
                Markdown::Skipped { name, reason, why } => {
                    loader.skipped(
                        ctx,
                        file.span,
                        &shown,
                        scope,
                        name,
                        reason,
                        &why,
                        id::DEF_10,
                        format!("agent `{key}` is not defined; spawning it is rejected as an unknown type"),
                    );
                    return None;
                }
                Markdown::Def(mut def, fallback) => {
                    def.scope = scope;
                    def.source = Some(shown.clone());
                    if let Some(why) = fallback {
                        loader.fell_back(ctx, file.span, &def, &shown, why);
                    }
                    (*def, shown, file.span)
                }
            }
        }
        None => {
            let mut def = AgentDef {
                name: key.to_string(),
                ..AgentDef::default()
            };
            definition_fields(ctx, &fields, &mut def, Origin::Scenario);
            (def, loader.scenario.clone(), key_node.span)
        }
    };
    def.scope = scope;
    def.behavior = behavior;
    Some(Candidate {
        def,
        group: Group::Inline,
        index,
        shown,
        relative: String::new(),
        span,
    })
}
