//! The CLI's own words: counted nouns ("1 file", "2 files": one helper, so no message says
//! "1 runs"), the terminal's width and lines wrapped to it.

/// `count` and `what`, with an `s` unless the count is one.
pub fn plural(count: usize, what: &str) -> String {
    if count == 1 {
        format!("1 {what}")
    } else {
        format!("{count} {what}s")
    }
}

/// The width every text output fits: `COLUMNS`, else 100. The one width source (issue #32):
/// the narration (`NarrationOptions::width`), the Gantt chart, miette's diagnostics and
/// every command's text ([`fit`]) read it here.
pub fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .filter(|width| *width >= 1)
        .unwrap_or(100)
}

/// The narrowest width prose is wrapped to: below it a line holds too few words to read.
pub const MIN_WIDTH: usize = 20;

/// `text` fitted to [`width`]: every line [`wrap_block`]ped.
pub fn fit(text: &str) -> String {
    wrap_block(text, width())
}

/// Wraps `line` at `width` columns on spaces, continuation lines indented by `indent`; runs
/// of spaces (the line's own indentation, column padding) are kept. A word longer than a
/// line (a path) is cut after a `/` or `-` where one fits, else where the line ends, and
/// continues on the next line. Ends with a newline.
pub fn wrap(line: &str, width: usize, indent: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let indent = indent.min(width / 2);
    // Each piece and whether it follows the one before with a space.
    let mut pieces: Vec<(String, bool)> = Vec::new();
    for (index, word) in line.split(' ').enumerate() {
        let mut spaced = index > 0;
        let mut rest: Vec<char> = word.chars().collect();
        let room = width - indent;
        while rest.len() > room {
            let cut = rest[..room]
                .iter()
                .rposition(|c| *c == '/' || *c == '-')
                .map_or(room, |at| at + 1);
            pieces.push((rest[..cut].iter().collect(), spaced));
            rest.drain(..cut);
            spaced = false;
        }
        pieces.push((rest.into_iter().collect(), spaced));
    }
    let mut out = String::new();
    let mut current = String::new();
    let mut length = 0;
    for (piece, spaced) in pieces {
        let piece_length = piece.chars().count();
        let gap = usize::from(spaced);
        let too_long = length + gap + piece_length > width;
        if too_long && !piece.is_empty() && !current.trim().is_empty() {
            out.push_str(current.trim_end());
            out.push('\n');
            current = " ".repeat(indent);
            length = indent;
        } else if spaced {
            current.push(' ');
            length += 1;
        }
        current.push_str(&piece);
        length += piece_length;
    }
    out.push_str(current.trim_end());
    out.push('\n');
    out
}

/// Every line of `text` [`wrap`]ped at `width`, each continuation indented two columns
/// past its own line's indentation (a narrated line, `hh:mm:ss.mmm  who  what`, under its
/// name as the narration hangs it).
pub fn wrap_block(text: &str, width: usize) -> String {
    text.lines()
        .map(|line| {
            let own = line.chars().take_while(|c| *c == ' ').count();
            let clock = line.get(..14).is_some_and(|start| {
                start.bytes().enumerate().all(|(at, byte)| match at {
                    2 | 5 => byte == b':',
                    8 => byte == b'.',
                    12 | 13 => byte == b' ',
                    _ => byte.is_ascii_digit(),
                })
            });
            let hang = if clock { 14 + 2 } else { own + 2 };
            wrap(line, width, hang)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{plural, wrap, wrap_block};

    #[test]
    fn a_word_longer_than_the_line_is_cut_after_a_slash() {
        let path = format!("ok   {}/file.yaml", "scenarios/long-folder-name".repeat(4));
        let wrapped = wrap(&path, 40, 4);
        assert!(
            wrapped.lines().all(|line| line.chars().count() <= 40),
            "{wrapped}"
        );
        // Nothing is lost: the same characters, bar the spaces a line break took the place of.
        let squeezed = |text: &str| text.split_whitespace().collect::<String>();
        assert_eq!(squeezed(&wrapped), squeezed(&path));
        // Every cut inside the path falls after a `/` or a `-`.
        for line in wrapped.lines().skip(1) {
            let line = line.trim_end();
            assert!(
                line.ends_with('/') || line.ends_with('-') || line.ends_with(".yaml"),
                "{wrapped}"
            );
        }
    }

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
