//! `crates/engine/src/sim/decide.rs` is the only kernel code that calls `subsim_rules`
//! (issue #22 item 1). Every other file of `crates/engine/src/sim/` may name the rules
//! crate's types, enums and constants (`Mode`, `RuleId`, `id::PERM_9`, the panel model),
//! but a call of one of its functions — `subsim_rules::<module>::<fn>(`, `<module>::<fn>(`
//! for a module imported from `subsim_rules`, or `<fn>(` for a function imported from one
//! — is a decision asked outside the decisions layer: ask it through a function of
//! `decide.rs` instead, or add it to the allow-list below with its reason.
//!
//! Only free functions of the rules crate's modules are looked for (all path segments but
//! the last are modules); methods and associated functions of its types are not.
//! Comments and test code (from `#[cfg(test)]` on) are not looked at.

use std::path::PathBuf;

use subsim_tests::repo_root;

/// Calls into `subsim_rules` allowed outside `decide.rs`: (file, the call as written up to
/// its `(`, why it is not moved). None today: every call moved.
const ALLOWED: [(&str, &str, &str); 0] = [];

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

/// The rules crate's public modules, from its `lib.rs` (`pub mod cap;`).
fn rules_modules() -> Vec<String> {
    let lib = std::fs::read_to_string(repo_root().join("crates/rules/src/lib.rs"))
        .expect("crates/rules/src/lib.rs");
    lib.lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').trim().to_string())
        .collect()
}

/// The code lines of a source file with their numbers: up to its test module, comments
/// left out (a trailing `// …` too).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .map(|(index, line)| (index + 1, line.split("//").next().unwrap_or_default()))
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn starts_lowercase(segment: &str) -> bool {
    segment.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
}

/// What a file imports from `subsim_rules`: the modules (`use subsim_rules::{notify, …}`,
/// `use subsim_rules::hooks::{self, …}`) and the lowercase items of a module
/// (`use subsim_rules::panel::{x_key, …}`: a function, or a submodule).
fn imports(code: &str, modules: &[String]) -> (Vec<String>, Vec<String>) {
    let mut imported = Vec::new();
    let mut items = Vec::new();
    for statement in code.split("use subsim_rules::").skip(1) {
        let statement = statement.split(';').next().unwrap_or_default().trim();
        let words: Vec<&str> = statement
            .split(|c: char| !is_ident(c))
            .filter(|word| !word.is_empty())
            .collect();
        let is_module = |word: &str| modules.iter().any(|module| module == word);
        if statement.starts_with('{') {
            // `use subsim_rules::{notify, Mode};`
            let named = words.iter().filter(|word| is_module(word));
            imported.extend(named.map(|word| word.to_string()));
        } else if let Some((head, rest)) = words.split_first().filter(|(head, _)| is_module(head)) {
            // `use subsim_rules::notify;`, `use subsim_rules::hooks::{self, …}`,
            // `use subsim_rules::panel::{x_key, RowId}`.
            if rest.is_empty() || rest.contains(&"self") {
                imported.push(head.to_string());
            }
            let lowercase = rest
                .iter()
                .filter(|word| **word != "self" && starts_lowercase(word));
            items.extend(lowercase.map(|word| word.to_string()));
        }
    }
    (imported, items)
}

/// The calls into `subsim_rules` on one code line, each as written up to its `(`.
fn calls(line: &str, modules: &[String], imported: &[String], items: &[String]) -> Vec<String> {
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
        let before = chars[..start].iter().rev().find(|c| !c.is_whitespace());
        let after = chars[at..].iter().find(|c| !c.is_whitespace());
        let is_call = after == Some(&'(') && before != Some(&'.');
        let defined = chars[..start]
            .iter()
            .collect::<String>()
            .trim_end()
            .ends_with("fn");
        if !is_call || defined {
            continue;
        }
        let segments: Vec<&str> = path.split("::").collect();
        let Some((last, heads)) = segments.split_last() else {
            continue;
        };
        if !starts_lowercase(last) || !heads.iter().all(|head| starts_lowercase(head)) {
            continue;
        }
        let rules_path = match heads {
            [] => items.iter().any(|item| item == last),
            ["subsim_rules", rest @ ..] => rest
                .first()
                .is_some_and(|module| modules.iter().any(|known| known == module)),
            [first, ..] => {
                imported.iter().any(|module| module == first)
                    || items.iter().any(|item| item == first)
            }
        };
        if rules_path {
            found.push(format!("{path}("));
        }
    }
    found
}

/// Every call into `subsim_rules` in `file`'s code: (line number, the call).
fn calls_in(text: &str, modules: &[String]) -> Vec<(usize, String)> {
    let lines = code_lines(text);
    let code: String = lines
        .iter()
        .map(|(_, line)| *line)
        .collect::<Vec<_>>()
        .join("\n");
    let (imported, items) = imports(&code, modules);
    lines
        .iter()
        .flat_map(|(number, line)| {
            calls(line, modules, &imported, &items)
                .into_iter()
                .map(move |call| (*number, call))
        })
        .collect()
}

#[test]
fn only_decide_rs_calls_the_rules_crate_in_the_kernel() {
    let modules = rules_modules();
    assert!(modules.len() > 10, "the rules crate's modules: {modules:?}");
    let mut outside = Vec::new();
    let mut used = vec![0usize; ALLOWED.len()];
    let mut in_decide = 0;
    for (file, path) in kernel_files() {
        let text = std::fs::read_to_string(&path).expect("readable source");
        let found = calls_in(&text, &modules);
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
    let modules: Vec<String> = ["notify", "panel", "resume", "hooks"]
        .map(String::from)
        .to_vec();
    let text = "use subsim_rules::panel::{x_key, RowId};\n\
                use subsim_rules::{notify, Mode};\n\
                use subsim_rules::hooks::{self, HookEvent};\n\
                fn f() {\n\
                let a = subsim_rules::resume::stop(true);\n\
                let b = notify::progress(true, gates);\n\
                let c = x_key(row, true, false);\n\
                let d = hooks::runtime_event(e, true);\n\
                let e = self.x_key(row); // x_key(row) in a comment\n\
                let f = HookEvent::parse(s);\n\
                let g = decide::progress(true, gates);\n\
                }\n\
                #[cfg(test)]\n\
                mod tests { fn t() { notify::progress(true, gates); } }\n";
    let found = calls_in(text, &modules);
    assert_eq!(
        found,
        [
            (5, "subsim_rules::resume::stop(".to_string()),
            (6, "notify::progress(".to_string()),
            (7, "x_key(".to_string()),
            (8, "hooks::runtime_event(".to_string()),
        ]
    );
}
