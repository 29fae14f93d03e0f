//! The integration tests, one binary with a module per topic.

mod compact;
mod determinism;
mod docs;
mod fuzz;
mod gates;
mod import;
mod links;
mod narration;
mod properties;
mod queueing;
mod rule_citations;
mod scale;
mod scenarios;
mod streams;
mod ties;
mod trace_tables;
