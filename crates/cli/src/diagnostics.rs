//! Scenario diagnostics for people: each problem rendered by miette with its source
//! snippet, `file:line:col` and the help text.
//!
//! The scenario crate finds the problems and locates them (byte span, line, column); this
//! module only draws them.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, Severity, SourceCode,
};
use subsim_scenario::diagnostic::Diagnostic;

/// Longest source line drawn as a snippet, in bytes. miette pads to the span's column with
/// a format width, which panics past 65,535; a line this long is unreadable as a snippet
/// anyway, so the problem is told by its `file:line:col` alone.
const MAX_SNIPPET_LINE: usize = 1_000;

/// Whether a problem stops the file from loading or is only worth knowing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The file cannot be used.
    Error,
    /// The file loads; something in it is probably not what was meant.
    Warning,
}

/// One problem, as miette wants it.
#[derive(Debug)]
struct Problem {
    message: String,
    help: Option<String>,
    level: Level,
    /// The file's text and the span, when the span lies inside it.
    snippet: Option<(NamedSource<String>, usize, usize)>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

impl miette::Diagnostic for Problem {
    fn severity(&self) -> Option<Severity> {
        Some(match self.level {
            Level::Error => Severity::Error,
            Level::Warning => Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|help| Box::new(help) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.snippet
            .as_ref()
            .map(|(source, _, _)| source as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (_, offset, len) = self.snippet.as_ref()?;
        let label = LabeledSpan::new_primary_with_span(None, (*offset, *len));
        Some(Box::new(std::iter::once(label)))
    }
}

/// Prints `problems` of `source` to stderr, rendered as [`render`] does, in colour when
/// stderr is a terminal that takes it.
pub fn eprint(problems: &[Diagnostic], source: &str, level: Level) {
    eprint!(
        "{}",
        render(problems, source, level, crate::output::stderr_color())
    );
}

/// Renders `problems` (all found in one file whose text is `source`), one after another.
///
/// A problem whose span does not lie in `source` (the file could not be read, or the
/// problem is in another file, such as an agent definition) is shown with its
/// `file:line:col` in the message and no snippet.
pub fn render(problems: &[Diagnostic], source: &str, level: Level, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let width = crate::words::width().max(crate::words::MIN_WIDTH);
    let handler = GraphicalReportHandler::new_themed(theme).with_width(width);
    let mut text = String::new();
    for problem in problems {
        let rendered = render_one(&handler, problem, source, level, true)
            // A snippet miette cannot draw still leaves the located message.
            .or_else(|| render_one(&handler, problem, source, level, false))
            .unwrap_or_else(|| format!("{problem}\n"));
        text.push_str(&rendered);
    }
    if color {
        text
    } else {
        fit_snippets(&text, width)
    }
}

/// Diagnostics fitted to `width` (issue #32): miette wraps the messages but draws the
/// file's own lines whole, so a quoted line (`8 │ …`) or its underline wider than the
/// terminal is cut with `…`, and any other line (the `╭─[file:line:col]` header) wrapped.
fn fit_snippets(text: &str, width: usize) -> String {
    text.lines()
        .map(|line| {
            let length = line.chars().count();
            if length <= width {
                return format!("{line}\n");
            }
            let quoted = line.contains('│') || line.trim_start().starts_with('·');
            if quoted {
                let kept: String = line.chars().take(width - 1).collect();
                format!("{kept}…\n")
            } else {
                let own = line.chars().take_while(|c| *c == ' ').count();
                crate::words::wrap(line, width, own + 2)
            }
        })
        .collect()
}

fn render_one(
    handler: &GraphicalReportHandler,
    problem: &Diagnostic,
    source: &str,
    level: Level,
    with_snippet: bool,
) -> Option<String> {
    let end = problem.offset.checked_add(problem.len)?;
    let span_fits = !source.is_empty()
        && end <= source.len()
        && source.is_char_boundary(problem.offset)
        && source.is_char_boundary(end)
        && located_in(problem, source)
        && lines_fit(source, problem.offset, end);
    let snippet = (with_snippet && span_fits).then(|| {
        (
            NamedSource::new(&problem.file, source.to_string()),
            problem.offset,
            problem.len,
        )
    });
    let message = if snippet.is_some() {
        problem.message.clone()
    } else {
        format!("{}: {}", problem.location(), problem.message)
    };
    let report = Problem {
        message,
        help: problem.help.clone(),
        level,
        snippet,
    };
    let mut text = String::new();
    handler.render_report(&mut text, &report).ok()?;
    Some(text)
}

/// Are the lines the span `offset..end` touches short enough to draw
/// ([`MAX_SNIPPET_LINE`])? Only called with a span inside `source`, on char boundaries.
fn lines_fit(source: &str, offset: usize, end: usize) -> bool {
    let start = source[..offset].rfind('\n').map_or(0, |at| at + 1);
    let stop = source[end..].find('\n').map_or(source.len(), |at| end + at);
    source[start..stop]
        .split('\n')
        .all(|line| line.len() <= MAX_SNIPPET_LINE)
}

/// Does the problem's line agree with its byte offset in `source`? (If not, the problem
/// points into some other file.)
fn located_in(problem: &Diagnostic, source: &str) -> bool {
    let line = source[..problem.offset]
        .bytes()
        .filter(|byte| *byte == b'\n')
        .count()
        + 1;
    line == problem.line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(offset: usize, len: usize, line: usize, column: usize) -> Diagnostic {
        Diagnostic {
            file: "bad.yaml".to_string(),
            line,
            column,
            offset,
            len,
            message: "unknown key `nmae`".to_string(),
            help: Some("did you mean `name`?".to_string()),
        }
    }

    #[test]
    fn snippet_location_and_help() {
        let source = "main: []\nnmae: demo\n";
        let text = render(&[problem(9, 4, 2, 1)], source, Level::Error, false);
        assert!(text.contains("unknown key `nmae`"), "{text}");
        assert!(text.contains("[bad.yaml:2:1]"), "{text}");
        assert!(text.contains("nmae: demo"), "{text}");
        assert!(text.contains("did you mean `name`?"), "{text}");
    }

    #[test]
    fn a_column_past_65535_does_not_panic_the_renderer() {
        // An error after 65,536 spaces on one line.
        let source = format!("name: x\n{}nmae: 1\n", " ".repeat(65_536));
        let text = render(
            &[problem(8 + 65_536, 4, 2, 65_537)],
            &source,
            Level::Error,
            false,
        );
        assert!(
            text.contains("bad.yaml:2:65537: unknown key `nmae`"),
            "{text}"
        );
        assert!(
            text.len() < 1_000,
            "no 64 KiB snippet: {} bytes",
            text.len()
        );
        // A short line next to the long one is still drawn.
        let source = format!("nmae: 1\n{}\n", "x".repeat(70_000));
        let text = render(&[problem(0, 4, 1, 1)], &source, Level::Error, false);
        assert!(text.contains("[bad.yaml:1:1]"), "{text}");
    }

    #[test]
    fn without_source_the_message_is_located() {
        let text = render(&[problem(0, 0, 1, 1)], "", Level::Error, false);
        assert!(text.contains("bad.yaml:1:1: unknown key `nmae`"), "{text}");
        // A span that points into another file is not drawn over this one.
        let text = render(
            &[problem(9, 4, 7, 3)],
            "main: []\nnmae: demo\n",
            Level::Warning,
            false,
        );
        assert!(text.contains("bad.yaml:7:3: unknown key"), "{text}");
        assert!(!text.contains("nmae: demo"), "{text}");
    }
}
