//! `subsim capacity`: the smallest value of a path (the cap, by default) whose figure meets
//! a target, with replications added only where they are needed until the pick is
//! settled — the chosen value's interval lies wholly under the bound and the next smaller
//! value's wholly at or above it — or a budget of runs or time is spent (issue #33).
//!
//! The rule (docs/load-testing.md, "How `capacity` decides"): every value first runs 4
//! seeds; after each round (a *look*) each value's figure gets a Student-t interval over
//! its seeds' values, two-sided at confidence 1 − 0.05/L, where L is the number of looks
//! the schedule allows (seeds per value 4, 8, 16, … up to `--max-seeds`): Bonferroni over
//! the looks, so the whole sequence errs at most 5 % of the time for a value. Only the
//! values whose interval still holds the bound and that decide the pick get more seeds,
//! doubling theirs.
//!
//! Runs are the sweep's: the seed of value `i`'s replica `r` is derived from the base seed,
//! `i` and `r` exactly as `sweep` derives point `i`'s (so a run here is the same run as in
//! `sweep --set PATH=VALUES`), and which runs are made depends only on their results, so
//! the output is byte-identical for any `--jobs`. Only `--max-time` can make it depend on
//! the machine (which look it stops at); the wall time is printed to stderr, never in the
//! output.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rayon::prelude::*;
use subsim_engine::erlang;
use subsim_engine::stats::t_quantile;
use subsim_scenario::{Override, CAP_PATH};

use crate::args::{CapacityArgs, CapacityFormat, SweepFormat};
use crate::sweep::{self, Cell, Model, Table, STAT_COLUMNS};
use crate::{budgets, load, Status};

/// Seeds every value runs first (the first look).
pub const FIRST_SEEDS: u64 = 4;
/// The error rate of the whole sequence of looks, for one value.
pub const ALPHA: f64 = 0.05;

/// Where a value's interval lies against the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Wholly under the bound.
    Meets,
    /// Wholly at or above it.
    Misses,
    /// It holds the bound: more seeds may tell.
    InDoubt,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Meets => "meets",
            Verdict::Misses => "misses",
            Verdict::InDoubt => "in doubt",
        }
    }
}

/// What the verdicts say about the pick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Value `pick` meets the target and the next smaller one misses it.
    Settled(usize),
    /// The smallest value tried meets it: a smaller one, not tried, may too.
    LowestMeets(usize),
    /// Every value misses it.
    NoneMeets,
    /// Not settled yet: these values decide the pick and are in doubt.
    Refine(Vec<usize>),
}

/// The decision from the verdicts of the values in increasing order (the figure is taken
/// to fall as the value grows, as blocking and waits do with the cap).
pub fn decide(verdicts: &[Verdict]) -> Decision {
    let first_meets = verdicts.iter().position(|v| *v == Verdict::Meets);
    let end = first_meets.unwrap_or(verdicts.len());
    if first_meets == Some(0) {
        return Decision::LowestMeets(0);
    }
    if let Some(pick) = first_meets {
        if verdicts[pick - 1] == Verdict::Misses {
            return Decision::Settled(pick);
        }
    }
    // The values between the last miss below the first meet and that meet are in doubt.
    let last_miss = verdicts[..end]
        .iter()
        .rposition(|v| *v == Verdict::Misses)
        .map_or(0, |index| index + 1);
    let doubt: Vec<usize> = (last_miss..end).collect();
    if doubt.is_empty() {
        Decision::NoneMeets
    } else {
        Decision::Refine(doubt)
    }
}

/// The seeds per value at each look: 4, 8, 16, … then `max_seeds` itself.
pub fn looks(max_seeds: u64) -> Vec<u64> {
    let mut levels = Vec::new();
    let mut seeds = FIRST_SEEDS.min(max_seeds);
    while seeds < max_seeds {
        levels.push(seeds);
        seeds *= 2;
    }
    levels.push(max_seeds);
    levels
}

/// A value's figure over its seeds: mean, interval and verdict.
#[derive(Clone, Copy, Debug)]
pub struct Interval {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub verdict: Verdict,
}

/// Student-t interval at two-sided confidence `confidence` over `values`, and its
/// verdict against `bound`.
pub fn interval(values: &[f64], confidence: f64, bound: f64) -> Option<Interval> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let half = if n >= 2 {
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1) * (variance / n as f64).sqrt()
    } else {
        f64::INFINITY
    };
    let (lo, hi) = (mean - half, mean + half);
    let verdict = if hi < bound {
        Verdict::Meets
    } else if lo >= bound {
        Verdict::Misses
    } else {
        Verdict::InDoubt
    };
    Some(Interval {
        mean,
        lo,
        hi,
        verdict,
    })
}

/// One value tried: its overrides, its runs' statistics (in replica order) and the seeds
/// it is to have after this round.
struct Value {
    text: String,
    point: Vec<Override>,
    runs: Vec<Vec<Cell>>,
    wanted: u64,
}

/// Why the search stopped without settling.
enum Stop {
    Runs,
    Time,
    Seeds,
    Limit(String),
}

pub fn capacity(args: CapacityArgs) -> anyhow::Result<Status> {
    let started = Instant::now();
    // Everything the command line says is checked before anything runs.
    let (metric, bound) = sweep::parse_target(&args.target)?;
    let vary = if args.vary == "cap" {
        CAP_PATH.to_string()
    } else {
        args.vary.clone()
    };
    let label = if vary == CAP_PATH {
        "cap".to_string()
    } else {
        vary.clone()
    };
    if vary == CAP_PATH && args.source.edit.cap.is_some() {
        anyhow::bail!(
            "--cap fixes the cap that --vary cap varies; give the caps to try as --values"
        );
    }
    if args.source.edit.set.iter().any(|set| set.path == vary) {
        anyhow::bail!("--set {vary}=… fixes the path --vary varies; give its values as --values");
    }
    let runs_budget = budgets::SWEEP_RUNS.with_limit(args.max_runs);
    let options = args.source.access().options();
    let source = load::read(&args.file, &options)?;
    let file_name = args.file.display().to_string();
    let base_dir = args.file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let fixed = args.source.overrides();
    let first = load::report(subsim_scenario::parse_scenario_under(
        &source, &file_name, &base_dir, &fixed, &options,
    ))?;
    let model = Model::of(&first.spec);
    let values = match &args.values {
        Some(text) => sweep::parse_axis(&format!("{vary}={text}"), &runs_budget)?.values,
        None => default_values(&vary, &metric, bound, &model)?,
    };
    if args.format == CapacityFormat::Svg {
        if let Some(value) = values.iter().find(|v| v.parse::<f64>().is_err()) {
            anyhow::bail!(
                "--format svg draws {label} along the x axis, and the value `{value}` is not \
                 a number; give numeric --values"
            );
        }
    }
    let levels = looks(args.max_seeds);
    let confidence = 1.0 - ALPHA / levels.len() as f64;
    // Every value is validated (and the target checked against it) before anything runs.
    let mut tried = Vec::new();
    for text in &values {
        let mut point = fixed.clone();
        point.push(Override {
            path: vary.clone(),
            value: text.clone(),
        });
        let loaded = load::report(subsim_scenario::parse_scenario_under(
            &source, &file_name, &base_dir, &point, &options,
        ))?;
        if let Err(why) = sweep::target_possible(&metric, &loaded.spec) {
            anyhow::bail!("--target at {label} = {text}: {why}");
        }
        tried.push(Value {
            text: text.clone(),
            point,
            runs: Vec::new(),
            wanted: levels[0],
        });
    }
    let base_seed = args.source.seed.unwrap_or(first.spec.session.seed);
    let column = STAT_COLUMNS
        .iter()
        .position(|name| *name == metric)
        .expect("a target is a statistics column");
    let wanted = args.jobs.map_or_else(sweep::default_jobs, |jobs| {
        u32::try_from(jobs).unwrap_or(u32::MAX)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(budgets::worker_threads(wanted, 1) as usize)
        .build()
        .context("cannot start the worker threads")?;
    let progress = sweep::progress_bar(0, args.quiet);
    let mut done = 0u64;
    let mut stop = None;
    let decision = loop {
        let tasks: Vec<(usize, u64)> = tried
            .iter()
            .enumerate()
            .flat_map(|(index, value)| {
                (value.runs.len() as u64..value.wanted).map(move |replica| (index, replica))
            })
            .collect();
        if done + tasks.len() as u64 > runs_budget.limit {
            stop = Some(Stop::Runs);
        } else if args.max_time.is_some_and(|most| started.elapsed() >= most) {
            stop = Some(Stop::Time);
        }
        if stop.is_some() {
            break None;
        }
        if let Some(bar) = &progress {
            bar.inc_length(tasks.len() as u64);
        }
        let results: Vec<anyhow::Result<Result<Vec<Cell>, String>>> = pool.install(|| {
            tasks
                .par_iter()
                .map(|&(index, replica)| {
                    let seed = sweep::derive_seed(base_seed, index as u64, replica);
                    let stats = sweep::run_point(
                        &source,
                        &file_name,
                        &base_dir,
                        &tried[index].point,
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
        done += tasks.len() as u64;
        for (&(index, replica), result) in tasks.iter().zip(results) {
            match result? {
                Ok(cells) => tried[index].runs.push(cells),
                Err(limit) => {
                    let seed = sweep::derive_seed(base_seed, index as u64, replica);
                    stop = Some(Stop::Limit(format!(
                        "{label} = {} seed {seed}: {limit}",
                        tried[index].text
                    )));
                }
            }
        }
        if stop.is_some() {
            break None;
        }
        let verdicts: Vec<Verdict> = tried
            .iter()
            .map(|value| {
                interval(&figures(value, column), confidence, bound)
                    .map_or(Verdict::InDoubt, |found| found.verdict)
            })
            .collect();
        match decide(&verdicts) {
            Decision::Refine(doubt) => {
                let mut more = false;
                for index in doubt {
                    let have = tried[index].runs.len() as u64;
                    if let Some(next) = levels.iter().find(|level| **level > have) {
                        tried[index].wanted = *next;
                        more = true;
                    }
                }
                if !more {
                    stop = Some(Stop::Seeds);
                    break None;
                }
            }
            other => break Some(other),
        }
    };
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let intervals: Vec<Option<Interval>> = tried
        .iter()
        .map(|value| interval(&figures(value, column), confidence, bound))
        .collect();
    let verdicts: Vec<Verdict> = intervals
        .iter()
        .map(|found| found.map_or(Verdict::InDoubt, |found| found.verdict))
        .collect();
    let decision = decision.unwrap_or_else(|| decide(&verdicts));
    let arrivals: f64 = tried
        .iter()
        .flat_map(|value| value.runs.iter())
        .filter_map(|cells| cells[0])
        .sum();
    let answer = Answer {
        label: &label,
        metric: &metric,
        bound,
        confidence,
        looks: levels.len(),
        tried: &tried,
        intervals: &intervals,
        decision: &decision,
        stop: stop.as_ref(),
        runs: done,
        arrivals,
        theory: theory_column(&metric),
        max_runs: runs_budget.limit,
    };
    let text = match args.format {
        CapacityFormat::Text => answer.text(),
        CapacityFormat::Json => answer.json(),
        CapacityFormat::Svg => answer.svg(&vary, &metric, bound)?,
    };
    let inputs = vec![args.file.clone()];
    sweep::write_out(args.out.as_deref(), &inputs, &text)?;
    eprintln!(
        "subsim: {} and {} arrivals in {:.1} s",
        crate::words::plural(done as usize, "run"),
        grouped(arrivals as u64),
        started.elapsed().as_secs_f64()
    );
    Ok(match (&decision, &stop) {
        (_, Some(Stop::Limit(_))) => Status::LimitHit,
        (Decision::Settled(_), _) => Status::Ok,
        _ => Status::ExpectationsFailed,
    })
}

/// The figure of each run of a value.
fn figures(value: &Value, column: usize) -> Vec<f64> {
    value
        .runs
        .iter()
        .filter_map(|cells| cells[column])
        .collect()
}

/// The theory column beside a figure.
fn theory_column(metric: &str) -> Option<&'static str> {
    match metric {
        "blocking" => Some("erlang_b"),
        "delayed" => Some("erlang_c"),
        "wait_mean" => Some("erlang_wait"),
        _ => None,
    }
}

/// Without `--values`: with `--vary cap`, a blocking target and a load theory knows,
/// Erlang B's answer and five caps either side; otherwise the values must be given.
fn default_values(
    vary: &str,
    metric: &str,
    bound: f64,
    model: &Model,
) -> anyhow::Result<Vec<String>> {
    if vary == CAP_PATH && metric == "blocking" {
        if let Some(load) = model.offered_load() {
            if let Some(cap) = erlang::smallest_cap(load, bound, 100_000) {
                let from = cap.saturating_sub(5).max(1);
                return Ok((from..=cap + 5).map(|cap| cap.to_string()).collect());
            }
        }
    }
    anyhow::bail!(
        "give the values to try, e.g. --values 36..46 (without them, only a blocking target \
         on the cap of Poisson arrivals with one `work` step has a default: Erlang B's answer \
         ± 5)"
    )
}

/// A figure in three significant digits (`0.00740`, `12.3`, `1520`).
pub fn sig(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = (2 - value.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{value:.digits$}")
}

/// What `capacity` found, to be written in one of its formats.
struct Answer<'a> {
    label: &'a str,
    metric: &'a str,
    bound: f64,
    confidence: f64,
    looks: usize,
    tried: &'a [Value],
    intervals: &'a [Option<Interval>],
    decision: &'a Decision,
    stop: Option<&'a Stop>,
    runs: u64,
    arrivals: f64,
    theory: Option<&'static str>,
    max_runs: u64,
}

impl Answer<'_> {
    fn shown(&self, index: usize) -> String {
        match self.intervals[index] {
            Some(found) => format!(
                "{} [{}, {}]",
                sig(found.mean),
                sig(found.lo.max(0.0)),
                sig(found.hi)
            ),
            None => "no runs".to_string(),
        }
    }

    fn seeds(&self, index: usize) -> usize {
        self.tried[index].runs.len()
    }

    /// "after 32 seeds at cap 41 and 4 at each other cap".
    fn seeds_used(&self) -> String {
        let counts: Vec<usize> = (0..self.tried.len())
            .map(|index| self.seeds(index))
            .collect();
        let least = counts.iter().copied().min().unwrap_or(0);
        let more: Vec<String> = counts
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > least)
            .map(|(index, count)| format!("{count} at {} {}", self.label, self.tried[index].text))
            .collect();
        match more.split_first() {
            None => format!("{least} seeds per {}", self.label),
            Some((first, rest)) => {
                let mut parts = vec![first.replacen(" at ", " seeds at ", 1)];
                parts.extend(rest.iter().cloned());
                format!(
                    "{} and {least} at each other {}",
                    parts.join(", "),
                    self.label
                )
            }
        }
    }

    /// The values in doubt and about how many more seeds would settle each.
    fn doubts(&self) -> (Vec<String>, Option<u64>) {
        let mut names = Vec::new();
        let mut most: Option<u64> = None;
        for (index, found) in self.intervals.iter().enumerate() {
            let Some(found) = found else { continue };
            if found.verdict != Verdict::InDoubt {
                continue;
            }
            if let Decision::Refine(doubt) = self.decision {
                if !doubt.contains(&index) {
                    continue;
                }
            }
            names.push(format!(
                "{} {} ({})",
                self.label,
                self.tried[index].text,
                self.shown(index)
            ));
            let more = sweep::more_seeds(
                self.seeds(index) as u64,
                found.mean,
                found.hi - found.mean,
                self.bound,
            );
            most = match (most, more) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        (names, most)
    }

    fn sentence(&self) -> String {
        let (label, metric, bound) = (self.label, self.metric, self.bound);
        let totals = format!(
            "{} runs, {} arrivals",
            self.runs,
            grouped(self.arrivals as u64)
        );
        match self.decision {
            Decision::Settled(pick) => {
                let below = pick - 1;
                format!(
                    "{label} {}: {metric} {} meets <{bound}; {label} {}: {} misses; settled \
                     after {} ({totals}).",
                    self.tried[*pick].text,
                    self.shown(*pick),
                    self.tried[below].text,
                    self.shown(below),
                    self.seeds_used()
                )
            }
            Decision::LowestMeets(pick) => format!(
                "{label} {}: {metric} {} meets <{bound}, but it is the smallest value tried: \
                 a smaller one may meet it too, so the pick is not settled; widen --values \
                 downward ({totals}).",
                self.tried[*pick].text,
                self.shown(*pick)
            ),
            Decision::NoneMeets => {
                let last = self.tried.len() - 1;
                format!(
                    "no {label} from {} to {} meets {metric}<{bound} ({label} {}: {} misses); \
                     widen --values upward ({totals}).",
                    self.tried[0].text,
                    self.tried[last].text,
                    self.tried[last].text,
                    self.shown(last)
                )
            }
            Decision::Refine(_) => {
                let why = match self.stop {
                    Some(Stop::Runs) => format!(
                        "the next look would pass the budget of {} runs (--max-runs)",
                        self.max_runs
                    ),
                    Some(Stop::Time) => "the time budget (--max-time) is spent".to_string(),
                    Some(Stop::Seeds) => {
                        "the values in doubt have --max-seeds seeds each".to_string()
                    }
                    Some(Stop::Limit(what)) => format!("a run stopped at a safety limit ({what})"),
                    None => "it stopped".to_string(),
                };
                let (names, more) = self.doubts();
                let more = match more {
                    Some(more) => format!(
                        "; about {more} more seeds at {} would probably settle it",
                        if names.len() == 1 { "it" } else { "each" }
                    ),
                    None => String::new(),
                };
                let best = self
                    .intervals
                    .iter()
                    .position(|found| found.is_some_and(|f| f.verdict == Verdict::Meets))
                    .map_or(String::new(), |index| {
                        format!(
                            " The smallest value that meets it so far: {label} {} ({}).",
                            self.tried[index].text,
                            self.shown(index)
                        )
                    });
                format!(
                    "not settled: {why} after {} ({totals}); in doubt: {}{more}.{best}",
                    self.seeds_used(),
                    names.join(", ")
                )
            }
        }
    }

    fn text(&self) -> String {
        let mut text = crate::words::wrap_block(&self.sentence(), crate::words::width());
        let interval_title = format!("interval ({} %)", trim_percent(self.confidence));
        let mut rows = vec![vec![
            self.label.to_string(),
            "seeds".to_string(),
            self.metric.to_string(),
            interval_title,
            format!("<{}", self.bound),
            self.theory.unwrap_or("").to_string(),
        ]];
        for (index, value) in self.tried.iter().enumerate() {
            let found = self.intervals[index];
            let theory = self
                .theory
                .and_then(|name| STAT_COLUMNS.iter().position(|known| *known == name))
                .and_then(|column| value.runs.first().and_then(|cells| cells[column]));
            rows.push(vec![
                value.text.clone(),
                self.seeds(index).to_string(),
                found.map_or(String::new(), |f| sig(f.mean)),
                found.map_or(String::new(), |f| {
                    format!("[{}, {}]", sig(f.lo.max(0.0)), sig(f.hi))
                }),
                found.map_or("no runs", |f| f.verdict.word()).to_string(),
                theory.map_or(String::new(), sig),
            ]);
        }
        text.push('\n');
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|column| {
                rows.iter()
                    .map(|row| row[column].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            text.push_str(cells.join("  ").trim_end());
            text.push('\n');
        }
        text.push_str(&crate::words::wrap_block(
            &format!(
                "Each interval is Student's t over that value's seeds at {} % (95 % shared by \
                 up to {} looks, Bonferroni); seeds were added only where a value in doubt \
                 decides the pick.",
                trim_percent(self.confidence),
                self.looks
            ),
            crate::words::width(),
        ));
        text
    }

    fn json(&self) -> String {
        let number = |value: f64| {
            if value.is_finite() {
                format!("{value}")
            } else {
                "null".to_string()
            }
        };
        let (settled, pick) = match self.decision {
            Decision::Settled(pick) => (true, Some(*pick)),
            Decision::LowestMeets(pick) => (false, Some(*pick)),
            Decision::NoneMeets | Decision::Refine(_) => (false, None),
        };
        let (_, more) = self.doubts();
        let mut values = Vec::new();
        for (index, value) in self.tried.iter().enumerate() {
            let found = self.intervals[index];
            values.push(format!(
                "{{\"value\":{},\"seeds\":{},\"mean\":{},\"lo\":{},\"hi\":{},\"verdict\":{}}}",
                sweep::json_string(&value.text),
                self.seeds(index),
                found.map_or("null".to_string(), |f| number(f.mean)),
                found.map_or("null".to_string(), |f| number(f.lo)),
                found.map_or("null".to_string(), |f| number(f.hi)),
                sweep::json_string(found.map_or("no runs", |f| f.verdict.word())),
            ));
        }
        let in_doubt: Vec<String> = match self.decision {
            Decision::Refine(doubt) => doubt
                .iter()
                .map(|index| sweep::json_string(&self.tried[*index].text))
                .collect(),
            _ => Vec::new(),
        };
        format!(
            "{{\"target\":{},\"figure\":{},\"bound\":{},\"vary\":{},\"settled\":{settled},\
             \"pick\":{},\"in_doubt\":[{}],\"more_seeds\":{},\"confidence\":{},\"looks\":{},\
             \"runs\":{},\"arrivals\":{},\"sentence\":{},\"values\":[{}]}}\n",
            sweep::json_string(&format!("{}<{}", self.metric, self.bound)),
            sweep::json_string(self.metric),
            number(self.bound),
            sweep::json_string(self.label),
            pick.map_or("null".to_string(), |pick| sweep::json_string(
                &self.tried[pick].text
            )),
            in_doubt.join(","),
            more.map_or("null".to_string(), |more| more.to_string()),
            number(self.confidence),
            self.looks,
            self.runs,
            self.arrivals as u64,
            sweep::json_string(&self.sentence()),
            values.join(",")
        )
    }

    /// The sweep's chart of the values tried (each value's `all` row over the seeds it
    /// ran), with the target and the pick marked.
    fn svg(&self, vary: &str, metric: &str, bound: f64) -> anyhow::Result<String> {
        let mut header = vec![vary.to_string(), "replica".into(), "seed".into()];
        header.extend(STAT_COLUMNS.iter().map(|name| name.to_string()));
        let rows = self
            .tried
            .iter()
            .filter(|value| !value.runs.is_empty())
            .map(|value| {
                let mut row = vec![value.text.clone(), "all".into(), String::new()];
                row.extend(
                    sweep::aggregate(&value.runs)
                        .iter()
                        .map(|cell| sweep::number(*cell)),
                );
                row
            })
            .collect();
        let pick = match self.decision {
            Decision::Settled(pick) => Some((*pick, true)),
            Decision::LowestMeets(pick) => Some((*pick, false)),
            Decision::NoneMeets | Decision::Refine(_) => None,
        }
        .and_then(|(pick, settled)| Some((self.tried[pick].text.parse().ok()?, settled)));
        sweep::render(
            &Table { header, rows },
            SweepFormat::Svg,
            Some(&(metric.to_string(), bound)),
            pick,
        )
    }
}

/// `99.29` for 0.992857…: a confidence in per cent, two decimals at most.
fn trim_percent(confidence: f64) -> String {
    let text = format!("{:.2}", confidence * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `15,200,000`.
fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, ch) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `--max-time`: a positive duration (`30s`, `2m`, `1m30s`).
pub fn parse_budget_time(text: &str) -> Result<Duration, String> {
    let time = crate::args::parse_at(text)?;
    if time.as_micros() == 0 {
        return Err(format!(
            "--max-time {text} is no time at all: give a positive duration such as 30s or 5m"
        ));
    }
    Ok(Duration::from_micros(time.as_micros()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::{InDoubt, Meets, Misses};

    #[test]
    fn the_pick_is_settled_when_the_next_smaller_value_misses() {
        assert_eq!(
            decide(&[Misses, Misses, Meets, Meets]),
            Decision::Settled(2)
        );
        assert_eq!(
            decide(&[Misses, InDoubt, Meets, Meets]),
            Decision::Refine(vec![1])
        );
        assert_eq!(
            decide(&[Misses, InDoubt, InDoubt, Meets]),
            Decision::Refine(vec![1, 2])
        );
        assert_eq!(decide(&[Meets, Meets]), Decision::LowestMeets(0));
        assert_eq!(decide(&[Misses, Misses]), Decision::NoneMeets);
        assert_eq!(
            decide(&[Misses, InDoubt, InDoubt]),
            Decision::Refine(vec![1, 2])
        );
        // A value below the last miss that is in doubt does not decide the pick.
        assert_eq!(decide(&[InDoubt, Misses, Meets]), Decision::Settled(2));
    }

    #[test]
    fn looks_double_up_to_the_most_seeds() {
        assert_eq!(looks(128), [4, 8, 16, 32, 64, 128]);
        assert_eq!(looks(100), [4, 8, 16, 32, 64, 100]);
        assert_eq!(looks(4), [4]);
        assert_eq!(looks(2), [2]);
    }

    #[test]
    fn intervals_and_verdicts() {
        let found = interval(&[1.0, 2.0, 3.0], 0.95, 10.0).unwrap();
        assert_eq!(found.mean, 2.0);
        assert!((found.hi - 2.0 - 4.302_65 / 3f64.sqrt()).abs() < 1e-3);
        assert_eq!(found.verdict, Meets);
        assert_eq!(interval(&[5.0, 5.0], 0.95, 5.0).unwrap().verdict, Misses);
        assert_eq!(interval(&[1.0, 9.0], 0.95, 5.0).unwrap().verdict, InDoubt);
        // One seed has no interval: in doubt whatever its value.
        assert_eq!(interval(&[1.0], 0.95, 5.0).unwrap().verdict, InDoubt);
        assert!(interval(&[], 0.95, 5.0).is_none());
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(sig(0.0074), "0.00740");
        assert_eq!(sig(12.345), "12.3");
        assert_eq!(sig(1520.0), "1520");
        assert_eq!(grouped(15_200_000), "15,200,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(trim_percent(1.0 - 0.05 / 6.0), "99.17");
        assert!(parse_budget_time("0s").is_err());
        assert_eq!(parse_budget_time("1m30s"), Ok(Duration::from_secs(90)));
    }
}
