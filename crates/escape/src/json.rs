//! JSON string literals: the JSON Lines trace, `--format json`, `chrome`, `check --format
//! json`, the sweep's JSON, and JSON embedded in an HTML page.
//!
//! `"` and `\` are backslash-escaped, control characters (U+0000–U+001F and U+007F) become
//! `\n`, `\t`, … or `\u00XX`, and U+2028/U+2029 are escaped so the output is also valid
//! JavaScript. Everything else is copied as UTF-8, which JSON allows. The HTML form
//! ([`push_html`], [`string_html`]) also writes `<`, `>` and `&` as `\u003c`, `\u003e`,
//! `\u0026`, so a string inside a `<script>` element cannot close it, and C1 controls and
//! noncharacters (U+FFFE) as `\uXXXX`, so the page holds no character HTML or XML forbids.
//!
//! One implementation serves both a byte buffer ([`write()`], the trace writer's hot path:
//! one table look-up per byte, clean runs copied whole) and a `String` ([`push`]).

/// Bytes the plain form must look at: `"`, `\`, control characters, DEL, and 0xE2 (the
/// first byte of U+2028/U+2029).
const NEEDS_LOOK: [bool; 256] = table(false);
/// [`NEEDS_LOOK`], and `<`, `>`, `&` for the HTML form.
const NEEDS_LOOK_HTML: [bool; 256] = table(true);

const fn table(html: bool) -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[0x7f] = true;
    table[0xe2] = true;
    if html {
        table[b'<' as usize] = true;
        table[b'>' as usize] = true;
        table[b'&' as usize] = true;
        // The lead bytes of C1 controls (C2), of U+FDD0–U+FDEF and U+FFFE/U+FFFF (EF) and of
        // the supplementary planes' noncharacters (F0–F4).
        table[0xc2] = true;
        table[0xef] = true;
        let mut lead = 0xf0;
        while lead <= 0xf4 {
            table[lead] = true;
            lead += 1;
        }
    }
    table
}

/// Where a literal is appended: a byte buffer or a `String`.
trait Out {
    fn put(&mut self, text: &str);
}

impl Out for Vec<u8> {
    #[inline]
    fn put(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }
}

impl Out for String {
    #[inline]
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

/// Appends `text` as a JSON string literal, quotes included, to a byte buffer.
///
/// ```
/// let mut out = Vec::new();
/// subsim_escape::json::write(&mut out, "say \"hi\"\n");
/// assert_eq!(out, br#""say \"hi\"\n""#);
/// ```
#[inline]
pub fn write(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    // Most strings (names, ids, rule words) need no escaping: one look-up per byte, one copy.
    if !bytes.iter().any(|&byte| NEEDS_LOOK[usize::from(byte)]) {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    escape_into(out, text, &NEEDS_LOOK);
}

/// Appends `text` as a JSON string literal, quotes included, to a `String`.
pub fn push(out: &mut String, text: &str) {
    escape_into(out, text, &NEEDS_LOOK);
}

/// `text` as a JSON string literal, quotes included.
///
/// ```
/// assert_eq!(subsim_escape::json::string("a\u{2028}b"), r#""a\u2028b""#);
/// ```
pub fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push(&mut out, text);
    out
}

/// Appends `text` as a JSON string literal that can sit inside an HTML `<script>` element
/// (`<`, `>`, `&` escaped too).
pub fn push_html(out: &mut String, text: &str) {
    escape_into(out, text, &NEEDS_LOOK_HTML);
}

/// `text` as a JSON string literal for an HTML page ([`push_html`]).
///
/// ```
/// assert_eq!(subsim_escape::json::string_html("</script>"), r#""\u003c/script\u003e""#);
/// ```
pub fn string_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_html(&mut out, text);
    out
}

fn escape_into(out: &mut impl Out, text: &str, look: &[bool; 256]) {
    let bytes = text.as_bytes();
    out.put("\"");
    let mut clean_from = 0;
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if !look[usize::from(byte)] {
            index += 1;
            continue;
        }
        let escape: &str = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            b'<' => "\\u003c",
            b'>' => "\\u003e",
            b'&' => "\\u0026",
            // U+2028 and U+2029 are E2 80 A8 / E2 80 A9 in UTF-8; another E2 is left alone.
            0xe2 if bytes.get(index + 1) == Some(&0x80)
                && matches!(bytes.get(index + 2), Some(0xa8 | 0xa9)) =>
            {
                if bytes[index + 2] == 0xa8 {
                    "\\u2028"
                } else {
                    "\\u2029"
                }
            }
            0xe2 => {
                index += 1;
                continue;
            }
            0xc2 | 0xef | 0xf0..=0xf4 => {
                // The HTML form only: C1 controls and noncharacters, which an HTML page
                // (and XML) may not hold raw, as `\uXXXX` (a surrogate pair past U+FFFF).
                let c = text[index..].chars().next().unwrap_or('\0');
                if c.is_control() || crate::is_noncharacter(c) {
                    out.put(&text[clean_from..index]);
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.put(&format!("\\u{unit:04x}"));
                    }
                    index += c.len_utf8();
                    clean_from = index;
                } else {
                    index += c.len_utf8();
                }
                continue;
            }
            _ => "",
        };
        // Every escaped character starts at a character boundary (ASCII, or E2 of U+2028).
        out.put(&text[clean_from..index]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let code = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ];
            out.put(std::str::from_utf8(&code).unwrap_or("\\ufffd"));
            index += 1;
        } else {
            out.put(escape);
            index += if byte == 0xe2 { 3 } else { 1 };
        }
        clean_from = index;
    }
    out.put(&text[clean_from..]);
    out.put("\"");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> String {
        let mut out = Vec::new();
        write(&mut out, text);
        String::from_utf8(out).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn escapes_quotes_backslashes_and_controls() {
        for string in [bytes, string] {
            assert_eq!(string("plain"), r#""plain""#);
            assert_eq!(string(r#"say "hi" \ bye"#), r#""say \"hi\" \\ bye""#);
            assert_eq!(string("a\nb\rc\td"), r#""a\nb\rc\td""#);
            assert_eq!(string("\u{8}\u{c}"), r#""\b\f""#);
            assert_eq!(
                string("\u{0}\u{1}\u{1f}\u{7f}"),
                r#""\u0000\u0001\u001f\u007f""#
            );
            assert_eq!(string(""), r#""""#);
        }
    }

    #[test]
    fn keeps_unicode_as_utf8_except_line_separators() {
        for string in [bytes, string, string_html] {
            assert_eq!(string("café → 🚀"), "\"café → 🚀\"");
            assert_eq!(string("a\u{2028}b\u{2029}c"), r#""a\u2028b\u2029c""#);
            // A lone E2 80 prefix of another character is left alone.
            assert_eq!(string("\u{2026}"), "\"\u{2026}\"");
        }
    }

    #[test]
    fn the_html_form_cannot_close_a_script_element() {
        assert_eq!(string_html("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(
            string_html("\u{85}\u{fffe}\u{1fffe}é\u{ff}"),
            "\"\\u0085\\ufffe\\ud83f\\udffeéÿ\""
        );
        assert_eq!(string_html("<script>&"), r#""\u003cscript\u003e\u0026""#);
        assert_eq!(string("<b>&"), r#""<b>&""#);
    }
}
