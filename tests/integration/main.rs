//! The integration tests, one binary with a module per topic.

mod agreement;
mod architecture;
mod budgets;
mod compact;
mod determinism;
mod docs;
mod fuzz;
mod gates;
mod import;
mod import_hostile;
mod links;
mod narration;
mod properties;
mod queueing;
mod rule_citations;
mod rules_calls;
mod scale;
mod scenarios;
mod streams;
mod summary_paths;
mod ties;
mod trace_tables;
