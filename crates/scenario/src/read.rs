//! The bounded reader: every file or stdin that a command reads goes through here
//! (issue #24) — a scenario, its `file:` definitions, its `agent_dirs` and `--agents`
//! JSON, arrival times files, `merge`'s shard files, traces read by the views, transcripts:
//! - a hard byte limit on every read, a [`Budget`] that names the flag that raises it,
//!   whatever the file is (`/dev/zero` and `/dev/urandom` report a size of 0, so the
//!   size in the metadata is not enough): at most one byte more than the budget is read;
//! - only regular files where a path comes from a file or a folder search (a FIFO would
//!   block forever), while a file named on the command line may be a pipe
//!   (`subsim run <(cat x.yaml)`) or `-`, stdin ([`Input::Stdin`]);
//! - `Confine`: a scenario reads only inside its own folder and the folders the user
//!   allowed (`--allow-path`); absolute paths, `..` that leaves the folder and symbolic
//!   links that lead out are refused;
//! - text that is not UTF-8 is located at the first bad byte; a leading UTF-8 byte-order
//!   mark is dropped (editors on Windows write one);
//! - [`BoundedLines`] reads line by line, for inputs too large to hold twice: each line
//!   and the whole stream under a budget, each line numbered for located errors.

use std::io::{BufRead, Read};
use std::path::{Component, Path, PathBuf};

use subsim_engine::budget::{Budget, OverBudget};

use crate::raw::MAX_FILE_BYTES;

/// The budget of a file a scenario names, and of the scenario itself.
pub const SCENARIO_FILE_BYTES: Budget =
    Budget::new("scenario file bytes", MAX_FILE_BYTES as u64, "bytes", None);

/// The UTF-8 byte-order mark, dropped where a text starts with it.
const BOM: &str = "\u{feff}";

/// Where a text comes from: a path, or standard input (`-` on the command line).
#[derive(Clone, Copy, Debug)]
pub enum Input<'p> {
    /// A file (or a pipe, a device … unless only regular files are read).
    Path(&'p Path),
    /// Standard input.
    Stdin,
}

impl<'p> Input<'p> {
    /// `-` is stdin, anything else a path.
    pub fn from_arg(path: &'p Path) -> Input<'p> {
        if path.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::Path(path)
        }
    }

    /// How the input is named in messages.
    pub fn shown(&self) -> String {
        match self {
            Input::Path(path) => path.display().to_string(),
            Input::Stdin => "<stdin>".to_string(),
        }
    }
}

/// Why a file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Not found, not permitted, not a regular file, outside the folder …: a sentence
    /// that completes "cannot read …: ".
    Io(String),
    /// More bytes than the budget (in the whole input, or in one line).
    TooLarge(OverBudget),
    /// The bytes are not UTF-8; the text up to the first bad byte is valid.
    NotUtf8 {
        /// The text with every bad sequence replaced by U+FFFD (identical to the input up
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
            ReadError::TooLarge(over) => write!(f, "{over}"),
            ReadError::NotUtf8 { line, column, .. } => write!(
                f,
                "it is not UTF-8 text (the first bad byte is at {line}:{column})"
            ),
        }
    }
}

impl std::error::Error for ReadError {}

fn io(error: std::io::Error) -> ReadError {
    ReadError::Io(error.to_string())
}

/// Opens `input` for reading; with `regular_only`, anything but a regular file (after
/// following symbolic links) is refused before it is opened, so a FIFO cannot block. A
/// file whose size is known to be over `budget` is refused unopened.
pub fn open(
    input: Input<'_>,
    budget: &Budget,
    regular_only: bool,
) -> Result<Box<dyn Read>, ReadError> {
    let path = match input {
        Input::Stdin => return Ok(Box::new(std::io::stdin())),
        Input::Path(path) => path,
    };
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
    if metadata.is_file() {
        budget
            .check("the file", metadata.len())
            .map_err(ReadError::TooLarge)?;
    }
    Ok(Box::new(std::fs::File::open(path).map_err(io)?))
}

/// Reads `input` whole as bytes, at most `budget` of them.
pub fn read_bytes(
    input: Input<'_>,
    budget: &Budget,
    regular_only: bool,
) -> Result<Vec<u8>, ReadError> {
    let reader = open(input, budget, regular_only)?;
    let mut bytes = Vec::new();
    // One byte more than allowed tells an input at the limit from a larger one; `take`
    // bounds the read even if the file grows while it is read.
    reader
        .take(budget.limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > budget.limit {
        return Err(ReadError::TooLarge(
            budget.over_at_least(input.shown(), bytes.len() as u64),
        ));
    }
    Ok(bytes)
}

/// Reads `input` whole as UTF-8 text of at most `budget` bytes (see the module).
pub fn read_bounded(
    input: Input<'_>,
    budget: &Budget,
    regular_only: bool,
) -> Result<String, ReadError> {
    utf8(read_bytes(input, budget, regular_only)?)
}

/// Reads `path` as UTF-8 text of at most [`MAX_FILE_BYTES`] bytes (the scenario budget).
pub(crate) fn read_text(path: &Path, regular_only: bool) -> Result<String, ReadError> {
    read_bounded(Input::Path(path), &SCENARIO_FILE_BYTES, regular_only)
}

/// `bytes` as text, its byte-order mark dropped, or where the first bad byte is.
fn utf8(bytes: Vec<u8>) -> Result<String, ReadError> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with(BOM) {
                text.drain(..BOM.len());
            }
            Ok(text)
        }
        Err(error) => {
            let offset = error.utf8_error().valid_up_to();
            let bytes = error.into_bytes();
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            let before = &lossy[..offset];
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |at| at + 1);
            let column = before[line_start..].chars().count() + 1;
            Err(ReadError::NotUtf8 {
                lossy,
                offset,
                line,
                column,
            })
        }
    }
}

/// A text read line by line under two budgets: the whole input, and each line. Yields
/// `(line number, line)` (1-based, without its `\n` or `\r\n`); a line that is not UTF-8
/// or over a budget is an error at that line, after which the iterator ends — unless
/// [`BoundedLines::lossy`] says bad bytes are replaced. A leading byte-order mark is
/// dropped.
pub struct BoundedLines<R> {
    reader: std::io::BufReader<R>,
    total: Budget,
    line: Budget,
    read: u64,
    number: usize,
    done: bool,
    lossy: bool,
    first_replaced: Option<usize>,
}

impl<R: Read> BoundedLines<R> {
    /// Lines of `reader`: at most `total` bytes in all, `line` bytes in one line.
    pub fn new(reader: R, total: Budget, line: Budget) -> BoundedLines<R> {
        BoundedLines {
            reader: std::io::BufReader::new(reader),
            total,
            line,
            read: 0,
            number: 0,
            done: false,
            lossy: false,
            first_replaced: None,
        }
    }

    /// Bytes that are not UTF-8 are replaced by U+FFFD instead of ending the lines (a
    /// transcript a crashed writer left a bad byte in is still read);
    /// [`BoundedLines::first_replaced`] says where it first happened.
    #[must_use]
    pub fn lossy(self) -> BoundedLines<R> {
        BoundedLines {
            lossy: true,
            ..self
        }
    }

    /// The first line in which bad bytes were replaced (in [`BoundedLines::lossy`] mode).
    pub fn first_replaced(&self) -> Option<usize> {
        self.first_replaced
    }

    /// The bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    fn next_line(&mut self) -> Result<Option<String>, ReadError> {
        let mut bytes = Vec::new();
        let room = self
            .line
            .limit
            .min(self.total.limit.saturating_sub(self.read));
        let got = (&mut self.reader)
            .take(room.saturating_add(1))
            .read_until(b'\n', &mut bytes)
            .map_err(io)?;
        if got == 0 {
            return Ok(None);
        }
        self.number += 1;
        self.read += got as u64;
        let ended = bytes.last() == Some(&b'\n');
        let content = bytes.len() - usize::from(ended);
        if self.read > self.total.limit {
            return Err(ReadError::TooLarge(self.total.over_at_least(
                format!("the input up to line {}", self.number),
                self.read,
            )));
        }
        if content as u64 > self.line.limit {
            return Err(ReadError::TooLarge(
                self.line
                    .over_at_least(format!("line {}", self.number), content as u64),
            ));
        }
        bytes.truncate(content);
        // `\r\n` ends a line as `str::lines` says: a bare `\r` at the end stays.
        if ended && bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        if self.number == 1 && bytes.starts_with(BOM.as_bytes()) {
            bytes.drain(..BOM.len());
            if bytes.is_empty() && !ended {
                // A byte-order mark and nothing after it is an empty text, which has no
                // lines (as `read_bounded` then `str::lines` says), not one empty line.
                self.number = 0;
                return Ok(None);
            }
        }
        if self.lossy {
            return Ok(Some(match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(error) => {
                    self.first_replaced.get_or_insert(self.number);
                    String::from_utf8_lossy(error.as_bytes()).into_owned()
                }
            }));
        }
        String::from_utf8(bytes).map(Some).map_err(|error| {
            let offset = error.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(error.as_bytes()).into_owned();
            let column = lossy[..offset].chars().count() + 1;
            ReadError::NotUtf8 {
                lossy,
                offset,
                line: self.number,
                column,
            }
        })
    }
}

impl<R: Read> Iterator for BoundedLines<R> {
    type Item = Result<(usize, String), ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_line() {
            Ok(Some(line)) => Some(Ok((self.number, line))),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(error) => {
                self.done = true;
                Some(Err(error))
            }
        }
    }
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
    /// Every file read through `read_limited`, in order: the run's inputs, which no
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
            Err(ReadError::TooLarge(over)) => {
                assert_eq!(over.budget, SCENARIO_FILE_BYTES);
                assert!(
                    over.to_string()
                        .contains("over the scenario file bytes budget"),
                    "{over}"
                );
            }
            other => panic!("{other:?}"),
        }
        match read_text(Path::new("/dev/zero"), true) {
            Err(ReadError::Io(message)) => {
                assert!(message.contains("a character device"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    const SMALL: Budget = Budget::new("test bytes", 16, "bytes", Some("--max-test-bytes"));
    const LINE: Budget = Budget::new("test line bytes", 8, "bytes", None);

    #[test]
    fn a_byte_order_mark_is_dropped() {
        let dir = temp("bom");
        let path = dir.join("times.txt");
        std::fs::write(&path, "\u{feff}time\n1s\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_text(&path, true).as_deref(), Ok("time\n1s\n"));
        let lines: Vec<_> = BoundedLines::new(&b"\xef\xbb\xbftime\r\n1s"[..], SMALL, LINE)
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lines, [(1, "time".to_string()), (2, "1s".to_string())]);
    }

    #[test]
    fn a_byte_order_mark_alone_is_an_empty_text_without_lines() {
        // `[239, 187, 191]` read as one empty line, where the whole-text reader gives ""
        // and "".lines() nothing; a mark then a newline is one empty line in both.
        let lines = |bytes: &[u8]| {
            BoundedLines::new(bytes, SMALL, LINE)
                .collect::<Result<Vec<_>, _>>()
                .unwrap_or_else(|e| panic!("{e}"))
        };
        assert_eq!(lines(&[239, 187, 191]), []);
        assert_eq!(lines(b"\xef\xbb\xbf\n"), [(1, String::new())]);
        assert_eq!(lines(b"\xef\xbb\xbf\r\n"), [(1, String::new())]);
        assert_eq!(lines(b"\xef\xbb\xbf\xef\xbb\xbf"), [(1, BOM.to_string())]);
        assert_eq!(lines(b""), []);
    }

    #[test]
    fn lossy_lines_replace_bad_bytes_and_say_where_first() {
        let mut lines =
            BoundedLines::new(&b"\xef\xbb\xbfok\nb\xffc\n\xfe\n"[..], SMALL, LINE).lossy();
        let read: Vec<_> = lines
            .by_ref()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read,
            [
                (1, "ok".to_string()),
                (2, "b\u{fffd}c".to_string()),
                (3, "\u{fffd}".to_string())
            ]
        );
        assert_eq!(lines.first_replaced(), Some(2));
    }

    #[test]
    fn reads_stop_one_byte_past_the_budget_and_name_it() {
        let over = read_bytes(Input::Path(Path::new("/dev/zero")), &SMALL, false).unwrap_err();
        assert_eq!(
            over.to_string(),
            "/dev/zero holds more than 16 bytes, over the test bytes budget of 16 bytes; \
             raise it with --max-test-bytes"
        );
        let dir = temp("budget");
        let path = dir.join("big");
        std::fs::write(&path, [b'x'; 17]).unwrap_or_else(|e| panic!("{e}"));
        // A regular file's size is known: refused before it is read.
        match read_bytes(Input::Path(&path), &SMALL, true) {
            Err(ReadError::TooLarge(over)) => assert_eq!(over.count, Some(17)),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            read_bytes(Input::Path(&path), &SMALL.with_limit(17), true).map(|b| b.len()),
            Ok(17)
        );
    }

    #[test]
    fn lines_are_bounded_each_and_in_all() {
        let long = BoundedLines::new(&b"ok\n123456789\nnever"[..], SMALL, LINE)
            .map(|line| line.map_err(|e| e.to_string()))
            .collect::<Vec<_>>();
        assert_eq!(long[0], Ok((1, "ok".to_string())));
        assert!(
            long[1]
                .as_ref()
                .is_err_and(|e| e.starts_with("line 2 holds more than 8 bytes")),
            "{long:?}"
        );
        assert_eq!(long.len(), 2, "the iterator ends at the error");
        let endless = std::io::repeat(b'\n');
        let mut lines = BoundedLines::new(endless, SMALL, LINE);
        let counted = lines.by_ref().take_while(Result::is_ok).count();
        assert_eq!(counted, 16);
        assert!(lines.bytes_read() <= 17);
        let bad = BoundedLines::new(&b"a\nb\xffc\n"[..], SMALL, LINE).nth(1);
        assert!(
            matches!(
                bad,
                Some(Err(ReadError::NotUtf8 {
                    line: 2,
                    column: 2,
                    ..
                }))
            ),
            "{bad:?}"
        );
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
