//! `subsim serve`: the playground, a local web server (axum on tokio) with one page and an
//! API (`docs/playground.md`).
//!
//! The server only frames what the commands already do: a posted scenario is loaded by
//! `subsim_scenario::parse_scenario_under` as `run` loads one, its trace written by
//! [`crate::run::jsonl_writer`] and its summary by the engine's `Summary`, so the `data:`
//! lines of `/api/run` are exactly what `subsim run --format jsonl` prints; `/api/panel` is
//! [`crate::panel::at_instant`], Compare is [`crate::diff::parting`], a clicked rule is
//! [`crate::explain::describe_id`].
//!
//! Everything a client sends is untrusted: bodies are bounded ([`Budgets::body_bytes`],
//! 413 past it, checked against `Content-Length` before anything is read), a request that
//! is not all sent within [`Budgets::client_timeout`] is dropped, scenarios resolve their
//! `file:` paths in an empty folder of their own, runs are clamped to the server's safety
//! limits, at most [`Budgets::max_runs`] run at once (then up to [`Budgets::queue`] wait
//! their turn for at most the client timeout; past that, 503 with `Retry-After`), and
//! a run whose client goes away or stops reading is cancelled (`stream.rs`).

mod api;
mod connection;
mod json;
mod log;
mod page;
mod policy;
mod stream;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::args::ServeArgs;
use crate::Status;

/// Everything the server bounds, from the command line.
#[derive(Clone, Debug)]
pub struct Budgets {
    /// Largest request body ([`crate::budgets::REQUEST_BODY_BYTES`], 1 MiB): past it, 413.
    pub body_bytes: subsim_engine::budget::Budget,
    /// Runs at once; past it, requests wait in the queue.
    pub max_runs: usize,
    /// Requests waiting for a run slot (each at most `client_timeout`); past it, 503 with
    /// `Retry-After`.
    pub queue: usize,
    /// Connections served at once; past it, new ones are closed at once.
    pub max_connections: usize,
    /// How long a client may take to send a request's head or body, and how long a run
    /// waits for a client that stopped reading, before it is dropped.
    pub client_timeout: Duration,
    /// Bytes all the request bodies being read may hold together (`--body-memory`, at
    /// least one body's worth): past it, a body waits for room (503 after the client
    /// timeout), so N connections cannot hold N bodies' memory.
    pub body_memory: usize,
    /// The safety limits every run is clamped to (the scenario may only lower them).
    pub limits: subsim_engine::spec::Limits,
    /// The longest a paced run plays (`--max-run-time`): slower speeds are refused, and a
    /// run whose next event would play later ends with `limit`.
    pub max_run_time: Duration,
}

impl Budgets {
    /// The budgets `args` ask for; the limits not on the command line are the server's
    /// tighter defaults.
    pub fn from_args(args: &ServeArgs) -> Budgets {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let defaults = subsim_engine::spec::Limits::default();
        Budgets {
            body_bytes: crate::budgets::REQUEST_BODY_BYTES,
            // Each run has a thread of its own (and the parser's): under an address-space
            // limit, only as many as it leaves room for (`budgets::worker_threads`).
            max_runs: crate::budgets::worker_threads(
                args.max_runs
                    .map_or(2 * cores, |n| n as usize)
                    .try_into()
                    .unwrap_or(u32::MAX),
                1,
            ) as usize,
            queue: args.queue as usize,
            max_connections: args.max_connections as usize,
            client_timeout: Duration::from_secs(args.client_timeout),
            max_run_time: Duration::from_secs(args.max_run_time),
            body_memory: usize::try_from(args.body_memory)
                .unwrap_or(usize::MAX)
                .max(crate::budgets::REQUEST_BODY_BYTES.limit as usize),
            limits: subsim_engine::spec::Limits {
                max_events: args.max_events,
                max_agents: args.max_agents,
                max_steps: Some(args.max_steps),
                max_running: args.max_agents.min(defaults.max_running),
                max_held: args.max_agents.min(defaults.max_held),
                max_instant_steps: args.max_steps.min(defaults.max_instant_steps),
                max_silent_steps: args.max_steps.min(defaults.max_silent_steps),
                ..defaults
            },
        }
    }
}

/// What every request handler shares.
pub struct Shared {
    pub budgets: Budgets,
    /// One permit per run allowed at once.
    pub runs: Arc<Semaphore>,
    /// One permit per byte of request body being read ([`Budgets::body_memory`]).
    pub bodies: Arc<Semaphore>,
    /// Requests waiting for a permit.
    pub waiting: std::sync::atomic::AtomicUsize,
    /// The empty folder posted scenarios resolve their `file:` paths in, and only in:
    /// made fresh by `tempfile` (random name, mode 0700), removed at exit.
    pub empty_dir: std::path::PathBuf,
}

/// The environment variable that sets how long mimalloc keeps freed pages before giving
/// them back to the system, in milliseconds.
const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";

/// A long-lived server gives freed memory back at once (issue #31: after a flood of
/// request bodies, resident memory goes back near its start).
///
/// mimalloc returns a freed page to the system only after its purge delay, and only when
/// the thread that owns the page next allocates; an idle server thread never does, so a
/// burst's memory stayed resident (104 MiB after a 1,000-body flood that started at
/// 7 MiB; docs/PERFORMANCE.md). With a delay of zero the free that empties a page hands
/// it back. The delay is read from the environment when the allocator starts, before
/// `main`, and the workspace forbids the `unsafe` call that would set it afterwards, so
/// the server runs itself again, in place (the same process id), with the variable set.
/// A value the user exported is kept. If the program cannot run itself again, it serves
/// as it is, with the allocator's default delay.
#[cfg(unix)]
fn purge_freed_memory_at_once() {
    use std::os::unix::process::CommandExt as _;
    if std::env::var_os(PURGE_DELAY).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut argv = std::env::args_os();
    let mut command = std::process::Command::new(exe);
    if let Some(arg0) = argv.next() {
        command.arg0(arg0);
    }
    // `exec` returns only when it failed.
    let error = command.args(argv).env(PURGE_DELAY, "0").exec();
    tracing::debug!(%error, "cannot run again with {PURGE_DELAY}=0; serving with the allocator's default");
}

#[cfg(not(unix))]
fn purge_freed_memory_at_once() {}

pub fn serve(args: ServeArgs) -> anyhow::Result<Status> {
    purge_freed_memory_at_once();
    // Under an address-space limit, as many of the runtime's worker threads as it leaves
    // room for (`budgets::worker_threads`; tokio panics on a worker it cannot start). The
    // runs' own threads are sized after it (`Budgets::from_args`), from what is left.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = crate::budgets::worker_threads(cores.try_into().unwrap_or(u32::MAX), 1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers as usize)
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    // A fresh private folder (issue #31): a random name, mode 0700, never one that
    // already exists (a planted folder or symlink is not reused), removed when dropped.
    let mut builder = tempfile::Builder::new();
    builder.prefix("subsim-serve-");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    let scratch = builder
        .tempdir()
        .context("cannot create the server's scratch folder (is $TMPDIR writable?)")?;
    let empty_dir = scratch.path().to_path_buf();
    let budgets = Budgets::from_args(&args);
    tracing::debug!(
        workers,
        max_runs = budgets.max_runs,
        queue = budgets.queue,
        max_connections = budgets.max_connections,
        body_memory = budgets.body_memory,
        "serve budgets"
    );
    let shared = Arc::new(Shared {
        runs: Arc::new(Semaphore::new(budgets.max_runs)),
        bodies: Arc::new(Semaphore::new(budgets.body_memory)),
        waiting: std::sync::atomic::AtomicUsize::new(0),
        budgets,
        empty_dir,
    });
    let served = runtime.block_on(listen(args.bind, &args.allow_host, shared));
    // Runs still going see their clients gone and stop; do not wait on them for long.
    runtime.shutdown_timeout(Duration::from_secs(2));
    drop(scratch);
    served.map(|()| Status::Ok)
}

/// Binds, says where, and serves until Ctrl+C or SIGTERM.
async fn listen(
    bind: SocketAddr,
    allow_host: &[String],
    shared: Arc<Shared>,
) -> anyhow::Result<()> {
    let listener = TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on {bind} (--bind ADDR chooses another)"))?;
    let address = listener
        .local_addr()
        .context("cannot read the bound address")?;
    crate::output::print(&format!("playground at http://{address}/\n"))?;
    if !address.ip().is_loopback() {
        eprintln!(
            "subsim: warning: listening on {address}, which other machines can reach: anyone \
             who can reach it can run scenarios here (--bind 127.0.0.1:8080 keeps it on this \
             machine)"
        );
    }
    let policy = policy::Policy::new(address, allow_host);
    let app = api::router(shared.clone(), policy);
    let connections = Arc::new(Semaphore::new(shared.budgets.max_connections));
    let timeout = shared.budgets.client_timeout;
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        let (socket, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors and the like: wait a little, keep serving.
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            drop(socket);
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(timeout)
                .serve_connection(
                    TokioIo::new(connection::Deadline::new(socket, timeout)),
                    service,
                )
                .await;
            drop(permit);
        });
    }
    eprintln!("subsim: stopped serving");
    Ok(())
}

/// Resolves on Ctrl+C or SIGTERM.
async fn stop_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
