//! Embeds every scenario under the repository's `scenarios/` folder in the binary, so that
//! `subsim explain` can run a rule's scenario on a machine without the repository.
//!
//! Writes `$OUT_DIR/scenarios.rs`: one `&[(&str, &str)]` of `(path, source)`, the path
//! relative to the repository root (`scenarios/cap/fan-out-25-hits-the-cap.yaml`) and the
//! source pulled in with `include_str!`, in sorted path order so the table is the same on
//! every machine.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("../..");
    let folder = root.join("scenarios");
    // Cargo scans a folder named here for changes at any depth: a scenario added or
    // removed rebuilds the table; edits to a file are tracked through `include_str!` too.
    println!("cargo:rerun-if-changed={}", folder.display());
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    if folder.is_dir() {
        walk(&folder, &mut files);
    }
    let mut entries: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(&root)
                .expect("found under the root")
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            (relative, path)
        })
        .collect();
    entries.sort();
    let mut code = String::from(
        "/// Every `scenarios/**/*.yaml` of the repository, as `(path, source)`, sorted by \
         path.\npub static SCENARIOS: &[(&str, &str)] = &[\n",
    );
    for (relative, path) in &entries {
        let absolute = path.canonicalize().unwrap_or_else(|_| path.clone());
        let _ = writeln!(
            code,
            "    ({relative:?}, include_str!({:?})),",
            absolute.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("scenarios.rs"), code).expect("write scenarios.rs");
}

/// Every `*.yaml` file under `folder`, at any depth.
fn walk(folder: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "yaml") {
            found.push(path);
        }
    }
}
