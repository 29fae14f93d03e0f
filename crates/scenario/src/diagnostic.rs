//! Located problems in a scenario file: [`Diagnostic`], the [`Diagnostics`] error, and the
//! "did you mean" helper every unknown name goes through.
//!
//! This module only describes problems; it does not render snippets (the CLI does that
//! with miette, from the byte offset and length each diagnostic carries).

use std::fmt;

/// One problem (or warning) in a scenario file, located at `file:line:col`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file name, as given to [`parse_scenario`](crate::parse_scenario).
    pub file: String,
    /// 1-based line; 0 for a problem with the whole file (it cannot be read), which is
    /// located by the file name alone.
    pub line: usize,
    /// 1-based column, in characters (0 with line 0).
    pub column: usize,
    /// Byte offset of the offending text in the source.
    pub offset: usize,
    /// Byte length of the offending text (may be 0 for a point).
    pub len: usize,
    /// What is wrong: lowercase, no trailing period.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub help: Option<String>,
}

impl Diagnostic {
    /// `file:line:col`, the form `expect:` failures and messages use; just `file` for a
    /// problem with the whole file (line 0: a `:1:1` would point at text that is not there).
    pub fn location(&self) -> String {
        if self.line == 0 {
            return self.file.clone();
        }
        format!("{}:{}:{}", self.file, self.line, self.column)
    }
}

impl fmt::Display for Diagnostic {
    /// `file:line:col: message`, then `\n  help: ...` when there is help.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location(), self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// Every problem found in one scenario file, with the source they point into.
///
/// Validation does not stop at the first problem: all of them are here, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    /// The file's text (empty when the file could not be read), for snippet rendering.
    pub source: String,
    /// The problems, in file order.
    pub problems: Vec<Diagnostic>,
}

impl fmt::Display for Diagnostics {
    /// One problem per paragraph, in file order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// `a` or `an` before `word`, by its first letter (`an \`agent\` field`); good enough for
/// the keys, kinds and names diagnostics quote.
pub fn article(word: &str) -> &'static str {
    match word.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// The known name closest to `unknown`, if one is close enough to be a likely typo.
///
/// Case is ignored when comparing (`acceptedits` → `acceptEdits`). A candidate is close
/// when its Damerau–Levenshtein distance is at most a third of its length (at least 1),
/// or when it starts with what was written (`bypass` → `bypassPermissions`).
pub fn suggest<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    let wanted = unknown.to_lowercase();
    if wanted.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in known {
        let lowered = candidate.to_lowercase();
        let distance = strsim::damerau_levenshtein(&wanted, &lowered);
        let allowed = (lowered.chars().count() / 3).max(1);
        let prefix = wanted.chars().count() >= 3 && lowered.starts_with(&wanted);
        if distance <= allowed || prefix {
            // A prefix match ranks by how much is missing, like an edit distance.
            let score = if prefix {
                distance.min(lowered.len() - wanted.len())
            } else {
                distance
            };
            if best.is_none_or(|(best_score, _)| score < best_score) {
                best = Some((score, candidate));
            }
        }
    }
    best.map(|(_, name)| name)
}

/// `, did you mean `x`?` when a close name exists, else the empty string.
pub(crate) fn did_you_mean(unknown: &str, known: &[&str]) -> String {
    match suggest(unknown, known) {
        Some(name) => format!(", did you mean `{name}`?"),
        None => String::new(),
    }
}

/// `a, b, c` with each name in backticks.
pub(crate) fn list_names(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(unknown: &str, known: &[&str], expected: Option<&str>) {
        assert_eq!(
            suggest(unknown, known),
            expected,
            "suggestion for {unknown:?}"
        );
    }

    #[test]
    fn suggests_near_names() {
        let keys = ["agent", "name", "count", "background", "needs_result"];
        check("backgroud", &keys, Some("background"));
        check("nmae", &keys, Some("name"));
        check("cuont", &keys, Some("count"));
        check("zzz", &keys, None);
        check("", &keys, None);
        check(
            "acceptedits",
            &["default", "acceptEdits"],
            Some("acceptEdits"),
        );
        check(
            "bypass",
            &["default", "bypassPermissions"],
            Some("bypassPermissions"),
        );
        check("CLAUDE_CODE_FOO", &subsim_rules::session::env::KNOWN, None);
        check(
            "CLAUDE_CODE_MAX_CONCURENT_SUBAGENTS",
            &subsim_rules::session::env::KNOWN,
            Some("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS"),
        );
    }

    #[test]
    fn display_has_location_and_help() {
        let diagnostic = Diagnostic {
            file: "a.yaml".into(),
            line: 3,
            column: 5,
            offset: 20,
            len: 4,
            message: "unknown key `nmae`, did you mean `name`?".into(),
            help: Some("write `name`".into()),
        };
        assert_eq!(
            diagnostic.to_string(),
            "a.yaml:3:5: unknown key `nmae`, did you mean `name`?\n  help: write `name`"
        );
    }
}
