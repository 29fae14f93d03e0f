//! Text inside XML, SVG and HTML: `report` pages and pictures, `check --junit`.
//!
//! Markup is escaped (`&`, `<`, `>`, `"`, `'`), so text can stand in character data and in
//! attribute values alike. A character XML 1.0 does not allow (`Char ::= #x9 | #xA | #xD |
//! [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]`: U+0001, U+000B, U+FFFE, …) cannot
//! be written even as a character reference, so it is shown as a visible escape, `\u{1}`;
//! so are the C1 controls, DEL and the bidirectional overrides (allowed but discouraged,
//! and able to disguise what a page shows). The document stays well-formed.

use std::borrow::Cow;

use crate::{is_bidi_control, is_noncharacter, push_visible};

/// Is `c` shown as `\u{…}` rather than written: forbidden by XML 1.0, a control other
/// than tab/newline/CR, a bidirectional override, a noncharacter?
fn is_shown_escaped(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || is_bidi_control(c) || is_noncharacter(c)
}

fn needs_escape(c: char) -> bool {
    matches!(c, '&' | '<' | '>' | '"' | '\'' | '\r') || is_shown_escaped(c)
}

/// Appends `text` as XML character data or an attribute value's text: markup as entities,
/// CR as `&#13;` (a parser would fold it into a newline), forbidden characters as
/// `\u{…}`.
pub fn push(out: &mut String, text: &str) {
    push_with(out, text, false);
}

/// `text` as character data (see [`push`]); tabs and newlines stay as they are.
///
/// ```
/// use subsim_escape::xml;
/// assert_eq!(xml::text("<a & 'b'>\u{1}"), "&lt;a &amp; &#39;b&#39;&gt;\\u{1}");
/// ```
pub fn text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    push_with(&mut out, text, false);
    Cow::Owned(out)
}

/// `text` as an attribute value (inside quotes): as [`text`], and tabs and newlines as
/// character references, which a parser keeps (a raw one it would fold into a space).
pub fn attr(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| needs_escape(c) || matches!(c, '\t' | '\n'))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    push_with(&mut out, text, true);
    Cow::Owned(out)
}

fn push_with(out: &mut String, text: &str, attribute: bool) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\r' => out.push_str("&#13;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            c if is_shown_escaped(c) => push_visible(out, c),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_characters_are_shown_not_written() {
        assert_eq!(text("a\u{1}b\u{b}c\u{fffe}d"), "a\\u{1}b\\u{b}c\\u{fffe}d");
        assert_eq!(text("\u{1b}[31m\u{202e}"), "\\u{1b}[31m\\u{202e}");
        assert_eq!(text("line\n\tnext"), "line\n\tnext");
        assert_eq!(attr("line\n\tnext\r"), "line&#10;&#9;next&#13;");
    }

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            text("<script>alert(\"x\")</script> & 'y'"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }
}
