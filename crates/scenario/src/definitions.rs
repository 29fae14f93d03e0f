//! Definition files, loaded the way Claude Code loads them (DEF-1…16), and the resolution
//! of same-named definitions into the set a session runs with.
//!
//! Three sources feed one [`Loader`]:
//! - `session.agent_dirs` directories, scanned recursively for `*.md` (DEF-4, DEF-5);
//! - `session.agent_dirs` `cli` entries: the `--agents` JSON object (DEF-7, DEF-8);
//! - the scenario's own `agents:` block, inline or `file:` (the `agents` module reads it).
//!
//! Every definition read from a file ends as exactly one outcome note — `Loaded`,
//! `Skipped` (with the documented reason) or `Shadowed` (naming the winner) — plus
//! `Warning` notes for ignored fields and the description budget. Inline definitions get
//! a note only when shadowed. Claude Code skips broken files silently; the simulator says
//! why, both as notes (the engine reports them at time 0) and as validation warnings.
//!
//! Not for deciding anything at run time: which definition a spawn gets (bare plugin
//! names, Q-32), trust (HOOK-6, MCP-3) and hook firing are the engine's.
//!
//! Decisions, with the open questions of the rule catalog they settle:
//! - priority (DEF-1): managed > cli > project > user > plugin;
//! - several `project` entries are listed nearest-to-the-working-directory first, and the
//!   nearest wins (DEF-2, applied at every version although the catalog states it "as of
//!   v2.1.178", DE only); `add_dir: true` entries rank below all of them, in listing order
//!   the scenario's inline definitions of a scope rank above every directory of
//!   that scope (they stand for the working directory's own `.claude/agents/`);
//! - two files of one directory tree with the same `name`: the first in byte order of the
//!   relative path wins; `/doctor` would report the pair (DEF-4);
//! - a plugin file's scoped id is `plugin:folder:…:name`, `name` being the frontmatter's
//!   (or the file name, DEF-11);
//! - frontmatter that opens with `---` but never closes is read as no frontmatter;
//! - symlinked directories are not followed (files are), at most 32 levels and 10,000
//!   files per entry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use subsim_engine::spec::{AgentDef, DefinitionNote, DefinitionOutcome, Scope};
use subsim_rules::id;
use subsim_rules::scope::CliSkip;
use subsim_rules::spawn::{CHARS_PER_TOKEN, DESCRIPTION_BUDGET_TOKENS};
use subsim_rules::{gates_table, scope, Gates, SessionKind, Version};

use crate::check::Ctx;
use crate::diagnostic::Diagnostic;
use crate::fields::{definition_fields, drop_unknown, Origin, DEFINITION_KEYS};
use crate::raw::{self, Node, Span, Value};
use crate::read::{read_text, Confine};
use crate::session::DirEntry;

/// Longest definition name (DEF-10, ES; D-8: ES is newer, so it applies at every version).
const MAX_NAME_CHARS: usize = 256;
/// Deepest folder level scanned below an `agent_dirs` entry.
const MAX_SCAN_DEPTH: usize = 32;
/// Most `.md` files read from one `agent_dirs` entry.
const MAX_SCAN_FILES: usize = 10_000;
/// Fields of an `--agents` JSON value that are ignored, not rejected (DEF-7).
const JSON_IGNORED: [&str; 2] = subsim_rules::scope::CLI_IGNORED_FIELDS;

/// The documented reasons a file is skipped (DEF-10). Each `Skip` also says, for the
/// validation warning, what in the file led there.
pub(crate) const NO_NAME: &str = "treated as documentation";
/// DEF-10: the opening `---` is not on the first line.
pub(crate) const NO_FRONTMATTER: &str = "no frontmatter; treated as documentation";
/// DEF-10: `name` starts with `-`.
pub(crate) const NAME_DASH: &str = "name starts with `-`";
/// DEF-10: `name` contains `:` (from v2.1.218).
pub(crate) const NAME_COLON: &str = "name contains `:`";
/// DEF-10 (ES): `name` longer than 256 characters.
pub(crate) const NAME_TOO_LONG: &str = "name is longer than 256 characters";
/// DEF-10: `name` but no `description`.
pub(crate) const NO_DESCRIPTION: &str = "name present but no description";
/// DEF-10: the frontmatter is not YAML (the parse error follows).
pub(crate) const YAML_FAILS: &str = "YAML fails to parse";

/// Where a candidate definition came from, for ranking within its scope (DEF-1…4: the
/// rules crate's [`subsim_rules::scope::Found`]).
pub(crate) use subsim_rules::scope::Found as Group;

/// One definition that may end up in effect.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    /// The definition (name = agent name or scoped plugin id).
    pub def: AgentDef,
    /// Inline, directory or `--add-dir` directory.
    pub group: Group,
    /// Position of the `agents:` key or the `agent_dirs` entry.
    pub index: usize,
    /// The path notes show: the file relative to the scenario's folder, or the scenario
    /// file itself for an inline definition.
    pub shown: String,
    /// The path relative to its directory entry (Q-31's order); empty when inline.
    pub relative: String,
    /// Where warnings about it point in the scenario.
    pub span: Span,
}

impl Candidate {
    /// What DEF-1…4 read of it ([`scope::shadowing`], [`scope::Candidate::rank`]).
    fn ranked(&self) -> scope::Candidate {
        scope::Candidate {
            scope: self.def.scope,
            found: self.group,
            entry: self.index,
        }
    }

    fn is_file(&self) -> bool {
        self.def.source.is_some()
    }

    /// How the winner is named in a `Shadowed` note.
    fn who(&self) -> String {
        if self.is_file() {
            format!("`{}`", self.shown)
        } else {
            format!("`agents.{}` in `{}`", self.def.name, self.shown)
        }
    }
}

/// What reading one agent Markdown file gave.
pub(crate) enum Markdown {
    /// A definition, with the DEF-11 reason when a plugin file fell back to its file name.
    Def(Box<AgentDef>, Option<String>),
    /// Skipped (DEF-10): the documented reason, and what in the file led there.
    Skipped {
        /// The name, when the frontmatter had one.
        name: Option<String>,
        /// The documented reason.
        reason: String,
        /// What in the file led there.
        why: String,
    },
    /// The file could not be read at all.
    Unreadable(String),
}

/// A plugin file's place: the plugin's name and the folders between `agents/` and the file.
pub(crate) struct PluginPlace<'a> {
    /// The plugin's name.
    pub plugin: &'a str,
    /// Sub-folders, outermost first.
    pub folders: Vec<&'a str>,
}

/// Collects candidates and notes, then resolves them.
pub(crate) struct Loader {
    /// The rules' version (the `:` gate of DEF-10, DEF-8's gates).
    pub version: Version,
    /// The session kind (DEF-8).
    pub kind: SessionKind,
    /// The scenario file's name, the path of inline definitions' notes.
    pub scenario: String,
    candidates: Vec<Candidate>,
    notes: Vec<DefinitionNote>,
}

impl Loader {
    /// An empty loader.
    pub fn new(version: Version, kind: SessionKind, scenario_file: &str) -> Loader {
        let scenario = Path::new(scenario_file)
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| scenario_file.to_string());
        Loader {
            version,
            kind,
            scenario,
            candidates: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn note(
        &mut self,
        name: Option<String>,
        path: &str,
        scope: Scope,
        outcome: DefinitionOutcome,
        reason: Option<String>,
        rule: &'static str,
    ) {
        self.notes.push(DefinitionNote {
            name,
            path: path.to_string(),
            scope,
            outcome,
            reason,
            rule,
        });
    }

    /// Records a skipped file: a `Skipped` note, and a warning at `span`.
    #[allow(clippy::too_many_arguments)] // each is one fact of the note or the warning
    pub fn skipped(
        &mut self,
        ctx: &mut Ctx<'_>,
        span: Span,
        shown: &str,
        scope: Scope,
        name: Option<String>,
        reason: String,
        why: &str,
        rule: &'static str,
        help: String,
    ) {
        ctx.warn(
            span,
            format!("`{shown}` is skipped ({why}): {reason} ({rule})"),
            Some(help),
        );
        self.note(
            name,
            shown,
            scope,
            DefinitionOutcome::Skipped,
            Some(reason),
            rule,
        );
    }

    /// Adds a candidate. For plugin definitions, the fields DEF-6 ignores are dropped,
    /// each with a `Warning` note.
    pub fn add(&mut self, ctx: &mut Ctx<'_>, mut candidate: Candidate) {
        if candidate.def.scope == Scope::Plugin {
            let def = &mut candidate.def;
            let mut ignored = Vec::new();
            if !def.hooks.is_empty() {
                def.hooks.clear();
                ignored.push("hooks");
            }
            if !def.mcp_servers.is_empty() {
                def.mcp_servers.clear();
                ignored.push("mcpServers");
            }
            if def.permission_mode.take().is_some() {
                ignored.push("permissionMode");
            }
            if def.initial_prompt.take().is_some() {
                ignored.push("initialPrompt");
            }
            for field in ignored {
                let reason = format!("`{field}` is ignored for plugin subagents");
                ctx.warn(
                    candidate.span,
                    format!("`{}`: {reason} (DEF-6)", candidate.shown),
                    Some("copy the file into a project or user directory to use it".to_string()),
                );
                let name = Some(candidate.def.name.clone());
                let shown = candidate.shown.clone();
                self.note(
                    name,
                    &shown,
                    Scope::Plugin,
                    DefinitionOutcome::Warning,
                    Some(reason),
                    id::DEF_6,
                );
            }
        }
        self.candidates.push(candidate);
    }

    /// A `Warning` note about a candidate's file (DEF-7's ignored JSON fields).
    fn warning_note(
        &mut self,
        name: &str,
        shown: &str,
        scope: Scope,
        reason: String,
        rule: &'static str,
    ) {
        self.note(
            Some(name.to_string()),
            shown,
            scope,
            DefinitionOutcome::Warning,
            Some(reason),
            rule,
        );
    }

    /// DEF-11: a plugin file without a usable `name` loads under its file name; a warning
    /// and a `Warning` note say so.
    pub fn fell_back(
        &mut self,
        ctx: &mut Ctx<'_>,
        span: Span,
        def: &AgentDef,
        shown: &str,
        why: String,
    ) {
        ctx.warn(
            span,
            format!("plugin file `{shown}`: {why}, as `{}` (DEF-11)", def.name),
            None,
        );
        self.warning_note(&def.name, shown, def.scope, why, id::DEF_11);
    }

    /// Reads one agent Markdown file (DEF-10, DEF-11, DEF-13). Problems inside the file
    /// are reported at `at` (the `file:` value or the `agent_dirs` entry), saying where in
    /// the file they are.
    pub fn markdown(
        &self,
        ctx: &mut Ctx<'_>,
        at: Span,
        shown: &str,
        path: &Path,
        scope: Scope,
        plugin: Option<&PluginPlace<'_>>,
    ) -> Markdown {
        let text = match read_limited(path, &ctx.confine) {
            Ok(text) => text,
            Err(message) => return Markdown::Unreadable(message),
        };
        let file_name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let is_plugin = scope == Scope::Plugin;
        let scoped = |name: &str| match plugin {
            Some(place) => {
                let mut parts = vec![place.plugin];
                parts.extend(place.folders.iter().copied());
                parts.push(name);
                parts.join(":")
            }
            None => name.to_string(),
        };
        // DEF-11: a plugin file without a name, or whose frontmatter does not parse,
        // still loads under its file name. Everywhere else the file is skipped.
        // The body is the prompt (DEF-13); without frontmatter, the whole file is.
        let split = split_frontmatter(&text);
        let prompt = match split {
            Some((Some(frontmatter), offset)) => body(&text, offset, frontmatter.len()),
            _ => text.trim().to_string(),
        };
        let fallback = |name: Option<String>, reason: &str, why: String| {
            if is_plugin {
                let def = AgentDef {
                    name: scoped(&file_name),
                    prompt: Some(prompt.clone()),
                    ..AgentDef::default()
                };
                Markdown::Def(
                    Box::new(def),
                    Some(format!("{why}: loaded under its file name")),
                )
            } else {
                Markdown::Skipped {
                    name,
                    reason: reason.to_string(),
                    why,
                }
            }
        };
        let (frontmatter, offset) = match split {
            Some((Some(frontmatter), offset)) => (frontmatter, offset),
            Some((None, _)) => {
                return fallback(
                    None,
                    NO_FRONTMATTER,
                    "its opening `---` is never closed".to_string(),
                )
            }
            None => {
                return fallback(
                    None,
                    NO_FRONTMATTER,
                    "its first line is not `---`".to_string(),
                )
            }
        };
        let root = match raw::parse(frontmatter) {
            Ok(root) => root,
            Err(error) => {
                let line = error.span.line + line_of(&text, offset) - 1;
                let message = error.message.trim_start_matches("invalid YAML: ");
                return fallback(
                    None,
                    &format!("{YAML_FAILS}: line {line}: {message}"),
                    "its frontmatter is not YAML".to_string(),
                );
            }
        };
        if !matches!(root.value, Value::Map(_) | Value::Null) {
            return fallback(
                None,
                NO_NAME,
                format!(
                    "its frontmatter is {}, not a map of fields",
                    root.describe()
                ),
            );
        }

        // Validate the frontmatter in a context of its own, then report its findings at
        // `at`, since diagnostics' snippets point into the scenario file.
        let mut inner = Ctx::new(shown, ctx.base_dir);
        inner.line_shift = line_of(&text, offset) - 1;
        inner.session_tools = ctx.session_tools.clone();
        inner.version = ctx.version;
        let mut def = AgentDef::default();
        let name = frontmatter_fields(&mut inner, &root, &mut def);
        relay(ctx, at, shown, &text, offset, inner.errors, true);
        relay(ctx, at, shown, &text, offset, inner.warnings, false);
        def.prompt = Some(prompt.clone());

        let name = name.filter(|name| !name.trim().is_empty());
        let Some(name) = name else {
            return match fallback(None, NO_NAME, "no `name` in its frontmatter".to_string()) {
                Markdown::Def(fallen, why) => {
                    def.name = fallen.name;
                    Markdown::Def(Box::new(def), why)
                }
                skipped => skipped,
            };
        };
        if let Some((reason, why)) = bad_name(&name, self.version) {
            return Markdown::Skipped {
                name: Some(name),
                reason: reason.to_string(),
                why,
            };
        }
        // DEF-10 lists project, user, managed and `--add-dir` directories; plugin files
        // load without a description.
        if def.description.trim().is_empty() && !is_plugin {
            return Markdown::Skipped {
                why: format!("`{name}` has no `description`"),
                name: Some(name),
                reason: NO_DESCRIPTION.to_string(),
            };
        }
        def.name = scoped(&name);
        Markdown::Def(Box::new(def), None)
    }

    /// Loads every `agent_dirs` entry, in listing order.
    pub fn load_dirs(&mut self, ctx: &mut Ctx<'_>, dirs: &[DirEntry]) {
        for (index, entry) in dirs.iter().enumerate() {
            if entry.dir.scope == Scope::Cli {
                self.load_cli_json(ctx, index, entry);
            } else {
                self.load_dir(ctx, index, entry);
            }
        }
    }

    fn load_dir(&mut self, ctx: &mut Ctx<'_>, index: usize, entry: &DirEntry) {
        let scope = entry.dir.scope;
        if let Err(message) = ctx.confine.check(&entry.dir.path) {
            ctx.error_help(
                entry.span,
                format!("cannot read agent directory `{}`: {message}", entry.shown),
                "`agent_dirs` paths are relative to the scenario file's folder and stay inside it; \
                 to read a folder elsewhere (such as the user scope's `~/.claude/agents`), run with \
                 `--allow-path DIR`",
            );
            return;
        }
        match std::fs::metadata(&entry.dir.path) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => {
                ctx.error_help(
                    entry.span,
                    format!(
                        "`{}` is a file, not a directory of agent files",
                        entry.shown
                    ),
                    "to load one agent file, write `agents: {NAME: {file: PATH}}`",
                );
                return;
            }
            Err(error) => {
                ctx.error_help(
                    entry.span,
                    format!("cannot read agent directory `{}`: {error}", entry.shown),
                    format!(
                        "`agent_dirs` paths are relative to the scenario file's directory ({})",
                        ctx.folder().display()
                    ),
                );
                return;
            }
        }
        let scan = scan(&entry.dir.path, &entry.shown);
        for problem in &scan.problems {
            ctx.warn(
                entry.span,
                format!("while scanning `{}`: {problem}", entry.shown),
                None,
            );
        }
        let group = if entry.dir.add_dir {
            Group::AddDir
        } else {
            Group::Dir
        };
        for (relative, path) in scan.files {
            let shown = format!("{}/{relative}", entry.shown.trim_end_matches('/'));
            let folders: Vec<&str> = relative
                .split('/')
                .collect::<Vec<_>>()
                .split_last()
                .map(|(_, folders)| folders.to_vec())
                .unwrap_or_default();
            let place = entry
                .dir
                .plugin
                .as_deref()
                .map(|plugin| PluginPlace { plugin, folders });
            let read = self.markdown(ctx, entry.span, &shown, &path, scope, place.as_ref());
            let help = "Claude Code skips it without a report in the session; the reason goes to the debug log (`--debug`)".to_string();
            match read {
                Markdown::Unreadable(message) => self.skipped(
                    ctx,
                    entry.span,
                    &shown,
                    scope,
                    None,
                    format!("cannot be read: {message}"),
                    "unreadable",
                    id::DEF_10,
                    help,
                ),
                Markdown::Skipped { name, reason, why } => self.skipped(
                    ctx,
                    entry.span,
                    &shown,
                    scope,
                    name,
                    reason,
                    &why,
                    id::DEF_10,
                    help,
                ),
                Markdown::Def(mut def, fallback) => {
                    def.scope = scope;
                    def.source = Some(shown.clone());
                    def.plugin = entry.dir.plugin.clone();
                    if let Some(why) = fallback {
                        self.fell_back(ctx, entry.span, &def, &shown, why);
                    }
                    self.add(
                        ctx,
                        Candidate {
                            def: *def,
                            group,
                            index,
                            shown,
                            relative,
                            span: entry.span,
                        },
                    );
                }
            }
        }
    }

    /// A `cli` entry: the `--agents` JSON object (DEF-7, DEF-8). JSON is YAML 1.2, so the
    /// YAML reader parses it and keeps line and column for every problem.
    fn load_cli_json(&mut self, ctx: &mut Ctx<'_>, index: usize, entry: &DirEntry) {
        let shown = entry.shown.clone();
        if entry.dir.passed_as_path {
            // DEF-8: the file form needs v2.1.281, and only non-interactive sessions take it.
            if !Gates::for_version(self.version).agents_file_path {
                ctx.error_help(
                    entry.span,
                    format!(
                        "`--agents` takes a file path from v{}; this scenario runs v{} (DEF-8)",
                        gates_table::since("agents_file_path"),
                        self.version
                    ),
                    "leave out `passed_as: path` to pass the JSON itself",
                );
                return;
            }
            if self.kind == SessionKind::Interactive {
                ctx.error_help(
                    entry.span,
                    "an interactive session rejects a file path for `--agents` (DEF-8)",
                    "use `session.kind: headless` (claude -p) or `sdk`, or leave out `passed_as: path` to pass the JSON itself",
                );
                return;
            }
        }
        let text = match read_limited(&entry.dir.path, &ctx.confine) {
            Ok(text) => text,
            Err(message) => {
                ctx.error_help(
                    entry.span,
                    format!("cannot read the `--agents` JSON file `{shown}`: {message}"),
                    "a `cli` entry's `path` is a JSON file holding the `--agents` object, relative to the scenario file",
                );
                return;
            }
        };
        let root = match raw::parse(&text) {
            Ok(root) => root,
            Err(error) => {
                ctx.error_help(
                    entry.span,
                    format!(
                        "`{shown}` at {}:{}: {} (Invalid --agents configuration)",
                        error.span.line, error.span.column, error.message
                    ),
                    "the file holds one JSON object: `{\"NAME\": {\"description\": …, \"prompt\": …}}` (DEF-7)",
                );
                return;
            }
        };
        let Value::Map(entries) = &root.value else {
            ctx.error_help(
                entry.span,
                format!(
                    "`{shown}` must hold a JSON object of agents, found {} (Invalid --agents configuration)",
                    root.describe()
                ),
                "e.g. `{\"reviewer\": {\"description\": \"Reviews code\", \"prompt\": \"You review code.\"}}` (DEF-7)",
            );
            return;
        };
        let mut inner = Ctx::new(&shown, ctx.base_dir);
        let mut seen: Vec<String> = Vec::new();
        let mut loaded = Vec::new();
        for (key, value) in entries {
            let Some(name) = inner.key_name(key).map(str::to_string) else {
                continue;
            };
            if seen.contains(&name) {
                inner.error(key.span, format!("duplicate agent `{name}`"));
                continue;
            }
            seen.push(name.clone());
            let help = "Claude Code reports `Invalid --agents configuration`".to_string();
            let skip =
                |loader: &mut Loader, ctx: &mut Ctx<'_>, reason: String, why: String, rule| {
                    loader.skipped(
                        ctx,
                        entry.span,
                        &shown,
                        Scope::Cli,
                        Some(name.clone()),
                        reason,
                        &why,
                        rule,
                        help.clone(),
                    );
                };
            if let Some((_, rule)) = subsim_rules::scope::cli_name_skipped(&name) {
                skip(
                    self,
                    ctx,
                    NAME_DASH.to_string(),
                    format!("agent `{name}`"),
                    rule,
                );
                continue;
            }
            let what = format!("agent `{name}`");
            let Some(value) =
                drop_unknown(&mut inner, value, &what, &json_keys(), &JSON_IGNORED, true)
            else {
                continue;
            };
            let Some(fields) = inner.fields(&value, &what, &json_keys_with_ignored()) else {
                continue;
            };
            let mut def = AgentDef {
                name: name.clone(),
                ..AgentDef::default()
            };
            definition_fields(&mut inner, &fields, &mut def, Origin::File);
            def.color = None;
            let ignored: Vec<&str> = JSON_IGNORED
                .into_iter()
                .filter(|field| fields.get(field).is_some())
                .collect();
            let prompt = def.prompt.clone().unwrap_or_default();
            let gates = Gates::for_version(self.version);
            if let Some((skipped, rule)) =
                subsim_rules::scope::cli_fields_skipped(&def.description, &prompt, &gates)
            {
                let (reason, why) = match skipped {
                    CliSkip::NoDescription => (
                        "no description".to_string(),
                        format!("agent `{name}` has no `description`"),
                    ),
                    CliSkip::EmptyPrompt => (
                        format!(
                            "empty prompt (allowed from v{})",
                            gates_table::since("empty_agent_prompt")
                        ),
                        format!("agent `{name}` has an empty `prompt`"),
                    ),
                    CliSkip::NameDash => (NAME_DASH.to_string(), format!("agent `{name}`")),
                };
                skip(self, ctx, reason, why, rule);
                continue;
            }
            for field in ignored {
                self.warning_note(
                    &name,
                    &shown,
                    Scope::Cli,
                    format!("`{field}` is ignored in `--agents` JSON"),
                    subsim_rules::scope::CLI_IGNORED_RULE,
                );
            }
            def.prompt = Some(prompt);
            def.scope = Scope::Cli;
            def.source = Some(shown.clone());
            loaded.push(def);
        }
        relay(ctx, entry.span, &shown, &text, 0, inner.errors, true);
        relay(ctx, entry.span, &shown, &text, 0, inner.warnings, false);
        for def in loaded {
            self.add(
                ctx,
                Candidate {
                    def,
                    group: Group::Dir,
                    index,
                    shown: shown.clone(),
                    relative: String::new(),
                    span: entry.span,
                },
            );
        }
    }

    /// Resolves same-named candidates (DEF-1…4), writes the outcome notes and checks the
    /// description budget (SPAWN-15). `budget_at` is where its warning points.
    pub fn finish(
        mut self,
        ctx: &mut Ctx<'_>,
        budget_at: Span,
    ) -> (BTreeMap<String, AgentDef>, Vec<DefinitionNote>) {
        let mut order: Vec<usize> = (0..self.candidates.len()).collect();
        order.sort_by(|&a, &b| rank(&self.candidates[a]).cmp(&rank(&self.candidates[b])));
        let mut winners: BTreeMap<String, usize> = BTreeMap::new();
        for &index in &order {
            let name = self.candidates[index].def.name.clone();
            let Some(&winner) = winners.get(&name) else {
                winners.insert(name, index);
                continue;
            };
            // DEF-1…4: the rules say why the winner shadows it.
            let shadowing = scope::shadowing(
                self.candidates[winner].ranked(),
                self.candidates[index].ranked(),
            );
            let (rule, why) = (shadowing.rule(), shadowing.why());
            let winner_who = self.candidates[winner].who();
            let loser = &self.candidates[index];
            let reason = format!("shadowed by {winner_who}: {why}");
            if loser.group == Group::Inline
                || self.candidates[winner].group == Group::Inline
                || rule == id::DEF_4
            {
                ctx.warn(
                    loser.span,
                    format!(
                        "two definitions are named `{name}`; {} is {reason} ({rule})",
                        loser.who()
                    ),
                    (rule == id::DEF_4).then(|| "give each definition its own `name`".to_string()),
                );
            }
            let (scope, shown) = (loser.def.scope, loser.shown.clone());
            self.note(
                Some(name),
                &shown,
                scope,
                DefinitionOutcome::Shadowed,
                Some(reason),
                rule,
            );
        }
        for &index in winners.values() {
            let candidate = &self.candidates[index];
            if candidate.is_file() {
                let (name, shown, scope) = (
                    candidate.def.name.clone(),
                    candidate.shown.clone(),
                    candidate.def.scope,
                );
                self.note(
                    Some(name),
                    &shown,
                    scope,
                    DefinitionOutcome::Loaded,
                    None,
                    id::DEF_1,
                );
            }
        }
        let mut notes = std::mem::take(&mut self.notes);
        // Scope priority, then path, then name (a JSON file or the scenario holds several);
        // a definition's outcome before its warnings, which keep the order they were
        // found in (the sort is stable).
        notes.sort_by(|a, b| note_order(a).cmp(&note_order(b)));

        let mut defs = BTreeMap::new();
        let mut slots: Vec<Option<Candidate>> = self.candidates.into_iter().map(Some).collect();
        for (name, index) in winners {
            if let Some(candidate) = slots[index].take() {
                defs.insert(name, candidate.def);
            }
        }

        // SPAWN-15: the combined descriptions of the non-built-in definitions in effect.
        let chars: usize = defs
            .values()
            .filter(|def| def.scope != Scope::BuiltIn)
            .map(|def| def.description.chars().count())
            .sum();
        if let Some((tokens, rule)) = subsim_rules::spawn::description_budget(chars) {
            let reason = format!(
                "agent descriptions total {tokens} tokens ({chars} characters / {CHARS_PER_TOKEN}, Q-33), over the {DESCRIPTION_BUDGET_TOKENS}-token limit; every subagent is still loaded"
            );
            ctx.warn(budget_at, format!("{reason} ({rule})"), None);
            notes.push(DefinitionNote {
                name: None,
                path: self.scenario.clone(),
                scope: Scope::default(),
                outcome: DefinitionOutcome::Warning,
                reason: Some(reason),
                rule,
            });
        }
        (defs, notes)
    }
}

/// Where a candidate ranks ([`scope::Candidate::rank`]: scope priority, DEF-1; inline
/// before directories before `--add-dir` directories, Q-30; listing order, DEF-2), then
/// path.
fn rank(candidate: &Candidate) -> ((u8, Group, usize), &str) {
    (candidate.ranked().rank(), &candidate.relative)
}

/// The order of notes: scope, path, name, a definition's outcome before its warnings.
fn note_order(note: &DefinitionNote) -> (u8, &str, Option<&str>, bool) {
    (
        note.scope.priority(),
        &note.path,
        note.name.as_deref(),
        note.outcome == DefinitionOutcome::Warning,
    )
}

/// Frontmatter keys: `name`, the shared fields, and `experimental` (files only).
fn frontmatter_keys() -> Vec<&'static str> {
    let mut keys = vec!["name"];
    keys.extend(DEFINITION_KEYS);
    keys.push("experimental");
    keys
}

/// `--agents` JSON keys (DEF-7): the shared fields but `color`, plus `prompt`.
fn json_keys() -> Vec<&'static str> {
    let mut keys: Vec<&str> = DEFINITION_KEYS
        .iter()
        .copied()
        .filter(|key| *key != "color")
        .collect();
    keys.push("prompt");
    keys
}

fn json_keys_with_ignored() -> Vec<&'static str> {
    let mut keys = json_keys();
    keys.extend(JSON_IGNORED);
    keys
}

/// Reads the frontmatter map; returns its `name`. Unknown fields are ignored with a
/// warning (DEF-13 ignores them silently; a typo deserves a hint).
fn frontmatter_fields(ctx: &mut Ctx<'_>, root: &Node, def: &mut AgentDef) -> Option<String> {
    let known = frontmatter_keys();
    let filtered = drop_unknown(ctx, root, "the frontmatter", &known, &[], true)?;
    let fields = ctx.fields(&filtered, "the frontmatter", &known)?;
    definition_fields(ctx, &fields, def, Origin::File);
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

/// Why a frontmatter `name` makes the file skipped (DEF-10), if it does: the documented
/// reason and what the name was.
fn bad_name(name: &str, version: Version) -> Option<(&'static str, String)> {
    let shown: String = name.chars().take(40).collect();
    if name.starts_with('-') {
        Some((NAME_DASH, format!("`name: {shown}`")))
    } else if name.contains(':') && Gates::for_version(version).colon_names_skipped {
        // DEF-10 gate (DE): names containing `:` were accepted before v2.1.218.
        Some((NAME_COLON, format!("`name: {shown}`")))
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some((
            NAME_TOO_LONG,
            format!("a {}-character `name`", name.chars().count()),
        ))
    } else {
        None
    }
}

/// The Markdown body after the closing `---`, the system prompt (DEF-13).
fn body(text: &str, offset: usize, frontmatter_len: usize) -> String {
    let after = offset + frontmatter_len;
    let rest = text.get(after..).unwrap_or("");
    // Skip the closing `---` line itself.
    let rest = rest.split_once('\n').map(|(_, body)| body).unwrap_or("");
    rest.trim().to_string()
}

/// Copies diagnostics found inside a definition file onto `at` in the scenario, saying
/// where in the file they are.
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
pub(crate) fn split_frontmatter(text: &str) -> Option<(Option<&str>, usize)> {
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

/// Reads a file a scenario names: only a regular file, inside the folders `confine`
/// allows, at most as large as a scenario may be, and UTF-8.
pub(crate) fn read_limited(path: &Path, confine: &Confine) -> Result<String, String> {
    confine.check(path)?;
    confine.note_read(path);
    read_text(path, true).map_err(|error| error.to_string())
}

/// What scanning one directory found.
struct Scan {
    /// `(relative path with `/`, full path)` of every `*.md` file, in byte order of the
    /// relative path.
    files: Vec<(String, PathBuf)>,
    /// What could not be scanned.
    problems: Vec<String>,
}

/// Scans `root` recursively for `*.md` files (DEF-4, DEF-5); `shown` is how problems name
/// `root` itself.
fn scan(root: &Path, shown: &str) -> Scan {
    let mut scan = Scan {
        files: Vec::new(),
        problems: Vec::new(),
    };
    let mut pending: Vec<(PathBuf, String, usize)> = vec![(root.to_path_buf(), String::new(), 0)];
    while let Some((dir, prefix, depth)) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                let folder = if prefix.is_empty() { shown } else { &prefix };
                scan.problems
                    .push(format!("cannot read `{folder}`: {error}"));
                continue;
            }
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            // Symlinked directories are not followed (no loops); symlinked files are read.
            let is_file = kind.is_file()
                || (kind.is_symlink()
                    && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()));
            if kind.is_dir() {
                if depth + 1 > MAX_SCAN_DEPTH {
                    scan.problems.push(format!(
                        "`{relative}` is more than {MAX_SCAN_DEPTH} folders deep and is not scanned"
                    ));
                } else {
                    pending.push((entry.path(), relative, depth + 1));
                }
            } else if is_file && name.ends_with(".md") {
                if scan.files.len() >= MAX_SCAN_FILES {
                    scan.problems.push(format!(
                        "more than {MAX_SCAN_FILES} `.md` files; the rest are not read"
                    ));
                    pending.clear();
                    break;
                }
                scan.files.push((relative, entry.path()));
            }
        }
    }
    scan.files.sort_by(|a, b| a.0.cmp(&b.0));
    scan.problems.sort();
    scan.problems.dedup();
    scan
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
    fn the_body_is_the_prompt() {
        let text = "---\nname: a\n---\nYou review code.\n\nBe brief.\n";
        let (frontmatter, offset) = match split_frontmatter(text) {
            Some((Some(frontmatter), offset)) => (frontmatter, offset),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            body(text, offset, frontmatter.len()),
            "You review code.\n\nBe brief."
        );
        assert_eq!(body("---\nname: a\n---", 4, 8), "");
    }

    #[test]
    fn names_that_skip_a_file() {
        let new = Version::NEWEST;
        assert!(bad_name("reviewer", new).is_none());
        assert_eq!(
            bad_name("-x", new).map(|(reason, _)| reason),
            Some(NAME_DASH)
        );
        assert_eq!(
            bad_name("a:b", new).map(|(reason, _)| reason),
            Some(NAME_COLON)
        );
        assert!(bad_name("a:b", Version::v2_1(217)).is_none());
        assert_eq!(
            bad_name(&"x".repeat(257), new).map(|(reason, _)| reason),
            Some(NAME_TOO_LONG)
        );
        assert!(bad_name(&"x".repeat(256), new).is_none());
    }

    #[test]
    fn the_unreadable_folder_warning_names_the_folder() {
        // The entry itself cannot be listed (here: it is a file): the problem names it,
        // not an empty path.
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let scan = scan(&file, "agents/.claude");
        assert_eq!(scan.problems.len(), 1, "{:?}", scan.problems);
        assert!(
            scan.problems[0].starts_with("cannot read `agents/.claude`: "),
            "{:?}",
            scan.problems
        );
    }

    #[test]
    fn json_with_tabs_parses_as_yaml() {
        let json = "{\n\t\"a\": {\n\t\t\"description\": \"x\",\n\t\t\"prompt\": \"\"\n\t}\n}\n";
        let root = raw::parse(json).unwrap_or_else(|error| panic!("{error:?}"));
        assert!(matches!(root.value, Value::Map(_)));
    }
}
