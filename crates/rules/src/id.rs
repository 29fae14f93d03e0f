//! Rule IDs the compiler knows: the catalog's IDs that code compares a rule with, or cites
//! outside this crate, as constants (`id::PERM_9` is `"PERM-9"`). A misspelt constant does
//! not compile; the value of every constant is held to the catalog, and its name to its
//! value, by `tests/integration/rule_citations.rs` (through [`ALL`]).
//!
//! Inside this crate a decision returns its rule as a literal beside the answer, where the
//! catalog test reads it too; a constant is for a rule ID that is *compared* (`rule ==
//! id::HOOK_5`) or written outside `crates/rules` (a fixed citation, each listed with its
//! reason in `rule_citations.rs`).

use crate::RuleId;

/// Declares each constant (`NAME = "ID"`) and [`ALL`], every constant by its name and ID.
macro_rules! rule_ids {
    ($($name:ident = $id:literal,)+) => {
        $(
            #[doc = concat!("`", $id, "` in the catalog.")]
            pub const $name: RuleId = $id;
        )+

        /// Every constant of this module: its name and its ID, in declaration order.
        pub const ALL: [(&str, RuleId); [$($id),+].len()] = [$((stringify!($name), $id)),+];
    };
}

rule_ids! {
    DEF_1 = "DEF-1",
    DEF_4 = "DEF-4",
    DEF_6 = "DEF-6",
    DEF_9 = "DEF-9",
    DEF_10 = "DEF-10",
    DEF_11 = "DEF-11",
    DEPTH_4 = "DEPTH-4",
    FGBG_5 = "FGBG-5",
    FORK_9 = "FORK-9",
    HOOK_5 = "HOOK-5",
    MAIN_1 = "MAIN-1",
    MAIN_3 = "MAIN-3",
    MODEL_2 = "MODEL-2",
    NOTIFY_6 = "NOTIFY-6",
    PANEL_3 = "PANEL-3",
    PERM_9 = "PERM-9",
    RESUME_5 = "RESUME-5",
    RESUME_13 = "RESUME-13",
    RESUME_17 = "RESUME-17",
}
