//! The CLI's end-to-end tests, as one test binary: each module runs the built `subsim` as a
//! person or a script does, through the harness in `support`. One binary links once, and a
//! change to how the tests run `subsim` is made in one place.
//!
//! Run one module with a filter: `cargo test -p subsim --test cli -- playground::`.

mod support;

mod browser;
mod budgets;
mod capacity;
mod cli;
mod hostile;
mod hostile_pages;
mod import;
mod load;
mod page_corpus;
mod page_regressions;
mod playground;
mod runner;
mod sources;
mod teaching;
mod tutorial;
mod views;
mod widths;
