//! The CLI's own words: counted nouns ("1 file", "2 files": one helper, so no message says
//! "1 runs") and lines wrapped to a width.

/// `count` and `what`, with an `s` unless the count is one.
pub fn plural(count: usize, what: &str) -> String {
    if count == 1 {
        format!("1 {what}")
    } else {
        format!("{count} {what}s")
    }
}

/// Wraps `line` at `width` columns on spaces, continuation lines indented by `indent`; runs
/// of spaces (the line's own indentation, column padding) are kept, and a word longer than
/// the width (a path) stands on a line of its own. Ends with a newline.
pub fn wrap(line: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut current = String::new();
    for (index, word) in line.split(' ').enumerate() {
        if index > 0 {
            let too_long = current.chars().count() + 1 + word.chars().count() > width;
            if too_long && !word.is_empty() && !current.trim().is_empty() {
                out.push_str(current.trim_end());
                out.push('\n');
                current = " ".repeat(indent);
            } else {
                current.push(' ');
            }
        }
        current.push_str(word);
    }
    out.push_str(current.trim_end());
    out.push('\n');
    out
}

/// Every line of `text` [`wrap`]ped at `width`, each continuation indented two columns
/// past its own line's indentation.
pub fn wrap_block(text: &str, width: usize) -> String {
    text.lines()
        .map(|line| {
            let own = line.chars().take_while(|c| *c == ' ').count();
            wrap(line, width, own + 2)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{plural, wrap, wrap_block};

    #[test]
    fn wraps_on_spaces_with_a_hanging_indent() {
        let long = format!("  label {}", "word ".repeat(40));
        let wrapped = wrap(long.trim_end(), 100, 8);
        assert!(wrapped.lines().all(|line| line.chars().count() <= 100));
        assert!(wrapped
            .lines()
            .skip(1)
            .all(|line| line.starts_with("        word")));
        assert_eq!(wrap("  short", 100, 4), "  short\n");
    }

    #[test]
    fn a_block_keeps_its_blank_lines_and_hangs_each_line_under_its_own_indent() {
        let text = format!(
            "Q-1: {}\n\n  note: {}\n",
            "a ".repeat(30).trim_end(),
            "b ".repeat(30).trim_end()
        );
        let wrapped = wrap_block(&text, 20);
        assert!(
            wrapped.lines().all(|line| line.chars().count() <= 20),
            "{wrapped}"
        );
        assert!(wrapped.contains("\n\n  note:"), "{wrapped}");
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines[1].starts_with("  a"), "{wrapped}");
        assert!(
            lines.iter().any(|line| line.starts_with("    b")),
            "{wrapped}"
        );
    }

    #[test]
    fn one_run_is_not_1_runs() {
        assert_eq!(plural(1, "run"), "1 run");
        assert_eq!(plural(0, "run"), "0 runs");
        assert_eq!(plural(2, "run"), "2 runs");
    }
}
