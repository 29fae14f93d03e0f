//! The harness every CLI test shares: the built binary, its outputs, scratch folders, and the
//! browser and server the browser and playground tests start. One copy, so a change to how a
//! test runs `subsim` (an environment variable, a stricter check) is made once.

#![allow(dead_code)] // each test module uses its own part of the harness

pub mod browser;
pub mod server;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// The `subsim` binary Cargo built for these tests.
pub const BINARY: &str = env!("CARGO_BIN_EXE_subsim");

/// `subsim` with `args`, without colors, backtraces or log filters from the environment.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(BINARY);
    command
        .args(args)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LOG");
    command
}

/// Runs `subsim` with `args` and waits for it.
pub fn subsim(args: &[&str]) -> Output {
    command(args).output().expect("the subsim binary runs")
}

/// Runs `subsim` with `args` in the folder `dir`.
pub fn subsim_in(dir: &Path, args: &[&str]) -> Output {
    command(args)
        .current_dir(dir)
        .output()
        .expect("the subsim binary runs")
}

/// The repository's root folder.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// What the run wrote to stdout (invalid UTF-8 shown as U+FFFD, for hostile outputs).
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `text` as one line: the lines a width wrapped (`COLUMNS`, 100 without it) joined again,
/// each run of spaces one space, and a word cut after a `/` or `-` whole again. Tests that
/// look for a phrase look in this.
pub fn flat(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !out.is_empty() && !out.ends_with('/') && !out.ends_with('-') {
            out.push(' ');
        }
        out.push_str(line);
    }
    let mut single = String::with_capacity(out.len());
    for word in out.split(' ').filter(|word| !word.is_empty()) {
        if !single.is_empty() {
            single.push(' ');
        }
        single.push_str(word);
    }
    single
}

/// What the run wrote to stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The exit code; a death by signal fails the test.
pub fn code(output: &Output) -> i32 {
    output
        .status
        .code()
        .expect("subsim exits with a code, not a signal")
}

/// Asserts exit `expected` and no panic; returns stderr.
pub fn exits(output: &Output, expected: i32) -> String {
    let err = stderr(output);
    assert_eq!(
        code(output),
        expected,
        "stdout: {}\nstderr: {err}",
        stdout(output)
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// Asserts exit 2 (bad input) and no panic; returns stderr.
pub fn refused(output: &Output) -> String {
    exits(output, 2)
}

/// A path as the `&str` an argument list takes.
pub fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Runs a future to its end on a runtime of its own (two workers, for servers and clients).
pub fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// A fresh folder for one test, removed when dropped. Its name carries the process id and a
/// counter, so two tests that pick the same name never share one.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(test: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("subsim-test-{}-{n}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    /// Writes `contents` to `name` inside the folder (making sub-folders) and returns its path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(&path, contents).expect("write");
        path
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The folder's path as the `&str` an argument list takes.
    pub fn text(&self) -> &str {
        text(&self.0)
    }

    /// Makes a named pipe `name` inside the folder.
    pub fn fifo(&self, name: &str) -> PathBuf {
        let path = self.0.join(name);
        let made = Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", path.display());
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
