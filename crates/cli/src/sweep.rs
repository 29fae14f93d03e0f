//! `subsim sweep` and `subsim merge`: run one scenario over the cross product of `--set`
//! values × `--seeds` replicas, in parallel (rayon), into one table — CSV, JSON or an SVG
//! chart — byte-identical for any `--jobs`; split the points over machines with
//! `--shard I/N` and join the shard files again with `merge`.
//!
//! Every (point, replica) run parses the scenario itself on its worker thread (the engine
//! input is not `Send`), with its own seed derived from the base seed, the point's index
//! and the replica's, so no run depends on which thread ran it or on what ran before.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rayon::prelude::*;
use subsim_engine::budget::Budget;
use subsim_engine::dist::Dist;
use subsim_engine::erlang;
use subsim_engine::spec::{Arrivals, Retry, SimSpec, Step};
use subsim_engine::stats::{t_975, Estimate};
use subsim_engine::summary::{Summary, TypeReport};
use subsim_engine::Simulation;
use subsim_escape::csv;
use subsim_scenario::{read, Override};

use crate::args::{MergeArgs, SweepArgs, SweepFormat};
use crate::{budgets, output, run, Status};

/// The statistics columns, after the `--set` paths, `replica` and `seed`.
/// Appended columns never rename earlier ones: `wait_p50_lo` … `wait_p99_hi` (issue #33) are
/// the percentiles' intervals across replicas, empty on a replica's own row.
pub const STAT_COLUMNS: [&str; 34] = [
    "arrivals",
    "attempts",
    "blocking",
    "blocking_lo",
    "blocking_hi",
    "blocking_attempts",
    "delayed",
    "delayed_lo",
    "delayed_hi",
    "wait_mean",
    "wait_mean_lo",
    "wait_mean_hi",
    "wait_p50",
    "wait_p95",
    "wait_p99",
    "wait_max",
    "running",
    "running_lo",
    "running_hi",
    "utilisation",
    "utilisation_lo",
    "utilisation_hi",
    "throughput",
    "makespan",
    "erlang_b",
    "erlang_c",
    "erlang_wait",
    "wait_p50_lo",
    "wait_p50_hi",
    "wait_p95_lo",
    "wait_p95_hi",
    "wait_p99_lo",
    "wait_p99_hi",
    "offered_load",
];

/// First line of a shard file: `# subsim sweep shard I/N points P rows-per-point R
/// fingerprint F`, then the CSV.
const SHARD_MARK: &str = "# subsim sweep shard ";

/// The values of one `--set PATH=VALUES`.
#[derive(Clone, Debug)]
pub(crate) struct Axis {
    pub(crate) path: String,
    pub(crate) values: Vec<String>,
}

/// One statistic of one row: a number, or nothing (`erlang_b` where it does not apply).
pub(crate) type Cell = Option<f64>;

/// The sweep's table: header and rows of text cells (numbers already formatted).
pub(crate) struct Table {
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
}

pub fn sweep(mut args: SweepArgs) -> anyhow::Result<Status> {
    let runs = budgets::SWEEP_RUNS.with_limit(args.max_runs);
    let cap = args
        .cap
        .as_ref()
        .map(|values| format!("{}={values}", subsim_scenario::CAP_PATH));
    // The cap is the first axis (the slowest, and a chart's x axis).
    let axes = cap
        .iter()
        .chain(&args.set)
        .map(|text| parse_axis(text, &runs))
        .collect::<Result<Vec<_>, _>>()?;
    if cap.is_some() && args.vary.as_deref() == Some("cap") {
        args.vary = Some(subsim_scenario::CAP_PATH.to_string());
    }
    if args.seeds == 0 {
        anyhow::bail!("--seeds must be at least 1 (the replicas of each point)");
    }
    // Checked before anything is sized by it: the points, the tasks, the rows.
    let sizes: Vec<u64> = axes
        .iter()
        .map(|axis| axis.values.len() as u64)
        .chain([args.seeds])
        .collect();
    runs.check_product(
        "the sweep (the --set values' cross product × --seeds)",
        &sizes,
    )?;
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    if shard.is_some() && args.format != SweepFormat::Csv {
        anyhow::bail!(
            "a --shard is written as CSV (with a first line `merge` checks); merge the shards \
             with `subsim merge SHARD... --format {}`",
            format_name(args.format)
        );
    }
    if let Some(vary) = &args.vary {
        if !axes.iter().any(|axis| &axis.path == vary) {
            anyhow::bail!("--vary {vary} is not one of the --set paths; give `--set {vary}=…`");
        }
    }
    let target = args.target.as_deref().map(parse_target).transpose()?;
    if target.is_some() != args.vary.is_some() {
        anyhow::bail!(
            "--target and --vary go together: e.g. --target 'blocking<0.01' --vary {}",
            subsim_scenario::CAP_PATH
        );
    }
    // A chart's x axis is the first swept path: refused now if it cannot be drawn, not
    // after the whole sweep has run.
    if args.format == SweepFormat::Svg {
        if let Some(axis) = axes.first() {
            check_chart_axis(axis)?;
        }
    }
    let options = args.access.options();
    let source = run::read(&args.file, &options)?;
    let file_name = args.file.display().to_string();
    let base_dir = args.file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let points = cross(&axes);
    // Every point is validated before anything runs: a bad path or value is reported
    // with its fix, never as a partial table.
    let mut base_seed = None;
    let mut inputs = vec![args.file.clone()];
    for point in &points {
        let loaded = run::report(subsim_scenario::parse_scenario_under(
            &source, &file_name, &base_dir, point, &options,
        ))?;
        base_seed.get_or_insert(args.seed.unwrap_or(loaded.spec.session.seed));
        if let Some((metric, _)) = &target {
            if let Err(why) = target_possible(metric, &loaded.spec) {
                anyhow::bail!("--target at {}: {why}", describe_point(point));
            }
        }
        inputs.extend(loaded.read_files);
    }
    // Refused before the sweep runs, not after.
    if let Some(out) = &args.out {
        output::refuse_inputs(out, &inputs)?;
    }
    let base_seed = base_seed.unwrap_or(0);
    let seeds = args.seeds;
    let selected: Vec<usize> = (0..points.len())
        .filter(|index| shard.is_none_or(|(shard, of)| index % of == shard - 1))
        .collect();
    let tasks: Vec<(usize, u64)> = selected
        .iter()
        .flat_map(|point| (0..seeds).map(move |replica| (*point, replica)))
        .collect();
    let progress = progress_bar(tasks.len() as u64, args.quiet);
    // Under an address-space limit, as many workers as it leaves room for (at least one).
    // (`--jobs` is at most 1,024.)
    let wanted = args
        .jobs
        .map_or_else(default_jobs, |jobs| u32::try_from(jobs).unwrap_or(u32::MAX));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(budgets::worker_threads(wanted, 1) as usize)
        .build()
        .context("cannot start the worker threads")?;
    let results: Vec<anyhow::Result<Result<Vec<Cell>, String>>> = pool.install(|| {
        tasks
            .par_iter()
            .map(|&(point, replica)| {
                let seed = derive_seed(base_seed, point as u64, replica);
                let stats = run_point(
                    &source,
                    &file_name,
                    &base_dir,
                    &points[point],
                    &options,
                    seed,
                );
                if let Some(bar) = &progress {
                    bar.inc(1);
                }
                stats
            })
            .collect()
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut header: Vec<String> = axes.iter().map(|axis| axis.path.clone()).collect();
    header.push("replica".into());
    header.push("seed".into());
    header.extend(STAT_COLUMNS.iter().map(|name| name.to_string()));
    let mut rows = Vec::new();
    let mut results = results.into_iter();
    let mut limited = 0usize;
    for point in &selected {
        let values: Vec<String> = points[*point].iter().map(|set| set.value.clone()).collect();
        let mut replicas = Vec::new();
        for replica in 0..seeds {
            // A run a safety limit stopped keeps its row, empty, and is named; the rest of
            // the sweep is still written (exit 3).
            let stats = match results.next().expect("one result per task")? {
                Ok(stats) => stats,
                Err(limit) => {
                    limited += 1;
                    eprintln!(
                        "subsim: point {} replica {replica} (seed {}): {limit}; its row is left \
                         empty",
                        describe_point(&points[*point]),
                        derive_seed(base_seed, *point as u64, replica)
                    );
                    vec![None; STAT_COLUMNS.len()]
                }
            };
            let mut row = values.clone();
            row.push(replica.to_string());
            row.push(derive_seed(base_seed, *point as u64, replica).to_string());
            row.extend(stats.iter().map(|cell| number(*cell)));
            rows.push(row);
            replicas.push(stats);
        }
        let mut row = values;
        row.push("all".into());
        row.push(String::new());
        row.extend(aggregate(&replicas).iter().map(|cell| number(*cell)));
        rows.push(row);
    }
    let table = Table { header, rows };
    let mut target_met = true;
    let mut pick = None;
    if let (Some((metric, bound)), Some(vary)) = (&target, &args.vary) {
        let found = find_target(&table, &axes, vary, metric, *bound, seeds);
        eprint!("{}", found.text);
        target_met = found.met;
        // The chart marks the pick along its x axis (the first swept path).
        if axes.first().is_some_and(|axis| &axis.path == vary) {
            pick = found.pick;
        }
    }
    let text = match shard {
        Some((index, of)) => {
            let fingerprint = fingerprint(&source, &axes, seeds, base_seed);
            format!(
                "{SHARD_MARK}{index}/{of} points {} rows-per-point {} fingerprint {fingerprint:016x}\n{}",
                points.len(),
                seeds + 1,
                render_csv(&table)
            )
        }
        None => render(&table, args.format, target.as_ref(), pick)?,
    };
    write_out(args.out.as_deref(), &inputs, &text)?;
    if limited > 0 {
        eprintln!(
            "subsim: {limited} of {} stopped at a safety limit (named above); raise it \
             with --set session.limits.NAME=VALUE",
            crate::words::plural(tasks.len(), "run")
        );
        return Ok(Status::LimitHit);
    }
    // An unmet target is a failed expectation: exit 1 (the table is still written).
    Ok(if target_met {
        Status::Ok
    } else {
        Status::ExpectationsFailed
    })
}

/// A point as its overrides, `PATH=VALUE …`, for messages.
fn describe_point(point: &[Override]) -> String {
    let parts: Vec<String> = point
        .iter()
        .map(|set| format!("{}={}", set.path, set.value))
        .collect();
    parts.join(" ")
}

pub fn merge(args: MergeArgs) -> anyhow::Result<Status> {
    let bytes = budgets::SHARD_FILE_BYTES.with_limit(args.max_input_bytes);
    let mut shards = Vec::new();
    for path in &args.shards {
        let input = read::Input::from_arg(path);
        let text = read::read_bounded(input, &bytes, false)
            .with_context(|| format!("cannot read the shard file {}", input.shown()))?;
        shards.push((input.shown(), text));
    }
    let table = merge_shards(&shards, &budgets::SWEEP_RUNS.with_limit(args.max_runs))?;
    write_out(
        args.out.as_deref(),
        &args.shards,
        &render(&table, args.format, None, None)?,
    )?;
    Ok(Status::Ok)
}

/// One shard file, its first line read.
struct Shard<'t> {
    name: &'t str,
    index: usize,
    of: usize,
    points: usize,
    per_point: usize,
    fingerprint: &'t str,
    header: &'t str,
    /// Its rows, with their 1-based line numbers.
    rows: Vec<(usize, &'t str)>,
}

/// Joins shard files (name, text) into the table the unsharded sweep gives. Every count
/// the files give is checked against `runs` before it sizes anything, and every row is
/// checked (its cells, its replica, the line end), so a cut-off or edited shard is an
/// error at its line, never valid-looking output.
fn merge_shards(shards: &[(String, String)], runs: &Budget) -> anyhow::Result<Table> {
    let mut parsed: Vec<Shard<'_>> = Vec::new();
    for (name, text) in shards {
        parsed.push(read_shard(name, text, runs)?);
    }
    let Some(first) = parsed.first() else {
        anyhow::bail!("give the shard files to merge");
    };
    for shard in &parsed[1..] {
        if (
            shard.of,
            shard.points,
            shard.per_point,
            shard.fingerprint,
            shard.header,
        ) != (
            first.of,
            first.points,
            first.per_point,
            first.fingerprint,
            first.header,
        ) {
            anyhow::bail!(
                "{} and {} are shards of different sweeps (scenario, --set values, --seeds or \
                 seed differ); merge only the shards of one `subsim sweep` command",
                first.name,
                shard.name
            );
        }
    }
    let mut by_index: Vec<Option<&Shard<'_>>> = vec![None; first.of];
    for shard in &parsed {
        if let Some(other) = by_index[shard.index - 1] {
            anyhow::bail!(
                "{} and {} are both shard {}/{}; give each shard once",
                other.name,
                shard.name,
                shard.index,
                shard.of
            );
        }
        by_index[shard.index - 1] = Some(shard);
    }
    let missing: Vec<String> = by_index
        .iter()
        .enumerate()
        .filter(|(_, shard)| shard.is_none())
        .map(|(index, _)| format!("{}/{}", index + 1, first.of))
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "shard(s) {} missing: merge needs all {} shards of the sweep",
            missing.join(", "),
            first.of
        );
    }
    let header = split_csv(first.header);
    let replica = header.iter().position(|name| name == "replica");
    let mut rows = Vec::new();
    for point in 0..first.points {
        let shard = by_index[point % first.of].expect("every shard is present");
        let start = (point / first.of) * first.per_point;
        let block = &shard.rows[start..start + first.per_point];
        for (position, (line, row)) in block.iter().enumerate() {
            let cells = split_csv(row);
            let expected = if position + 1 == first.per_point {
                "all".to_string()
            } else {
                position.to_string()
            };
            if cells.len() != header.len() {
                anyhow::bail!(
                    "{}:{line}: the row has {} cells, the header {}: the file was cut off or \
                     edited; merge the files `sweep --shard` wrote",
                    shard.name,
                    cells.len(),
                    header.len()
                );
            }
            if let Some(found) = replica.map(|column| &cells[column]) {
                if *found != expected {
                    anyhow::bail!(
                        "{}:{line}: replica `{found}` where point {point}'s replica `{expected}` \
                         belongs: rows were removed, added or reordered; merge the files \
                         `sweep --shard` wrote",
                        shard.name
                    );
                }
            }
            rows.push(cells);
        }
    }
    Ok(Table { header, rows })
}

/// Reads one shard file: its first line, checked against `runs` before it sizes
/// anything, its header and rows, their count and the last line's end.
fn read_shard<'t>(name: &'t str, text: &'t str, runs: &Budget) -> anyhow::Result<Shard<'t>> {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let fields: Vec<&str> = first
        .strip_prefix(SHARD_MARK)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let shape = match fields.as_slice() {
        [shard, "points", points, "rows-per-point", per_point, "fingerprint", fingerprint] => {
            parse_shard(shard).ok().and_then(|(index, of)| {
                Some((
                    index,
                    of,
                    points.parse::<u64>().ok()?,
                    per_point.parse::<u64>().ok()?,
                    *fingerprint,
                ))
            })
        }
        _ => None,
    };
    let Some((index, of, points, per_point, fingerprint)) = shape else {
        anyhow::bail!(
            "{name}:1: not a shard of `subsim sweep --shard I/N` (its first line should \
             start with `{}`); give the files `sweep --shard` wrote",
            SHARD_MARK.trim()
        );
    };
    runs.check(format!("{name}:1: the shard count"), of as u64)?;
    let announced = runs.check_product(
        format!("{name}:1: the rows announced (points × rows-per-point)"),
        &[points, per_point],
    )?;
    if per_point < 2 {
        anyhow::bail!(
            "{name}:1: rows-per-point {per_point}: a sweep writes at least 2 (a replica and \
             the `all` row); give the files `sweep --shard` wrote"
        );
    }
    let (points, per_point) = (points as usize, per_point as usize);
    let header = lines.next().unwrap_or_default();
    let rows: Vec<(usize, &str)> = lines.enumerate().map(|(at, row)| (at + 3, row)).collect();
    // Points index, index + of, …: this shard's share of the announced rows.
    let share = (points + of - index) / of * per_point;
    if rows.len() != share {
        anyhow::bail!(
            "{name}: {} rows after the header, but its first line announces {share} (of \
             {announced} in the sweep): the file was cut off or rows were added; merge the \
             files `sweep --shard` wrote",
            rows.len()
        );
    }
    if !text.ends_with('\n') {
        anyhow::bail!(
            "{name}:{}: the last line has no line end: the file was cut off while it was \
             written; write the shard again",
            rows.last().map_or(2, |(line, _)| *line)
        );
    }
    Ok(Shard {
        name,
        index,
        of,
        points,
        per_point,
        fingerprint,
        header,
        rows,
    })
}

/// `PATH=V1,V2,…` or `PATH=A..B[:STEP]`; a range has at most `runs` values.
pub(crate) fn parse_axis(text: &str, runs: &Budget) -> anyhow::Result<Axis> {
    let set = Override::parse(text).map_err(anyhow::Error::msg)?;
    let value = set.value.trim();
    let values = if let Some((from, rest)) = value.split_once("..") {
        let (to, step) = match rest.split_once(':') {
            Some((to, step)) => (to, Some(step)),
            None => (rest, None),
        };
        range(from.trim(), to.trim(), step.map(str::trim), runs).map_err(|why| {
            anyhow::anyhow!(
                "--set {}={value}: {why}; a range is A..B or A..B:STEP, e.g. 16..32:2",
                set.path
            )
        })?
    } else {
        split_values(value)
    };
    if values.is_empty() || values.iter().any(|value| value.is_empty()) {
        anyhow::bail!(
            "--set {}={value}: give one or more values separated by commas, e.g. 16,20,24, or \
             a range 16..32:2",
            set.path
        );
    }
    Ok(Axis {
        path: set.path,
        values,
    })
}

/// Splits at commas outside parentheses and brackets (`poisson(20/s),every(1s)`).
fn split_values(text: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for ch in text.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            values.push(current.trim().to_string());
            current.clear();
        } else {
            current.push(ch);
        }
    }
    values.push(current.trim().to_string());
    values
}

fn range(from: &str, to: &str, step: Option<&str>, runs: &Budget) -> Result<Vec<String>, String> {
    let parse = |text: &str| {
        text.parse::<f64>()
            .ok()
            .filter(|value| value.is_finite())
            .ok_or_else(|| format!("`{text}` is not a number"))
    };
    let (a, b) = (parse(from)?, parse(to)?);
    let step_value = match step {
        Some(step) => parse(step)?,
        None => 1.0,
    };
    if step_value <= 0.0 {
        return Err("the step must be above 0".into());
    }
    if a > b {
        return Err(format!("the range is empty ({from} is above {to})"));
    }
    // Saturating: a range past u64 is over any budget.
    let count = (((b - a) / step_value + 1e-9).floor() as u64).saturating_add(1);
    runs.check("the range", count)
        .map_err(|over| over.to_string())?;
    // Whole numbers are counted exactly: through `f64` a value past 2^53 came out
    // rounded (`session.seed=18446744073709551615..18446744073709551615` ran seed
    // 18446744073709551616).
    let whole = |text: &str| text.parse::<i128>().ok();
    if let (Some(a), Some(b), Some(step)) = (whole(from), whole(to), whole(step.unwrap_or("1"))) {
        if a > b {
            return Err(format!("the range is empty ({from} is above {to})"));
        }
        let count = (b - a) / step + 1;
        runs.check("the range", u64::try_from(count).unwrap_or(u64::MAX))
            .map_err(|over| over.to_string())?;
        return Ok((0..count)
            .map(|index| (a + index * step).to_string())
            .collect());
    }
    Ok((0..count)
        .map(|index| {
            let value = a + index as f64 * step_value;
            trim(format!("{value:.9}"))
        })
        .collect())
}

/// The cross product of the axes' values, the first axis varying slowest; each point is
/// its overrides.
fn cross(axes: &[Axis]) -> Vec<Vec<Override>> {
    let mut points: Vec<Vec<Override>> = vec![Vec::new()];
    for axis in axes {
        points = points
            .into_iter()
            .flat_map(|point| {
                axis.values.iter().map(move |value| {
                    let mut next = point.clone();
                    next.push(Override {
                        path: axis.path.clone(),
                        value: value.clone(),
                    });
                    next
                })
            })
            .collect();
    }
    points
}

/// `I/N` with 1 ≤ I ≤ N.
fn parse_shard(text: &str) -> anyhow::Result<(usize, usize)> {
    let parsed = text.split_once('/').and_then(|(index, of)| {
        Some((
            index.trim().parse::<usize>().ok()?,
            of.trim().parse::<usize>().ok()?,
        ))
    });
    match parsed {
        Some((index, of)) if of >= 1 && (1..=of).contains(&index) => Ok((index, of)),
        _ => anyhow::bail!(
            "--shard {text}: give I/N with 1 ≤ I ≤ N, e.g. --shard 1/4 … --shard 4/4 (on \
             Kubernetes, I = JOB_COMPLETION_INDEX + 1)"
        ),
    }
}

/// The figures a target can name: the statistics columns without the interval ends and
/// the theory (a target is on what was measured).
pub(crate) fn target_figures() -> Vec<&'static str> {
    STAT_COLUMNS
        .iter()
        .copied()
        .filter(|name| {
            !name.ends_with("_lo")
                && !name.ends_with("_hi")
                && !name.starts_with("erlang_")
                && *name != "offered_load"
        })
        .collect()
}

/// `METRIC<BOUND` (also `<=`). What is wrong is located in the text (the figure, the
/// comparison or the bound) with a fix, and a misspelt figure gets a did-you-mean.
pub(crate) fn parse_target(text: &str) -> anyhow::Result<(String, f64)> {
    let example = "e.g. --target 'blocking<0.01' or --target 'wait_p95<30'";
    let Some((metric, rest)) = text.split_once('<') else {
        let why = if text.contains('>') {
            "a target is an upper bound: write METRIC<BOUND (`>` is not supported)"
        } else {
            "there is no `<`: write METRIC<BOUND"
        };
        anyhow::bail!("--target '{text}': {why}, {example}");
    };
    let metric = metric.trim();
    let bound_text = rest.strip_prefix('=').unwrap_or(rest).trim();
    let figures = target_figures();
    if !figures.contains(&metric) {
        let hint = match subsim_scenario::suggest(metric, &figures) {
            Some(known) if known != metric => format!(" (did you mean `{known}`?)"),
            _ => String::new(),
        };
        let what = if STAT_COLUMNS.contains(&metric) {
            "is not a figure a target can bound (interval ends and theory columns are not)"
        } else {
            "is not a figure"
        };
        anyhow::bail!(
            "--target '{text}': before the `<`, `{metric}` {what}{hint}; the figures are {};              {example}",
            figures.join(", ")
        );
    }
    match bound_text.parse::<f64>() {
        Ok(bound) if bound.is_finite() => Ok((metric.to_string(), bound)),
        // `NaN` and `inf` parse as numbers but no statistic is ever under them (`blocking<NaN`
        // exited 0 advising to widen the range).
        Ok(_) => anyhow::bail!(
            "--target '{text}': after `{metric}<`, the bound `{bound_text}` is not a finite \
             number; {example}"
        ),
        Err(_) => anyhow::bail!(
            "--target '{text}': after `{metric}<`, the bound `{bound_text}` is not a number; \
             {example}"
        ),
    }
}

/// Whether `spec` can produce the figure `metric` at all: waits need a retry policy that
/// waits (under `retry: none` a spawn that finds the cap full is refused, never queued,
/// so every wait is 0). Checked before anything runs; the error is the sentence why.
pub(crate) fn target_possible(metric: &str, spec: &SimSpec) -> Result<(), String> {
    let Some(load) = &spec.load else {
        return Err(
            "the scenario has no `load` block, so it has no load figures to \
                    bound; add one (docs/load-testing.md)"
                .to_string(),
        );
    };
    let waits = metric == "delayed" || metric.starts_with("wait_");
    let never_waits = load
        .streams
        .iter()
        .all(|stream| matches!(stream.retry, Retry::None));
    if waits && never_waits {
        return Err(format!(
            "`{metric}` is a wait, and under `retry: none` (CAP-2) a spawn that finds the \
             cap full is refused, never queued: nothing waits, so every value would meet \
             the target without telling anything; bound `blocking` instead, or make spawns \
             wait with --set load.retry=queue"
        ));
    }
    Ok(())
}

/// The seed of one run: SplitMix64 over the base seed, the point and the replica.
pub(crate) fn derive_seed(base: u64, point: u64, replica: u64) -> u64 {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    mix(mix(mix(base) ^ point) ^ replica)
}

pub(crate) fn default_jobs() -> u32 {
    std::thread::available_parallelism().map_or(1, |cores| {
        u32::try_from(usize::from(cores)).unwrap_or(u32::MAX)
    })
}

/// A progress bar on stderr, only when it is a terminal and `--quiet` is not given.
pub(crate) fn progress_bar(total: u64, quiet: bool) -> Option<indicatif::ProgressBar> {
    progress_bar_of(total, quiet, "runs")
}

/// [`progress_bar`] counting `what` (`runs`, `files`).
pub(crate) fn progress_bar_of(
    total: u64,
    quiet: bool,
    what: &str,
) -> Option<indicatif::ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "{{bar:40}} {{pos}}/{{len}} {what}, {{elapsed}} (eta {{eta}})"
    )) {
        bar.set_style(style);
    }
    Some(bar)
}

/// Runs one point once; its statistics in [`STAT_COLUMNS`] order, or the message of the
/// safety limit that stopped it.
pub(crate) fn run_point(
    source: &str,
    file_name: &str,
    base_dir: &Path,
    point: &[Override],
    options: &subsim_scenario::Options,
    seed: u64,
) -> anyhow::Result<Result<Vec<Cell>, String>> {
    let loaded = subsim_scenario::parse_scenario_under(source, file_name, base_dir, point, options)
        .map_err(|problems| anyhow::anyhow!("{problems}"))?;
    let model = Model::of(&loaded.spec);
    let mut summary = Summary::for_spec(&loaded.spec);
    let report =
        Simulation::new(loaded.spec)
            .with_seed(seed)
            .run_summarized(&mut summary, None, None);
    if let Some(limit) = &report.limit {
        return Ok(Err(crate::output::limit_message(limit, report.end)));
    }
    let Some(load) = summary.load_report() else {
        anyhow::bail!("the scenario has no `load` arrivals to measure (after its warm-up)");
    };
    let all: TypeReport = load.all;
    let estimate = |value: Estimate| [Some(value.mean), Some(value.lo), Some(value.hi)];
    let mut cells = vec![Some(all.arrivals as f64), Some(all.attempts as f64)];
    cells.extend(estimate(all.blocking));
    cells.push(Some(all.blocking_attempts));
    cells.extend(estimate(all.delayed));
    cells.extend(estimate(all.wait.mean));
    cells.extend([
        Some(all.wait.p50),
        Some(all.wait.p95),
        Some(all.wait.p99),
        Some(all.wait.max),
    ]);
    cells.extend(estimate(all.running));
    match all.utilisation {
        Some(utilisation) => cells.extend(estimate(utilisation)),
        None => cells.extend([None, None, None]),
    }
    cells.push(Some(load.throughput));
    cells.push(Some(summary.makespan().as_micros() as f64 / 1e6));
    cells.extend(model.theory(summary.cap()));
    // A percentile of one run has no interval of its own: its interval is across
    // replicas (the `all` row, [`aggregate`]).
    cells.extend([None; 6]);
    cells.push(model.offered(summary.cap()));
    debug_assert_eq!(cells.len(), STAT_COLUMNS.len());
    Ok(Ok(cells))
}

/// What queueing theory knows about a load: Poisson arrivals, one `work: DIST` step.
pub(crate) struct Model {
    /// Offered load, Erlangs, when arrivals are Poisson and runs one `work` step.
    load: Option<f64>,
    /// Whether run times are exponential (Erlang C needs it; Erlang B does not).
    exponential: bool,
    /// Mean run time, s.
    mean_run: f64,
    retry: Option<Retry>,
}

impl Model {
    /// The model of `spec`'s load: with several streams, the theory applies when every
    /// stream is Poisson with one `work` step and all share one retry policy (Poisson
    /// streams together are Poisson; the offered loads add up). Erlang C also needs every
    /// run exponential with one mean.
    pub(crate) fn of(spec: &SimSpec) -> Model {
        let none = Model {
            load: None,
            exponential: false,
            mean_run: 0.0,
            retry: None,
        };
        let Some(load) = &spec.load else {
            return none;
        };
        let mut offered = Some(0.0);
        let mut arrivals = 0.0;
        let mut works = Vec::new();
        for stream in &load.streams {
            let behavior = stream.spawn.behavior.clone().or_else(|| {
                let agent = stream.spawn.agent.as_deref()?;
                spec.agents.get(agent)?.behavior.clone()
            });
            let work = match behavior.as_deref() {
                Some([Step::Work(dist)]) => Some(*dist),
                _ => None,
            };
            let mean_run = work.map_or(0.0, |dist| dist.mean_micros() / 1e6);
            offered = match (offered, &stream.arrivals, work) {
                (Some(total), Arrivals::Poisson(rate), Some(_)) => {
                    arrivals += rate;
                    Some(total + rate * mean_run)
                }
                _ => None,
            };
            works.push(work);
        }
        let retry = load.streams.first().map(|stream| stream.retry);
        if load
            .streams
            .iter()
            .any(|stream| Some(stream.retry) != retry)
        {
            return none;
        }
        let first = works.first().copied().flatten();
        let exponential =
            matches!(first, Some(Dist::Exp { .. })) && works.iter().all(|work| *work == first);
        Model {
            load: offered,
            exponential,
            mean_run: match offered {
                Some(offered) if arrivals > 0.0 => offered / arrivals,
                _ => 0.0,
            },
            retry,
        }
    }

    /// The offered load (Erlangs), when arrivals are Poisson and runs one `work` step.
    pub(crate) fn offered_load(&self) -> Option<f64> {
        self.load
    }

    /// The offered load (Erlangs) where one of the Erlang columns applies: the chart draws
    /// the analytic curve at every cap from it.
    pub(crate) fn offered(&self, cap: Option<u32>) -> Cell {
        self.theory(cap)
            .iter()
            .any(Option::is_some)
            .then_some(self.load)
            .flatten()
    }

    /// `erlang_b`, `erlang_c`, `erlang_wait` (s) where they apply.
    pub(crate) fn theory(&self, cap: Option<u32>) -> [Cell; 3] {
        let (Some(load), Some(cap)) = (self.load, cap) else {
            return [None, None, None];
        };
        match self.retry {
            Some(Retry::None) => [Some(erlang::erlang_b(cap, load)), None, None],
            Some(Retry::Queue) if self.exponential && load < f64::from(cap) => [
                None,
                Some(erlang::erlang_c(cap, load)),
                Some(erlang::mean_wait_holding_times(cap, load) * self.mean_run),
            ],
            _ => [None, None, None],
        }
    }
}

/// The `replica = all` row: means over replicas; with two or more replicas the interval
/// is Student's t over the replica means, with one it is the replica's own.
pub(crate) fn aggregate(replicas: &[Vec<Cell>]) -> Vec<Cell> {
    let count = replicas.len();
    let column =
        |index: usize| -> Vec<f64> { replicas.iter().filter_map(|row| row[index]).collect() };
    let mean = |values: &[f64]| {
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let mut out = Vec::with_capacity(STAT_COLUMNS.len());
    for (index, name) in STAT_COLUMNS.iter().enumerate() {
        let values = column(index);
        let cell = if name.ends_with("_lo") || name.ends_with("_hi") {
            let base = &name[..name.len() - 3];
            let base_index = STAT_COLUMNS
                .iter()
                .position(|known| *known == base)
                .expect("every _lo/_hi column follows its mean");
            let means = column(base_index);
            // A wait percentile that is 0 in every replica: nothing (or too little)
            // waited, and there is nothing to give an interval to.
            let nothing_waited =
                base.starts_with("wait_p") && means.iter().all(|value| *value == 0.0);
            if nothing_waited {
                None
            } else if count >= 2 && means.len() == count {
                let centre = mean(&means).unwrap_or(0.0);
                let variance = means
                    .iter()
                    .map(|value| (value - centre).powi(2))
                    .sum::<f64>()
                    / (count - 1) as f64;
                let half = t_975(count - 1) * (variance / count as f64).sqrt();
                Some(if name.ends_with("_lo") {
                    // A wait is never below 0 (an interval of another figure is kept as
                    // it always was).
                    if base.starts_with("wait_p") {
                        (centre - half).max(0.0)
                    } else {
                        centre - half
                    }
                } else {
                    centre + half
                })
            } else {
                mean(&values)
            }
        } else if *name == "arrivals" || *name == "attempts" {
            Some(values.iter().sum())
        } else if *name == "wait_max" {
            values.iter().copied().reduce(f64::max)
        } else {
            mean(&values)
        };
        out.push(cell);
    }
    out
}

/// A number cell: whole numbers as integers, others with up to six decimals.
pub(crate) fn number(cell: Cell) -> String {
    match cell {
        None => String::new(),
        Some(value) if !value.is_finite() => String::new(),
        Some(value) if value.fract() == 0.0 && value.abs() < 1e15 => format!("{}", value as i64),
        Some(value) => trim(format!("{value:.6}")),
    }
}

fn trim(text: String) -> String {
    if !text.contains('.') {
        return text;
    }
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
}

pub(crate) fn format_name(format: SweepFormat) -> &'static str {
    match format {
        SweepFormat::Csv => "csv",
        SweepFormat::Json => "json",
        SweepFormat::Svg => "svg",
    }
}

/// The table in `format`; a chart draws the `--target` statistic and its bound, if given.
pub(crate) fn render(
    table: &Table,
    format: SweepFormat,
    target: Option<&(String, f64)>,
    pick: Option<(f64, bool)>,
) -> anyhow::Result<String> {
    match format {
        SweepFormat::Csv => Ok(render_csv(table)),
        SweepFormat::Json => Ok(render_json(table)),
        SweepFormat::Svg => crate::chart::render(
            &table.header,
            &table.rows,
            target.map(|(metric, bound)| (metric.as_str(), *bound)),
            pick,
        ),
    }
}

fn render_csv(table: &Table) -> String {
    let mut text = String::new();
    for row in std::iter::once(&table.header).chain(&table.rows) {
        // `--set` values and names are cells of the one CSV escaper: quoted as needed, and
        // never a formula a spreadsheet would run.
        text.push_str(&csv::row(row.iter().map(String::as_str)));
    }
    text
}

/// Splits one CSV line written by [`render_csv`] (quoted fields with doubled quotes); a
/// cell's `'` in front of a formula is taken off again ([`csv::unescape`]).
fn split_csv(line: &str) -> Vec<String> {
    split_fields(line)
        .into_iter()
        .map(|field| csv::unescape(&field).to_string())
        .collect()
}

fn split_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', false) if current.is_empty() => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            (',', false) => fields.push(std::mem::take(&mut current)),
            _ => current.push(ch),
        }
    }
    fields.push(current);
    fields
}

/// `{"columns": [...], "rows": [{column: value, ...}, ...]}`: numbers as numbers, empty
/// cells as null, other text as strings.
fn render_json(table: &Table) -> String {
    let mut text = String::from("{\"columns\":[");
    for (index, name) in table.header.iter().enumerate() {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&json_string(name));
    }
    text.push_str("],\"rows\":[");
    for (row_index, row) in table.rows.iter().enumerate() {
        if row_index > 0 {
            text.push(',');
        }
        text.push('{');
        for (index, (name, cell)) in table.header.iter().zip(row).enumerate() {
            if index > 0 {
                text.push(',');
            }
            text.push_str(&json_string(name));
            text.push(':');
            text.push_str(&json_value(cell));
        }
        text.push('}');
    }
    text.push_str("]}\n");
    text
}

fn json_value(cell: &str) -> String {
    if cell.is_empty() {
        return "null".into();
    }
    let numeric = cell.parse::<f64>().is_ok_and(f64::is_finite)
        && cell
            .chars()
            .all(|ch| ch.is_ascii_digit() || matches!(ch, '-' | '.' | 'e' | 'E' | '+'))
        && !cell.starts_with('+')
        && !cell.starts_with('.')
        && !cell.ends_with('.')
        && !(cell.len() > 1 && cell.starts_with('0') && !cell.starts_with("0."))
        && !(cell.starts_with("-0") && cell.len() > 2 && !cell.starts_with("-0."));
    if numeric {
        cell.to_string()
    } else {
        json_string(cell)
    }
}

pub(crate) fn json_string(text: &str) -> String {
    subsim_escape::json::string(text)
}

/// FNV-1a over what makes two shards parts of the same sweep.
fn fingerprint(source: &str, axes: &[Axis], seeds: u64, base_seed: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash ^= 0xff;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    };
    eat(source.as_bytes());
    for axis in axes {
        eat(axis.path.as_bytes());
        for value in &axis.values {
            eat(value.as_bytes());
        }
    }
    eat(&seeds.to_le_bytes());
    eat(&base_seed.to_le_bytes());
    hash
}

/// What `--target` found: the lines for stderr, whether every combination met the
/// target, and (with one combination) the pick along the varied path and whether it is
/// settled.
pub(crate) struct Found {
    pub(crate) text: String,
    pub(crate) met: bool,
    pub(crate) pick: Option<(f64, bool)>,
}

/// `--target METRIC<BOUND --vary PATH`: per combination of the other paths, the smallest
/// value of PATH whose aggregated 95 % interval lies wholly under the bound, and whether
/// that pick is settled: the next smaller value's interval lies wholly at or above the
/// bound (the rule of `subsim capacity`, with one look). When it is not, the line says
/// which value is in doubt and about how many seeds would settle it. A figure without an
/// interval (one replica, or nothing waited) is compared by its mean, and the line says so.
fn find_target(
    table: &Table,
    axes: &[Axis],
    vary: &str,
    metric: &str,
    bound: f64,
    seeds: u64,
) -> Found {
    let column = |name: &str| table.header.iter().position(|known| known == name);
    let vary_index = column(vary).expect("--vary is a --set path");
    let replica = column("replica").expect("the table has replicas");
    let mean = column(metric).expect("the target is a column");
    let lo = column(&format!("{metric}_lo"));
    let hi = column(&format!("{metric}_hi"));
    let others: Vec<usize> = axes
        .iter()
        .filter(|axis| axis.path != vary)
        .filter_map(|axis| column(&axis.path))
        .collect();
    let mut groups: Vec<(Vec<String>, Vec<&Vec<String>>)> = Vec::new();
    for row in table.rows.iter().filter(|row| row[replica] == "all") {
        let key: Vec<String> = others.iter().map(|index| row[*index].clone()).collect();
        match groups.iter_mut().find(|(known, _)| *known == key) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((key, vec![row])),
        }
    }
    let single = groups.len() == 1;
    let mut found = Found {
        text: String::new(),
        met: true,
        pick: None,
    };
    let cell = |row: &Vec<String>, index: Option<usize>| {
        index.and_then(|index| row[index].parse::<f64>().ok())
    };
    for (key, mut rows) in groups {
        rows.sort_by(|a, b| {
            let value = |row: &Vec<String>| row[vary_index].parse::<f64>().unwrap_or(f64::NAN);
            value(a).total_cmp(&value(b))
        });
        let context = if key.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> = others
                .iter()
                .zip(&key)
                .map(|(index, value)| format!("{}={value}", table.header[*index]))
                .collect();
            format!(" (with {})", parts.join(", "))
        };
        // (mean, lo, hi) with an interval, or (mean, mean, mean) without one.
        let interval = |row: &Vec<String>| -> Option<(f64, f64, f64, bool)> {
            let centre = cell(row, Some(mean))?;
            match (cell(row, lo), cell(row, hi)) {
                (Some(lo), Some(hi)) if seeds >= 2 => Some((centre, lo, hi, true)),
                _ => Some((centre, centre, centre, false)),
            }
        };
        let position = rows
            .iter()
            .position(|row| interval(row).is_some_and(|(_, _, hi, _)| hi < bound));
        let Some(position) = position else {
            found.met = false;
            found.text.push_str(&format!(
                "target {metric}<{bound}{context}: not met: no swept value of {vary} meets it (widen the range)\n"
            ));
            continue;
        };
        let row = rows[position];
        let (centre, low, high, has) = interval(row).expect("found by its interval");
        let why = if has {
            format!(" [{low}, {high}], 95 % interval wholly under {bound}")
        } else {
            let reason = if seeds < 2 {
                "with one replica there is no interval across replicas"
            } else {
                "nothing waited, so it has no interval"
            };
            format!(
                ", the mean over the replicas; {metric} has no interval here ({reason}), so \
                 it is under {bound} without a margin"
            )
        };
        let value = &row[vary_index];
        // The settled rule: the next smaller value's interval lies at or above the bound.
        let (settled, verdict) = match position.checked_sub(1).map(|below| rows[below]) {
            None => (
                false,
                format!(
                    "not settled: {value} is the smallest swept value, so a smaller one may \
                     meet it too (widen the range downward)"
                ),
            ),
            Some(below) => {
                let below_value = &below[vary_index];
                match interval(below) {
                    Some((_, low, _, true)) if low >= bound => (
                        true,
                        format!("settled: {vary} = {below_value} misses (interval from {low})"),
                    ),
                    Some((centre, low, high, true)) => {
                        let more = more_seeds(seeds, centre, high - centre, bound);
                        (
                            false,
                            format!(
                                "not settled: {vary} = {below_value} is in doubt ([{low}, \
                                 {high}] holds {bound}){}",
                                more.map_or(String::new(), |more| format!(
                                    "; about {more} more seeds would probably settle it"
                                ))
                            ),
                        )
                    }
                    _ => (
                        false,
                        format!(
                            "not settled: {vary} = {below_value} has no interval (give \
                             --seeds 2 or more)"
                        ),
                    ),
                }
            }
        };
        found.text.push_str(&format!(
            "target {metric}<{bound}{context}: smallest {vary} = {value} ({metric} {}{why}); {verdict}\n",
            number(Some(centre))
        ));
        if single {
            found.pick = value.parse::<f64>().ok().map(|value| (value, settled));
        }
    }
    found
}

/// About how many more seeds (beyond `seeds`) would shrink an interval of half-width
/// `half` around `centre` until it no longer holds `bound` (the half-width falls as
/// 1/√n); `None` when the mean is the bound itself (no number of seeds separates them).
pub(crate) fn more_seeds(seeds: u64, centre: f64, half: f64, bound: f64) -> Option<u64> {
    let gap = (centre - bound).abs();
    if gap == 0.0 || !half.is_finite() {
        return None;
    }
    let needed = (seeds as f64 * (half / gap).powi(2)).ceil();
    (needed.is_finite() && needed < 1e12).then(|| (needed as u64).saturating_sub(seeds).max(1))
}

/// Refuses a chart x axis that is not numbers, before anything runs.
fn check_chart_axis(axis: &Axis) -> anyhow::Result<()> {
    if let Some(value) = axis
        .values
        .iter()
        .find(|value| value.trim().parse::<f64>().map_or(true, |x| !x.is_finite()))
    {
        anyhow::bail!(
            "--format svg draws the first swept path ({}) along the x axis, and its value \
             `{value}` is not a number; put a numeric --set (or --cap) first",
            axis.path
        );
    }
    Ok(())
}

pub(crate) fn write_out(path: Option<&Path>, inputs: &[PathBuf], text: &str) -> anyhow::Result<()> {
    match path {
        Some(path) => output::write_file(path, inputs, text.as_bytes()),
        None => output::print(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_axis_default(text: &str) -> anyhow::Result<Axis> {
        parse_axis(text, &budgets::SWEEP_RUNS)
    }

    #[test]
    fn axes_lists_and_ranges() {
        let axis = parse_axis_default("load.arrivals=poisson(20/s),poisson(30/s)").unwrap();
        assert_eq!(axis.values, ["poisson(20/s)", "poisson(30/s)"]);
        assert_eq!(
            parse_axis_default("c=16..20:2").unwrap().values,
            ["16", "18", "20"]
        );
        assert_eq!(
            parse_axis_default("c=1..3").unwrap().values,
            ["1", "2", "3"]
        );
        assert_eq!(
            parse_axis_default("x=0.5..1:0.25").unwrap().values,
            ["0.5", "0.75", "1"]
        );
        for bad in ["c=5..3", "c=1..3:0", "c=a..3", "c=", "c=1,,2", "c"] {
            assert!(parse_axis_default(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_range_of_whole_numbers_past_2_pow_53_keeps_every_digit() {
        assert_eq!(
            parse_axis_default("session.seed=18446744073709551614..18446744073709551615")
                .unwrap()
                .values,
            ["18446744073709551614", "18446744073709551615"]
        );
        assert_eq!(
            parse_axis_default("s=9007199254740993..9007199254740997:2")
                .unwrap()
                .values,
            ["9007199254740993", "9007199254740995", "9007199254740997"]
        );
        assert_eq!(
            parse_axis_default("c=-2..2:2").unwrap().values,
            ["-2", "0", "2"]
        );
        assert!(parse_axis_default("s=18446744073709551615..18446744073709551614").is_err());
    }

    #[test]
    fn shards_and_targets() {
        assert_eq!(parse_shard("2/3").unwrap(), (2, 3));
        for bad in ["3/2", "0/2", "1/0", "x", "1/"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_target("blocking<0.01").unwrap(),
            ("blocking".to_string(), 0.01)
        );
        let error = parse_target("blockng<0.01").unwrap_err().to_string();
        assert!(error.contains("did you mean `blocking`"), "{error}");
        assert!(parse_target("blocking>0.01")
            .unwrap_err()
            .to_string()
            .contains("upper bound"));
        assert!(parse_target("blocking<abc")
            .unwrap_err()
            .to_string()
            .contains("`abc`"));
        assert!(parse_target("blocking_lo<0.1").is_err());
        assert!(parse_target("erlang_b<0.1").is_err());
        assert_eq!(
            parse_target("wait_p95<=30").unwrap(),
            ("wait_p95".to_string(), 30.0)
        );
    }

    #[test]
    fn seeds_differ_by_point_and_replica() {
        let seeds = [
            derive_seed(0, 0, 0),
            derive_seed(0, 0, 1),
            derive_seed(0, 1, 0),
            derive_seed(1, 0, 0),
        ];
        for (index, seed) in seeds.iter().enumerate() {
            assert!(!seeds[index + 1..].contains(seed));
        }
        assert_eq!(derive_seed(7, 3, 2), derive_seed(7, 3, 2));
    }

    #[test]
    fn csv_round_trips_and_json_types() {
        let row = vec![
            "poisson(2/s)".to_string(),
            "a,\"b\"".into(),
            "".into(),
            "1.5".into(),
        ];
        assert_eq!(
            split_csv(
                render_csv(&Table {
                    header: row.clone(),
                    rows: vec![]
                })
                .trim_end()
            ),
            row
        );
        assert_eq!(json_value("1.5"), "1.5");
        assert_eq!(json_value("all"), "\"all\"");
        assert_eq!(json_value(""), "null");
        assert_eq!(json_value("007"), "\"007\"");
        assert_eq!(number(Some(3.0)), "3");
        assert_eq!(number(Some(0.1234567)), "0.123457");
        assert_eq!(number(None), "");
    }
}
