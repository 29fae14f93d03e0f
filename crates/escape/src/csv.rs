//! CSV cells (RFC 4180): `run --format csv`, the sweep table, `merge`.
//!
//! A cell is quoted when it holds a comma, a quote or a line break (quotes doubled). A cell
//! that a spreadsheet would take as a formula, one starting with `=`, `+`, `-`, `@`, a tab or
//! a carriage return, gets a `'` in front, as OWASP's "CSV Injection" page advises, so
//! `=HYPERLINK(…)` from an agent name or a `--set` value is shown as text, never run. A
//! plain number (`-1`, `+2.5`, `-1e3`) is left as it is: it is a value, not a formula. A
//! cell that starts with `'` before a formula gets one more, so [`unescape`] reads every
//! cell back exactly.

use std::borrow::Cow;

/// The characters that make a spreadsheet read a cell as a formula when they come first.
pub const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Would a spreadsheet take `text` as a formula (see the module doc)?
pub fn is_formula(text: &str) -> bool {
    text.starts_with(FORMULA_STARTS) && !is_plain_number(text)
}

/// Does [`cell`] put a `'` in front of `text`: a formula, or a formula behind `'`s (so a
/// cell that already starts with `'` reads back as itself, see [`unescape`])?
pub fn needs_prefix(text: &str) -> bool {
    is_formula(text.trim_start_matches('\''))
}

/// The text a cell read back from our CSV stood for: [`cell`]'s `'` in front of a formula
/// taken off again. `unescape(read(cell(x))) == x` for every `x`.
///
/// ```
/// use subsim_escape::csv;
/// assert_eq!(csv::unescape("'=1+1"), "=1+1");
/// assert_eq!(csv::unescape("''=1+1"), "'=1+1");
/// assert_eq!(csv::unescape("'quoted'"), "'quoted'");
/// ```
pub fn unescape(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if needs_prefix(rest) => rest,
        _ => cell,
    }
}

/// `[+-]digits[.digits][e[+-]digits]`: what a numeric cell looks like.
fn is_plain_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut index = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let digits = |index: &mut usize| {
        let from = *index;
        while bytes.get(*index).is_some_and(u8::is_ascii_digit) {
            *index += 1;
        }
        *index - from
    };
    let mut mantissa = digits(&mut index);
    if bytes.get(index) == Some(&b'.') {
        index += 1;
        mantissa += digits(&mut index);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(bytes.get(index), Some(b'e' | b'E')) {
        index += 1;
        if matches!(bytes.get(index), Some(b'+' | b'-')) {
            index += 1;
        }
        if digits(&mut index) == 0 {
            return false;
        }
    }
    index == bytes.len()
}

/// `text` as one CSV cell: `'` in front of a formula, quoted when it needs to be.
///
/// ```
/// use subsim_escape::csv;
/// assert_eq!(csv::cell("worker"), "worker");
/// assert_eq!(csv::cell("a,b"), "\"a,b\"");
/// assert_eq!(csv::cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
/// assert_eq!(csv::cell("-1.5"), "-1.5");
/// ```
pub fn cell(text: &str) -> Cow<'_, str> {
    let formula = needs_prefix(text);
    let quoted = text.contains([',', '"', '\n', '\r']);
    if !formula && !quoted {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 4);
    push_cell(&mut out, text);
    Cow::Owned(out)
}

/// Appends `text` as one CSV cell ([`cell`]).
pub fn push_cell(out: &mut String, text: &str) {
    let formula = needs_prefix(text);
    let quoted = text.contains([',', '"', '\n', '\r']);
    if quoted {
        out.push('"');
    }
    if formula {
        out.push('\'');
    }
    if quoted {
        for c in text.chars() {
            if c == '"' {
                out.push('"');
            }
            out.push(c);
        }
        out.push('"');
    } else {
        out.push_str(text);
    }
}

/// One CSV line of `cells`, each escaped as [`cell`] does, with its line end.
pub fn row<'a>(cells: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (index, text) in cells.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        push_cell(&mut out, text);
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_shown_as_text() {
        assert_eq!(cell("=1+1"), "'=1+1");
        assert_eq!(cell("@SUM(A1:A2)"), "'@SUM(A1:A2)");
        assert_eq!(cell("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
        assert_eq!(cell("-2+3"), "'-2+3");
        assert_eq!(cell("\tx"), "'\tx");
        assert_eq!(cell("\rx"), "\"'\rx\"");
        assert_eq!(cell("-"), "'-");
        assert_eq!(cell("'=1"), "''=1");
        assert_eq!(cell("'x"), "'x");
        for text in ["=1", "'=1", "''=1", "'x", "x", "-1", "'-1", "'"] {
            assert_eq!(unescape(&cell(text)), text);
        }
    }

    #[test]
    fn numbers_stay_numbers() {
        for number in ["-1", "+2", "-0.5", "-.5", "1e3", "-1E-3", "12", "3.", "0"] {
            assert_eq!(cell(number), number);
        }
        for not in ["-e3", "-1e", "-1.2.3", "-1 ", "--1", "-."] {
            assert!(is_formula(not), "{not}");
        }
    }

    #[test]
    fn quotes_commas_and_line_breaks_are_quoted() {
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("a\nb"), "\"a\nb\"");
        assert_eq!(row(["a", "b,c", ""]), "a,\"b,c\",\n");
    }
}
