//! The integration tests, one binary with a module per topic.

mod determinism;
mod docs;
mod properties;
mod queueing;
mod scenarios;
