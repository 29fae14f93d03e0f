//! `subsim explain RULE-ID|Q-ID|D-ID|WORDS`: for people.
//!
//! - A rule ID: the rule in plain words (summary, status, the reasons the narration gives
//!   for it, version gates, scenarios), then a narrated run of its canonical scenario (the
//!   first one its row of `docs/rules.md` links).
//! - An open question (`Q-29`): the question, the answer subsim adopted
//!   (`docs/decisions.md`), and a run of the scenario that shows it, if one does.
//! - A discrepancy between the seeds (`D-9`): what subsim does.
//! - Words (`resume`, `depth limit`): every rule, question and discrepancy whose text holds
//!   them all, one line each.
//!
//! Exit 0 when something matched, 2 when nothing did. The rule table, the decisions and the
//! scenarios are embedded in the binary: the command needs no file on disk.

use std::fmt::Write as _;
use std::io;

use anyhow::Context as _;
use subsim_engine::render::TextWriter;
use subsim_engine::summary::Summary;
use subsim_engine::Simulation;
use subsim_rules::Gates;

use crate::args::ExplainArgs;
use crate::catalog::{self, Discrepancy, Question, Rule};
use crate::{budgets, output, run, words, Status};

pub fn explain(args: ExplainArgs) -> anyhow::Result<Status> {
    if args.end {
        return end(&args);
    }
    let rules = catalog::rules();
    let query = args.rule.trim();
    // The search and the "did you mean" compare the query with every entry: 100,000
    // characters took 10 s and were echoed whole in the error.
    budgets::TYPED_CHARS.check("the query", query.chars().count() as u64)?;
    let wanted = query.to_ascii_uppercase();
    let width = crate::words::width();
    if let Some(rule) = rules.iter().find(|rule| rule.id == wanted) {
        output::print(&words::wrap_block(&describe(rule), width))?;
        return match rule.scenarios.first() {
            Some(path) => run_scenario(path, args.seed),
            None => {
                let why = if rule.note.is_empty() {
                    String::new()
                } else {
                    format!(": {}", rule.note)
                };
                let text = format!(
                    "\nNo scenario demonstrates {} yet: it is {} — {}{why}.\n",
                    rule.id,
                    rule.status,
                    status_meaning(&rule.status)
                );
                output::print(&words::wrap_block(&text, width))?;
                Ok(Status::Ok)
            }
        };
    }
    let questions = catalog::questions();
    if let Some(question) = questions.iter().find(|q| q.id == wanted) {
        output::print(&words::wrap_block(&describe_question(question), width))?;
        return match question.scenarios.first() {
            Some(path) => run_scenario(path, args.seed),
            None => Ok(Status::Ok),
        };
    }
    let discrepancies = catalog::discrepancies();
    if let Some(found) = discrepancies.iter().find(|d| d.id == wanted) {
        let text = format!(
            "{}: a discrepancy between the seeds of the rule catalog\n  What subsim does: {}\n",
            found.id, found.adopted
        );
        output::print(&words::wrap_block(&text, width))?;
        return Ok(Status::Ok);
    }
    let matches = search(query, &rules, &questions, &discrepancies);
    if !matches.is_empty() {
        let mut out = format!(
            "{} {} “{query}”:\n",
            matches.len(),
            if matches.len() == 1 {
                "entry matches"
            } else {
                "entries match"
            }
        );
        let width = matches.iter().map(|(id, _)| id.len()).max().unwrap_or(0);
        for (id, line) in &matches {
            let _ = writeln!(out, "  {id:width$}  {line}");
        }
        let _ = writeln!(
            out,
            "\n`subsim explain {}` explains one of them and runs the scenario that shows it.",
            matches[0].0
        );
        // Each entry's line hangs under its summary.
        let text: String = out
            .lines()
            .map(|line| words::wrap(line, words::width(), 2 + width + 2))
            .collect();
        output::print(&text)?;
        return Ok(Status::Ok);
    }
    let mut ids: Vec<&str> = rules.iter().map(|rule| rule.id.as_str()).collect();
    ids.extend(questions.iter().map(|q| q.id.as_str()));
    ids.extend(discrepancies.iter().map(|d| d.id.as_str()));
    let hint = match subsim_scenario::suggest(&wanted, &ids) {
        Some(near) => format!(", did you mean `{near}`?"),
        None => match corrected(query, &rules, &questions, &discrepancies) {
            Some(fixed) if !search(&fixed, &rules, &questions, &discrepancies).is_empty() => {
                format!(", did you mean `subsim explain \"{fixed}\"`?")
            }
            _ => String::new(),
        },
    };
    anyhow::bail!(
        "nothing matches `{query}`: it is no rule ID, open question (Q-N) or discrepancy \
         (D-N) of docs/rules.md and docs/decisions.md, and no entry has all its words{hint} \
         (`subsim rules` lists every rule)"
    )
}

/// Every rule, question and discrepancy whose text holds all the words of `query` (any
/// case; a word also matches another form of it: `denied` finds "deny" and "denies"), as
/// `(id, one line)`.
fn search(
    query: &str,
    rules: &[Rule],
    questions: &[Question],
    discrepancies: &[Discrepancy],
) -> Vec<(String, String)> {
    let words = query_words(query);
    if words.is_empty() {
        return Vec::new();
    }
    entries(rules, questions, discrepancies)
        .into_iter()
        .filter(|(_, _, text)| words.iter().all(|word| holds(text, word)))
        .map(|(id, line, _)| (id, line))
        .collect()
}

/// The words of a query, lower case.
fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Does `text` (lower case) hold `word` or another form of it?
fn holds(text: &str, word: &str) -> bool {
    if text.contains(word) {
        return true;
    }
    let wanted = stem(word);
    wanted.len() >= 3
        && text
            .split(|c: char| !c.is_alphanumeric())
            .any(|known| stem(known) == wanted)
}

/// A word without its inflection, enough for the catalog's verbs and nouns: `denied`,
/// `denies` → `deny`; `rejected` → `reject`; `forks` → `fork`; `running` → `runn`.
fn stem(word: &str) -> String {
    for (ending, instead) in [
        ("ied", "y"),
        ("ies", "y"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
    ] {
        if let Some(root) = word.strip_suffix(ending) {
            if root.len() >= 3 {
                return format!("{root}{instead}");
            }
        }
    }
    match word.strip_suffix('s') {
        Some(root) if root.len() >= 3 && !root.ends_with('s') => root.to_string(),
        _ => word.to_string(),
    }
}

/// Every rule, question and discrepancy as `(id, one line, searchable text in lower case)`.
fn entries(
    rules: &[Rule],
    questions: &[Question],
    discrepancies: &[Discrepancy],
) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for rule in rules {
        let mut text = format!("{} {} {}", rule.id, rule.summary, rule.area);
        for why in subsim_rules::why::reasons_for(&rule.id) {
            text.push(' ');
            text.push_str(why.text);
        }
        found.push((rule.id.clone(), rule.summary.clone(), text.to_lowercase()));
    }
    for question in questions {
        let text = format!(
            "{} {} {} {}",
            question.id,
            question.question,
            question.answer,
            question.adopted.as_deref().unwrap_or("")
        );
        let line = question.question.clone();
        found.push((question.id.clone(), line, text.to_lowercase()));
    }
    for discrepancy in discrepancies {
        let text = format!("{} {}", discrepancy.id, discrepancy.adopted);
        let line = discrepancy.adopted.clone();
        found.push((discrepancy.id.clone(), line, text.to_lowercase()));
    }
    found
}

/// The query with each word no entry holds replaced by the nearest word the entries use
/// (`resme` → `resume`, `depht limit` → `depth limit`), when that changes something.
fn corrected(
    query: &str,
    rules: &[Rule],
    questions: &[Question],
    discrepancies: &[Discrepancy],
) -> Option<String> {
    let all = entries(rules, questions, discrepancies);
    let mut vocabulary: Vec<&str> = all
        .iter()
        .flat_map(|(_, _, text)| text.split(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|word| word.len() >= 3)
        .collect();
    vocabulary.sort_unstable();
    vocabulary.dedup();
    let words = query_words(query);
    let fixed: Vec<String> = words
        .iter()
        .map(|word| {
            let known = all.iter().any(|(_, _, text)| holds(text, word));
            match subsim_scenario::suggest(word, &vocabulary) {
                Some(near) if !known && word.len() >= 3 => near.to_string(),
                _ => word.clone(),
            }
        })
        .collect();
    (fixed != words).then(|| fixed.join(" "))
}

/// What `subsim explain ID` prints first for a rule ID or an open question (its text, not
/// the run of its scenario); `None` for anything else. `subsim serve` shows it when a
/// decision is clicked.
pub fn describe_id(id: &str) -> Option<String> {
    let wanted = id.trim().to_ascii_uppercase();
    if let Some(rule) = catalog::rules().iter().find(|rule| rule.id == wanted) {
        return Some(describe(rule));
    }
    catalog::questions()
        .iter()
        .find(|question| question.id == wanted)
        .map(describe_question)
}

/// An open question in words: the question, the answer subsim adopted, the scenarios.
fn describe_question(question: &Question) -> String {
    let mut out = format!(
        "{}: {} (an open question of the rule catalog)\n",
        question.id, question.question
    );
    match &question.adopted {
        Some(adopted) => {
            let _ = writeln!(out, "  Adopted answer (docs/decisions.md): {adopted}");
        }
        None => {
            let _ = writeln!(out, "  Status: {}", question.answer);
        }
    }
    if !question.scenarios.is_empty() {
        let _ = writeln!(out, "\nDemonstrated by:");
        for scenario in &question.scenarios {
            let _ = writeln!(out, "  {scenario}");
        }
    }
    out
}

/// Runs and narrates an embedded scenario.
fn run_scenario(path: &str, seed: Option<u64>) -> anyhow::Result<Status> {
    let source = catalog::scenario(path)
        .with_context(|| format!("{path} is linked from docs/rules.md but was not built in"))?;
    let loaded = run::report(subsim_scenario::parse_scenario(
        source,
        path,
        &catalog::scenario_base_dir(path),
    ))?;
    let mut intro = format!("\nRunning {path}: {}\n", loaded.spec.name);
    if let Some(description) = &loaded.spec.description {
        for line in description.trim_end().lines() {
            let _ = writeln!(intro, "  {line}");
        }
    }
    intro.push('\n');
    output::print(&words::wrap_block(&intro, crate::words::width()))?;
    let load = loaded.spec.load.is_some();
    let mut simulation = Simulation::new(loaded.spec);
    if let Some(seed) = seed {
        simulation = simulation.with_seed(seed);
    }
    let (report, written) = if load {
        // A load scenario has millions of events: its statistics say more than its lines.
        let mut summary = Summary::new();
        let report = simulation.run(&mut summary);
        (report, output::print_text(&summary.render_text()))
    } else {
        // Wrapped to the terminal like `run`'s narration.
        let options = subsim_engine::render::NarrationOptions {
            width: Some(crate::words::width()),
            ..Default::default()
        };
        let mut writer = TextWriter::with_options(io::stdout().lock(), options);
        let report = simulation.run(&mut writer);
        let written = match writer.finish() {
            Err(error) if !output::is_broken_pipe(&error) => {
                Err(anyhow::Error::new(error).context("cannot write to stdout"))
            }
            _ => Ok(()),
        };
        (report, written)
    };
    written?;
    if let Some(limit) = &report.limit {
        crate::output::note(&format!("subsim: {limit}"));
        return Ok(Status::LimitHit);
    }
    Ok(Status::Ok)
}

/// What a status means, in `docs/rules.md`'s words.
fn status_meaning(status: &str) -> &'static str {
    match status {
        "simulated" => "the engine implements it and a scenario shows it",
        "simulated (unit-tested)" => {
            "the engine implements it and the crates' own tests cover it, but no scenario \
             shows it"
        }
        "planned (#3)" => "not covered yet; issue #3 brings it",
        "planned (#4)" => "not covered yet; issue #4 brings it",
        "not observable" => "a scheduling simulation cannot observe it",
        _ => "see docs/rules.md",
    }
}

/// What `explain` writes for a reason's placeholders (`{cap}`, `{depth_limit}`, …), which
/// the narration fills from each event: the session's values from the rule's canonical
/// scenario (the one run below), or the defaults of the newest version when no scenario
/// demonstrates the rule; an event's own values (the tool, the mode, the pattern) as words
/// that say whose they are.
struct Placeholders {
    /// The session's values, in `(placeholder, value, how a note names it)`.
    session: Vec<(&'static str, String, &'static str)>,
    /// Where the session's values come from: the scenario's path, or `None` for the
    /// defaults.
    source: Option<String>,
}

impl Placeholders {
    /// Stand-ins for what each event carries itself.
    const EVENT: [(&'static str, &'static str); 5] = [
        ("{mode} mode", "the caller's permission mode"),
        ("{tool}", "the tool"),
        ("{pattern}", "TOOL(PATTERN)"),
        ("{input}", "the call's input"),
        ("{would}", "ask or deny"),
    ];

    fn of(rule: &Rule) -> Placeholders {
        let scenario = rule.scenarios.first().and_then(|path| {
            let source = catalog::scenario(path)?;
            let loaded =
                subsim_scenario::parse_scenario(source, path, &catalog::scenario_base_dir(path))
                    .ok()?;
            Some((path.clone(), loaded.spec))
        });
        let (source, spec) = match scenario {
            Some((path, spec)) => (Some(path), spec),
            None => (None, subsim_engine::SimSpec::minimal("defaults")),
        };
        let mut spec = spec;
        // The first event is the session's resolved settings: nothing more is run.
        spec.session.limits.max_events = 1;
        let mut first = FirstEvent(None);
        Simulation::new(spec).run(&mut first);
        let mut session = Vec::new();
        if let Some(subsim_engine::EventKind::SessionStarted {
            cap, depth_limit, ..
        }) = first.0
        {
            let cap = cap.map_or_else(|| "no".to_string(), |cap| cap.to_string());
            session.push(("{cap}", cap, "the cap"));
            session.push(("{depth_limit}", depth_limit.to_string(), "the depth limit"));
        }
        Placeholders { session, source }
    }

    /// `text` with every placeholder filled; the session values used are added to `used`.
    fn fill(&self, text: &str, used: &mut Vec<&'static str>) -> String {
        let mut text = text.to_string();
        for (placeholder, value, name) in &self.session {
            if text.contains(placeholder) {
                text = text.replace(placeholder, value);
                if !used.contains(name) {
                    used.push(name);
                }
            }
        }
        for (placeholder, words) in Self::EVENT {
            text = text.replace(placeholder, words);
        }
        text
    }

    /// Which values were filled and from where, when any was.
    fn note(&self, used: &[&'static str]) -> Option<String> {
        if used.is_empty() {
            return None;
        }
        let values: Vec<String> = used
            .iter()
            .filter_map(|name| {
                let (_, value, _) = self.session.iter().find(|(_, _, n)| n == name)?;
                Some(format!("{name} is {value}"))
            })
            .collect();
        Some(match &self.source {
            Some(path) => format!(
                "{} as {path} sets it; a run narrates its own",
                values.join(" and ")
            ),
            None => format!(
                "{}: the default of v{}; a run narrates its own",
                values.join(" and "),
                subsim_rules::Version::NEWEST
            ),
        })
    }
}

/// Keeps the first event of a run.
struct FirstEvent(Option<subsim_engine::EventKind>);

impl subsim_engine::sink::Sink for FirstEvent {
    fn event(&mut self, event: &subsim_engine::Event) {
        if self.0.is_none() {
            self.0 = Some(event.kind.clone());
        }
    }
}

/// The rule in words: ID, area, status, summary, gates, scenarios, note.
fn describe(rule: &Rule) -> String {
    let mut out = format!("{}: {}\n", rule.id, rule.summary);
    let _ = writeln!(out, "  Area:   {}", rule.area);
    let _ = writeln!(out, "  Status: {}", rule.status);
    let reasons: Vec<&str> = subsim_rules::why::reasons_for(&rule.id)
        .map(|why| why.text)
        .collect();
    if !reasons.is_empty() {
        let _ = writeln!(out, "\nWhat the narration says when it decides:");
        let values = Placeholders::of(rule);
        let mut used = Vec::new();
        for reason in reasons {
            let _ = writeln!(out, "  {}", values.fill(reason, &mut used));
        }
        if let Some(note) = values.note(&used) {
            let _ = writeln!(out, "  ({note})");
        }
    }
    let gates = rule.gates();
    if !gates.is_empty() {
        let newest = Gates::for_version(subsim_rules::Version::NEWEST);
        let _ = writeln!(out, "\nVersion gates:");
        for gate in gates {
            let _ = writeln!(
                out,
                "  {} ({}): {} — {} (at {}: {})",
                gate.field,
                gate.rules().collect::<Vec<_>>().join(", "),
                gate.when(),
                gate.what,
                newest.version,
                (gate.read)(&newest)
            );
        }
    }
    if !rule.scenarios.is_empty() {
        let _ = writeln!(out, "\nDemonstrated by (the first is the one run below):");
        for scenario in &rule.scenarios {
            let _ = writeln!(out, "  {scenario}");
        }
        if !rule.note.is_empty() {
            let _ = writeln!(out, "  note: {}", rule.note);
        }
    }
    out
}

/// `subsim explain --end FILE`: "it ended at 56s because …", the chain that set the end of
/// the scenario's run, from the run model, latest first, each link with its rule.
fn end(args: &ExplainArgs) -> anyhow::Result<Status> {
    let source = crate::args::Source {
        edit: args.edit.clone(),
        seed: args.seed,
    };
    let path = std::path::PathBuf::from(&args.rule);
    let file = (args.rule != "demo").then_some(path.as_path());
    let loaded = crate::load::load_source(file, &source)?;
    let name = loaded.spec.name.clone();
    let mut builder = subsim_engine::runmodel::Builder::new(crate::budgets::VIEW_ROWS.limit);
    crate::run::simulation(loaded.spec, args.seed).run(&mut builder);
    let model = builder.finish();
    output::print_text(&end_text(&model, &args.rule, &name))?;
    Ok(Status::Ok)
}

/// The text of `explain --end`, fitted to the terminal.
pub fn end_text(model: &subsim_engine::runmodel::RunModel, shown: &str, name: &str) -> String {
    use subsim_engine::time::human_duration;
    let when = |micros: u64| {
        if micros == 0 {
            "0s".to_string()
        } else {
            human_duration(micros)
        }
    };
    let width = crate::words::width();
    let mut text = words::wrap(
        &format!(
            "{shown} ({name}) ended at {}: its last decision, event #{} ({}), came then.",
            when(model.end.at),
            model.end.seq,
            model.end.kind.replace('_', " ")
        ),
        width,
        2,
    );
    text.push_str("What set the end, latest first:\n");
    for link in &model.chain {
        let span = if link.from == link.to {
            when(link.to)
        } else {
            format!("{}–{}", when(link.from), when(link.to))
        };
        let rule = link
            .rule
            .map_or_else(String::new, |rule| format!(" ({rule})"));
        text.push_str(&words::wrap(
            &format!("  {span:<14} {}{rule}", link.text),
            width,
            19,
        ));
    }
    text.push_str(&words::wrap(&model.because(), width, 2));
    text
}
