//! `subsim tools`: how one subagent's tool set is resolved, step by step, each step
//! citing its rule — for one placement, or foreground and background side by side.
//!
//! Every decision is `subsim_rules::tools::resolve_with`'s (and `prompt::effective_mode`,
//! `placement::place`, `SessionConfig::resolve` for what it reads); this module gathers
//! the inputs from a scenario's session and definition and lays the steps out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use subsim_engine::spec::{AgentDef, Scope, SessionSpec};
use subsim_rules::model::BuiltIn;
use subsim_rules::placement::{self, PlacementInput};
use subsim_rules::tools::{self, Fields, Resolved, StepKind, ToolRequest};
use subsim_rules::{prompt, Mode, PermissionMode, RuleId, SessionConfig};

use crate::args::ToolsArgs;
use crate::run::load;
use crate::{output, AlreadyReported, Status};

pub fn tools(args: ToolsArgs) -> anyhow::Result<Status> {
    if let Some(name) = &args.agent {
        // Its "did you mean" compares it with every name: 100,000 characters took seconds
        // and were echoed whole in the error.
        crate::budgets::TYPED_CHARS.check("--agent", name.chars().count() as u64)?;
    }
    let scenario = args
        .file
        .as_deref()
        .map(|file| load(file, &args.edit))
        .transpose()?;
    let session = match (&args.session, &scenario) {
        (Some(other), _) => load(other, &args.edit)?.spec.session,
        (None, Some(loaded)) => loaded.spec.session.clone(),
        (None, None) => SessionSpec::default(),
    };
    let (def, from) = match (&scenario, &args.file, &args.definition) {
        (Some(loaded), Some(file), _) => (
            find_agent(&loaded.spec.agents, args.agent.as_deref(), file)?,
            file.display().to_string(),
        ),
        (_, _, Some(path)) => (load_definition(path, &session)?, path.display().to_string()),
        _ => anyhow::bail!("give --file SCENARIO --agent NAME, or --definition PATH.md"),
    };
    let setup = Setup::new(&session, &def, args.depth)?;
    let mut out = setup.header(&def, &from);
    if args.compare {
        let foreground = setup.resolve(&def, Mode::Foreground);
        let background = setup.resolve(&def, Mode::Background);
        out.push_str(&compared_steps(&foreground, &background));
        out.push_str(&side_by_side(&foreground, &background));
    } else {
        let (mode, why) = if args.background {
            (Mode::Background, "--background".to_string())
        } else if args.foreground {
            (Mode::Foreground, "--foreground".to_string())
        } else {
            let (mode, rule) = setup.default_mode(&def);
            (
                mode,
                format!(
                    "where an Agent-tool spawn from main that does not need the result runs \
                     [{rule}]; --foreground, --background or --compare choose"
                ),
            )
        };
        let _ = writeln!(out, "Placement: {} ({why})", mode.as_str());
        out.push_str(&steps(
            capitalised(mode.as_str()),
            &setup.resolve(&def, mode),
        ));
    }
    output::print_text(&out)?;
    Ok(Status::Ok)
}

/// The agent `name` of a scenario (by key or `name`), or a built-in type.
fn find_agent(
    agents: &std::collections::BTreeMap<String, AgentDef>,
    name: Option<&str>,
    file: &Path,
) -> anyhow::Result<AgentDef> {
    let mut known: Vec<&str> = agents.keys().map(String::as_str).collect();
    let Some(name) = name else {
        if let [only] = known.as_slice() {
            return Ok(named(&agents[*only], only));
        }
        anyhow::bail!(
            "name the definition with --agent; {} defines {}",
            file.display(),
            list_or_none(&known)
        );
    };
    if let Some((key, def)) = agents
        .iter()
        .find(|(key, def)| key.as_str() == name || def.name == name)
    {
        return Ok(named(def, key));
    }
    // SPAWN-9: the built-ins as the engine registers them (`rules::model::BuiltIn`).
    if let Some(builtin) = BuiltIn::REGISTRATION
        .into_iter()
        .find(|known| known.name() == name)
    {
        return Ok(AgentDef::built_in(builtin));
    }
    known.extend(BuiltIn::REGISTRATION.iter().map(|builtin| builtin.name()));
    let hint = match subsim_scenario::suggest(name, &known) {
        Some(near) => format!(", did you mean `{near}`?"),
        None => format!("; it defines {}", list_or_none(&known[..agents.len()])),
    };
    anyhow::bail!(
        "{} has no agent `{name}` and no built-in type has that name{hint}",
        file.display()
    )
}

/// The definition under the name spawns use: its `name`, or the map key when it has none
/// or comes from a plugin (DEF-5: a plugin definition is known by its scoped id).
fn named(def: &AgentDef, key: &str) -> AgentDef {
    let mut def = def.clone();
    if def.name.is_empty() || def.scope == Scope::Plugin {
        def.name = key.to_string();
    }
    def
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "no agents".to_string()
    } else {
        names
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Loads a standalone definition file the way a scenario's `agents.NAME.file` is loaded
/// (the scenario crate's loader: DEF-10 skips, DEF-13 warnings), under `session`'s version.
fn load_definition(path: &Path, session: &SessionSpec) -> anyhow::Result<AgentDef> {
    std::fs::metadata(path)
        .with_context(|| format!("cannot read the definition {}", path.display()))?;
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .and_then(|name| name.to_str())
        .with_context(|| format!("{} is not a UTF-8 file name", path.display()))?;
    let quoted = file_name.replace('\'', "''");
    let wrapper = format!(
        "name: definition\nsession: {{version: \"{}\"}}\nagents:\n  definition: {{file: '{quoted}'}}\nmain: []\n",
        session.version
    );
    let shown = path.display().to_string();
    // Problems located in the wrapper are told without its text, which the person never
    // wrote; problems inside the definition file keep their file:line:col.
    let tell = |problem: &subsim_scenario::Diagnostic, level: &str| {
        let told = if problem.file == shown {
            format!("{shown}: {}", problem.message)
        } else {
            problem.to_string()
        };
        crate::output::note(&format!(
            "subsim: {level}: {}",
            crate::output::escape_controls(&told)
        ));
    };
    let loaded = match subsim_scenario::parse_scenario(&wrapper, &shown, &folder) {
        Ok(loaded) => loaded,
        Err(problems) => {
            for problem in &problems.problems {
                tell(problem, "error");
            }
            return Err(AlreadyReported.into());
        }
    };
    for warning in &loaded.warnings {
        tell(warning, "warning");
    }
    match loaded.spec.agents.iter().next() {
        Some((key, def)) => Ok(named(def, key)),
        None => anyhow::bail!(
            "{shown} was skipped, so it defines no agent (the warning above says why)"
        ),
    }
}

/// What every resolution of one definition in one session shares.
struct Setup<'s> {
    session: &'s SessionSpec,
    config: SessionConfig,
    pool: Vec<String>,
    depth: u32,
    permission_mode: PermissionMode,
    permission_rule: RuleId,
}

impl<'s> Setup<'s> {
    fn new(session: &'s SessionSpec, def: &AgentDef, depth: u32) -> anyhow::Result<Setup<'s>> {
        let (mut config, mut notes) = SessionConfig::resolve(
            session.version,
            session.kind,
            &session.env,
            &session.admission,
            session.agent_teams,
            session.permission_mode,
        );
        if session.disable_auto_mode {
            config.disable_auto_mode(&mut notes);
        }
        let deepest = config.depth_limit.max(1);
        if depth > deepest {
            anyhow::bail!(
                "--depth {depth} is deeper than any subagent can be: the depth limit is {} \
                 (DEPTH-1, DEPTH-2, DEPTH-6)",
                config.depth_limit
            );
        }
        // TOOLS-1: the main pool (TOOLS-8, TOOLS-10 for what the session adds or lacks),
        // then MCP tools.
        let pool = tools::session_pool(
            session.tools.as_deref(),
            session.cross_session_messaging,
            &session.mcp,
        );
        let (permission_mode, permission_rule) = if def.scope == Scope::BuiltIn {
            prompt::builtin_mode(config.permission_mode)
        } else {
            prompt::effective_mode(
                config.permission_mode,
                def.permission_mode,
                def.scope == Scope::Plugin,
                config.auto_mode_available,
                &config.gates,
            )
        };
        Ok(Setup {
            session,
            config,
            pool,
            depth,
            permission_mode,
            permission_rule,
        })
    }

    fn header(&self, def: &AgentDef, from: &str) -> String {
        let mut out = format!("Tools of `{}` ({from})\n", def.name);
        let _ = writeln!(
            out,
            "Session: Claude Code {}, {} session, {} main tools; depth {} of limit {}; \
             permission mode {} [{}]",
            self.session.version,
            self.session.kind.as_str(),
            self.pool.len(),
            self.depth,
            self.config.depth_limit,
            self.permission_mode.as_str(),
            self.permission_rule
        );
        let fields = match &def.tools {
            Some(list) => format!("tools: [{}]", list.join(", ")),
            None => "tools: (not set: every tool)".to_string(),
        };
        let _ = writeln!(
            out,
            "Definition: {fields}; disallowedTools: [{}]{}",
            def.disallowed_tools.join(", "),
            if self.memory(def) { "; memory on" } else { "" }
        );
        out
    }

    /// TOOLS-17 / MEM-2: persistent memory is active.
    fn memory(&self, def: &AgentDef) -> bool {
        def.memory.is_some() && self.session.auto_memory
    }

    /// FGBG-1 for a spawn from main that does not need the result.
    fn default_mode(&self, def: &AgentDef) -> (Mode, RuleId) {
        let input = PlacementInput {
            definition_background: def.background,
            ..PlacementInput::default()
        };
        match placement::place(input, &self.config) {
            placement::Placement::Run(mode, rule) => (mode, rule),
            placement::Placement::Reject(_, rule, _) => (Mode::Foreground, rule),
        }
    }

    fn resolve(&self, def: &AgentDef, mode: Mode) -> Result<Resolved, tools::ZeroTools> {
        let placement = tools::Placement {
            depth: self.depth,
            depth_limit: self.config.depth_limit,
            mode,
            fork: false,
            teammate: false,
            first_ran_foreground: false,
            permission_mode: self.permission_mode,
        };
        let request = ToolRequest {
            fields: Fields {
                tools: def.tools.as_deref(),
                disallowed: &def.disallowed_tools,
            },
            handback: tools::handback_attached(self.permission_mode, false, &self.config.gates),
            memory: self.memory(def),
            ..ToolRequest::new(&self.pool, placement, self.config.gates)
        };
        tools::resolve_with(&request)
    }
}

fn capitalised(word: &str) -> &'static str {
    match word {
        "foreground" => "Foreground",
        _ => "Background",
    }
}

/// The label of a step's stage.
fn stage(kind: StepKind) -> &'static str {
    match kind {
        StepKind::BasePool => "base pool",
        StepKind::FilterOne => "filter 1",
        StepKind::Disallowed => "disallowed",
        StepKind::NotInTools => "tools",
        StepKind::FilterTwo => "filter 2",
        StepKind::ZeroTools => "zero tools",
        StepKind::Added => "added",
    }
}

/// What a step did, without repeating its stage label (`filter 1 removed` → `removed`).
fn said(step: &tools::Step) -> &'static str {
    let what: &'static str = step.what;
    match what.strip_prefix(stage(step.kind)) {
        Some(rest) if rest.starts_with(' ') => {
            let rest = rest.trim_start();
            rest.strip_prefix("(background)")
                .unwrap_or(rest)
                .trim_start()
        }
        _ => what,
    }
}

/// One resolution, step by step, then the result (or the refusal).
fn steps(title: &str, resolved: &Result<Resolved, tools::ZeroTools>) -> String {
    let mut out = format!("\n{title}\n");
    let list = match resolved {
        Ok(resolved) => &resolved.steps,
        Err(zero) => &zero.steps,
    };
    for step in list {
        let mut line = format!("  {:<11} {}", stage(step.kind), said(step));
        if !step.tools.is_empty() {
            let _ = write!(line, " ({}): {}", step.tools.len(), step.tools.join(", "));
        }
        let _ = write!(line, " [{}]", step.rule);
        out.push_str(&wrap(&line, 14));
    }
    match resolved {
        Ok(resolved) => {
            let mut line = format!(
                "  {:<11} {} tools: {}",
                "result",
                resolved.tools.len(),
                resolved.tools.join(", ")
            );
            if resolved.agent_errors {
                line.push_str(" (Agent errors when called [DEPTH-4])");
            }
            out.push_str(&wrap(&line, 14));
            for unresolved in &resolved.reasons {
                // The step that removed the entry names the rule (filter 2 cites TOOLS-8 for
                // `ListAgents`, TOOLS-5 for the rest), so the note agrees with it.
                let rule = resolved
                    .steps
                    .iter()
                    .rev()
                    .find(|step| step.tools.contains(&unresolved.entry))
                    .map_or(unresolved.why.rule(), |step| step.rule);
                let _ = writeln!(
                    out,
                    "  {:<11} `{}` resolved to nothing: {} [{}]",
                    "note",
                    unresolved.entry,
                    unresolved.why.as_str(),
                    rule
                );
            }
        }
        Err(zero) => {
            let line = format!(
                "  {:<11} the spawn is refused: {} [TOOLS-12]",
                "result",
                zero.message()
            );
            out.push_str(&wrap(&line, 14));
        }
    }
    out
}

/// The two resolutions' steps, the steps they share written once: both start from the
/// same pool and the same fields, and part where a filter treats the placements apart
/// (filter 2, TOOLS-5). Then each side's own steps, so the two can be read side by side.
fn compared_steps(
    foreground: &Result<Resolved, tools::ZeroTools>,
    background: &Result<Resolved, tools::ZeroTools>,
) -> String {
    // A step is its line and the wrapped lines under it.
    let blocks = |text: &str| -> Vec<String> {
        let mut blocks: Vec<String> = Vec::new();
        for line in text.lines().skip(2) {
            match blocks.last_mut() {
                Some(block) if line.starts_with("   ") => {
                    block.push_str(line);
                    block.push('\n');
                }
                _ => blocks.push(format!("{line}\n")),
            }
        }
        blocks
    };
    let (fg, bg) = (
        blocks(&steps("", foreground)),
        blocks(&steps("", background)),
    );
    let shared = fg.iter().zip(&bg).take_while(|(a, b)| a == b).count();
    let mut out = String::new();
    if shared > 0 {
        out.push_str("\nForeground and background, the same steps\n");
        out.extend(fg[..shared].iter().cloned());
    }
    for (title, rest) in [("Foreground", &fg[shared..]), ("Background", &bg[shared..])] {
        let then = if shared > 0 { ", from there on" } else { "" };
        let _ = writeln!(out, "\n{title}{then}");
        out.extend(rest.iter().cloned());
    }
    out
}

/// Foreground and background in two columns, then the tools that differ and why.
fn side_by_side(
    foreground: &Result<Resolved, tools::ZeroTools>,
    background: &Result<Resolved, tools::ZeroTools>,
) -> String {
    let tools_of = |resolved: &Result<Resolved, tools::ZeroTools>| match resolved {
        Ok(resolved) => resolved.tools.clone(),
        Err(_) => Vec::new(),
    };
    let (fg, bg) = (tools_of(foreground), tools_of(background));
    let mut all: Vec<&String> = fg.iter().collect();
    for tool in &bg {
        if !all.contains(&tool) {
            all.push(tool);
        }
    }
    let width = all.iter().map(|tool| tool.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "\nSide by side\n  {:<width$}  {:<10}  {:<10}\n",
        "tool", "foreground", "background"
    );
    let mark = |list: &[String], tool: &String| if list.contains(tool) { "yes" } else { "—" };
    let mut differ = Vec::new();
    for tool in &all {
        let (a, b) = (mark(&fg, tool), mark(&bg, tool));
        let mut line = format!("  {tool:<width$}  {a:<10}  {b:<10}");
        if a != b {
            let lacking = if a == "—" { foreground } else { background };
            if let Some(why) = why_missing(lacking, tool) {
                let _ = write!(line, "  {why}");
            }
            differ.push(tool.as_str());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let counted = format!(
        "{} tools in the foreground, {} in the background",
        fg.len(),
        bg.len()
    );
    if differ.is_empty() {
        let _ = writeln!(out, "\n{counted}; the two sets are the same.");
    } else {
        out.push('\n');
        out.push_str(&wrap(
            &format!("{counted}; {} differ: {}", differ.len(), differ.join(", ")),
            2,
        ));
    }
    out
}

/// The step that removed `tool` from a resolution, as `stage [RULE]`.
fn why_missing(resolved: &Result<Resolved, tools::ZeroTools>, tool: &str) -> Option<String> {
    let steps = match resolved {
        Ok(resolved) => &resolved.steps,
        Err(_) => return Some("the spawn is refused [TOOLS-12]".to_string()),
    };
    steps
        .iter()
        .filter(|step| step.kind != StepKind::BasePool && step.kind != StepKind::Added)
        .find(|step| step.tools.iter().any(|known| known == tool))
        .map(|step| format!("{}: {} [{}]", stage(step.kind), said(step), step.rule))
}

/// [`crate::words::wrap`] at [`crate::words::width`].
fn wrap(line: &str, indent: usize) -> String {
    crate::words::wrap(line, crate::words::width(), indent)
}
