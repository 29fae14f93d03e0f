//! Text for a terminal: the narration, `check`'s report, the Gantt chart, tables, messages.
//!
//! A name must not drive the terminal: no C0 or C1 control (ESC starts colour, cursor,
//! clear-screen and OSC-8 hyperlink sequences; CR overwrites a line), no DEL, no
//! bidirectional override or isolate (U+202E shows `exe.txt` for `txt.exe`), no line or
//! paragraph separator, no noncharacter. Each is written as a visible escape, `\u{1b}`.
//!
//! [`text()`] is for whole text, whose newlines and tabs are its own layout. [`line()`] is for
//! one field inside a line (a name in a narration line, a path after `ok   `): its
//! newlines, carriage returns and tabs are escaped too (`\n`, `\r`, `\t`), so a name
//! cannot forge a line of its own. [`cut()`] shortens a field to a width after escaping it,
//! never in the middle of an escape.

use std::borrow::Cow;
use std::io::{self, Write};

use crate::{is_bidi_control, is_noncharacter, push_visible};

/// Would `c` act on a terminal instead of being shown (see the module doc)? Newline and tab
/// are not counted: whether they may stand depends on where the text goes ([`text()`] or
/// [`line()`]).
pub fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || is_bidi_control(c)
        || matches!(c, '\u{2028}' | '\u{2029}')
        || is_noncharacter(c)
}

/// Would `c` break a line: hostile, or a newline or tab?
fn is_hostile_in_line(c: char) -> bool {
    matches!(c, '\n' | '\t') || is_hostile(c)
}

/// Appends the visible form of `c`, one of [`is_hostile_in_line`]'s characters.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c => push_visible(out, c),
    }
}

/// Whole text for a terminal: every [`is_hostile`] character written as `\u{…}`; its
/// newlines and tabs stay.
///
/// ```
/// use subsim_escape::terminal;
/// assert_eq!(terminal::text("ok\n\u{1b}[2J"), "ok\n\\u{1b}[2J");
/// ```
pub fn text(text: &str) -> Cow<'_, str> {
    escape(text, is_hostile)
}

/// One field inside a line of terminal text (a name, a path, a value): like [`text()`], and
/// newlines, carriage returns and tabs become `\n`, `\r`, `\t`, so the field cannot start a
/// line of its own.
///
/// ```
/// use subsim_escape::terminal;
/// assert_eq!(terminal::line("a\nok   other.yaml"), "a\\nok   other.yaml");
/// ```
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, is_hostile_in_line)
}

/// Appends `text` escaped as [`line()`] does.
pub fn push_line(out: &mut String, text: &str) {
    for c in text.chars() {
        if is_hostile_in_line(c) {
            push_escaped(out, c);
        } else {
            out.push(c);
        }
    }
}

/// `text` escaped as [`line()`] does, then cut to at most `width` characters: an escape that
/// does not fit whole is left out whole, so the cut never splits one.
///
/// ```
/// use subsim_escape::terminal;
/// assert_eq!(terminal::cut("ab\u{1b}]8;;x", 6), "ab");
/// assert_eq!(terminal::cut("abc", 2), "ab");
/// ```
pub fn cut(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len().min(width * 4));
    let mut shown = 0;
    let mut piece = String::new();
    for c in text.chars() {
        piece.clear();
        // An escape is ASCII: its length in bytes is its width in characters.
        let wide = if is_hostile_in_line(c) {
            push_escaped(&mut piece, c);
            piece.len()
        } else {
            piece.push(c);
            1
        };
        if shown + wide > width {
            break;
        }
        shown += wide;
        out.push_str(&piece);
    }
    out
}

fn escape(text: &str, hostile: fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(hostile) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hostile(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer that escapes text on its way to `inner` as [`text()`] does: for output assembled
/// elsewhere whose lines carry untrusted names (the narration, the statistics table). A
/// UTF-8 sequence split across two writes is kept until it is whole.
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

    /// The writer underneath (what has been flushed to it so far).
    pub fn into_inner(self) -> W {
        self.inner
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
        let whole = String::from_utf8_lossy(&self.carry);
        self.inner.write_all(text(&whole).as_bytes())?;
        self.carry = rest;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.carry.is_empty() {
            let carry = std::mem::take(&mut self.carry);
            self.inner
                .write_all(text(&String::from_utf8_lossy(&carry)).as_bytes())?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_links_and_overrides_are_shown_not_obeyed() {
        assert_eq!(text("plain name\n\tok"), "plain name\n\tok");
        assert_eq!(text("evil \u{1b}[31mRED\u{7}"), "evil \\u{1b}[31mRED\\u{7}");
        assert_eq!(text("\u{9b}2J \u{202e}x"), "\\u{9b}2J \\u{202e}x");
        assert_eq!(text("a\rb\u{2028}c\u{fffe}"), "a\\rb\\u{2028}c\\u{fffe}");
    }

    #[test]
    fn a_newline_in_a_field_cannot_forge_a_line() {
        assert_eq!(line("x\nok   other.yaml\t"), "x\\nok   other.yaml\\t");
        let mut out = String::from("> ");
        push_line(&mut out, "a\r\nb");
        assert_eq!(out, "> a\\r\\nb");
    }

    #[test]
    fn a_cut_never_splits_an_escape() {
        // OSC-8 hyperlink: ESC ] 8 ; ; url ESC \
        let link = "ab\u{1b}]8;;http://x\u{1b}\\";
        for width in 0..30 {
            let shown = cut(link, width);
            assert!(shown.chars().count() <= width, "{width}: {shown}");
            assert!(!shown.contains('\u{1b}'));
            // Whatever is kept of an escape is the whole escape.
            let kept = shown.matches("\\u{").count();
            assert_eq!(shown.matches("\\u{1b}").count(), kept, "{shown}");
        }
        assert_eq!(cut("ab\u{1b}c", 7), "ab");
        assert_eq!(cut("ab\u{1b}c", 8), "ab\\u{1b}");
        assert_eq!(cut("héllo", 3), "hél");
    }

    #[test]
    fn the_writer_keeps_a_character_split_across_writes_whole() {
        let mut out = Escaping::new(Vec::new());
        for byte in "é\u{1b}[0m µs".as_bytes() {
            out.write_all(std::slice::from_ref(byte))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        out.flush().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(String::from_utf8_lossy(&out.inner), "é\\u{1b}[0m µs");
    }
}
