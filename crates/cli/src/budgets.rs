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

/// The address space a worker thread is given room for when the process runs under an
/// address-space limit (`ulimit -v`): its stack, and one 32 MiB segment of the allocator's
/// (mimalloc maps memory a thread allocates in segments of that size). Sized at the stack
/// twice over, a second worker's first segment sometimes found no room under load, and the
/// process aborted (`budgets::sweep_starts_only_the_workers…`, failing one run in six).
pub const WORKER_ADDRESS_SPACE: u64 = subsim_scenario::PARSER_STACK_BYTES as u64 + 32 * 1024 * 1024;

/// Of the address space left under the process's limit, the part kept for the thread
/// that starts the workers (its heap, the results, the output).
const MAIN_ADDRESS_SPACE: u64 = 32 * 1024 * 1024;

/// How many of `wanted` worker threads, each needing `per_worker` bytes of address space,
/// fit under the process's address-space limit (`ulimit -v`; read from Linux's
/// `/proc/self/limits` and `/proc/self/status`), and the room that limit leaves when it
/// allows fewer. Sized before any thread starts: under a tight limit, threads whose stacks
/// did start took the address space their work then needed, and an allocation failed (an
/// abort, not an error). Without a limit, or where it cannot be read, all of them.
pub fn threads_within_address_space(wanted: u32, per_worker: u64) -> (u32, Option<u64>) {
    let Some(left) = address_space_left() else {
        return (wanted, None);
    };
    let room = left.saturating_sub(MAIN_ADDRESS_SPACE) / per_worker.max(1);
    match u32::try_from(room) {
        Ok(room) if room < wanted => (room, Some(left)),
        _ => (wanted, None),
    }
}

/// How many of `wanted` worker threads a command starts: all of them, or under an
/// address-space limit only as many as it leaves room for ([`threads_within_address_space`]
/// at [`WORKER_ADDRESS_SPACE`] each), but at least `at_least`; when the limit cuts the
/// number, a note on stderr says so. Every command with a pool of workers sizes it here.
pub fn worker_threads(wanted: u32, at_least: u32) -> u32 {
    let (fit, room) = threads_within_address_space(wanted, WORKER_ADDRESS_SPACE);
    let Some(room) = room else {
        return wanted;
    };
    let count = fit.max(at_least).min(wanted);
    crate::output::note(&format!(
        "subsim: note: {count} of {wanted} worker threads: the address-space limit \
         (`ulimit -v`) leaves {} MiB, {} MiB a worker",
        room / (1024 * 1024),
        WORKER_ADDRESS_SPACE / (1024 * 1024)
    ));
    count
}

/// Bytes of address space this process may still map under its soft limit, if it has one.
fn address_space_left() -> Option<u64> {
    let limit = proc_number("/proc/self/limits", "Max address space")?;
    let mapped_kib = proc_number("/proc/self/status", "VmSize:")?;
    Some(limit.saturating_sub(mapped_kib.saturating_mul(1024)))
}

/// The number that follows `label` on its line of the Linux `/proc` file at `path` (the
/// first word after it; `None` for `unlimited`, or where there is no such file or line).
fn proc_number(path: &str, label: &str) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix(label))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod address_space_tests {
    use super::*;

    #[test]
    fn without_a_limit_every_worker_is_started() {
        // The test process runs without `ulimit -v` (CI and this machine): every wanted
        // worker fits, and no room is reported.
        if address_space_left().is_none() {
            assert_eq!(
                threads_within_address_space(8, WORKER_ADDRESS_SPACE),
                (8, None)
            );
        }
    }
}
