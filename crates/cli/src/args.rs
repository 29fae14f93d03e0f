//! The command line, as clap derive types: what the user can type, with help text.
//!
//! Parsing only (and the little `--at` time syntax); what the commands do is in `run.rs`,
//! `check.rs`, `panel.rs`, `rules_cmd.rs`, `explain.rs`, `diff.rs` and `tools_cmd.rs`.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use subsim_engine::SimTime;
use subsim_rules::Version;

/// Simulates how Claude Code schedules its subagents, deterministically, in virtual time.
#[derive(Debug, Parser)]
#[command(name = "subsim", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// How subsim's own log lines (to stderr, filtered by `RUST_LOG`) are written: `text`
    /// for people, `json` one object a line, for log tools.
    #[arg(long, global = true, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario (or the built-in demo) and show what happened.
    Run(RunArgs),
    /// Run scenario files and check their `expect:` blocks; folders are searched for
    /// *.yaml and *.yml.
    Check(CheckArgs),
    /// Parse and validate scenario files without running them; folders are searched for
    /// *.yaml and *.yml.
    Validate(ValidateArgs),
    /// Run a scenario under every ordering of its same-instant ties and check `expect:`
    /// under each.
    ///
    /// Wakes due at the same virtual instant that could affect each other (Agent calls,
    /// finishes, prompts and answers, the person's actions, …) are run in every order, up
    /// to --max-orderings runs; wakes that touch only their own run (a step that starts
    /// `work`) or do nothing are not permuted. Prints each distinct outcome and, for every
    /// ordering where an expectation fails, the `subsim run FILE --order …` that replays
    /// it, then "N orderings, K distinct outcomes". Exit 0 when every ordering meets
    /// `expect:`, 1 when some do not, 2 on bad input.
    Explore(ExploreArgs),
    /// Show the subagent panel and the /tasks list at one instant of a scenario's run.
    ///
    /// The scenario runs in virtual time up to and including --at, then stops; the panel
    /// and /tasks are shown the way a person would see them then. Scenarios with a `load:`
    /// block, and headless or SDK sessions, keep no panel and are refused (exit 2).
    Panel(PanelArgs),
    /// List every rule of the catalog: status, version gates, demonstrating scenarios.
    ///
    /// The list is docs/rules.md as it was when this binary was built (it is embedded, so
    /// this works without the repository); the version gates are those of `Gates`, each
    /// listed under the rules it serves.
    Rules(RulesArgs),
    /// Explain a rule, an open question or a discrepancy, or find them by words.
    ///
    /// A rule ID (CAP-1): its summary, status, the reasons the narration gives for it,
    /// version gates and scenarios, then a narrated run of its canonical scenario (the
    /// first its row of docs/rules.md links). An open question: the question and the
    /// answer subsim adopted, then its scenario. A discrepancy (D-9): what subsim does.
    /// Words (`resume`, `"depth limit"`): every rule, question and discrepancy whose text
    /// holds them all, one line each. Built in, so this works without the repository.
    /// Exit 0 when something matched, 2 when nothing did.
    Explain(ExplainArgs),
    /// Run a scenario under two Claude Code versions and show what changes.
    ///
    /// Runs the scenario with `session.version` set to --from, then to --to, and prints the
    /// version gates that differ (with their rules), the session settings that differ, the
    /// first event where the two traces part (narrated, with a few events of context and
    /// the fields that differ) and the kinds of event whose counts differ. The file is
    /// loaded once: agent definitions are read under its own `session.version`. Identical
    /// runs are reported as such (exit 0).
    Diff(DiffArgs),
    /// Show, step by step, how a subagent's tool set is resolved.
    ///
    /// Prints the base pool, what filter 1 removed, what `disallowedTools` and `tools` did,
    /// what filter 2 (background only) removed and what was attached whatever the fields
    /// say, each step citing its rule. The definition is an agent of a scenario (--file
    /// with --agent; built-in types such as general-purpose or Explore work too) or a
    /// standalone agent Markdown file with YAML frontmatter (--definition). The session
    /// (version, tools, MCP servers, permission mode, env) is the scenario's, or
    /// --session's; with neither, the default session of the newest version. Without a
    /// mode flag the subagent is placed where an Agent-tool spawn from main that does not
    /// need the result would run (FGBG-1).
    Tools(ToolsArgs),
    /// Write one self-contained HTML page of a run: the timeline, the running count and
    /// the cap, a time scrubber showing the subagent panel and /tasks at each instant, and
    /// the narration beside it, linked both ways. No network is needed to view it.
    Report(ReportArgs),
    /// Erlang B and C for a cap and an offered load, or the smallest cap for a blocking
    /// target: queueing theory beside the simulator.
    ///
    /// The load is in Erlangs: arrival rate × mean run time (20 arrivals/s of 1 s runs = 20).
    /// Erlang B is the share of arrivals a cap rejects with `retry: none`; Erlang C the share
    /// that waits with `retry: queue`, and the mean wait is in mean run times. Both assume
    /// Poisson arrivals and exponential run times.
    Erlang(ErlangArgs),
    /// Turn a Claude Code session transcript into a scenario that replays it.
    ///
    /// SESSION is a main session file (`~/.claude/projects/<project>/<session-id>.jsonl`);
    /// its subagent transcripts are read from beside it (`agent-<id>.jsonl` in 2.0.x,
    /// `<session-id>/subagents/agent-<id>.jsonl` in 2.1.x). The scenario replays every
    /// Agent call at its measured time, each subagent's tool calls with their measured
    /// durations, and carries what the session showed as its `expect:` block, so
    /// `subsim check` says whether the model reproduces it. Prompts, results and file
    /// contents are not copied, and e-mail addresses and secrets are masked, unless
    /// --keep-text is given. Exit 0 when a scenario was written, 2 when SESSION is not a
    /// transcript.
    Import(ImportArgs),
    /// Run a load scenario over a grid of `--set` values × seeds, in parallel, into one
    /// table (CSV, JSON) or chart (SVG).
    ///
    /// Each --set PATH=VALUES takes a list `V1,V2,…` or a range `A..B[:STEP]`; several
    /// --set form their cross product (the first varies slowest). Every point runs --seeds
    /// times, each with a seed derived from the base seed, the point and the replica, so
    /// the output is byte-identical for any --jobs. CSV: one column per --set path, then
    /// `replica`, `seed` and the statistics; one row per point and replica, then one row
    /// per point with `replica` = `all` (means over the replicas, the interval over them).
    /// `--shard I/N` runs every N-th point (points I, I+N, …) into a shard file that
    /// `subsim merge` joins.
    Sweep(SweepArgs),
    /// The smallest cap (or other value) whose figure meets a target, with seeds added only
    /// where they are needed until the pick is settled.
    ///
    /// Every value of --values runs 4 seeds; after each round every value's figure gets a
    /// Student-t interval over its seeds (95 % shared by the rounds the --max-seeds
    /// schedule allows, Bonferroni), and only the values in doubt that decide the pick get
    /// more seeds (4, 8, 16, …). Settled: the pick's interval lies under the bound and the
    /// next smaller value's at or above it. Prints one sentence and a table (or JSON, or a
    /// chart); the same for any --jobs. Exit 0 when settled, 1 when not (or when no value
    /// meets the target), 2 on bad input, 3 when a run hit a safety limit.
    Capacity(CapacityArgs),
    /// Join the shard files of `subsim sweep --shard I/N` into exactly the output of the
    /// same sweep on one machine.
    Merge(MergeArgs),
    /// Serve the playground: a web page to edit a scenario, change a setting and watch the
    /// run play out, and its API (docs/playground.md).
    ///
    /// Prints `playground at http://ADDR/` first, then serves until Ctrl+C or SIGTERM.
    /// Scenarios posted to it are untrusted: they read no file of this machine, and every
    /// run is held to the limits below (tighter than `run`'s).
    Serve(ServeArgs),
}

/// `subsim serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on; anything but a loopback address is warned about.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub bind: std::net::SocketAddr,
    /// Another host name the server answers to (with the bound port, or `NAME:PORT`);
    /// repeat for more. Without it, only the bound address, `localhost`, `127.0.0.1` and
    /// `[::1]` are answered: a web page under any other name is refused (421), and a POST
    /// from any other origin too (403).
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Most runs (and checks) at once (default: twice the CPUs); past it requests wait in
    /// a queue.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_runs: Option<u64>,
    /// Most requests waiting for a run, each for at most --client-timeout; past it (or
    /// after the wait) the answer is 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(0..=65536))]
    pub queue: u64,
    /// Most connections at once; past it new ones are closed.
    #[arg(long, value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub max_connections: u64,
    /// Seconds a client may take to send its request, or leave a run's stream unread,
    /// before it is dropped.
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub client_timeout: u64,
    /// Seconds a run played at a speed (not "instant") may take; slower speeds are
    /// refused (400), and a run whose next event would play later stops with `limit`.
    #[arg(long, value_name = "SECONDS", default_value_t = 600,
          value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    pub max_run_time: u64,
    /// Bytes all request bodies being read may hold together (default 64 MiB; at least
    /// 1 MiB, one body's most); past it a body waits for room, then gets 503.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1_048_576..=1 << 40))]
    pub body_memory: u64,
    /// Most trace events of one run (`session.limits.max_events` may only lower it).
    #[arg(long, value_name = "N", default_value_t = 200_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: u64,
    /// Most agents one run creates (also bounds those running and held at once).
    #[arg(long, value_name = "N", default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_agents: u64,
    /// Most steps of one run (also bounds steps at one instant and without an event).
    #[arg(long, value_name = "N", default_value_t = 2_000_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: u64,
}

/// `subsim sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The scenario file (with a `load` block).
    pub file: PathBuf,
    /// `PATH=V1,V2,…` or `PATH=A..B[:STEP]` (repeatable: the cross product).
    #[arg(
        long = "set",
        value_name = "PATH=VALUES",
        required_unless_present = "cap"
    )]
    pub set: Vec<String>,
    /// The concurrency caps to sweep, `V1,V2,…` or `A..B[:STEP]`: short for
    /// `--set session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=VALUES` as the first axis
    /// (a chart's x axis; `--vary cap` searches along it).
    #[arg(long, value_name = "VALUES")]
    pub cap: Option<String>,
    /// Replicas of every point.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seeds: u64,
    /// Base seed (default: the scenario's `session.seed`).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Runs in parallel (default: the number of CPUs).
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u64).range(1..1025))]
    pub jobs: Option<u64>,
    /// Run only shard I of N (1 ≤ I ≤ N): points I, I+N, I+2N, … (1-based).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SweepFormat::Csv)]
    pub format: SweepFormat,
    /// Find the smallest --vary value whose aggregated statistic is below a bound, e.g.
    /// 'blocking<0.01' (its whole 95 % interval must be below it); printed to stderr.
    #[arg(long, value_name = "METRIC<BOUND", requires = "vary")]
    pub target: Option<String>,
    /// The --set path --target searches along (`cap` for the --cap values).
    #[arg(long, value_name = "PATH", requires = "target")]
    pub vary: Option<String>,
    /// The most runs (points × --seeds) the sweep may make: the sweep runs budget.
    #[arg(long, value_name = "N", default_value_t = crate::budgets::SWEEP_RUNS.limit)]
    pub max_runs: u64,
    /// No progress bar (it is drawn on stderr only when stderr is a terminal).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Folders outside the scenario's own that its `file:` and `agent_dirs` may read.
    #[command(flatten)]
    pub access: Access,
}

/// `subsim capacity`.
#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// The scenario file (with a `load` block).
    pub file: PathBuf,
    /// The figure and its bound, e.g. 'blocking<0.01' or 'wait_p95<30' (seconds).
    #[arg(long, value_name = "FIGURE<BOUND")]
    pub target: String,
    /// The path to vary: `cap` (the concurrency cap) or any scenario path.
    #[arg(long, value_name = "PATH", default_value = "cap")]
    pub vary: String,
    /// The values to try, `V1,V2,…` or `A..B[:STEP]` (default, for a blocking target on
    /// the cap of Poisson arrivals with one `work` step: Erlang B's answer ± 5).
    #[arg(long, value_name = "VALUES")]
    pub values: Option<String>,
    /// The most runs in all (a look that would pass it is not started).
    #[arg(long, value_name = "N", default_value_t = 2_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_runs: u64,
    /// The most wall time (`30s`, `5m`): no look starts after it. The answer then depends
    /// on the machine's speed (the sentence says how many seeds it had).
    #[arg(long, value_name = "DURATION", value_parser = crate::capacity::parse_budget_time)]
    pub max_time: Option<std::time::Duration>,
    /// The most seeds of one value: the last look (the looks are 4, 8, 16, … seeds).
    #[arg(long, value_name = "N", default_value_t = 128,
          value_parser = clap::value_parser!(u64).range(2..=100_000))]
    pub max_seeds: u64,
    /// Runs in parallel (default: the number of CPUs); the answer is the same for any.
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u64).range(1..1025))]
    pub jobs: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CapacityFormat::Text)]
    pub format: CapacityFormat,
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// No progress bar (it is drawn on stderr only when stderr is a terminal).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// How the scenario is read: `--set` (fixed values), `--seed` (the base seed),
    /// `--allow-path`; `--cap` only when another path is varied.
    #[command(flatten)]
    pub source: Source,
}

/// Output formats of `subsim capacity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CapacityFormat {
    /// One sentence and a table.
    Text,
    /// One JSON object: the pick, whether it is settled, every value's interval.
    Json,
    /// The chart of the values tried, the target and the pick.
    Svg,
}

/// `subsim merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard files, in any order.
    #[arg(required = true, value_name = "SHARD_FILE")]
    pub shards: Vec<PathBuf>,
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SweepFormat::Csv)]
    pub format: SweepFormat,
    /// The most rows (and shards) the merged sweep may have: the sweep runs budget.
    #[arg(long, value_name = "N", default_value_t = crate::budgets::SWEEP_RUNS.limit)]
    pub max_runs: u64,
    /// The most bytes read from one shard file: the shard file bytes budget.
    #[arg(long, value_name = "N", default_value_t = crate::budgets::SHARD_FILE_BYTES.limit)]
    pub max_input_bytes: u64,
}

/// Output formats of `subsim sweep` and `merge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SweepFormat {
    /// Comma-separated values with a header line.
    Csv,
    /// `{"columns": [...], "rows": [{...}, ...]}`.
    Json,
    /// A chart of blocking (or, for retry policies, the mean wait) against the first
    /// swept value, with interval bars and the analytic curve.
    Svg,
}

/// `subsim erlang`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("what").required(true).args(["cap", "target", "target_wait"])))]
#[command(group(ArgGroup::new("offered").required(true).args(["load", "rate"])))]
pub struct ErlangArgs {
    /// Number of slots.
    #[arg(long, value_name = "C")]
    pub cap: Option<u32>,
    /// Offered load in Erlangs (arrival rate × mean run time); or give --rate and --mean.
    #[arg(long, value_name = "A", conflicts_with = "rate")]
    pub load: Option<f64>,
    /// Arrival rate: `3/s`, `180/m`, `5/h` (with --mean; the load is rate × mean).
    #[arg(long, value_name = "RATE", requires = "mean", value_parser = crate::erlang_cmd::parse_rate)]
    pub rate: Option<f64>,
    /// Mean run time: `10s`, `1m30s`, `250ms` (with --rate, or with --load to give waits in
    /// seconds).
    #[arg(long, value_name = "DURATION", value_parser = parse_at)]
    pub mean: Option<SimTime>,
    /// Instead of --cap: print the smallest cap whose Erlang B blocking is at most B.
    #[arg(long, value_name = "B")]
    pub target: Option<f64>,
    /// Instead of --cap: print the smallest cap whose Erlang C wait (--wait-figure: the mean
    /// or the p95 over all arrivals) is under this bound: a duration (`2s`) with --mean, or
    /// a bare number of mean run times.
    #[arg(long, value_name = "WAIT")]
    pub target_wait: Option<String>,
    /// Which wait --target-wait bounds.
    #[arg(long, value_enum, default_value_t = WaitFigure::Mean, requires = "target_wait")]
    pub wait_figure: WaitFigure,
    /// `text`, or `json` with the keys cap, load, erlang_b, erlang_c,
    /// mean_wait_holding_times and wait_p95_holding_times (null when the queue is unstable),
    /// and with --mean also mean_run_s, mean_wait_s and wait_p95_s.
    #[arg(long, value_enum, default_value_t = ErlangFormat::Text)]
    pub format: ErlangFormat,
}

/// The wait `erlang --target-wait` bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WaitFigure {
    /// The mean wait of all arrivals.
    Mean,
    /// The 95th percentile of the wait of all arrivals.
    P95,
}

/// Output formats of `subsim erlang`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ErlangFormat {
    /// Aligned lines for people.
    Text,
    /// One JSON object.
    Json,
}

/// `subsim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file; without it, a built-in demo runs.
    pub file: Option<PathBuf>,
    /// How the scenario is read: `--set`, `--cap`, `--seed`, `--allow-path`.
    #[command(flatten)]
    pub source: Source,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write to this file (created or truncated) instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Play the computed events against the wall clock, SPEED times faster than virtual
    /// time (1 = real time).
    #[arg(long, value_name = "SPEED", value_parser = parse_speed)]
    pub realtime: Option<f64>,
    /// Print the scenario's name and description before the run (to stderr unless the
    /// format is text).
    #[arg(long)]
    pub explain: bool,
    /// Replay an ordering of same-instant ties as `subsim explore` prints it: the choice
    /// at each tie point, comma-separated (`0,1,0`; 0 = scheduling order, the default;
    /// `0*500` for a run of one choice).
    #[arg(long, value_name = "CHOICES", value_parser = parse_order)]
    pub order: Option<Order>,
    /// Also run the scenario twice more and compare the hashes of the two traces; exit 1
    /// (with both hashes) when they differ.
    #[arg(long)]
    pub check_determinism: bool,
    /// How much the narration shows: `brief` (decisions, same-instant runs of identical
    /// lines grouped) or `full` (every event, panel rows, footer hints and report headers
    /// included).
    #[arg(long, value_enum, default_value_t = DetailArg::Brief)]
    pub detail: DetailArg,
    /// Narrate only this agent (name or id, e.g. `planner` or `a3`) and what touches it.
    #[arg(long, value_name = "NAME")]
    pub follow: Option<String>,
    /// With `--format jsonl`: leave out an `agent_started` list (`tools`, `context`,
    /// `mcp_servers`) that is the same as in the previous line that has it; the first line
    /// gets `"compact_lists":true`. Carry each list forward to restore the full form.
    #[arg(long)]
    pub compact: bool,
    /// With `--format chrome`: the most runs drawn one by one (the view rows budget); the
    /// rest are counted in the file's metadata (`runs_not_drawn`).
    #[arg(long, value_name = "N", default_value_t = crate::budgets::VIEW_ROWS.limit)]
    pub max_rows: u64,
}

/// The scenario-source group (issue #32): how every command that runs or reads a scenario
/// reads it — `run`, `report`, `check`, `explore`, `panel`, `diff` ([`Source`]), and
/// `validate` and `tools`, which run nothing and so take no seed ([`Edit`]). The path is
/// each command's own (one, one or the demo, or many files and folders); `--set` and
/// `--cap` apply to every file read, before it is validated, and `--seed` replaces its
/// `session.seed`, the same way in every command. (`sweep` takes `--set` and `--cap` as
/// lists of values to sweep, each value meaning what it means here.)
#[derive(Clone, Debug, Default, Args)]
pub struct Source {
    /// `--set`, `--cap` and `--allow-path`.
    #[command(flatten)]
    pub edit: Edit,
    /// Seed of every random stream (replaces the scenario's `session.seed`).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

/// What changes a scenario as it is read: [`Source`] without the seed.
#[derive(Clone, Debug, Default, Args)]
pub struct Edit {
    /// Override one value of the scenario before it is validated: a dotted key path and a
    /// YAML value, e.g. `--set load.arrivals='poisson(30/s)'` (repeatable, applied in order).
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_override)]
    pub set: Vec<subsim_scenario::Override>,
    /// The concurrency cap: short for
    /// `--set session.env.CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=N` (applied after --set).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cap: Option<u32>,
    /// Folders outside the scenario's own that its `file:` and `agent_dirs` may read.
    #[command(flatten)]
    pub access: Access,
}

impl Edit {
    /// `--set` values, then `--cap`.
    pub fn overrides(&self) -> Vec<subsim_scenario::Override> {
        let mut overrides = self.set.clone();
        overrides.extend(self.cap.map(subsim_scenario::Override::cap));
        overrides
    }

    /// The overrides as typed again (`--set PATH=VALUE`, `--cap N`), for reports; empty
    /// when there are none.
    pub fn shown(&self) -> Vec<String> {
        // An override shows itself as `--set PATH=VALUE`.
        let mut shown: Vec<String> = self.set.iter().map(ToString::to_string).collect();
        shown.extend(self.cap.map(|cap| format!("--cap {cap}")));
        shown
    }
}

impl Source {
    /// `--set` values, then `--cap`.
    pub fn overrides(&self) -> Vec<subsim_scenario::Override> {
        self.edit.overrides()
    }

    /// The overrides and the seed as typed again, for reports and replay commands.
    pub fn shown(&self) -> Vec<String> {
        let mut shown = self.edit.shown();
        shown.extend(self.seed.map(|seed| format!("--seed {seed}")));
        shown
    }

    /// The `--allow-path` folders.
    pub fn access(&self) -> &Access {
        &self.edit.access
    }
}

/// `PATH=VALUE` of `--set`.
pub fn parse_override(text: &str) -> Result<subsim_scenario::Override, String> {
    subsim_scenario::Override::parse(text)
}

/// `--detail` of `subsim run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DetailArg {
    /// Decisions with their reasons; bookkeeping hidden; identical lines grouped.
    Brief,
    /// Every event.
    Full,
}

/// Output formats of `subsim run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One plain-English line per event.
    Text,
    /// The trace as JSON Lines: one object per event.
    Jsonl,
    /// A table of statistics.
    Summary,
    /// The statistics as one JSON object.
    Json,
    /// A timeline in the terminal: one row per run, the running count and the cap.
    Gantt,
    /// Chrome Trace Event JSON, for ui.perfetto.dev or chrome://tracing.
    Chrome,
    /// One CSV row per run: id, name, type, parent, depth, requested, started, finished,
    /// outcome, wait, mode (times in seconds).
    Csv,
    /// The run model as one JSON object: the end and what set it, the counts, each run's
    /// stretches and the decision order (what every view draws).
    Model,
}

/// `subsim report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The scenario file; without it, the built-in demo.
    pub file: Option<PathBuf>,
    /// The HTML file to write (created or truncated); a path ending in `.svg` gets only
    /// the picture (the timeline and the running strip).
    #[arg(long, short = 'o', value_name = "FILE.html")]
    pub out: PathBuf,
    /// How the scenario is read: `--set`, `--cap`, `--seed`, `--allow-path`.
    #[command(flatten)]
    pub source: Source,
}

/// `subsim check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files or folders (searched for *.yaml and *.yml at any depth).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How each file is read: `--set`, `--cap` and `--seed` apply to every file, and the
    /// report says so.
    #[command(flatten)]
    pub source: Source,
    /// Check only the scenarios whose name or path contains TEXT (any case).
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Run each scenario under N seeds: its own `session.seed` (or --seed), then the next N-1
    /// (seed+1, seed+2, …); a scenario passes when every seed passes.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub seeds: u64,
    /// Check J files at a time; the report keeps the file order.
    #[arg(long, value_name = "J", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: u32,
    /// Start no new file after the first failure (files already started are reported).
    #[arg(long)]
    pub fail_fast: bool,
    /// No progress bar (drawn on stderr over many files, only when stderr is a terminal).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Also write a JUnit XML report to FILE (one test case per scenario file).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// `text` for people; `json` for tools (one JSON object on stdout; the closing
    /// "N passed, N failed" line goes to stderr).
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
}

/// Output formats of `subsim check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// `ok` / `FAIL` per file with the evidence, then "N passed, N failed".
    Text,
    /// One JSON object: every file, its seeds and failures, and the totals.
    Json,
}

/// `subsim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Scenario files or folders (searched for *.yaml and *.yml at any depth).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How the scenario is read: `--set`, `--cap`, `--allow-path`.
    #[command(flatten)]
    pub edit: Edit,
}

/// `subsim explore`.
#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Run at most N orderings.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_orderings: u64,
    /// How the scenario is read: `--set`, `--cap`, `--seed`, `--allow-path`.
    #[command(flatten)]
    pub source: Source,
}

/// `--order`: the choice at each tie point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order(pub Vec<usize>);

fn parse_order(text: &str) -> Result<Order, String> {
    subsim_engine::explore::parse_order(text).map(Order)
}

/// `subsim panel`.
#[derive(Debug, Args)]
pub struct PanelArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// The instant to look at, in virtual time: `45s`, `1m30s`, `1.5s`, `250ms`, `2h`, a
    /// bare number of seconds, or the narration's clock (`00:01:30.000`).
    #[arg(long, value_name = "TIME", value_parser = parse_at)]
    pub at: SimTime,
    /// How the scenario is read: `--set`, `--cap`, `--seed`, `--allow-path`.
    #[command(flatten)]
    pub source: Source,
}

/// `subsim rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// `text` for people; `tsv` for tools: a header line, then one line per rule with
    /// the columns id, status, scenarios (space-separated), gates (comma-separated) and
    /// summary.
    #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
    pub format: RulesFormat,
}

/// Output formats of `subsim rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    /// Grouped by area, for reading.
    Text,
    /// Tab-separated values, one rule per line.
    Tsv,
}

/// `subsim explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rule ID (CAP-1, any case), an open question, a discrepancy (D-9), or words
    /// to search for (`resume`, `"depth limit"`).
    /// With `--end`, the scenario file (`demo` for the built-in demo).
    #[arg(value_name = "RULE-ID|Q-ID|D-ID|WORDS")]
    pub rule: String,
    /// Seed of every random stream (overrides the scenario's `session.seed`).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Why the run of the scenario FILE ended when it did: the chain of decisions and waits
    /// that set its end (`subsim explain --end FILE`), each with its rule.
    #[arg(long)]
    pub end: bool,
    /// With `--end`: `--set`, `--cap` and `--allow-path`, as `run` takes them.
    #[command(flatten)]
    pub edit: Edit,
}

/// `subsim diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// The first version, e.g. 2.1.185.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub from: Version,
    /// The second version, e.g. 2.1.292.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub to: Version,
    /// How the scenario is read: `--set`, `--cap`, `--seed`, `--allow-path`.
    #[command(flatten)]
    pub source: Source,
}

/// `subsim tools`.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("source").required(true).args(["file", "definition"])),
    group(ArgGroup::new("mode").args(["background", "foreground", "compare"])),
)]
pub struct ToolsArgs {
    /// A scenario file whose agent definition to resolve (name it with --agent).
    #[arg(long, value_name = "SCENARIO")]
    pub file: Option<PathBuf>,
    /// The agent type: a key of the scenario's `agents:` or a built-in type.
    #[arg(long, value_name = "NAME", requires = "file")]
    pub agent: Option<String>,
    /// A standalone agent definition file (Markdown with YAML frontmatter).
    #[arg(long, value_name = "PATH.md", conflicts_with = "agent")]
    pub definition: Option<PathBuf>,
    /// A scenario whose session to use instead (version, tools, MCP, permission mode, env).
    #[arg(long, value_name = "SCENARIO")]
    pub session: Option<PathBuf>,
    /// Resolve for a background run (filter 2 applies).
    #[arg(long)]
    pub background: bool,
    /// Resolve for a foreground run.
    #[arg(long)]
    pub foreground: bool,
    /// Resolve both and show them side by side, with the tools that differ.
    #[arg(long)]
    pub compare: bool,
    /// The subagent's depth: 1 for one launched by main.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: u32,
    /// How the scenario is read: `--set`, `--cap`, `--allow-path`.
    #[command(flatten)]
    pub edit: Edit,
}

fn parse_version(text: &str) -> Result<Version, String> {
    text.parse::<Version>().map_err(|error| error.to_string())
}

/// `--allow-path DIR`, on every command that reads a scenario.
///
/// A scenario is untrusted input: its `file:` and `agent_dirs` paths resolve inside the
/// scenario file's folder, and anything else — an absolute path, `..` that leaves the
/// folder, a symbolic link that leads out, the user scope's `~/.claude/agents` — is refused
/// unless it lies in a folder allowed here.
#[derive(Clone, Debug, Default, Args)]
pub struct Access {
    /// Let the scenario's `file:` and `agent_dirs` read inside DIR too (repeatable).
    #[arg(long = "allow-path", value_name = "DIR")]
    pub allow_path: Vec<PathBuf>,
}

impl Access {
    /// The load options these flags give (`regular_file_only` off: a scenario named on the
    /// command line may be a pipe).
    pub fn options(&self) -> subsim_scenario::Options {
        subsim_scenario::Options {
            allowed: self.allow_path.clone(),
            regular_file_only: false,
        }
    }
}

/// What `--at` accepts, for error messages.
const AT_FORMS: &str = "write a time as `45s`, `1m30s`, `1.5s`, `250ms`, `2h`, a bare number \
                        of seconds, or a clock time such as `00:01:30.000`";

/// Parses a virtual instant: unit-suffixed parts (`1m30s`, each unit once, largest
/// first), a bare number of seconds, or a clock time (`HH:MM:SS.mmm`, `MM:SS`; minutes and
/// seconds below 60 where a larger part stands before them). What is wrong is said with a
/// fix.
pub fn parse_at(text: &str) -> Result<SimTime, String> {
    let trimmed = text.trim();
    let micros = if trimmed.contains(':') {
        clock(trimmed)
    } else {
        units(trimmed)
    };
    match micros {
        Ok(micros) => Ok(SimTime(micros)),
        Err(None) => Err(format!("`{trimmed}` is not a time: {AT_FORMS}")),
        Err(Some(why)) => Err(format!("`{trimmed}` is not a time: {why}")),
    }
}

/// A time that does not parse: `None` when it is not a time at all, or what is wrong.
type AtResult = Result<u64, Option<String>>;

/// Microseconds of a plain decimal number of `scale`-microsecond units.
fn scaled(number: &str, scale: u64) -> Option<u64> {
    let valid = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.chars().filter(|c| *c == '.').count() <= 1
        && number.chars().any(|c| c.is_ascii_digit());
    if !valid {
        return None;
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut micros = whole.checked_mul(scale)?;
    // The fraction digit by digit, so that `1.5s` is exactly 1 500 000 µs.
    let mut unit = scale;
    for digit in fraction.chars() {
        unit /= 10;
        micros = micros.checked_add(u64::from(digit.to_digit(10)?) * unit)?;
    }
    Some(micros)
}

fn units(text: &str) -> AtResult {
    if let Some(micros) = scaled(text, 1_000_000) {
        return Ok(micros);
    }
    // Longest suffix first, so that `ms` is not read as `m` then `s`; the rank orders units
    // from the largest (0) to the smallest.
    const UNITS: [(&str, u64, u8); 6] = [
        ("ms", 1_000, 3),
        ("us", 1, 4),
        ("µs", 1, 4),
        ("h", 3_600_000_000, 0),
        ("m", 60_000_000, 1),
        ("s", 1_000_000, 2),
    ];
    let mut rest = text;
    let mut total: u64 = 0;
    let mut previous: Option<(&str, u8)> = None;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        let (unit, scale, rank) = UNITS
            .iter()
            .find(|(unit, _, _)| after.starts_with(unit))
            .ok_or(None)?;
        if let Some((before, before_rank)) = previous {
            if before_rank == *rank {
                return Err(Some(format!(
                    "it gives the unit `{unit}` twice; write each unit once, as in `1h30m`"
                )));
            }
            if before_rank > *rank {
                return Err(Some(format!(
                    "`{unit}` comes after the smaller unit `{before}`; write the largest unit \
                     first, as in `1h30m15s`"
                )));
            }
        }
        previous = Some((unit, *rank));
        total = total
            .checked_add(scaled(number, *scale).ok_or(None)?)
            .ok_or(None)?;
        rest = &after[unit.len()..];
    }
    if text.is_empty() {
        Err(None)
    } else {
        Ok(total)
    }
}

fn clock(text: &str) -> AtResult {
    let parts: Vec<&str> = text.split(':').collect();
    let (hours, minutes, seconds) = match parts.as_slice() {
        [minutes, seconds] => (None, *minutes, *seconds),
        [hours, minutes, seconds] => (Some(*hours), *minutes, *seconds),
        _ => return Err(None),
    };
    let whole = |part: &str| -> Option<u64> {
        (!part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
            .then(|| part.parse().ok())
            .flatten()
    };
    let hours = match hours {
        Some(hours) => whole(hours).ok_or(None)?,
        None => 0,
    };
    let minutes_value = whole(minutes).ok_or(None)?;
    let seconds_value = scaled(seconds, 1_000_000).ok_or(None)?;
    let total = hours
        .checked_mul(3_600_000_000)
        .and_then(|micros| micros.checked_add(minutes_value.checked_mul(60_000_000)?))
        .and_then(|micros| micros.checked_add(seconds_value))
        .ok_or(None)?;
    let minutes_too_many = parts.len() == 3 && minutes_value >= 60;
    if minutes_too_many || seconds_value >= 60_000_000 {
        let part = if minutes_too_many {
            "minutes"
        } else {
            "seconds"
        };
        return Err(Some(format!(
            "a clock time's {part} go up to 59; this one means `{}`",
            SimTime(total)
        )));
    }
    Ok(total)
}

fn parse_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(speed) if speed.is_finite() && speed > 0.0 => Ok(speed),
        _ => Err(format!(
            "`{text}` is not a speed: give a positive number such as 1, 10 or 0.5"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("10"), Ok(10.0));
        assert!(parse_speed("0").is_err());
        assert!(parse_speed("-1").is_err());
        assert!(parse_speed("inf").is_err());
        assert!(parse_speed("fast").is_err());
    }

    #[test]
    fn times() {
        let at = |text| parse_at(text).map(|time| time.as_micros());
        assert_eq!(at("45s"), Ok(45_000_000));
        assert_eq!(at("1m30s"), Ok(90_000_000));
        assert_eq!(at("1.5s"), Ok(1_500_000));
        assert_eq!(at("250ms"), Ok(250_000));
        assert_eq!(at("2h"), Ok(7_200_000_000));
        assert_eq!(at("90"), Ok(90_000_000));
        assert_eq!(at("00:01:30.000"), Ok(90_000_000));
        assert_eq!(at("1:30"), Ok(90_000_000));
        assert_eq!(at("0.000001s"), Ok(1));
        assert_eq!(at("1h30m15s250ms"), Ok(5_415_250_000));
        assert_eq!(at("90:00"), Ok(5_400_000_000));
        assert_eq!(at("00:59:59.999"), Ok(3_599_999_000));
        for bad in ["", "s", "45x", "-1s", "1..5s", "1:2:3:4", "a:30", "45 s"] {
            assert!(at(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn panel_at_rejects_out_of_range_clocks_and_repeated_or_misordered_units() {
        let error = |text| parse_at(text).expect_err(text);
        let clock = error("00:99:99.000");
        assert!(clock.contains("go up to 59"), "{clock}");
        assert!(clock.contains("`01:40:39.000`"), "{clock}");
        assert!(error("1:60").contains("seconds go up to 59"));
        assert!(error("1h1h").contains("the unit `h` twice"));
        assert!(error("1s1h").contains("write the largest unit first"));
        assert!(error("1ms1s").contains("largest unit first"));
        assert!(error("5us2µs").contains("twice"));
    }
}

/// `subsim import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The main session transcript (JSON Lines).
    pub session: PathBuf,
    /// Write the scenario to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Copy prompts, reports and Bash commands, and leave e-mail addresses and secrets
    /// unmasked.
    #[arg(long)]
    pub keep_text: bool,
    /// Run the scenario and print "N of M observed facts reproduced" with each mismatch
    /// (to stdout with --out; otherwise as comment lines after the scenario).
    #[arg(long)]
    pub report: bool,
}
