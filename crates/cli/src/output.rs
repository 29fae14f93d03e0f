//! Where output goes: a file named by `--out` (created or truncated) or a locked stdout,
//! both buffered; the one I/O error that is not a failure, a closed pipe; and the escaping
//! of control characters in text meant for a terminal (a scenario is untrusted input: its
//! names must not drive the terminal with escape sequences).

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::Path;

use anyhow::Context as _;

/// Opens the output: `path`, or stdout when there is none.
pub fn open(path: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    match path {
        Some(path) => {
            let file = File::create(path)
                .with_context(|| format!("cannot create the output file {}", path.display()))?;
            Ok(Box::new(BufWriter::new(file)))
        }
        None => Ok(Box::new(BufWriter::new(io::stdout().lock()))),
    }
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

/// Is `c` a character that would act on a terminal instead of being shown: a C0 or C1
/// control other than newline and tab, DEL, or a bidirectional override or isolate (which
/// reorder what is shown)?
fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character (see [`is_hostile`]) written as a visible escape,
/// `\u{1b}`; newlines and tabs stay.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_hostile) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hostile(c) {
            escaped.extend(c.escape_unicode());
        } else {
            escaped.push(c);
        }
    }
    std::borrow::Cow::Owned(escaped)
}

/// A writer that escapes control characters ([`escape_controls`]) on their way to `inner`:
/// for the narration and the statistics table, whose lines carry scenario and agent names.
pub struct Escaping<W: Write> {
    inner: W,
    /// The start of a UTF-8 sequence split across two writes.
    carry: Vec<u8>,
}

impl<W: Write> Escaping<W> {
    /// Escapes what is written to `inner`.
    pub fn new(inner: W) -> Escaping<W> {
        Escaping {
            inner,
            carry: Vec::new(),
        }
    }
}

impl<W: Write> Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.carry.extend_from_slice(buf);
        // Keep an incomplete sequence at the end for the next write.
        let complete = match std::str::from_utf8(&self.carry) {
            Ok(_) => self.carry.len(),
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Err(_) => self.carry.len(),
        };
        let rest = self.carry.split_off(complete);
        let text = String::from_utf8_lossy(&self.carry);
        self.inner.write_all(escape_controls(&text).as_bytes())?;
        self.carry = rest;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.carry.is_empty() {
            let carry = std::mem::take(&mut self.carry);
            self.inner
                .write_all(String::from_utf8_lossy(&carry).as_bytes())?;
        }
        self.inner.flush()
    }
}

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

    use super::*;

    #[test]
    fn ansi_escape_codes_in_scenario_names_are_escaped() {
        assert_eq!(escape_controls("plain name\n\tok"), "plain name\n\tok");
        assert_eq!(
            escape_controls("evil \u{1b}[31mRED\u{7}"),
            "evil \\u{1b}[31mRED\\u{7}"
        );
        assert_eq!(
            escape_controls("\u{9b}2J \u{202e}x"),
            "\\u{9b}2J \\u{202e}x"
        );
        // Split across writes, a multi-byte character still comes out whole.
        let mut out = Escaping::new(Vec::new());
        let bytes = "é\u{1b}[0m µs".as_bytes();
        for byte in bytes {
            out.write_all(std::slice::from_ref(byte))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        out.flush().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(String::from_utf8_lossy(&out.inner), "é\\u{1b}[0m µs");
    }
}
