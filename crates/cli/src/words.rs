//! Counted nouns in the CLI's own messages ("1 file", "2 files"): one helper, so no message
//! says "1 runs".

/// `count` and `what`, with an `s` unless the count is one.
pub fn plural(count: usize, what: &str) -> String {
    if count == 1 {
        format!("1 {what}")
    } else {
        format!("{count} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn one_run_is_not_1_runs() {
        assert_eq!(plural(1, "run"), "1 run");
        assert_eq!(plural(0, "run"), "0 runs");
        assert_eq!(plural(2, "run"), "2 runs");
    }
}
