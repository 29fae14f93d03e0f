//! Budgets: the one place where a count that a user or a file gives is checked before it
//! sizes anything (issue #24).
//!
//! A [`Budget`] is a value — a name, a limit, a unit and the flag or setting that raises
//! it — so that every command, and a server built on the same crates, states its limits
//! the same way and says how to raise them. A count is checked with [`Budget::check`]
//! (or [`Budget::check_product`] for a product of counts, which overflows to "over")
//! *before* a vector, a thread pool or a read is sized by it; an [`OverBudget`] is the
//! error, whose text names the budget, the count and the fix.
//!
//! ```
//! use subsim_engine::budget::Budget;
//!
//! let runs = Budget::new("sweep runs", 100_000, "runs", Some("--max-runs N"));
//! assert_eq!(runs.check_product("the points × --seeds", &[100, 10]), Ok(1_000));
//! let over = runs.check_product("the points × --seeds", &[100_000, 100_000]).unwrap_err();
//! assert_eq!(
//!     over.to_string(),
//!     "the points × --seeds is 10000000000 runs, over the sweep runs budget of 100000 \
//!      runs; raise it with --max-runs N"
//! );
//! ```

use std::fmt;

/// A stated limit on a count that input controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// What is limited, in words ("sweep runs", "shard file bytes").
    pub name: &'static str,
    /// The most allowed (inclusive).
    pub limit: u64,
    /// The unit the count is in ("runs", "bytes", "threads").
    pub unit: &'static str,
    /// The flag or setting that raises the limit, if one does (`--max-runs N`).
    pub raised_by: Option<&'static str>,
}

impl Budget {
    /// A budget of `limit` `unit`s called `name`, raised by `raised_by`.
    pub const fn new(
        name: &'static str,
        limit: u64,
        unit: &'static str,
        raised_by: Option<&'static str>,
    ) -> Budget {
        Budget {
            name,
            limit,
            unit,
            raised_by,
        }
    }

    /// The same budget with another limit (what a flag set).
    #[must_use]
    pub const fn with_limit(self, limit: u64) -> Budget {
        Budget { limit, ..self }
    }

    /// `count` if it is within the budget; otherwise the error, `what` naming the count
    /// ("--seeds", "the shard count in x.csv's first line").
    pub fn check(&self, what: impl fmt::Display, count: u64) -> Result<u64, OverBudget> {
        if count <= self.limit {
            Ok(count)
        } else {
            Err(self.over(what, Some(count)))
        }
    }

    /// [`Budget::check`] as a `usize`, for sizing a collection.
    pub fn check_usize(&self, what: impl fmt::Display, count: u64) -> Result<usize, OverBudget> {
        let count = self.check(&what, count)?;
        usize::try_from(count).map_err(|_| self.over(what, Some(count)))
    }

    /// The product of `factors`, if it is within the budget: a product that overflows
    /// `u64` is over whatever the budget is (and is said to be "more than 2^64").
    pub fn check_product(
        &self,
        what: impl fmt::Display,
        factors: &[u64],
    ) -> Result<u64, OverBudget> {
        let product = factors
            .iter()
            .try_fold(1u64, |product, factor| product.checked_mul(*factor));
        match product {
            Some(product) => self.check(what, product),
            None => Err(self.over(what, None)),
        }
    }

    /// The error for a count over the budget (`None`: past `u64`).
    pub fn over(&self, what: impl fmt::Display, count: Option<u64>) -> OverBudget {
        OverBudget {
            budget: *self,
            what: what.to_string(),
            count,
            at_least: false,
        }
    }

    /// The error for a stream that holds at least `count` (more than the budget): it was
    /// read only until the budget ran out.
    pub fn over_at_least(&self, what: impl fmt::Display, count: u64) -> OverBudget {
        OverBudget {
            at_least: true,
            ..self.over(what, Some(count))
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} {}", self.name, self.limit, self.unit)?;
        if let Some(flag) = self.raised_by {
            write!(f, "; {flag} raises it")?;
        }
        f.write_str(")")
    }
}

/// A count over its [`Budget`]: nothing was sized by it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverBudget {
    /// The budget it is over.
    pub budget: Budget,
    /// What the count is, in words.
    pub what: String,
    /// The count (`None`: more than `u64` holds).
    pub count: Option<u64>,
    /// The count is only a lower bound (a stream read until the budget ran out).
    pub at_least: bool,
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Budget {
            name,
            limit,
            unit,
            raised_by,
        } = self.budget;
        match self.count {
            Some(count) if self.at_least => {
                write!(f, "{} holds more than {} {unit}", self.what, count - 1)?
            }
            Some(count) => write!(f, "{} is {count} {unit}", self.what)?,
            None => write!(f, "{} is more than 2^64 {unit}", self.what)?,
        }
        write!(f, ", over the {name} budget of {limit} {unit}")?;
        match raised_by {
            Some(flag) => write!(f, "; raise it with {flag}"),
            None => f.write_str(" (a fixed limit)"),
        }
    }
}

impl std::error::Error for OverBudget {}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNS: Budget = Budget::new("sweep runs", 100, "runs", Some("--max-runs N"));

    #[test]
    fn counts_within_pass_and_over_name_the_fix() {
        assert_eq!(RUNS.check("--seeds", 100), Ok(100));
        let over = RUNS.check("--seeds", 101).unwrap_err();
        assert_eq!(
            over.to_string(),
            "--seeds is 101 runs, over the sweep runs budget of 100 runs; raise it with \
             --max-runs N"
        );
        assert_eq!(RUNS.with_limit(1_000).check("--seeds", 101), Ok(101));
        let fixed = Budget::new("worker threads", 4, "threads", None);
        assert!(fixed
            .check("--jobs", 5)
            .unwrap_err()
            .to_string()
            .ends_with("(a fixed limit)"));
    }

    #[test]
    fn products_that_overflow_are_over() {
        assert_eq!(RUNS.check_product("p", &[]), Ok(1));
        assert_eq!(RUNS.check_product("p", &[10, 10]), Ok(100));
        assert!(RUNS.check_product("p", &[0, u64::MAX, u64::MAX]).is_ok());
        let over = RUNS.check_product("p", &[u64::MAX, 2]).unwrap_err();
        assert_eq!(over.count, None);
        assert!(over.to_string().contains("more than 2^64"), "{over}");
    }
}
