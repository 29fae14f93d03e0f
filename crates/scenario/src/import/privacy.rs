//! Privacy by default: what looks like an e-mail address or a secret is masked in every
//! text the importer copies (descriptions, names) unless `--keep-text` is given.
//!
//! The tests are deliberately simple and err on the side of masking: an e-mail is a word
//! with `@` and a dot after it; a secret is a word with a known token prefix, a value after
//! `password=`/`token:`-like keys, or a long run of letters and digits mixed.

/// Known token prefixes (API keys, personal access tokens).
const SECRET_PREFIXES: [&str; 12] = [
    "sk-",
    "sk_",
    "pk_live",
    "rk_live",
    "ghp_",
    "gho_",
    "ghs_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "AKIA",
];

/// Keys whose value is a secret (`password=…`, `api_key: …`).
const SECRET_KEYS: [&str; 7] = [
    "password", "passwd", "secret", "token", "api_key", "apikey", "api-key",
];

/// Masks e-mail addresses and secrets in `text`.
pub(crate) fn scrub(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous_key = false;
    for (index, word) in text.split(' ').enumerate() {
        if index > 0 {
            out.push(' ');
        }
        let (masked, is_key) = scrub_word(word, previous_key);
        out.push_str(&masked);
        previous_key = is_key;
    }
    out
}

/// Masks one space-separated word; `after_key` when the previous word was a secret key
/// (`password: hunter2`). Returns the word and whether it is itself a secret key.
fn scrub_word(word: &str, after_key: bool) -> (String, bool) {
    let trim =
        |c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '=' | '@' | '.'));
    let core = word.trim_matches(trim);
    if core.is_empty() {
        return (word.to_string(), false);
    }
    let start = word.find(core).unwrap_or(0);
    let (before, after) = (&word[..start], &word[start + core.len()..]);
    let lower = core.to_ascii_lowercase();
    let bare_key = lower.trim_end_matches([':', '=']);
    let is_key = SECRET_KEYS.contains(&bare_key) && (word.ends_with(':') || word.ends_with('='));
    if after_key && !is_key {
        return (format!("{before}<secret>{after}"), false);
    }
    // `key=value` / `key:value` in one word.
    if let Some(split) = core.find(['=', ':']) {
        let key = core[..split].to_ascii_lowercase();
        if SECRET_KEYS.contains(&key.as_str()) && split + 1 < core.len() {
            return (format!("{before}{}<secret>{after}", &core[..=split]), false);
        }
    }
    if looks_like_email(core) {
        return (format!("{before}<email>{after}"), false);
    }
    if looks_like_secret(core) {
        return (format!("{before}<secret>{after}"), false);
    }
    (word.to_string(), is_key)
}

fn looks_like_email(word: &str) -> bool {
    let Some((local, domain)) = word.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-'))
}

fn looks_like_secret(word: &str) -> bool {
    if SECRET_PREFIXES
        .iter()
        .any(|prefix| word.starts_with(prefix) && word.len() >= prefix.len() + 12)
    {
        return true;
    }
    // A long token of mixed letters and digits (a key, a hash-like credential). Paths
    // and hyphenated words have separators every few characters, so they do not match.
    let token_chars = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '='));
    let longest_run = word
        .split(['/', '-', '_', '.'])
        .map(str::len)
        .max()
        .unwrap_or(0);
    let digits = word.chars().filter(char::is_ascii_digit).count();
    let letters = word.chars().filter(char::is_ascii_alphabetic).count();
    token_chars && longest_run >= 32 && digits >= 4 && letters >= 4
}

#[cfg(test)]
mod tests {
    use super::scrub;

    #[test]
    fn emails_and_secrets_are_masked() {
        assert_eq!(scrub("mail jane.doe@example.com now"), "mail <email> now");
        assert_eq!(scrub("(bob@corp.io)"), "(<email>)");
        assert_eq!(
            scrub("use sk-ant-api03-abcdefghijklmnop please"),
            "use <secret> please"
        );
        assert_eq!(scrub("password=hunter2 ok"), "password=<secret> ok");
        assert_eq!(scrub("token: abc123"), "token: <secret>");
        assert_eq!(
            scrub("key 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"),
            "key <secret>"
        );
        assert_eq!(scrub("AKIAIOSFODNN7EXAMPLE1"), "<secret>");
    }

    #[test]
    fn ordinary_descriptions_are_kept() {
        for kept in [
            "Explore the parser module",
            "Review src/import/transcript.rs for bugs",
            "Fix the @decorator handling",
            "token budget check",
            "a-very-long-hyphenated-description-of-what-this-does",
        ] {
            assert_eq!(scrub(kept), kept);
        }
    }
}
