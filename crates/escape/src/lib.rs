//! How untrusted text is written out: one escaping function per output format.
//!
//! A scenario, a transcript, a `--set` value and a file path are untrusted input, and
//! their text (agent names, descriptions, paths) reaches every output subsim writes. Each
//! output format has one module here, and every writer in the workspace goes through it:
//!
//! | format | module | the property it keeps |
//! | --- | --- | --- |
//! | terminal text | [`terminal`] | no character that acts on a terminal (C0/C1 controls, ESC sequences, bidirectional overrides, line separators) goes out raw; a field inside a line cannot start a new line |
//! | CSV | [`csv`] | a cell reads back as the same cell, and never starts a spreadsheet formula |
//! | XML, SVG, HTML | [`xml`] | markup is escaped and no character XML 1.0 forbids goes out: the document stays well-formed |
//! | YAML | [`yaml`] | a double-quoted scalar that every YAML 1.2 reader loads back as the same string |
//! | JSON | [`json`] | a string literal that every JSON reader parses back as the same string (and, in the HTML form, that cannot close a `<script>` element) |
//!
//! Where a character cannot be written in a format (a control character in a terminal
//! line, an XML-forbidden character), it is shown as a visible escape in the manner of
//! Rust, `\u{1b}`, so a reader sees that it was there.
//!
//! The crate has no dependencies, so any crate (and a later server) can use it; the
//! property tests in `tests/hostile.rs` feed every module each hostile class of string.

pub mod csv;
pub mod hostile;
pub mod json;
pub mod terminal;
pub mod xml;
pub mod yaml;

use std::fmt::Write as _;

/// Appends `c` as a visible escape, `\u{1b}`.
fn push_visible(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
}

/// Is `c` a bidirectional formatting character (an embedding, override, isolate or mark),
/// which reorders the text shown around it?
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// Is `c` a Unicode noncharacter (U+FDD0–U+FDEF, and the last two code points of every
/// plane, U+FFFE and U+FFFF among them)?
pub fn is_noncharacter(c: char) -> bool {
    let code = u32::from(c);
    (0xfdd0..=0xfdef).contains(&code) || code & 0xfffe == 0xfffe
}
