//! When it happens: the discrete-event kernel of subsim.
//!
//! A [`Simulation`] interprets the step programs of the main conversation and of every
//! subagent run against a virtual clock, asks `subsim-rules` at every decision, and hands
//! each decided [`Event`] to a [`Sink`] at once.
//!
//! The main types: [`SimSpec`] (the input), [`Simulation`] (the running thing), [`Event`]
//! (the trace) and [`Sink`] (where events go).
//!
//! # Determinism contract
//!
//! - Time is virtual, in integer microseconds ([`SimTime`]); nothing reads a wall clock.
//! - The event queue is keyed by `(time, seq)`: events scheduled for the same instant run
//!   in the order they were scheduled (FIFO by `seq`). That order is part of the output.
//! - Randomness comes only from ChaCha8 streams seeded from `(scenario seed, agent id,
//!   purpose)`, so adding an agent does not shift the draws of the others; load-generated
//!   agents share one `load` stream in arrival order. Samples are rounded to whole µs.
//! - No output depends on hash-map iteration order: maps that are iterated are `BTreeMap`s.
//!
//! Same spec + same seed ⇒ the same events, byte for byte, on any machine.
//!
//! ```
//! use subsim_engine::{spec::*, sink::Collect, Simulation};
//! use std::rc::Rc;
//! let mut spec = SimSpec::minimal("two workers");
//! spec.main = Rc::from(vec![Step::Spawn(SpawnSpec { agent: Some("general-purpose".into()),
//!     count: 2, ..Default::default() })]);
//! let mut trace = Collect::default();
//! let report = Simulation::new(spec).run(&mut trace);
//! assert!(report.limit.is_none());
//! assert!(trace.events.iter().any(|e| e.kind.name() == "agent_finished"));
//! ```
#![warn(missing_docs)]

pub mod budget;
pub mod dist;
pub mod erlang;
pub mod event;
pub mod expect;
pub mod explore;
mod ids;
pub mod render;
pub mod runmodel;
pub mod runs;
pub mod sim;
pub mod sink;
pub mod spec;
pub mod stats;
pub mod summary;
pub mod time;

pub use event::{AgentRef, Event, EventKind, Outcome};
pub use sim::{LimitHit, RunReport, Simulation, TieBreak, TieOptions};
pub use sink::Sink;
pub use spec::SimSpec;
pub use time::SimTime;
