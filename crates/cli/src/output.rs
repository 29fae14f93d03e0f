//! Where output goes: a file named by `--out` (created or truncated) or a locked stdout,
//! both buffered; the one I/O error that is not a failure, a closed pipe; and the escaping
//! of control characters in text meant for a terminal (a scenario is untrusted input: its
//! names must not drive the terminal with escape sequences), from `subsim_escape::terminal`.

use std::fs::{self, File};
use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Opens a streamed output (`run --out`): `path`, or stdout when there is none. `inputs`
/// are the files the command reads (its scenario and every file the scenario named): an
/// output that is one of them is refused ([`refuse_inputs`]). The stream is written to
/// `PATH.partial` beside the output and renamed over `path` by [`Commit::commit`] when the
/// run ends (a safety-limit stop included); dropped uncommitted (a write error), the partial
/// file is removed. A run killed on the way keeps what it wrote in `PATH.partial` (issue
/// #10 §4.4), and `path` keeps what it held before.
pub fn open(path: Option<&Path>, inputs: &[PathBuf]) -> anyhow::Result<(Box<dyn Write>, Commit)> {
    match path {
        Some(path) => {
            let (file, commit) = create(path, inputs, Staging::Partial)?;
            Ok((Box::new(BufWriter::new(file)), commit))
        }
        None => Ok((Box::new(BufWriter::new(io::stdout().lock())), Commit(None))),
    }
}

/// Writes `bytes` to the file `path` as [`open`] does (refusing an input; all or nothing).
pub fn write_file(path: &Path, inputs: &[PathBuf], bytes: &[u8]) -> anyhow::Result<()> {
    let (mut file, commit) = create(path, inputs, Staging::Hidden)?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    drop(file);
    commit.commit()
}

/// A written output's last step: the staged file renamed over the output path. Dropped
/// without it (the run failed), the staged file is removed and the path keeps what it held
/// before: a failed run never leaves half a file.
#[must_use = "an output is only in place once committed"]
pub struct Commit(Option<(tempfile::TempPath, PathBuf)>);

impl Commit {
    /// Puts the written output in place (an atomic rename in its folder).
    pub fn commit(self) -> anyhow::Result<()> {
        match self.0 {
            Some((temp, path)) => temp
                .persist(&path)
                .map_err(|error| anyhow::Error::new(error.error))
                .with_context(|| format!("cannot write {}", path.display())),
            None => Ok(()),
        }
    }
}

/// Where an output is written before its rename.
#[derive(Clone, Copy)]
enum Staging {
    /// `.NAME.XXXXXX.tmp`, a fresh hidden name: a finished text written at once.
    Hidden,
    /// `NAME.partial`: a stream someone may watch, and what a killed run leaves.
    Partial,
}

/// The file to write `path` through, and its commit. A special file (a FIFO, a terminal,
/// `/dev/null`) is written directly: there is nothing to rename over it.
fn create(path: &Path, inputs: &[PathBuf], staging: Staging) -> anyhow::Result<(File, Commit)> {
    refuse_inputs(path, inputs)?;
    let existing = fs::metadata(path).ok();
    if existing.as_ref().is_some_and(|meta| !meta.is_file()) {
        let file = File::create(path)
            .with_context(|| format!("cannot create the output file {}", path.display()))?;
        return Ok((file, Commit(None)));
    }
    // Through a symbolic link, the file it leads to is replaced, not the link.
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path)
            .with_context(|| format!("cannot follow the link {}", path.display()))?,
        _ => path.to_path_buf(),
    };
    let (file, temp) = match staging {
        Staging::Hidden => hidden(&target),
        Staging::Partial => partial(&target, inputs),
    }
    .with_context(|| format!("cannot create the output file {}", path.display()))?;
    if let Some(meta) = existing {
        // Replacing a file keeps its permissions.
        let _ = fs::set_permissions(&temp, meta.permissions());
    }
    Ok((file, Commit(Some((temp, target)))))
}

/// A fresh hidden file beside `target`.
fn hidden(target: &Path) -> anyhow::Result<(File, tempfile::TempPath)> {
    let folder = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|name| format!(".{}.", name.to_string_lossy()))
        .unwrap_or_else(|| ".subsim.".to_string());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&name).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // What `File::create` would give a new file (the umask still applies).
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    Ok(builder.tempfile_in(&folder)?.into_parts())
}

/// `TARGET.partial`, new (a killed run's leftover, or a link placed there, is removed
/// first, never written through); refused if it is an input.
fn partial(target: &Path, inputs: &[PathBuf]) -> anyhow::Result<(File, tempfile::TempPath)> {
    let mut name = target.as_os_str().to_os_string();
    name.push(".partial");
    let path = PathBuf::from(name);
    refuse_inputs(&path, inputs)?;
    match fs::remove_file(&path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => {
            return Err(
                anyhow::Error::new(error).context(format!("cannot replace {}", path.display()))
            );
        }
        _ => {}
    }
    let file = File::options().write(true).create_new(true).open(&path)?;
    Ok((file, tempfile::TempPath::try_from_path(path)?))
}

/// Refuses an output path that is one of `inputs`: the same path, or the same file reached
/// another way (a symbolic or hard link: same device and inode). Exit 2, naming both.
pub fn refuse_inputs(output: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    for input in inputs {
        if same_file(output, input) {
            let how = if output == input.as_path() {
                String::new()
            } else {
                " through a link".to_string()
            };
            anyhow::bail!(
                "the output {} is the input {}{how}: writing it would destroy the input; \
                 choose another output path",
                output.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Are `a` and `b` the same regular file (same path after following links, or same device
/// and inode)?
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(meta_a), Ok(meta_b)) = (fs::metadata(a), fs::metadata(b)) else {
        return false;
    };
    if !meta_a.is_file() || !meta_b.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if meta_a.dev() == meta_b.dev() && meta_a.ino() == meta_b.ino() {
            return true;
        }
    }
    matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// `count` and the noun for it: `1 run`, `2 runs`.
pub fn counted(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// Writes a message for people to stderr (`subsim: note: …`) fitted to the terminal's
/// width, each continuation two columns in.
pub fn note(text: &str) {
    eprint!("{}", crate::words::fit(text));
}

/// Writes text for people to stdout fitted to the terminal's width ([`crate::words::fit`],
/// issue #32), as [`print()`] does.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    print(&crate::words::fit(text))
}

/// Writes `text` to stdout and flushes; a reader that went away (`subsim rules | head`) is
/// not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(escape_controls(text).as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if !is_broken_pipe(&error) => {
            Err(anyhow::Error::new(error).context("cannot write to stdout"))
        }
        _ => Ok(()),
    }
}

/// True for the error a write gets when the reader went away (`subsim run | head`):
/// nothing is wrong, there is just no one left to read.
pub fn is_broken_pipe(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe
}

/// Whether to color what goes to stdout.
pub fn stdout_color() -> bool {
    io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Whether to color what goes to stderr.
pub fn stderr_color() -> bool {
    io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Text for a terminal with every control character, ESC sequence, bidirectional override
/// and line separator shown as a visible escape (`\u{1b}`); newlines and tabs stay: the
/// workspace's one terminal escaper, [`subsim_escape::terminal::text`].
pub use subsim_escape::terminal::text as escape_controls;
/// A writer that escapes as [`escape_controls`] does on the way to the one it wraps: for the
/// narration and the statistics table.
pub use subsim_escape::terminal::Escaping;

/// The one message for a run a safety limit stopped (`run`, `check`, `sweep`): when it
/// stopped, then `LimitHit`'s explanation, which names the key to raise and shows the bound
/// as it is written in `session.limits` (`max_time` as a duration, not in µs).
pub fn limit_message(limit: &subsim_engine::LimitHit, end: subsim_engine::SimTime) -> String {
    format!(
        "the run was stopped by its safety limit `{}` at {end}: {limit}",
        limit.limit
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder for one test.
    fn folder(test: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("subsim-output-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap_or_else(|e| panic!("{e}"));
        path
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .map(|entry| {
                entry.map_or(String::new(), |e| {
                    e.file_name().to_string_lossy().into_owned()
                })
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_failed_run_left_half_a_file() {
        let dir = folder("half");
        let path = dir.join("out.jsonl");
        fs::write(&path, "old\n").unwrap_or_else(|e| panic!("{e}"));
        let (mut out, commit) = open(Some(&path), &[]).unwrap_or_else(|e| panic!("{e}"));
        out.write_all(b"half a line")
            .unwrap_or_else(|e| panic!("{e}"));
        out.flush().unwrap_or_else(|e| panic!("{e}"));
        // The run fails here: neither the output nor a temporary file is left changed.
        drop(out);
        drop(commit);
        assert_eq!(fs::read_to_string(&path).unwrap_or_default(), "old\n");
        assert_eq!(listing(&dir), ["out.jsonl"]);
        // Committed, it replaces the file whole.
        let (mut out, commit) = open(Some(&path), &[]).unwrap_or_else(|e| panic!("{e}"));
        out.write_all(b"new\n").unwrap_or_else(|e| panic!("{e}"));
        drop(out);
        commit.commit().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(fs::read_to_string(&path).unwrap_or_default(), "new\n");
        assert_eq!(listing(&dir), ["out.jsonl"]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn an_output_through_a_symlink_replaces_the_file_not_the_link() {
        let dir = folder("link");
        let target = dir.join("target.txt");
        fs::write(&target, "old").unwrap_or_else(|e| panic!("{e}"));
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap_or_else(|e| panic!("{e}"));
        write_file(&link, &[], b"new").unwrap_or_else(|e| panic!("{e}"));
        assert!(fs::symlink_metadata(&link).is_ok_and(|meta| meta.file_type().is_symlink()));
        assert_eq!(fs::read_to_string(&target).unwrap_or_default(), "new");
        // And an input reached through the link is refused.
        let refused = write_file(&link, std::slice::from_ref(&target), b"x");
        assert!(refused.is_err_and(|e| e.to_string().contains("is the input")));
        assert_eq!(fs::read_to_string(&target).unwrap_or_default(), "new");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn limit_message_shows_max_time_as_a_duration_and_the_key_to_raise() {
        let limit = subsim_engine::LimitHit {
            limit: subsim_engine::event::Limit::MaxTime,
            value: 20_000_000,
        };
        let text = limit_message(&limit, subsim_engine::SimTime::from_secs(20));
        assert!(text.contains("(20s)"), "{text}");
        assert!(!text.contains("20000000"), "{text}");
        assert!(text.contains("session.limits.max_time"), "{text}");
        assert!(text.contains("at 00:00:20.000"), "{text}");
    }
}
