//! The command line's budgets: every count a flag or a file gives a command is checked
//! against one of these (a [`Budget`]: a name, a limit and the flag that raises it)
//! before it sizes anything, and every file is read through `subsim_scenario::read`
//! under one (issue #24). The library's own are `subsim_scenario::read::
//! SCENARIO_FILE_BYTES` and the scenario's `session.limits`.

use subsim_engine::budget::Budget;

/// Runs of one `sweep` (points × `--seeds`, before sharding: every point is validated and
/// kept), and rows of one `merge`. A run's row is about a kilobyte of memory.
pub const SWEEP_RUNS: Budget = Budget::new("sweep runs", 100_000, "runs", Some("--max-runs N"));

/// Bytes of one shard file `merge` reads: a row is a few hundred bytes, so the default
/// runs budget fits in half of it.
pub const SHARD_FILE_BYTES: Budget = Budget::new(
    "shard file bytes",
    64 * 1024 * 1024,
    "bytes",
    Some("--max-input-bytes N"),
);

/// Runs drawn one by one in `run --format gantt|chrome` and kept for `report`; runs past
/// it are counted in one summary line, and the running count is thinned keeping its peaks.
pub const VIEW_ROWS: Budget = Budget::new("view rows", 100_000, "rows", Some("--max-rows N"));

/// `erlang --cap`: Erlang B and C take a step per slot.
pub const ERLANG_CAP: Budget = Budget::new("erlang cap", 10_000_000, "slots", None);

/// A name or words typed on the command line and compared with every known one
/// (`explain QUERY`, `tools --agent NAME`); names are at most 256 characters.
pub const TYPED_CHARS: Budget = Budget::new("typed text", 1_000, "characters", None);

/// Bytes of one request body `subsim serve` reads (issue #25): past it, 413, told by
/// `Content-Length` before anything is read, or found while reading.
pub const REQUEST_BODY_BYTES: Budget =
    Budget::new("request body bytes", 1024 * 1024, "bytes", None);
