//! Reading a Claude Code transcript file defensively: JSON Lines under a byte limit, two
//! objects on one line, a half-written last line, unknown line types; and ISO-8601 times.
//!
//! This module knows nothing of spawns: it turns bytes into located JSON objects (or a
//! located error saying why the file is not a transcript). What the lines mean is
//! `transcript.rs`'s job.

use std::io::Read;
use std::path::Path;

use serde::de::IgnoredAny;

use subsim_engine::budget::Budget;

use super::transcript::MAX_SKIPPED_KEPT;
use super::wire::RawLine;
use super::ImportError;
use crate::read::{BoundedLines, ReadError};

/// The most bytes read from one transcript file (main or subagent). Real sessions of a
/// working day are a few MiB; a larger file is refused. The file is read one line at a
/// time, so memory holds one line plus what the scenario needs, not the file.
pub(crate) const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes read over all the files of one import.
pub(crate) const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// Line types Claude Code writes. Only some carry what the importer needs; the others are
/// known so that a file made only of them still counts as a transcript.
const KNOWN_TYPES: [&str; 10] = [
    "user",
    "assistant",
    "progress",
    "queue-operation",
    "system",
    "summary",
    "file-history-snapshot",
    "attachment",
    "permission-mode",
    "last-prompt",
];

/// How strictly to read: the main session file must be a transcript; a subagent file that
/// goes wrong only costs a warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strictness {
    /// A line that is not a JSON object with a `type` is an error.
    Main,
    /// Such a line is skipped with a warning.
    Subagent,
}

/// The lines of a file the reader skipped (could not read): their numbers (the first
/// [`MAX_SKIPPED_KEPT`]) and how many.
#[derive(Clone, Debug, Default)]
pub(crate) struct Skipped {
    /// 1-based line numbers, in file order.
    pub lines: Vec<usize>,
    /// How many lines were skipped in all.
    pub count: usize,
}

impl Skipped {
    fn add(&mut self, line: usize) {
        self.count += 1;
        if self.lines.len() < MAX_SKIPPED_KEPT {
            self.lines.push(line);
        }
    }
}

/// Reads one transcript file, handing every JSON object of every line to `sink` with its
/// 1-based line number, in file order. `budget` is what may still be read over the whole
/// import; it is reduced by what this file used.
pub(crate) fn read_entries(
    path: &Path,
    strictness: Strictness,
    budget: &mut u64,
    warnings: &mut Vec<String>,
    skipped: &mut Skipped,
    sink: &mut dyn FnMut(usize, RawLine),
) -> Result<(), ImportError> {
    let shown = path.display().to_string();
    let metadata = std::fs::metadata(path).map_err(|error| ImportError::Unreadable {
        file: shown.clone(),
        message: error.to_string(),
    })?;
    if !metadata.is_file() {
        // A FIFO or a device could block or never end; a directory is a usage mistake.
        return Err(ImportError::Unreadable {
            file: shown,
            message: "not a regular file".to_string(),
        });
    }
    let limit = MAX_TRANSCRIPT_BYTES.min(*budget);
    if metadata.len() > limit {
        return Err(ImportError::TooLarge {
            file: shown,
            bytes: metadata.len(),
            limit,
        });
    }
    let mut file = std::fs::File::open(path).map_err(|error| ImportError::Unreadable {
        file: shown.clone(),
        message: error.to_string(),
    })?;
    // The bounded reader stops one byte past the limit even if the file grows while it
    // is read (a live session).
    let used = parse_entries(
        &mut file, limit, &shown, strictness, warnings, skipped, sink,
    )?;
    *budget = budget.saturating_sub(used);
    Ok(())
}

/// A line that could not be read, held until the next line shows whether it was the last
/// (a cut-off last line is a session still being written, not a broken file).
struct Pending {
    number: usize,
    /// The line ended inside a value.
    eof: bool,
    column: usize,
    message: String,
}

/// Parses transcript text from `reader`, at most `limit` bytes of it (see
/// [`read_entries`]), through the shared bounded line reader in its lossy mode (a bad
/// byte is replaced and warned about once; a leading byte-order mark is dropped); returns
/// the bytes read.
pub(crate) fn parse_entries(
    reader: &mut dyn Read,
    limit: u64,
    shown: &str,
    strictness: Strictness,
    warnings: &mut Vec<String>,
    skipped: &mut Skipped,
    sink: &mut dyn FnMut(usize, RawLine),
) -> Result<u64, ImportError> {
    // One line may be the whole file (a huge tool result): the file's budget bounds both.
    let budget = Budget::new("transcript bytes", limit, "bytes", None);
    let mut lines = BoundedLines::new(reader, budget, budget).lossy();
    let mut known = 0usize;
    let mut pending: Option<Pending> = None;
    let mut lossy_warned = false;
    while let Some(item) = lines.next() {
        let (number, line) = match item {
            Ok(line) => line,
            Err(ReadError::TooLarge(over)) => {
                return Err(ImportError::TooLarge {
                    file: shown.to_string(),
                    bytes: over.count.unwrap_or(u64::MAX),
                    limit,
                })
            }
            Err(error) => {
                return Err(ImportError::Unreadable {
                    file: shown.to_string(),
                    message: error.to_string(),
                })
            }
        };
        if let (Some(first), false) = (lines.first_replaced(), lossy_warned) {
            warnings.push(format!(
                "{shown}:{first}: not valid UTF-8; invalid bytes were replaced"
            ));
            lossy_warned = true;
        }
        if line.trim().is_empty() {
            continue;
        }
        if let Some(broken) = pending.take() {
            skipped.add(broken.number);
            not_json(broken, shown, strictness, warnings)?;
        }
        let before = warnings.len();
        pending = parse_line(&line, number, shown, strictness, warnings, &mut known, sink)?;
        // A line `parse_line` skipped said so in a warning (and handed nothing on).
        if warnings.len() > before && warnings[before..].iter().any(|w| w.contains("skipped")) {
            skipped.add(number);
        }
    }
    let used = lines.bytes_read();
    if let Some(broken) = pending {
        skipped.add(broken.number);
        if broken.eof {
            warnings.push(format!(
                "{shown}:{}: the last line is cut off (a session still being written?); it \
                 was skipped",
                broken.number
            ));
        } else {
            not_json(broken, shown, strictness, warnings)?;
        }
    }
    if known == 0 && strictness == Strictness::Main {
        return Err(ImportError::NotTranscript {
            file: shown.to_string(),
            line: 1,
            column: 1,
            message: "no Claude Code transcript lines (`user`, `assistant`, …) in the file"
                .to_string(),
        });
    }
    Ok(used)
}

/// A line that is not JSON: an error in the main file, a warning in a subagent's.
fn not_json(
    broken: Pending,
    shown: &str,
    strictness: Strictness,
    warnings: &mut Vec<String>,
) -> Result<(), ImportError> {
    if strictness == Strictness::Subagent {
        warnings.push(format!(
            "{shown}:{}:{}: not JSON ({}); the line was skipped",
            broken.number, broken.column, broken.message
        ));
        return Ok(());
    }
    Err(ImportError::NotTranscript {
        file: shown.to_string(),
        line: broken.number,
        column: broken.column,
        message: format!("this line is not JSON: {}", broken.message),
    })
}

/// Reads the objects of one line. One line in a few real files holds two objects back to
/// back: all are read. Returns the line's syntax error, if any, for the caller to judge.
fn parse_line(
    line: &str,
    number: usize,
    shown: &str,
    strictness: Strictness,
    warnings: &mut Vec<String>,
    known: &mut usize,
    sink: &mut dyn FnMut(usize, RawLine),
) -> Result<Option<Pending>, ImportError> {
    let mut stream = serde_json::Deserializer::from_str(line).into_iter::<RawLine>();
    loop {
        let offset = stream.byte_offset();
        let raw = match stream.next() {
            None => return Ok(None),
            Some(Ok(raw)) => raw,
            Some(Err(error)) => {
                return skipped_or_broken(&line[offset..], number, shown, warnings, error)
            }
        };
        match raw.kind.as_str() {
            Some(kind) => {
                if KNOWN_TYPES.contains(&kind) {
                    *known += 1;
                }
                sink(number, raw);
            }
            None if strictness == Strictness::Subagent => {
                warnings.push(format!(
                    "{shown}:{number}: a line without a `type`; skipped"
                ));
            }
            None => {
                return Err(ImportError::NotTranscript {
                    file: shown.to_string(),
                    line: number,
                    column: 1,
                    message: "this line is not a Claude Code transcript line (a JSON \
                              object with a `type` such as `user` or `assistant`)"
                        .to_string(),
                })
            }
        }
    }
}

/// Why an object of a line could not be read: valid JSON of an unexpected shape or
/// nesting deeper than the reader follows (the line is skipped with a warning, in any
/// file), or not JSON at all (returned for the caller).
fn skipped_or_broken(
    rest: &str,
    number: usize,
    shown: &str,
    warnings: &mut Vec<String>,
    error: serde_json::Error,
) -> Result<Option<Pending>, ImportError> {
    let deep = error.to_string().contains("recursion limit exceeded");
    if deep {
        // serde_json follows 128 levels; a line nested deeper is skipped, not the file.
        warnings.push(format!(
            "{shown}:{number}: a line nested deeper than 128 levels; skipped (no transcript \
             line Claude Code writes nests that deep)"
        ));
        return Ok(None);
    }
    if error.classify() == serde_json::error::Category::Data {
        // Valid JSON whose fields are not what the importer reads (a field given twice…).
        let valid = serde_json::Deserializer::from_str(rest)
            .into_iter::<IgnoredAny>()
            .all(|value| value.is_ok());
        if valid {
            warnings.push(format!(
                "{shown}:{number}: a line of an unexpected shape ({error}); skipped"
            ));
            return Ok(None);
        }
    }
    Ok(Some(Pending {
        number,
        eof: error.is_eof(),
        column: error.column().max(1),
        message: error.to_string(),
    }))
}

/// Milliseconds since the Unix epoch of an ISO-8601 UTC time as Claude Code writes it
/// (`2026-02-12T16:02:48.183Z`; an offset `+01:00` and other fraction lengths are read
/// too). `None` for anything else.
pub(crate) fn parse_time_ms(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() < 19 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[13] != b':' {
        return None;
    }
    if !matches!(bytes[10], b'T' | b't' | b' ') || bytes[16] != b':' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.bytes().all(|b| b.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut millis = 0i64;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let mut scaled = 0i64;
        for (place, digit) in fraction[..digits].bytes().take(3).enumerate() {
            scaled += i64::from(digit - b'0') * [100, 10, 1][place];
        }
        millis = scaled;
        rest = &fraction[digits..];
    }
    let offset_minutes = match rest {
        "Z" | "z" | "" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let body = &rest[1..];
            let (h, m) = match body.len() {
                5 if body.as_bytes()[2] == b':' => (&body[0..2], &body[3..5]),
                4 => (&body[0..2], &body[2..4]),
                _ => return None,
            };
            let h: i64 = h.parse().ok()?;
            let m: i64 = m.parse().ok()?;
            sign * (h * 60 + m)
        }
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1_000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    type Found = Vec<(usize, RawLine)>;

    fn entries(text: &str, strictness: Strictness) -> (Result<Found, ImportError>, Vec<String>) {
        let mut warnings = Vec::new();
        let mut found = Vec::new();
        let result = parse_entries(
            &mut text.as_bytes(),
            MAX_TRANSCRIPT_BYTES,
            "s.jsonl",
            strictness,
            &mut warnings,
            &mut Default::default(),
            &mut |line, raw| found.push((line, raw)),
        );
        (result.map(|_| found), warnings)
    }

    fn read_file(path: &Path, budget: &mut u64) -> Result<usize, ImportError> {
        let mut count = 0;
        let mut warnings = Vec::new();
        read_entries(
            path,
            Strictness::Main,
            budget,
            &mut warnings,
            &mut Default::default(),
            &mut |_, _| {
                count += 1;
            },
        )?;
        Ok(count)
    }

    #[test]
    fn times_are_read_as_written() {
        assert_eq!(parse_time_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_time_ms("1970-01-01T00:00:01.5Z"), Some(1_500));
        assert_eq!(
            parse_time_ms("2026-02-12T16:02:48.183Z"),
            Some(1_770_912_168_183)
        );
        assert_eq!(
            parse_time_ms("2026-02-12T17:02:48.183+01:00"),
            parse_time_ms("2026-02-12T16:02:48.183Z")
        );
        assert_eq!(parse_time_ms("2000-03-01T00:00:00Z"), Some(951_868_800_000));
        assert_eq!(parse_time_ms("yesterday"), None);
        assert_eq!(parse_time_ms("2026-13-01T00:00:00Z"), None);
    }

    #[test]
    fn two_objects_on_one_line_are_both_read() {
        let (result, warnings) = entries(
            "{\"type\":\"user\",\"uuid\":\"a\"}{\"type\":\"assistant\",\"uuid\":\"b\"}\n",
            Strictness::Main,
        );
        let found = result.unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].0, found[1].0), (1, 1));
        assert!(warnings.is_empty());
    }

    #[test]
    fn a_half_written_last_line_is_a_warning() {
        let (result, warnings) = entries(
            "{\"type\":\"user\",\"uuid\":\"a\"}\n{\"type\":\"assistant\",\"mess",
            Strictness::Main,
        );
        assert_eq!(result.map(|found| found.len()).ok(), Some(1));
        assert!(
            warnings[0].contains("s.jsonl:2: the last line is cut off"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_transcript_names_its_line() {
        let (result, _) = entries(
            "{\"type\":\"user\"}\nnot json\n{\"type\":\"user\"}\n",
            Strictness::Main,
        );
        let error = result
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(error.starts_with("s.jsonl:2:"), "{error}");
        let (result, _) = entries("name: a scenario\nmain: []\n", Strictness::Main);
        assert!(result.is_err());
        let (result, _) = entries("{\"a\": 1}\n", Strictness::Main);
        let error = result
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("s.jsonl:1:1: this line is not a Claude Code transcript line"),
            "{error}"
        );
        let (result, _) = entries("{\"type\":\"weather\"}\n", Strictness::Main);
        assert!(result.is_err(), "only unknown line types: not a transcript");
        let (result, _) = entries("", Strictness::Main);
        assert!(result.is_err());
    }

    #[test]
    fn more_than_the_byte_budget_is_refused_and_a_folder_is_not_a_file() {
        let dir = std::env::temp_dir().join(format!("subsim-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
        let path = dir.join("big.jsonl");
        std::fs::write(&path, "{\"type\":\"user\"}\n".repeat(10))
            .unwrap_or_else(|error| panic!("{error}"));
        let mut budget = 50;
        let result = read_file(&path, &mut budget);
        assert!(
            matches!(
                result,
                Err(ImportError::TooLarge {
                    bytes: 160,
                    limit: 50,
                    ..
                })
            ),
            "{result:?}"
        );
        let mut budget = 1_000;
        assert_eq!(read_file(&path, &mut budget).ok(), Some(10));
        assert_eq!(
            budget, 840,
            "what a file used comes off the import's budget"
        );
        let folder = read_file(&dir, &mut budget);
        assert!(
            matches!(&folder, Err(ImportError::Unreadable { message, .. }) if message == "not a regular file"),
            "{folder:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_transcript_starting_with_a_byte_order_mark_is_read() {
        // It was refused as "1:1: this line is not JSON" (an editor on Windows saved it).
        let (result, warnings) = entries(
            "\u{feff}{\"type\":\"user\",\"uuid\":\"a\"}\r\n{\"type\":\"assistant\"}\r\n",
            Strictness::Main,
        );
        let found = result.unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            found.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
            [1, 2]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn bad_bytes_are_replaced_once_with_a_warning_at_their_line() {
        let mut text = b"{\"type\":\"user\"}\n{\"type\":\"user\",\"x\":\"a".to_vec();
        text.extend(b"\xff\"}\n{\"type\":\"user\",\"y\":\"\xfe\"}\n");
        let mut warnings = Vec::new();
        let mut count = 0;
        let used = parse_entries(
            &mut &text[..],
            MAX_TRANSCRIPT_BYTES,
            "s.jsonl",
            Strictness::Main,
            &mut warnings,
            &mut Default::default(),
            &mut |_, _| count += 1,
        );
        assert_eq!(used.ok(), Some(text.len() as u64));
        assert_eq!(count, 3);
        assert_eq!(
            warnings,
            ["s.jsonl:2: not valid UTF-8; invalid bytes were replaced"]
        );
    }

    #[test]
    fn one_line_past_the_budget_is_refused_without_being_held_whole() {
        // The budget stops the read one byte past it, whatever the line's length.
        let text = format!("{{\"type\":\"user\",\"x\":\"{}\"}}\n", "a".repeat(1_000));
        let mut warnings = Vec::new();
        let result = parse_entries(
            &mut text.as_bytes(),
            100,
            "s.jsonl",
            Strictness::Main,
            &mut warnings,
            &mut Default::default(),
            &mut |_, _| {},
        );
        assert!(
            matches!(
                result,
                Err(ImportError::TooLarge {
                    bytes: 101,
                    limit: 100,
                    ..
                })
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_broken_subagent_line_is_skipped_with_a_warning() {
        let (result, warnings) = entries(
            "{\"type\":\"user\"}\n{oops\n{\"type\":\"assistant\"}\n",
            Strictness::Subagent,
        );
        assert_eq!(result.map(|found| found.len()).ok(), Some(2));
        assert!(warnings[0].starts_with("s.jsonl:2:"), "{warnings:?}");
    }

    #[test]
    fn unknown_line_types_are_kept_for_the_reader_to_skip() {
        let (result, _) = entries(
            "{\"type\":\"user\"}\n{\"type\":\"something-new\",\"x\":1}\n",
            Strictness::Main,
        );
        assert_eq!(result.map(|found| found.len()).ok(), Some(2));
    }
}
