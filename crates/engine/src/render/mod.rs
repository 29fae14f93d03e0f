//! Trace renderers: sinks that turn events into bytes for people and programs.
//!
//! - [`JsonlWriter`]: the JSON Lines trace (the contract in `spec/scenario-format.md`);
//! - [`TextWriter`]: the narration, one plain-English line per event, built by a
//!   [`Narrator`].
//!
//! Both are [`Sink`](crate::sink::Sink)s that buffer their output, remember the first I/O
//! error instead of panicking, and report it from `finish()`. Aggregate statistics are not
//! here: see [`crate::summary`].

pub mod jsonl;
pub mod text;

pub use jsonl::JsonlWriter;
pub use text::{Narrator, TextWriter};
