//! `crates/engine/src/sim/decide.rs` is the only kernel code that calls `subsim_rules`
//! (issue #22 item 1). Every other file of `crates/engine/src/sim/` may name the rules
//! crate's types, enums and constants (`Mode`, `RuleId`, `id::PERM_9`, the panel model),
//! but a call of one of its functions is a decision asked outside the decisions layer: ask
//! it through a function of `decide.rs` instead, or add it to the allow-list below with its
//! reason. A call is, read from the text (no types are known):
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
//! Comments and test code (from `#[cfg(test)]` on) are not looked at.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use subsim_tests::repo_root;

/// Calls into `subsim_rules` allowed outside `decide.rs`: (file, the call as written up to
/// its `(`, why it is not moved). Each still made (the test fails on one no longer made).
const ALLOWED: [(&str, &str, &str); 28] = [
    (
        "crates/engine/src/sim/actions.rs",
        ".dismiss_ignored(",
        "the words and rule of an `x` the panel ignores, read off decide::x_key's answer",
    ),
    (
        "crates/engine/src/sim/actions.rs",
        ".why(",
        "resume::Refusal::why: the words of the refusal decide's typed-resume answer carries",
    ),
    // The panel model (`subsim_rules::panel::Panel`, PANEL): the kernel tells it what
    // happened to each run, as it happens; the model decides the rows. Its calls stay
    // beside the panel state they change (observe.rs), off decide.rs.
    (
        "crates/engine/src/sim/actions.rs",
        ".has_row(",
        "Panel::has_row: whether the panel shows a row for the agent now (PANEL-3's `x`)",
    ),
    (
        "crates/engine/src/sim/ahead.rs",
        ".preload_entry(",
        "Panel::preload_entry: the panel entry read ahead of the next event, a cache warm-up (no decision)",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".on_resume(",
        "Panel::on_resume: a resumed run told to the panel model",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".on_start(",
        "Panel::on_start: a started run told to the panel model",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".on_finish(",
        "Panel::on_finish: a finished run told to the panel model",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".on_finish_at(",
        "Panel::on_finish_at: a finished run told to the panel model, at its entry",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".on_background(",
        "Panel::on_background: a backgrounded run told to the panel model (FGBG-5)",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".on_dismiss(",
        "Panel::on_dismiss: the person's `x` told to the panel model (PANEL-3)",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        "subsim_rules::panel::Panel::new(",
        "PANEL-1: the empty panel model, built at startup when decide says there is a panel",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        ".view(",
        "panel::Panel::view: the panel model's screen at an instant, read after the run \
         (`subsim panel`), not a decision of the run",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        ".is_interactive(",
        "SessionKind::is_interactive: a fact of the session copied into decide::choose_model's \
         input",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        "model::BuiltIn::from_name(",
        "a built-in type looked up by name in the rules' catalogue (no rule decides)",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        ".name(",
        "BuiltIn::name: a built-in type's name",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        "model::ModelRequest::new(",
        "the input of decide::choose_model, built with its defaults (a constructor)",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        "HookEvent::parse(",
        "a declared hook's event name read at startup (no rule decides)",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".is_interactive(",
        "SessionKind::is_interactive: a fact of the session passed to \
         decide::frontmatter_hooks_run",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".update(",
        "panel::Panel::update: the panel model the kernel drives (PANEL), its changes written \
         as panel_changed; to move into decide.rs with the panel's other calls",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".rule(",
        "PanelChange::rule: the rule a panel change already carries",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        ".kind(",
        "PanelChange::kind: a panel change's spelling",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        "hooks::Occasion::run(",
        "the input of decide's hook matching for a run's event (a constructor)",
    ),
    (
        "crates/engine/src/sim/observe.rs",
        "hooks::Occasion::tool(",
        "the input of decide's hook matching for a tool call (a constructor)",
    ),
    (
        "crates/engine/src/sim/gate.rs",
        "prompt::Call::new(",
        "the input of decide::tool_permission, built with its defaults (a constructor)",
    ),
    // The tool-call gate's table (`subsim_rules::toolcall::ToolStep`, issue #30): a step's
    // facts are constants of the table, read where the gate and the session need them.
    (
        "crates/engine/src/sim/gate.rs",
        ".facts(",
        "ToolStep::facts: who checks the step's tool set (the table's constant facts)",
    ),
    (
        "crates/engine/src/sim/mod.rs",
        ".facts(",
        "ToolStep::facts: each step's tool name, shared once per session",
    ),
    (
        "crates/engine/src/sim/steps.rs",
        ".routed_to(",
        "prompt::Route::routed_to: the spelling of the route decide::prompt_route answered",
    ),
    (
        "crates/engine/src/sim/finish.rs",
        "errors::ApiErrorInput::new(",
        "the input of decide::on_api_error, built with its defaults (a constructor)",
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

/// What the rules crate offers to call, read from its sources.
struct RulesApi {
    /// Its public modules, from its `lib.rs` (`pub mod cap;`).
    modules: Vec<String>,
    /// Its public types (`pub struct`, `pub enum`, `pub trait`), by name.
    types: BTreeSet<String>,
    /// The names of its public methods that take `self`.
    methods: BTreeSet<String>,
    /// The names of its public associated functions and methods, called by a path.
    associated: BTreeSet<String>,
}

fn rules_api() -> RulesApi {
    let root = repo_root();
    let lib = std::fs::read_to_string(root.join("crates/rules/src/lib.rs"))
        .expect("crates/rules/src/lib.rs");
    let modules = lib
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').trim().to_string())
        .collect();
    let mut api = RulesApi {
        modules,
        types: BTreeSet::new(),
        // `vocabulary!` writes `as_str` for a list with spellings.
        methods: BTreeSet::from(["as_str".to_string()]),
        associated: BTreeSet::from(["as_str".to_string()]),
    };
    for path in rust_files(&root.join("crates/rules/src")) {
        let code = code_of(&path);
        for line in code.lines() {
            let trimmed = line.trim();
            for start in ["pub struct ", "pub enum ", "pub trait "] {
                if let Some(rest) = trimmed.strip_prefix(start) {
                    api.types
                        .insert(rest.chars().take_while(|c| is_ident(*c)).collect());
                }
            }
            // A facts list of `vocabulary!`: `pub fn facts -> RejectFacts;`.
            if let Some(rest) = trimmed.strip_prefix("pub fn ") {
                let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
                if rest[name.len()..].trim_start().starts_with("->") {
                    api.methods.insert(name.clone());
                    api.associated.insert(name);
                }
            }
        }
        for (name, takes_self, public) in methods_in(&code) {
            if public {
                if takes_self {
                    api.methods.insert(name.clone());
                }
                api.associated.insert(name);
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
    /// The lowercase items of a module (`use subsim_rules::panel::{x_key, …}`: a function,
    /// or a submodule).
    items: Vec<String>,
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
            found.items.extend(lowercase.map(|word| word.to_string()));
        }
    }
    found
}

/// The method names a file's calls are checked against: the rules crate's, less those not
/// looked for; and, of those, the ones the engine also gives its own methods (in this file:
/// `own`, anywhere: `shared`).
struct MethodNames<'a> {
    rules: &'a BTreeSet<String>,
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
        .iter()
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

/// The calls into `subsim_rules` on one code line, each as written up to its `(` (a method
/// call as `.name(`).
fn calls(line: &str, api: &RulesApi, imported: &Imports, methods: &MethodNames) -> Vec<String> {
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
            let looked_for = methods.rules.contains(name)
                && !NOT_LOOKED_FOR.iter().any(|(skipped, _)| *skipped == name);
            let engine_s = methods.own.contains(name) || (on_self && methods.shared.contains(name));
            if looked_for && !engine_s {
                found.push(format!(".{name}("));
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
        let rules_path = match heads {
            [] => imported.items.iter().any(|item| item == last),
            // A free function: every head a module.
            _ if heads.iter().all(|head| starts_lowercase(head)) => match heads {
                ["subsim_rules", rest @ ..] => rest.first().is_some_and(|module| is_module(module)),
                [first, ..] => {
                    imported_module(first) || imported.items.iter().any(|item| item == first)
                }
                [] => false,
            },
            // A type's function: `…::Type::name(`.
            [modules_before @ .., ty] if starts_uppercase(ty) => {
                let of_rules = match modules_before {
                    [] => imported.types.iter().any(|known| known == ty),
                    ["subsim_rules", ..] => true,
                    [first, ..] => imported_module(first),
                };
                of_rules && api.types.contains(*ty) && api.associated.contains(*last)
            }
            _ => false,
        };
        if rules_path {
            found.push(format!("{path}("));
        }
    }
    found
}

/// Every call into `subsim_rules` in a file's code: (line number, the call).
fn calls_in(text: &str, api: &RulesApi, methods: &MethodNames) -> Vec<(usize, String)> {
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

#[test]
fn only_decide_rs_calls_the_rules_crate_in_the_kernel() {
    let api = rules_api();
    assert!(
        api.modules.len() > 10,
        "the rules crate's modules: {:?}",
        api.modules
    );
    // The reading of the rules crate's sources finds what it offers.
    for method in ["admit", "launch", "ending", "facts", "person_cannot"] {
        assert!(
            api.methods.contains(method),
            "{method} not found: {:?}",
            api.methods
        );
    }
    for function in ["resolve", "from_name", "parse"] {
        assert!(api.associated.contains(function), "{function} not found");
    }
    assert!(
        !api.methods.contains("resolve"),
        "SessionConfig::resolve takes no self"
    );
    let engine = engine_methods();
    let mut outside = Vec::new();
    let mut used = vec![0usize; ALLOWED.len()];
    let mut in_decide = 0;
    for (file, path) in kernel_files() {
        let text = std::fs::read_to_string(&path).expect("readable source");
        let methods = method_names(&api, &engine, &file);
        let found = calls_in(&text, &api, &methods);
        if file.ends_with("/decide.rs") {
            in_decide = found.len();
            continue;
        }
        for (number, call) in found {
            match ALLOWED.iter().position(|(allowed_file, allowed_call, _)| {
                *allowed_file == file && *allowed_call == call
            }) {
                Some(index) => used[index] += 1,
                None => outside.push(format!("{file}:{number}: {call}")),
            }
        }
    }
    // The scan sees calls where they are: decide.rs asks the rules many times.
    assert!(
        in_decide >= 30,
        "the scan found only {in_decide} calls into subsim_rules in decide.rs"
    );
    assert!(
        outside.is_empty(),
        "calls into subsim_rules outside sim/decide.rs (ask through a function of decide.rs, \
         or allow with a reason in tests/integration/rules_calls.rs):\n{}",
        outside.join("\n")
    );
    let stale: Vec<_> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, used)| **used == 0)
        .map(|((file, call, _), _)| format!("{file}: {call}"))
        .collect();
    assert!(stale.is_empty(), "allowed calls no longer made: {stale:?}");
}

#[test]
fn the_scan_finds_each_form_of_call() {
    let api = RulesApi {
        modules: ["notify", "panel", "resume", "hooks", "plan"]
            .map(String::from)
            .to_vec(),
        types: [
            "HookEvent",
            "SessionConfig",
            "Subtask",
            "Launch",
            "Occasion",
        ]
        .map(String::from)
        .into(),
        methods: ["admit", "launch", "as_str"].map(String::from).into(),
        associated: ["parse", "resolve", "launch", "admit", "as_str", "run"]
            .map(String::from)
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
    let found = calls_in(text, &api, &methods);
    let expected: Vec<(usize, String)> = [
        (5, "subsim_rules::resume::stop("),
        (6, "notify::progress("),
        (7, "x_key("),
        (8, "hooks::runtime_event("),
        (10, "HookEvent::parse("),
        (12, "SessionConfig::resolve("),
        // `plan` is not imported here: `plan::Subtask::launch(` is not the rules crate's.
        (14, "subsim_rules::plan::Subtask::launch("),
        (15, ".launch("),
        // Line 16: the kernel's own `launch`; line 17: this file's own `admit`.
        (21, "hooks::Occasion::run("),
    ]
    .map(|(line, call)| (line, call.to_string()))
    .into();
    assert_eq!(found, expected);
    // In another file `admit` is the rules crate's on any receiver but `self`.
    let elsewhere = method_names(&api, &engine, "other.rs");
    let calls = calls_in(
        "fn f() { launch.admit(r, c); self.admit(r); }\n",
        &api,
        &elsewhere,
    );
    assert_eq!(calls, [(1, ".admit(".to_string())]);
}
