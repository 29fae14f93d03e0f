//! Reading files named by untrusted input — a scenario, its `file:` definitions, its
//! `agent_dirs` and `--agents` JSON — safely:
//! - a hard byte limit on every read, whatever the file is (`/dev/zero` and `/dev/urandom`
//!   report a size of 0, so the size in the metadata is not enough);
//! - only regular files where a path comes from a scenario or a folder search (a FIFO
//!   would block forever), while a scenario named on the command line may be a pipe
//!   (`subsim run <(cat x.yaml)`);
//! - [`Confine`]: a scenario reads only inside its own folder and the folders the user
//!   allowed (`--allow-path`); absolute paths, `..` that leaves the folder and symbolic
//!   links that lead out are refused;
//! - text that is not UTF-8 is located at the first bad byte.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use crate::raw::MAX_FILE_BYTES;

/// Why a file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// Not found, not permitted, not a regular file, too large, outside the folder …:
    /// a sentence that completes "cannot read …: ".
    Io(String),
    /// The bytes are not UTF-8; the text up to the first bad byte is valid.
    NotUtf8 {
        /// The file with every bad sequence replaced by U+FFFD (identical to the file up
        /// to `offset`), for a snippet.
        lossy: String,
        /// Byte offset of the first bad byte.
        offset: usize,
        /// 1-based line of that byte.
        line: usize,
        /// 1-based column (in characters) of that byte.
        column: usize,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(message) => f.write_str(message),
            ReadError::NotUtf8 { line, column, .. } => write!(
                f,
                "it is not UTF-8 text (the first bad byte is at {line}:{column})"
            ),
        }
    }
}

/// Reads `path` as UTF-8 text of at most [`MAX_FILE_BYTES`] bytes. With `regular_only`,
/// anything but a regular file (after following symbolic links) is refused before it is
/// opened, so a FIFO cannot block.
pub(crate) fn read_text(path: &Path, regular_only: bool) -> Result<String, ReadError> {
    let io = |error: std::io::Error| ReadError::Io(error.to_string());
    let metadata = std::fs::metadata(path).map_err(io)?;
    if metadata.is_dir() {
        return Err(ReadError::Io("it is a folder, not a file".to_string()));
    }
    if regular_only && !metadata.is_file() {
        return Err(ReadError::Io(format!(
            "it is {}, not a regular file; only regular files are read here",
            kind_of(&metadata)
        )));
    }
    if metadata.len() > MAX_FILE_BYTES as u64 {
        return Err(too_large(Some(metadata.len())));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    // One byte more than allowed tells a file at the limit from a larger one.
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(too_large(None));
    }
    String::from_utf8(bytes).map_err(|error| {
        let offset = error.utf8_error().valid_up_to();
        let bytes = error.into_bytes();
        let lossy = String::from_utf8_lossy(&bytes).into_owned();
        let before = &lossy[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        let column = before[line_start..].chars().count() + 1;
        ReadError::NotUtf8 {
            lossy,
            offset,
            line,
            column,
        }
    })
}

fn too_large(size: Option<u64>) -> ReadError {
    ReadError::Io(match size {
        Some(size) => format!("the file is {size} bytes; files are read up to {MAX_FILE_BYTES}"),
        None => format!("it holds more than {MAX_FILE_BYTES} bytes, the most that is read"),
    })
}

/// What kind of non-regular file `metadata` describes, for messages.
fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let kind = metadata.file_type();
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    let _ = metadata;
    "a special file"
}

/// The folders a scenario may read from: its own, plus those allowed with `--allow-path`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Confine {
    /// The scenario's folder first, then the allowed ones.
    roots: Vec<PathBuf>,
    /// Every file read through [`Confine::read`], in order: the run's inputs, which no
    /// output may overwrite (`Loaded::read_files`).
    read: std::cell::RefCell<Vec<PathBuf>>,
}

impl Confine {
    /// Reads confined to `base_dir` and `allowed`.
    pub fn new(base_dir: &Path, allowed: &[PathBuf]) -> Confine {
        let mut roots = vec![non_empty(base_dir)];
        roots.extend(allowed.iter().map(|dir| non_empty(dir)));
        Confine {
            roots,
            read: std::cell::RefCell::default(),
        }
    }

    /// Notes that `path` was read (see `read`).
    pub fn note_read(&self, path: &Path) {
        self.read.borrow_mut().push(path.to_path_buf());
    }

    /// The files read so far, in order.
    pub fn files_read(&self) -> Vec<PathBuf> {
        self.read.borrow().clone()
    }

    /// `Ok` if `path` lies inside one of the folders, both as written (after folding `.`
    /// and `..`) and, when it exists, after following symbolic links.
    pub fn check(&self, path: &Path) -> Result<(), String> {
        let written = lexical(path);
        if !self
            .roots
            .iter()
            .any(|root| written.starts_with(lexical(root)))
        {
            return Err(format!(
                "`{}` is outside the scenario's folder ({}); a scenario reads only inside its \
                 own folder unless you allow more with `--allow-path DIR`",
                written.display(),
                self.roots[0].display()
            ));
        }
        if let Ok(real) = path.canonicalize() {
            let inside = self
                .roots
                .iter()
                .filter_map(|root| root.canonicalize().ok())
                .any(|root| real.starts_with(root));
            if !inside {
                return Err(format!(
                    "it leads through a symbolic link to `{}`, outside the scenario's folder \
                     ({}); allow that folder with `--allow-path DIR` to read it",
                    real.display(),
                    self.roots[0].display()
                ));
            }
        }
        Ok(())
    }
}

fn non_empty(dir: &Path) -> PathBuf {
    if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir.to_path_buf()
    }
}

/// `path` made absolute against the working directory, `.` dropped and `..` folded,
/// without touching the file system beyond the working directory.
fn lexical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut folded = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                folded.pop();
            }
            other => folded.push(other.as_os_str()),
        }
    }
    folded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("subsim-read-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
        dir
    }

    #[test]
    fn endless_files_are_read_with_a_byte_limit() {
        // /dev/zero reports a size of 0 and never ends.
        match read_text(Path::new("/dev/zero"), false) {
            Err(ReadError::Io(message)) => assert!(message.contains("more than"), "{message}"),
            other => panic!("{other:?}"),
        }
        match read_text(Path::new("/dev/zero"), true) {
            Err(ReadError::Io(message)) => {
                assert!(message.contains("a character device"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn non_utf8_text_is_located_at_the_bad_byte() {
        let dir = temp("utf8");
        let path = dir.join("bad.yaml");
        std::fs::write(&path, b"name: x\nmain: []\nfoo: \xff\n").unwrap_or_else(|e| panic!("{e}"));
        match read_text(&path, true) {
            Err(ReadError::NotUtf8 {
                line,
                column,
                offset,
                lossy,
            }) => {
                assert_eq!((line, column, offset), (3, 6, 22));
                assert!(lossy.starts_with("name: x\nmain: []\nfoo: \u{fffd}"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn confinement_folds_dots_and_follows_links() {
        let dir = temp("confine");
        let inside = dir.join("scenario");
        std::fs::create_dir_all(inside.join("agents")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(inside.join("agents/a.md"), "x").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("secret.md"), "x").unwrap_or_else(|e| panic!("{e}"));
        let confine = Confine::new(&inside, &[]);
        assert!(confine.check(&inside.join("agents/a.md")).is_ok());
        assert!(confine.check(&inside.join("agents/../agents/a.md")).is_ok());
        assert!(confine.check(&inside.join("../secret.md")).is_err());
        assert!(confine.check(Path::new("/etc/passwd")).is_err());
        // The sibling folder is not "inside" because its name starts alike.
        assert!(confine.check(&dir.join("scenario-other/x.md")).is_err());
        let allowed = Confine::new(&inside, std::slice::from_ref(&dir));
        assert!(allowed.check(&inside.join("../secret.md")).is_ok());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("secret.md"), inside.join("link.md"))
                .unwrap_or_else(|e| panic!("{e}"));
            let refused = confine.check(&inside.join("link.md"));
            assert!(
                refused
                    .as_ref()
                    .is_err_and(|message| message.contains("symbolic link")),
                "{refused:?}"
            );
            assert!(allowed.check(&inside.join("link.md")).is_ok());
        }
    }
}
