//! Who in the kernel calls the rules crate, and that `sim/decide.rs` holds memos, not relays
//! (issue #30 item 6; before it, issue #22 had every call go through `decide.rs`).
//!
//! - A kernel file (`crates/engine/src/sim/`) calls a rules module's function only if the
//!   file owns the step that module decides for: the [`OWNERS`] table below says, per file,
//!   which rules modules it asks and why. A call to a module not listed for its file is a
//!   decision asked away from its step's path (ask it where the step is executed, or list
//!   the module with its reason); a listed module no longer called is stale.
//! - No function of `decide.rs` only forwards one rules call: a function whose body is a
//!   single expression (no statement, no block) that calls the rules crate is a relay, and
//!   the kernel should call the rules function where the step is executed instead.
//!
//! Every other file may name the rules crate's types, enums and constants (`Mode`,
//! `RuleId`, `id::PERM_9`) freely. A call is, read from the text (no types are known):
//! - a free function of a rules module: `subsim_rules::<module>::<fn>(`, `<module>::<fn>(`
//!   for a module imported from `subsim_rules`, or `<fn>(` for a function imported from one;
//! - an associated function or method of a rules type called by its path:
//!   `subsim_rules::<module>::<Type>::<fn>(`, `<module>::<Type>::<fn>(` for an imported
//!   module, or `<Type>::<fn>(` for a type imported from `subsim_rules`
//!   (`SessionConfig::resolve(`, `plan::Subtask::launch(`);
//! - a method call `.<fn>(` whose name is a method of a rules type (`launch.admit(`,
//!   `fork.launch(`). The rules crate's methods are read from its sources (each `pub fn` of
//!   an `impl` block that takes `self`, and those `vocabulary!` writes). A name the engine
//!   gives one of its own methods too (`launch`, `kind`, `name`, …) is the engine's when
//!   called on `self` (`self.launch(`) and the rules crate's on any other receiver; `as_str`,
//!   every vocabulary's spelling and `String`'s, is not looked for.
//!
//! A call's module is the module that declares the function, the type or the method (a
//! method name several modules declare belongs to each of them; the crate root's types,
//! `Mode`, `RejectReason`, … are `subsim_rules`'s). Comments and test code (from
//! `#[cfg(test)]` on) are not looked at.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use subsim_tests::repo_root;

/// Which rules modules each kernel file asks, and the step it owns that they decide. A
/// file not listed calls no rules function.
const OWNERS: [(&str, &[&str], &str); 14] = [
    (
        "crates/engine/src/sim/actions.rs",
        &["panel", "plan", "resume", "scope", "session"],
        "the person's timed actions: whether the session lets the person act (FGBG-5, RESUME-10), the panel's x (PANEL-1/3/7), /subtask (FORK-9), typing into a transcript (RESUME-3/11), a definition edited on disk (DEF-9)",
    ),
    (
        "crates/engine/src/sim/agents.rs",
        &["cap"],
        "the agent slab: the occupancy counts (cap::Occupancy) the moment-time admission reads, kernel state like the panel model",
    ),
    (
        "crates/engine/src/sim/ahead.rs",
        &["panel"],
        "the panel entry read ahead of the next event (a cache warm-up, no decision)",
    ),
    (
        "crates/engine/src/sim/decide.rs",
        &["context", "depth", "handback", "model", "plan", "scan", "spawn", "tools"],
        "the memos: spawn plans (plan, spawn, depth), run profiles (model, context, tools), \
         tool removals (tools, depth), the last delivery (scan, handback)",
    ),
    (
        "crates/engine/src/sim/finish.rs",
        &["errors", "model", "notify", "prompt"],
        "ending runs and delivering results: who hears of a run's end (NOTIFY-1…12), a shell's end (NOTIFY-5), an API error (ERR-1…5, MODEL-4's aliases in its fallback chain), a pending prompt withdrawn (Q-38)",
    ),
    (
        "crates/engine/src/sim/gate.rs",
        &["prompt", "toolcall"],
        "the tool-call gate: the step table, permission rules (PERM-3/9/14)",
    ),
    (
        "crates/engine/src/sim/messaging.rs",
        &["notify", "placement", "resume"],
        "waits, SendMessage and TaskStop: resuming (RESUME-3…14, FGBG-4/7, NOTIFY-9), stopping (RESUME-10), progress (NOTIFY-4)",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        &["context", "model", "panel", "resume", "session", "spawn", "toolcall", "tools"],
        "the session as the kernel starts it: its settings (SessionConfig), tool pool (TOOLS-1/8/10), types (SPAWN-8/10, RESUME-3), models (MODEL), main as an agent (MAIN, MCP-2/3), the panel (PANEL-1), the step table",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        &["hooks", "panel", "session"],
        "hooks (HOOK-1…8) and the panel model the kernel tells what happened",
    ),
    (
        "crates/engine/src/sim/person.rs",
        &["prompt"],
        "the person's answer to a prompt (PERM-3/4/6)",
    ),
    (
        "crates/engine/src/sim/spawn.rs",
        &["plan", "resume", "spawn", "subsim_rules", "toolcall"],
        "the one spawn path: the Agent call's plan at the gate (DEPTH-3/4/5), admission (CAP-1…10), the run_in_background it shows (SPAWN-13), whether it returns an ID (RESUME-3, SPAWN-11), the refusals' texts",
    ),
    (
        "crates/engine/src/sim/steps.rs",
        &["notify", "prompt", "resume"],
        "the step interpreter: a tool step's prompt (PERM-3…7), maxTurns (RESUME-4), the end of a run's steps (NOTIFY-5/6/7)",
    ),
    (
        "crates/engine/src/sim/trace.rs",
        &["cap"],
        "the typed trace writer: a spawn_rejected's hint (CAP-2), asked only when the event is written",
    ),
    (
        "crates/engine/src/sim/worktree.rs",
        &["isolation"],
        "worktree isolation: who is isolated (ISO-2/5), an isolated run's command checks at the call's effect (ISO-2…5), its own worktree's life (ISO-1)",
    ),
];

/// Names the scan does not look for as method calls, with why.
const NOT_LOOKED_FOR: [(&str, &str); 1] = [(
    "as_str",
    "every vocabulary's spelling (`vocabulary!`), and `String::as_str`: never a decision",
)];

/// The kernel's files (relative to the root), `decide.rs` apart.
fn kernel_files() -> Vec<(String, PathBuf)> {
    let root = repo_root();
    let dir = root.join("crates/engine/src/sim");
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("crates/engine/src/sim")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .map(|path| {
            let name = path
                .file_name()
                .expect("a file")
                .to_string_lossy()
                .to_string();
            (format!("crates/engine/src/sim/{name}"), path)
        })
        .collect();
    files.sort();
    files
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current)
            .expect("a source folder")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The code lines of a source file with their numbers: up to its test module (`#[cfg(test)]`
/// before `mod … {`; a one-line `#[cfg(test)] mod tests;` is left out and the code goes on),
/// comments left out (a trailing `// …` too).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        if line.trim() == "#[cfg(test)]" {
            let next = lines.get(index + 1).map_or("", |next| next.trim());
            if next.ends_with(';') {
                index += 2;
                continue;
            }
            if next.starts_with("mod ") {
                break;
            }
        }
        if !line.trim_start().starts_with("//") {
            code.push((index + 1, line.split("//").next().unwrap_or_default()));
        }
        index += 1;
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn starts_lowercase(segment: &str) -> bool {
    segment.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
}

fn starts_uppercase(segment: &str) -> bool {
    segment.starts_with(|c: char| c.is_ascii_uppercase())
}

/// The functions declared in `impl` and `trait` blocks of one file's code: `(name, takes
/// self, public)`.
fn methods_in(code: &str) -> Vec<(String, bool, bool)> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut block: Option<usize> = None;
    let lines: Vec<&str> = code.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let opens_block = [
            "impl ",
            "impl<",
            "trait ",
            "pub trait ",
            "pub(crate) trait ",
        ]
        .iter()
        .any(|start| trimmed.starts_with(start));
        if block.is_none() && opens_block {
            block = Some(depth);
        }
        if block == Some(depth.wrapping_sub(1)) {
            let public = trimmed.starts_with("pub fn ") || trimmed.starts_with("pub const fn ");
            let declared = trimmed
                .split_once("fn ")
                .filter(|(before, _)| {
                    before.split_whitespace().all(|word| {
                        ["pub", "const", "unsafe", "async"].contains(&word)
                            || word.starts_with("pub(")
                    })
                })
                .map(|(_, after)| after);
            if let Some(after) = declared {
                let name: String = after.chars().take_while(|c| is_ident(*c)).collect();
                // The signature up to its body: the parameters may follow on other lines.
                let signature: String = lines[index..lines.len().min(index + 8)].join(" ");
                let parameters = signature
                    .split_once('(')
                    .map_or("", |(_, rest)| rest)
                    .trim_start();
                let takes_self = ["self", "&self", "&mut self", "mut self", "&'"]
                    .iter()
                    .any(|start| parameters.starts_with(start));
                found.push((name, takes_self, public));
            }
        }
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
        if block.is_some_and(|at| depth <= at) && line.contains('}') {
            block = None;
        }
    }
    found
}

/// What the rules crate offers to call, read from its sources: each name with the modules
/// that declare it.
struct RulesApi {
    /// Its public modules, from its `lib.rs` (`pub mod cap;`).
    modules: Vec<String>,
    /// Its public types (`pub struct`, `pub enum`, `pub trait`), by name.
    types: BTreeMap<String, BTreeSet<String>>,
    /// Its public methods that take `self`, by name.
    methods: BTreeMap<String, BTreeSet<String>>,
    /// Its public associated functions and methods, called by a path, by name.
    associated: BTreeMap<String, BTreeSet<String>>,
}

/// The crate root's own module name (`lib.rs`: `Mode`, `RejectReason`, …).
const ROOT: &str = "subsim_rules";

/// The rules module a source file of the rules crate belongs to (`panel/view.rs`: `panel`).
fn module_of(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .expect("a file under src")
        .as_os_str()
        .to_string_lossy()
        .to_string();
    match first.strip_suffix(".rs") {
        Some("lib") => ROOT.to_string(),
        Some(module) => module.to_string(),
        None => first,
    }
}

fn add(map: &mut BTreeMap<String, BTreeSet<String>>, name: String, module: &str) {
    map.entry(name).or_default().insert(module.to_string());
}

fn rules_api() -> RulesApi {
    let root = repo_root();
    let src = root.join("crates/rules/src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("crates/rules/src/lib.rs");
    let modules = lib
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').trim().to_string())
        .collect();
    let mut api = RulesApi {
        modules,
        types: BTreeMap::new(),
        methods: BTreeMap::new(),
        associated: BTreeMap::new(),
    };
    for path in rust_files(&src) {
        let module = module_of(path.strip_prefix(&src).expect("under src"));
        let code = code_of(&path);
        for line in code.lines() {
            let trimmed = line.trim();
            for start in ["pub struct ", "pub enum ", "pub trait "] {
                if let Some(rest) = trimmed.strip_prefix(start) {
                    let name = rest.chars().take_while(|c| is_ident(*c)).collect();
                    add(&mut api.types, name, &module);
                }
            }
            // A facts list of `vocabulary!`: `pub fn facts -> RejectFacts;`.
            if let Some(rest) = trimmed.strip_prefix("pub fn ") {
                let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
                if rest[name.len()..].trim_start().starts_with("->") {
                    add(&mut api.methods, name.clone(), &module);
                    add(&mut api.associated, name, &module);
                }
            }
        }
        for (name, takes_self, public) in methods_in(&code) {
            if public {
                if takes_self {
                    add(&mut api.methods, name.clone(), &module);
                }
                add(&mut api.associated, name, &module);
            }
        }
    }
    api
}

/// The code lines of the source file at `path` (comments and tests left out,
/// [`code_lines`]), one string.
fn code_of(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).expect("readable source");
    code_lines(&text)
        .iter()
        .map(|(_, line)| *line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names of the engine's own methods (any visibility, trait methods too), by the file
/// (relative to the root) that declares them.
fn engine_methods() -> Vec<(String, BTreeSet<String>)> {
    let root = repo_root();
    rust_files(&root.join("crates/engine/src"))
        .into_iter()
        .map(|path| {
            let code = code_of(&path);
            let names = methods_in(&code).into_iter().map(|(name, ..)| name);
            let file = path
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .to_string();
            (file, names.collect())
        })
        .collect()
}

/// What a file imports from `subsim_rules`.
#[derive(Default)]
struct Imports {
    /// Modules (`use subsim_rules::{notify, …}`, `use subsim_rules::hooks::{self, …}`).
    modules: Vec<String>,
    /// The lowercase items of a module, with the module (`use subsim_rules::panel::{x_key,
    /// …}`: a function, or a submodule).
    items: Vec<(String, String)>,
    /// Types (`use subsim_rules::{Mode, …}`, `use subsim_rules::hooks::{HookEvent, …}`).
    types: Vec<String>,
}

fn imports(code: &str, modules: &[String]) -> Imports {
    let mut found = Imports::default();
    for statement in code.split("use subsim_rules::").skip(1) {
        let statement = statement.split(';').next().unwrap_or_default().trim();
        let words: Vec<&str> = statement
            .split(|c: char| !is_ident(c))
            .filter(|word| !word.is_empty())
            .collect();
        let is_module = |word: &str| modules.iter().any(|module| module == word);
        found.types.extend(
            words
                .iter()
                .filter(|word| starts_uppercase(word))
                .map(|word| word.to_string()),
        );
        if statement.starts_with('{') {
            // `use subsim_rules::{notify, Mode};`
            let named = words.iter().filter(|word| is_module(word));
            found.modules.extend(named.map(|word| word.to_string()));
        } else if let Some((head, rest)) = words.split_first().filter(|(head, _)| is_module(head)) {
            // `use subsim_rules::notify;`, `use subsim_rules::hooks::{self, …}`,
            // `use subsim_rules::panel::{x_key, RowId}`.
            if rest.is_empty() || rest.contains(&"self") {
                found.modules.push(head.to_string());
            }
            let lowercase = rest
                .iter()
                .filter(|word| **word != "self" && starts_lowercase(word));
            found
                .items
                .extend(lowercase.map(|word| (word.to_string(), head.to_string())));
        }
    }
    found
}

/// One call into `subsim_rules`: as written up to its `(` (a method call as `.name(`), and
/// the modules it may belong to.
#[derive(Debug, PartialEq)]
struct Call {
    text: String,
    modules: BTreeSet<String>,
}

/// The calls into `subsim_rules` on one code line.
fn calls(line: &str, api: &RulesApi, imported: &Imports, methods: &MethodNames) -> Vec<Call> {
    let modules = &api.modules;
    let chars: Vec<char> = line.chars().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if !is_ident(chars[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < chars.len() && (is_ident(chars[at]) || chars[at] == ':') {
            at += 1;
        }
        let path: String = chars[start..at].iter().collect();
        let before_text: String = chars[..start].iter().collect();
        let before = before_text.trim_end();
        let after = chars[at..].iter().find(|c| !c.is_whitespace());
        let defined = before.ends_with("fn");
        if after != Some(&'(') || defined {
            continue;
        }
        let receiver = before
            .strip_suffix('.')
            .filter(|receiver| !receiver.ends_with('.') && !path.contains(':'));
        if let Some(receiver) = receiver {
            // A method call: `<receiver>.name(`.
            let on_self = receiver.ends_with("self")
                && !receiver
                    .trim_end_matches("self")
                    .ends_with(|c: char| is_ident(c) || c == '.');
            let name = path.as_str();
            let looked_for = !NOT_LOOKED_FOR.iter().any(|(skipped, _)| *skipped == name);
            let engine_s = methods.own.contains(name) || (on_self && methods.shared.contains(name));
            match methods.rules.get(name) {
                Some(declared) if looked_for && !engine_s => found.push(Call {
                    text: format!(".{name}("),
                    modules: declared.clone(),
                }),
                _ => {}
            }
            continue;
        }
        let segments: Vec<&str> = path.split("::").collect();
        let Some((last, heads)) = segments.split_last() else {
            continue;
        };
        if !starts_lowercase(last) {
            continue;
        }
        let is_module = |word: &str| modules.iter().any(|known| known == word);
        let imported_module = |word: &str| imported.modules.iter().any(|module| module == word);
        let item_module = |word: &str| {
            imported
                .items
                .iter()
                .find(|(item, _)| item == word)
                .map(|(_, module)| module.clone())
        };
        let of: Option<BTreeSet<String>> = match heads {
            [] => item_module(last).map(|module| BTreeSet::from([module])),
            // A free function: every head a module.
            _ if heads.iter().all(|head| starts_lowercase(head)) => match heads {
                ["subsim_rules", module, ..] if is_module(module) => {
                    Some(BTreeSet::from([module.to_string()]))
                }
                ["subsim_rules", ..] => None,
                [first, ..] if imported_module(first) => Some(BTreeSet::from([first.to_string()])),
                [first, ..] => item_module(first).map(|module| BTreeSet::from([module])),
                [] => None,
            },
            // A type's function: `…::Type::name(`.
            [modules_before @ .., ty] if starts_uppercase(ty) => {
                let of_rules = match modules_before {
                    [] => imported.types.iter().any(|known| known == ty),
                    ["subsim_rules", ..] => true,
                    [first, ..] => imported_module(first),
                };
                let declared = api.types.get(*ty).filter(|_| of_rules);
                declared
                    .filter(|_| api.associated.contains_key(*last))
                    .cloned()
            }
            _ => None,
        };
        if let Some(modules) = of {
            found.push(Call {
                text: format!("{path}("),
                modules,
            });
        }
    }
    found
}

/// Every call into `subsim_rules` in a file's code: (line number, the call).
fn calls_in(text: &str, api: &RulesApi, methods: &MethodNames) -> Vec<(usize, Call)> {
    let lines = code_lines(text);
    let code: String = lines
        .iter()
        .map(|(_, line)| *line)
        .collect::<Vec<_>>()
        .join("\n");
    let imported = imports(&code, &api.modules);
    lines
        .iter()
        .flat_map(|(number, line)| {
            calls(line, api, &imported, methods)
                .into_iter()
                .map(move |call| (*number, call))
        })
        .collect()
}

/// The method names a file's calls are checked against: the rules crate's, less those not
/// looked for; and, of those, the ones the engine also gives its own methods (in this file:
/// `own`, anywhere: `shared`).
struct MethodNames<'a> {
    rules: &'a BTreeMap<String, BTreeSet<String>>,
    shared: BTreeSet<&'a str>,
    own: BTreeSet<&'a str>,
}

fn method_names<'a>(
    api: &'a RulesApi,
    engine: &'a [(String, BTreeSet<String>)],
    file: &str,
) -> MethodNames<'a> {
    let shared = api
        .methods
        .keys()
        .filter(|name| engine.iter().any(|(_, names)| names.contains(*name)))
        .map(String::as_str)
        .collect();
    let own = engine
        .iter()
        .filter(|(declared_in, _)| declared_in == file)
        .flat_map(|(_, names)| names.iter().map(String::as_str))
        .collect();
    MethodNames {
        rules: &api.methods,
        shared,
        own,
    }
}

/// Every kernel file's calls into `subsim_rules`, by file (relative to the root).
fn kernel_calls(api: &RulesApi) -> Vec<(String, Vec<(usize, Call)>)> {
    let engine = engine_methods();
    kernel_files()
        .into_iter()
        .map(|(file, path)| {
            let text = std::fs::read_to_string(&path).expect("readable source");
            let methods = method_names(api, &engine, &file);
            let found = calls_in(&text, api, &methods);
            (file, found)
        })
        .collect()
}

#[test]
fn every_rules_call_in_the_kernel_is_made_by_the_file_that_owns_its_step() {
    let api = rules_api();
    assert!(
        api.modules.len() > 10,
        "the rules crate's modules: {:?}",
        api.modules
    );
    // The reading of the rules crate's sources finds what it offers, and where.
    for (method, module) in [
        ("admit", "plan"),
        ("launch", "plan"),
        ("facts", ROOT),
        ("person_cannot", "session"),
    ] {
        let declared = api.methods.get(method);
        assert!(
            declared.is_some_and(|modules| modules.contains(module)),
            "{method} not found in {module}: {declared:?}"
        );
    }
    for function in ["resolve", "from_name", "parse"] {
        assert!(
            api.associated.contains_key(function),
            "{function} not found"
        );
    }
    assert!(
        !api.methods.contains_key("resolve"),
        "SessionConfig::resolve takes no self"
    );
    let mut misplaced = Vec::new();
    let mut used: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); OWNERS.len()];
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut total = 0;
    for (file, found) in kernel_calls(&api) {
        let owner = OWNERS.iter().position(|(owner, ..)| *owner == file);
        for (number, call) in found {
            total += 1;
            seen.entry(file.clone())
                .or_default()
                .extend(call.modules.iter().cloned());
            let owned = owner.map_or(&[][..], |index| OWNERS[index].1);
            let of_owned: Vec<&str> = owned
                .iter()
                .copied()
                .filter(|module| call.modules.contains(*module))
                .collect();
            match (owner, of_owned.is_empty()) {
                (Some(index), false) => used[index].extend(of_owned),
                _ => misplaced.push(format!(
                    "{file}:{number}: {} (of {:?})",
                    call.text, call.modules
                )),
            }
        }
    }
    // The scan sees calls where they are: the kernel asks the rules many times.
    assert!(
        total >= 60,
        "the scan found only {total} calls into subsim_rules"
    );
    assert!(
        misplaced.is_empty(),
        "calls into a rules module that the file's line of OWNERS in \
         tests/integration/rules_calls.rs does not list (ask it where its step is \
         executed, or list the module with the step the file owns):\n{}\nmodules called, \
         by file: {seen:#?}",
        misplaced.join("\n")
    );
    let stale: Vec<String> = OWNERS
        .iter()
        .zip(&used)
        .flat_map(|((file, modules, _), used)| {
            modules
                .iter()
                .filter(|module| !used.contains(**module))
                .map(move |module| format!("{file}: {module}"))
        })
        .collect();
    assert!(
        stale.is_empty(),
        "listed modules no longer called: {stale:?}"
    );
}

/// The functions declared in a file's code, each with its body (the text between its
/// braces): `(name, body)`. A declaration without a body (a trait's) is left out.
fn functions_in(code: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("fn ") {
        let starts_word = at == 0 || !rest[..at].ends_with(is_ident);
        let after = &rest[at + 3..];
        rest = after;
        if !starts_word {
            continue;
        }
        let name: String = after.chars().take_while(|c| is_ident(*c)).collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` after the parameters (a `;` first: no body).
        let Some(open) = after.find(['{', ';']) else {
            break;
        };
        if after.as_bytes()[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut close = None;
        for (index, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + index);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        found.push((name, after[open + 1..close].to_string()));
        // Functions nested in this one are its own business.
        rest = &after[close..];
    }
    found
}

/// The functions of `text` (a source file) that only forward one rules call: a body that
/// is one expression (no `;`, no block) and calls the rules crate.
fn relays_in(text: &str, api: &RulesApi, methods: &MethodNames) -> Vec<String> {
    let lines = code_lines(text);
    let code: String = lines
        .iter()
        .map(|(_, line)| *line)
        .collect::<Vec<_>>()
        .join("\n");
    let imported = imports(&code, &api.modules);
    functions_in(&code)
        .into_iter()
        .filter(|(_, body)| !body.contains([';', '{']))
        .filter(|(_, body)| !calls(body, api, &imported, methods).is_empty())
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn no_function_of_decide_rs_only_forwards_a_rules_call() {
    let api = rules_api();
    let engine = engine_methods();
    let file = "crates/engine/src/sim/decide.rs";
    let text = std::fs::read_to_string(repo_root().join(file)).expect(file);
    // Its own methods are not exempt: a relay is often a method named after the rules'.
    let mut methods = method_names(&api, &engine, file);
    methods.own.clear();
    let relays = relays_in(&text, &api, &methods);
    assert!(
        relays.is_empty(),
        "functions of {file} that only forward a rules call (call the rules function where \
         the step is executed instead, `sim/gate.rs` or the step's own file): {relays:?}"
    );
    // The reading sees decide.rs's functions, memo functions among them.
    let names: Vec<String> = functions_in(&code_of(&repo_root().join(file)))
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for memo in ["spawn_plan", "run_profile", "removal_of", "reuses_delivery"] {
        assert!(
            names.iter().any(|name| name == memo),
            "{memo} not found: {names:?}"
        );
    }
}

/// The modules of `known` that `code` names through `prefix` (`super::` for the kernel's,
/// `crate::` for the rules crate's): in a path (`super::spawn::Call`) or a `use` group
/// (`use super::{spawn, trace, Kernel}`).
fn modules_named(code: &str, prefix: &str, known: &[&str]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        let named = match rest.strip_prefix('{') {
            Some(group) => group.split('}').next().unwrap_or_default(),
            None => rest
                .split(|c: char| !is_ident(c))
                .next()
                .unwrap_or_default(),
        };
        for word in named.split(|c: char| !is_ident(c)) {
            if known.contains(&word) {
                found.insert(word.to_string());
            }
        }
    }
    found
}

/// A circle among `modules` (each `(name, code)`) as their code names each other through
/// `prefix`, if there is one: the path round it.
fn circle(modules: &[(&str, String)], prefix: &str) -> Option<Vec<String>> {
    let names: Vec<&str> = modules.iter().map(|(name, _)| *name).collect();
    let edges: BTreeMap<&str, BTreeSet<String>> = modules
        .iter()
        .map(|(name, code)| {
            let mut named = modules_named(code, prefix, &names);
            named.remove(*name);
            (*name, named)
        })
        .collect();
    // Depth-first from each module, along a path that does not repeat.
    fn walk(
        at: &str,
        path: &mut Vec<String>,
        edges: &BTreeMap<&str, BTreeSet<String>>,
    ) -> Option<Vec<String>> {
        for next in &edges[at] {
            if path.first() == Some(next) {
                let mut round = path.clone();
                round.push(next.clone());
                return Some(round);
            }
            if !path.contains(next) {
                path.push(next.clone());
                if let Some(round) = walk(next, path, edges) {
                    return Some(round);
                }
                path.pop();
            }
        }
        None
    }
    names
        .iter()
        .find_map(|name| walk(name, &mut vec![name.to_string()], &edges))
}

/// Issue #30 item 6: the import circles `sim/decide ↔ spawn ↔ trace` and `rules/depth ↔
/// tools` stay broken (`decide` takes a load stream's index, not `spawn::Call`; `trace`
/// asks CAP-2's hint itself; `tools` takes the `Agent` tool's name from `depth`).
#[test]
fn the_import_circles_stay_broken() {
    let kernel = [
        ("decide", "crates/engine/src/sim/decide.rs"),
        ("spawn", "crates/engine/src/sim/spawn.rs"),
        ("trace", "crates/engine/src/sim/trace.rs"),
    ];
    let read = |modules: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        modules
            .iter()
            .map(|(name, file)| (*name, code_of(&repo_root().join(file))))
            .collect()
    };
    assert_eq!(circle(&read(&kernel), "super::"), None);
    let rules = [
        ("depth", "crates/rules/src/depth.rs"),
        ("tools", "crates/rules/src/tools.rs"),
    ];
    assert_eq!(circle(&read(&rules), "crate::"), None);
    // The reading sees the names that remain: spawn takes the plan memo's types, tools
    // takes depth's.
    let known = ["decide", "spawn", "trace"];
    let spawn = code_of(&repo_root().join(kernel[1].1));
    assert!(modules_named(&spawn, "super::", &known).contains("decide"));
    let tools = code_of(&repo_root().join(rules[1].1));
    assert!(modules_named(&tools, "crate::", &["depth", "tools"]).contains("depth"));
    // And a circle, where there is one (as it was before issue #30).
    let before = [
        (
            "decide",
            "use super::spawn::Call;\nuse super::Kernel;".to_string(),
        ),
        (
            "spawn",
            "use super::decide::{self, CachedPlan};".to_string(),
        ),
        ("trace", "let h = super::decide::cap_hint(r);".to_string()),
    ];
    assert_eq!(
        circle(&before, "super::"),
        Some(["decide", "spawn", "decide"].map(String::from).to_vec())
    );
    assert_eq!(
        modules_named(
            "use super::{decide, trace, Flow};\nlet c = super::spawn::Call::Step;\n",
            "super::",
            &known
        ),
        BTreeSet::from([
            "decide".to_string(),
            "spawn".to_string(),
            "trace".to_string()
        ])
    );
}

/// The relay check fails on each form of relay, and not on a memo or a helper.
#[test]
fn the_relay_check_finds_a_reintroduced_relay() {
    let api = RulesApi {
        modules: ["notify", "panel", "resume"].map(String::from).to_vec(),
        types: BTreeMap::from([(
            "SessionKind".to_string(),
            BTreeSet::from(["session".to_string()]),
        )]),
        methods: BTreeMap::from([
            (
                "person_cannot".to_string(),
                BTreeSet::from(["session".to_string()]),
            ),
            ("running".to_string(), BTreeSet::from(["cap".to_string()])),
        ]),
        associated: BTreeMap::new(),
    };
    let engine = vec![(
        "this.rs".to_string(),
        BTreeSet::from(["running".to_string()]),
    )];
    let mut methods = method_names(&api, &engine, "this.rs");
    methods.own.clear();
    let text = "use subsim_rules::{notify, resume, SessionKind};\n\
                /// Doc.\n\
                pub(super) fn x_key(row: RowId, running: bool) -> (XAction, RuleId) {\n\
                    subsim_rules::panel::x_key(row, running, false)\n\
                }\n\
                fn person_cannot(kind: SessionKind, a: A) -> Option<(&'static str, RuleId)> {\n\
                    kind.person_cannot(a)\n\
                }\n\
                impl Kernel<'_> {\n\
                    pub(super) fn shell_heard(&self, slot: u32, run: u32) -> Option<RuleId> {\n\
                        notify::shell_done(self.agents.get(slot).run == run)\n\
                    }\n\
                    fn running(&self) -> u32 {\n\
                        self.agents.occupancy.running()\n\
                    }\n\
                    fn kept(&mut self, key: u32) -> Rc<X> {\n\
                        if let Some(x) = self.memos.xs.get(&key) { return x.clone(); }\n\
                        let x = Rc::new(resume::stop(true));\n\
                        self.memos.xs.insert(key, x.clone());\n\
                        x\n\
                    }\n\
                    fn helper(&self, def: &Def) -> Vec<Server<'_>> {\n\
                        def.servers.iter().map(|s| Server { name: &s.name }).collect()\n\
                    }\n\
                }\n\
                #[cfg(test)]\n\
                mod tests { fn t() -> bool { notify::progress(true) } }\n";
    assert_eq!(
        relays_in(text, &api, &methods),
        ["x_key", "person_cannot", "shell_heard", "running"]
    );
}

#[test]
fn the_scan_finds_each_form_of_call() {
    let set = |modules: &[&str]| -> BTreeSet<String> {
        modules.iter().map(|module| module.to_string()).collect()
    };
    let api = RulesApi {
        modules: ["notify", "panel", "resume", "hooks", "plan"]
            .map(String::from)
            .to_vec(),
        types: BTreeMap::from([
            ("HookEvent".to_string(), set(&["hooks"])),
            ("SessionConfig".to_string(), set(&["session"])),
            ("Subtask".to_string(), set(&["plan"])),
            ("Launch".to_string(), set(&["plan"])),
            ("Occasion".to_string(), set(&["hooks"])),
        ]),
        methods: BTreeMap::from([
            ("admit".to_string(), set(&["plan"])),
            ("launch".to_string(), set(&["plan"])),
            ("as_str".to_string(), set(&[ROOT])),
        ]),
        associated: ["parse", "resolve", "launch", "admit", "as_str", "run"]
            .map(|name| (name.to_string(), set(&["plan"])))
            .into(),
    };
    // The engine gives its own methods `launch` (elsewhere) and `admit` (in this file).
    let engine = vec![
        (
            "elsewhere.rs".to_string(),
            BTreeSet::from(["launch".to_string()]),
        ),
        ("this.rs".to_string(), BTreeSet::from(["admit".to_string()])),
    ];
    let text = "use subsim_rules::panel::{x_key, RowId};\n\
                use subsim_rules::{notify, Mode, SessionConfig};\n\
                use subsim_rules::hooks::{self, HookEvent};\n\
                fn f() {\n\
                let a = subsim_rules::resume::stop(true);\n\
                let b = notify::progress(true, gates);\n\
                let c = x_key(row, true, false);\n\
                let d = hooks::runtime_event(e, true);\n\
                let e = self.x_key(row); // x_key(row) in a comment\n\
                let f = HookEvent::parse(s);\n\
                let g = decide::progress(true, gates);\n\
                let h = SessionConfig::resolve(v, k);\n\
                let i = plan::Subtask::launch(x);\n\
                let j = subsim_rules::plan::Subtask::launch(x);\n\
                let k = fork.launch(config);\n\
                let l = self.launch(start, spec);\n\
                let m = launch.admit(running, config);\n\
                let n = Kernel::new(spec);\n\
                let o = Rc::from(name.as_str());\n\
                let p = Mode::Foreground;\n\
                let q = S { a: 1, ..hooks::Occasion::run(e) };\n\
                }\n\
                #[cfg(test)]\n\
                mod tests { fn t() { notify::progress(true, gates); fork.launch(c); } }\n";
    let methods = method_names(&api, &engine, "this.rs");
    let found: Vec<(usize, String, BTreeSet<String>)> = calls_in(text, &api, &methods)
        .into_iter()
        .map(|(line, call)| (line, call.text, call.modules))
        .collect();
    let expected: Vec<(usize, String, BTreeSet<String>)> = [
        (5, "subsim_rules::resume::stop(", "resume"),
        (6, "notify::progress(", "notify"),
        (7, "x_key(", "panel"),
        (8, "hooks::runtime_event(", "hooks"),
        (10, "HookEvent::parse(", "hooks"),
        (12, "SessionConfig::resolve(", "session"),
        // `plan` is not imported here: `plan::Subtask::launch(` is not the rules crate's.
        (14, "subsim_rules::plan::Subtask::launch(", "plan"),
        (15, ".launch(", "plan"),
        // Line 16: the kernel's own `launch`; line 17: this file's own `admit`.
        (21, "hooks::Occasion::run(", "hooks"),
    ]
    .map(|(line, call, module)| (line, call.to_string(), set(&[module])))
    .into();
    assert_eq!(found, expected);
    // In another file `admit` is the rules crate's on any receiver but `self`.
    let elsewhere = method_names(&api, &engine, "other.rs");
    let calls: Vec<String> = calls_in(
        "fn f() { launch.admit(r, c); self.admit(r); }\n",
        &api,
        &elsewhere,
    )
    .into_iter()
    .map(|(_, call)| call.text)
    .collect();
    assert_eq!(calls, [".admit("]);
}
