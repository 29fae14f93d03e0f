//! Reading the Markdown tables of `docs/` (the rule table, the version-gate table).

use std::path::PathBuf;

use crate::repo_root;

/// The cells of a table row (`| a | b |`), trimmed, or `None` for other lines and the
/// separator row.
pub fn cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<String> = inner
        .split('|')
        .map(|cell| cell.trim().to_string())
        .collect();
    let separator = cells
        .iter()
        .all(|cell| !cell.is_empty() && cell.chars().all(|c| c == '-' || c == ':'));
    (!separator).then_some(cells)
}

/// `AREA-N`: an upper-case area and a number.
pub fn is_rule_id(text: &str) -> bool {
    let Some((area, number)) = text.split_once('-') else {
        return false;
    };
    !area.is_empty()
        && area.chars().all(|c| c.is_ascii_uppercase())
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

/// The targets of every `](...)` link in `text`, in order.
pub fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("](") {
        rest = &rest[start + 2..];
        let Some(end) = rest.find(')') else {
            break;
        };
        found.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    found
}

/// Where a link from `docs/` points when it is `../scenarios/…`:
/// `../scenarios/x.yaml` → `<repo>/scenarios/x.yaml`.
pub fn scenario_path(target: &str) -> Option<PathBuf> {
    target
        .strip_prefix("../")
        .filter(|inside| inside.starts_with("scenarios/"))
        .map(|inside| repo_root().join(inside))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_skip_the_separator_and_other_lines() {
        assert_eq!(
            cells("| CAP-1 | text | simulated |"),
            Some(vec!["CAP-1".into(), "text".into(), "simulated".into()])
        );
        assert_eq!(cells("|---|:--:|---|"), None);
        assert_eq!(cells("prose | with a bar"), None);
        assert_eq!(cells("|"), None);
    }

    #[test]
    fn rule_ids_and_links() {
        assert!(is_rule_id("FGBG-12"));
        assert!(!is_rule_id("Q-x") && !is_rule_id("cap-1") && !is_rule_id("-1"));
        assert_eq!(
            links("[a](../scenarios/a.yaml), [b](#b)"),
            vec!["../scenarios/a.yaml".to_string(), "#b".to_string()]
        );
        assert!(scenario_path("../scenarios/a.yaml").is_some());
        assert!(scenario_path("../docs/a.md").is_none());
    }
}
