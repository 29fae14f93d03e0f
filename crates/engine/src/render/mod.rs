//! Trace renderers: sinks that turn events into bytes for people and programs.
//!
//! - [`JsonlWriter`]: the JSON Lines trace (the contract in `spec/scenario-format.md`);
//! - [`TextWriter`]: the narration, one plain-English line per event, built by a
//!   [`Narrator`].
//!
//! Both are [`Sink`](crate::sink::Sink)s that buffer their output, remember the first I/O
//! error instead of panicking, and report it from `finish()`. Aggregate statistics are not
//! here: see [`crate::summary`].

use std::io::{self, Write};
use std::time::{Duration, Instant};

pub mod jsonl;
pub mod text;

pub use jsonl::JsonlWriter;
pub use text::{Detail, NarrationOptions, Narrator, TextWriter, Told, Tone};

/// How many bytes a renderer buffers before handing them to its writer.
const FLUSH_AT: usize = 64 * 1024;

/// How old buffered output may get before it is flushed to its writer anyway, so that a
/// run that is interrupted (killed, or stuck in a loop that writes nothing) keeps what
/// it wrote. Looked at every [`LOOK_EVERY`] events, never in the simulation.
const FLUSH_AFTER: Duration = Duration::from_millis(200);

/// How many events pass between two looks at the wall clock.
const LOOK_EVERY: u32 = 1024;

/// The output side both renderers share: a byte buffer handed to `out` every
/// [`FLUSH_AT`] bytes, after the first event and when it is older than [`FLUSH_AFTER`],
/// and the first I/O error, remembered (nothing is written after it).
struct Buffered<W: Write> {
    out: W,
    buffer: Vec<u8>,
    error: Option<io::Error>,
    /// Events written since the wall clock was last looked at; `u32::MAX` before the
    /// first event.
    since_look: u32,
    /// When the buffer was last flushed.
    flushed_at: Instant,
}

impl<W: Write> Buffered<W> {
    fn new(out: W, slack: usize) -> Buffered<W> {
        Buffered {
            out,
            buffer: Vec::with_capacity(FLUSH_AT + slack),
            error: None,
            since_look: u32::MAX,
            flushed_at: Instant::now(),
        }
    }

    /// The buffer to append one event to, or `None` once a write has failed.
    fn buffer(&mut self) -> Option<&mut Vec<u8>> {
        match self.error {
            None => Some(&mut self.buffer),
            Some(_) => None,
        }
    }

    /// Hands the buffer over once it is full enough; flushes the first event (a run's
    /// `session_started`) at once and anything older than [`FLUSH_AFTER`].
    fn written(&mut self) {
        if self.buffer.len() >= FLUSH_AT {
            self.drain();
        }
        let first = self.since_look == u32::MAX;
        self.since_look = self.since_look.wrapping_add(1);
        if first || self.since_look >= LOOK_EVERY {
            self.since_look = 0;
            if first || self.flushed_at.elapsed() >= FLUSH_AFTER {
                self.flushed_at = Instant::now();
                self.drain();
                if self.error.is_none() {
                    if let Err(error) = self.out.flush() {
                        self.error = Some(error);
                    }
                }
            }
        }
    }

    fn drain(&mut self) {
        if self.error.is_none() && !self.buffer.is_empty() {
            if let Err(error) = self.out.write_all(&self.buffer) {
                self.error = Some(error);
            }
        }
        self.buffer.clear();
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain();
        if self.error.is_none() {
            if let Err(error) = self.out.flush() {
                self.error = Some(error);
            }
        }
        match &self.error {
            None => Ok(()),
            Some(error) => Err(io::Error::new(error.kind(), error.to_string())),
        }
    }

    fn finish(mut self) -> io::Result<W> {
        self.drain();
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        self.out.flush()?;
        Ok(self.out)
    }
}
