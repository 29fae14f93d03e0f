//! Privacy by default: what looks like an e-mail address or a secret is masked in every
//! text the importer copies (descriptions, names) unless `--keep-text` is given.
//!
//! Two passes, both erring on the side of masking:
//! 1. [`SECRET_PATTERNS`], matched over the whole text: the classes of credential a secret
//!    scanner looks for (credentials in URLs, `Authorization`/Bearer values, JWTs,
//!    private-key blocks, `…_API_KEY=`/`…PASSWORD:`-like assignments, cloud and
//!    service tokens by their documented shapes, AWS secret access keys).
//! 2. word by word: e-mail addresses, known token prefixes, values after `password=` /
//!    `token:`-like keys, and long runs of mixed letters and digits.
//!
//! Source of the pattern classes: the token shapes and rule classes of gitleaks' default
//! rule set (`config/gitleaks.toml`, github.com/gitleaks/gitleaks, MIT licence: rule ids
//! `aws-access-token`, `github-pat`, `github-fine-grained-pat`, `gitlab-pat`,
//! `slack-*-token`, `stripe-access-token`, `gcp-api-key`, `jwt`, `private-key`,
//! `npm-access-token`, `huggingface-access-token`, `sendgrid-api-token`,
//! `openai-api-key`, `anthropic-api-key`, `generic-api-key`, `curl-auth-header`) and
//! detect-secrets' plugins (github.com/Yelp/detect-secrets, Apache-2.0 licence:
//! `BasicAuthDetector` for `scheme://user:password@`, `AWSKeyDetector` for the 40-character
//! secret key, `KeywordDetector` for assignments). The expressions below were written for
//! subsim from those shapes (shorter, and tuned to mask rather than to report); they are
//! not copies of either project's files.

use std::sync::LazyLock;

use regex::Regex;

/// One secret class: its expression, and the capture group that is the secret (0: the
/// whole match).
struct Pattern {
    /// Where the class comes from (a gitleaks rule id or a detect-secrets plugin).
    class: &'static str,
    regex: &'static str,
    group: usize,
}

/// The secret classes (see the module doc for their sources).
const SECRET_PATTERNS: [Pattern; 14] = [
    // detect-secrets BasicAuthDetector: `postgres://user:password@host`.
    Pattern {
        class: "url-credentials",
        regex: r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:([^\s@/]+)@",
        group: 1,
    },
    // gitleaks private-key.
    Pattern {
        class: "private-key",
        regex: r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|$)",
        group: 0,
    },
    // gitleaks jwt: three base64url parts, the first two JSON objects (`ey`).
    Pattern {
        class: "jwt",
        regex: r"\bey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        group: 0,
    },
    // gitleaks curl-auth-header / generic Authorization values.
    Pattern {
        class: "authorization",
        regex: r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9\-._~+/]{12,}=*)",
        group: 1,
    },
    // gitleaks generic-api-key / detect-secrets KeywordDetector: NAME=value, NAME: value.
    Pattern {
        class: "keyword-assignment",
        regex: r#"(?i)\b[A-Za-z0-9_.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|auth[_-]?token)[A-Za-z0-9_.-]*["']?\s*(?::=|=>|=|:)\s*["']?([^\s"',;]{3,})"#,
        group: 1,
    },
    // gitleaks aws-access-token.
    Pattern {
        class: "aws-access-token",
        regex: r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        group: 0,
    },
    // detect-secrets AWSKeyDetector: a 40-character secret key after `aws…`.
    Pattern {
        class: "aws-secret-key",
        regex: r#"(?i)aws[A-Za-z0-9_ .-]{0,25}?["']?\s*(?::=|=>|=|:|\s)\s*["']?([A-Za-z0-9/+]{40})\b"#,
        group: 1,
    },
    // gitleaks github-pat, github-oauth, github-app-token, github-refresh-token,
    // github-fine-grained-pat.
    Pattern {
        class: "github-token",
        regex: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{40,})",
        group: 0,
    },
    // gitleaks gitlab-pat and the other gitlab token prefixes.
    Pattern {
        class: "gitlab-token",
        regex: r"\bgl(?:pat|dt|rt|ptt|ft|oas|cbt|soat|agent|imt|ffct)-[\w-]{20,}",
        group: 0,
    },
    // gitleaks slack-bot-token, slack-user-token, slack-app-token, slack-webhook-url.
    Pattern {
        class: "slack-token",
        regex: r"\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/[A-Za-z0-9+/]{20,})",
        group: 0,
    },
    // gitleaks openai-api-key, anthropic-api-key, stripe-access-token.
    Pattern {
        class: "api-key-prefix",
        regex: r"\b(?:sk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,})",
        group: 0,
    },
    // gitleaks gcp-api-key.
    Pattern {
        class: "gcp-api-key",
        regex: r"\bAIza[\w-]{35}",
        group: 0,
    },
    // gitleaks npm-access-token, huggingface-access-token, pypi-upload-token.
    Pattern {
        class: "package-registry-token",
        regex: r"\b(?:npm_[A-Za-z0-9]{36}|hf_[A-Za-z]{34,}|pypi-AgEIcHlwaS5vcmc[\w-]{50,})",
        group: 0,
    },
    // gitleaks sendgrid-api-token.
    Pattern {
        class: "sendgrid-api-token",
        regex: r"\bSG\.[\w-]{16,32}\.[\w-]{16,64}",
        group: 0,
    },
];

/// [`SECRET_PATTERNS`], compiled once (a pattern that does not compile is a bug the
/// tests catch: `every_secret_pattern_compiles`).
static COMPILED: LazyLock<Vec<(Regex, usize, &'static str)>> = LazyLock::new(|| {
    SECRET_PATTERNS
        .iter()
        .filter_map(|pattern| {
            Regex::new(pattern.regex)
                .ok()
                .map(|regex| (regex, pattern.group, pattern.class))
        })
        .collect()
});

/// Replaces every secret [`SECRET_PATTERNS`] finds in `text` by `<secret>`.
fn mask_patterns(text: &str) -> String {
    let mut text = text.to_string();
    for (regex, group, _class) in COMPILED.iter() {
        if !regex.is_match(&text) {
            continue;
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for captures in regex.captures_iter(&text) {
            let Some(found) = captures.get(*group) else {
                continue;
            };
            out.push_str(&text[last..found.start()]);
            out.push_str("<secret>");
            last = found.end();
        }
        out.push_str(&text[last..]);
        text = out;
    }
    text
}

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
    let text = mask_patterns(text);
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
    if word.contains("<secret>") {
        return (word.to_string(), false); // masked by a pattern already
    }
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
    fn every_secret_pattern_compiles() {
        assert_eq!(super::COMPILED.len(), super::SECRET_PATTERNS.len());
    }

    /// One sample per class of [`super::SECRET_PATTERNS`] (and the ones issue #24 found
    /// kept): the secret part must not survive.
    #[test]
    fn every_secret_class_is_masked() {
        let samples = [
            ("url-credentials", "dump postgres://admin:s3cr3t-Pa55@db.internal:5432/shop now", "s3cr3t-Pa55"),
            ("url-credentials", "mysql://root:hunter2@localhost/x", "hunter2"),
            ("private-key", "key -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY----- end", "MIIEpAIBAAKCAQEA"),
            ("jwt", "use eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok", "dozjgNryP4J3jVmNHl0w5N"),
            ("authorization", "curl -H 'Authorization: Bearer abcdef0123456789xyz' api", "abcdef0123456789xyz"),
            ("keyword-assignment", "run with OPENAI_API_KEY=sk_fake_value_1234 set", "sk_fake_value_1234"),
            ("keyword-assignment", "DB_PASSWORD: correct-horse", "correct-horse"),
            ("keyword-assignment", "export GITHUB_TOKEN=abc123def456", "abc123def456"),
            ("aws-access-token", "id AKIAIOSFODNN7EXAMPL2 there", "AKIAIOSFODNN7EXAMPL2"),
            ("aws-secret-key", "aws secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY here", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("aws-secret-key", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
            ("github-token", "push with ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok", "ghp_abcdefghij"),
            ("gitlab-token", "glpat-abcdefghij0123456789 used", "glpat-abcdefghij"),
            ("slack-token", "post via xoxb-123456789012-abcdefABCDEF", "xoxb-1234"),
            ("api-key-prefix", "key sk-proj-abcdefghijklmnopqrstuvwx1234 set", "sk-proj-abcdef"),
            ("api-key-prefix", "stripe rk_live_abcdefghij0123 call", "rk_live_abcdefghij"),
            ("gcp-api-key", "maps AIzaSyA1234567890abcdefghijklmnopqrstuv ok", "AIzaSyA1234567890"),
            ("package-registry-token", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghij"),
            ("sendgrid-api-token", "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "SG.abcdef"),
        ];
        let classes: std::collections::BTreeSet<&str> = super::SECRET_PATTERNS
            .iter()
            .map(|pattern| pattern.class)
            .collect();
        let tested: std::collections::BTreeSet<&str> =
            samples.iter().map(|(class, _, _)| *class).collect();
        assert_eq!(classes, tested, "every class has a sample");
        for (class, text, secret) in samples {
            let masked = scrub(text);
            assert!(
                !masked.contains(secret),
                "{class}: {text:?} became {masked:?}"
            );
            assert!(masked.contains("<secret>"), "{class}: {masked:?}");
        }
    }

    #[test]
    fn ordinary_descriptions_are_kept() {
        for kept in [
            "Explore the parser module",
            "Review src/import/transcript.rs for bugs",
            "Fix the @decorator handling",
            "token budget check",
            "a-very-long-hyphenated-description-of-what-this-does",
            "Fix the auth: login flow",
            "Explain the token bucket in rate_limit.rs",
            "Check https://example.com/docs/install for the steps",
            "Bearer tokens in the API docs",
        ] {
            assert_eq!(scrub(kept), kept);
        }
    }
}
