//! The integration tests, one binary with a module per topic.

mod determinism;
mod properties;
mod queueing;
mod scenarios;
