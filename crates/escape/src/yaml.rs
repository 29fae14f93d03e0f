//! YAML scalars: what `subsim import` writes.
//!
//! Every string is written as a double-quoted scalar with YAML 1.2's own escapes: `\"`,
//! `\\`, `\n`, `\t`, … and `\uXXXX` for every character outside YAML's printable set
//! (C0 and C1 controls, DEL, U+FFFE, U+FFFF), for the line and paragraph separators
//! U+2028/U+2029 (some readers take them as line breaks), the byte-order mark U+FEFF and
//! the bidirectional overrides. The result is plain printable text that subsim (and any
//! YAML 1.2 reader) loads back as the same string, and that a terminal shows as it is.

use std::fmt::Write as _;

use crate::{is_bidi_control, is_noncharacter};

/// The longest implicit key YAML 1.2 allows, in characters, quotes included (a key of a
/// block mapping written as `key: value`); a longer key does not load.
pub const MAX_IMPLICIT_KEY: usize = 1024;

/// Is `c` written as a `\uXXXX` escape (see the module doc)?
fn is_escaped(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
        || is_bidi_control(c)
        || is_noncharacter(c)
}

/// `text` as a double-quoted YAML scalar, quotes included.
///
/// ```
/// use subsim_escape::yaml;
/// assert_eq!(yaml::quoted("a \"b\"\n\u{202e}"), r#""a \"b\"\n\u202e""#);
/// ```
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_quoted(&mut out, text);
    out
}

/// Appends `text` as a double-quoted YAML scalar ([`quoted`]).
pub fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if is_escaped(c) => {
                let code = u32::from(c);
                if code <= 0xffff {
                    let _ = write!(out, "\\u{code:04x}");
                } else {
                    let _ = write!(out, "\\U{code:08x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_controls_and_overrides_use_yaml_escapes() {
        assert_eq!(
            quoted("a\u{2028}b\u{2029}c\u{1b}d\u{85}e"),
            r#""a\u2028b\u2029c\u001bd\u0085e""#
        );
        assert_eq!(quoted("\u{fffe}\u{10ffff}"), r#""\ufffe\U0010ffff""#);
        assert_eq!(quoted("\\u{202e}"), r#""\\u{202e}""#);
        assert_eq!(quoted(""), r#""""#);
    }
}
