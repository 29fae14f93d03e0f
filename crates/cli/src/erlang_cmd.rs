//! `subsim erlang`: the analytic calculator beside the simulator — Erlang B (the loss
//! system `retry: none` forms), Erlang C and the mean wait (the FIFO queue `retry: queue`
//! forms), and the inverse: the smallest cap whose blocking meets a target.

use subsim_engine::erlang;

use crate::args::{ErlangArgs, ErlangFormat, WaitFigure};
use crate::Status;
use crate::{budgets, output};

/// Largest cap `--target` searches.
const MAX_CAP: u32 = 1_000_000;

pub fn erlang(args: ErlangArgs) -> anyhow::Result<Status> {
    let mean_run = args.mean.map(|mean| mean.as_micros() as f64 / 1e6);
    let (load, computed) = match (args.load, args.rate, mean_run) {
        (Some(load), _, _) => (load, None),
        (None, Some(rate), Some(mean)) => {
            if mean <= 0.0 {
                anyhow::bail!("--mean is the mean run time, above 0 (e.g. --mean 10s)");
            }
            (
                rate * mean,
                Some(format!("{}/s × {} s", short(rate), short(mean))),
            )
        }
        _ => anyhow::bail!("give --load A, or --rate RATE and --mean DURATION"),
    };
    if !(load.is_finite() && load >= 0.0) {
        anyhow::bail!(
            "--load must be a number of Erlangs from 0 (arrival rate × mean run time, e.g. \
             --load 20 for 20 arrivals/s of 1 s runs), not {load}"
        );
    }
    let p95 = |cap: u32, load: f64| erlang::wait_quantile_holding_times(cap, load, 0.95);
    let mut wait_target = None;
    let cap = match (args.cap, args.target, &args.target_wait) {
        // Erlang B and C take O(cap) steps: 4294967295 ran for tens of seconds.
        (Some(cap), None, None) => {
            budgets::ERLANG_CAP.check("--cap", u64::from(cap))?;
            cap
        }
        (None, Some(target), None) => {
            if !(target > 0.0 && target <= 1.0) {
                anyhow::bail!(
                    "--target is the blocking to stay under, a fraction above 0 and at most 1 \
                     (e.g. --target 0.01 for 1 %), not {target}"
                );
            }
            match erlang::smallest_cap(load, target, MAX_CAP) {
                Some(cap) => cap,
                None => anyhow::bail!(
                    "no cap up to {MAX_CAP} keeps blocking at {load} Erlangs at or below {}",
                    short(target)
                ),
            }
        }
        (None, None, Some(text)) => {
            let bound = wait_bound(text, mean_run)?;
            let found = match args.wait_figure {
                WaitFigure::Mean => erlang::smallest_cap_for_wait(
                    load,
                    bound,
                    MAX_CAP,
                    erlang::mean_wait_holding_times,
                ),
                WaitFigure::P95 => erlang::smallest_cap_for_wait(load, bound, MAX_CAP, p95),
            };
            let Some(cap) = found else {
                anyhow::bail!(
                    "no cap up to {MAX_CAP} keeps the wait at {load} Erlangs under {text}"
                );
            };
            wait_target = Some((text.clone(), bound));
            cap
        }
        _ => anyhow::bail!("give --cap C, --target B or --target-wait W (one of them)"),
    };
    let b = erlang::erlang_b(cap, load);
    let c = erlang::erlang_c(cap, load);
    let wait = erlang::mean_wait_holding_times(cap, load);
    let wait_p95 = p95(cap, load);
    let figure = match args.wait_figure {
        WaitFigure::Mean => "mean",
        WaitFigure::P95 => "p95",
    };
    let text = match args.format {
        ErlangFormat::Json => {
            let mut json = format!(
                "{{\"cap\":{cap},\"load\":{},\"erlang_b\":{},\"erlang_c\":{},\"mean_wait_holding_times\":{},\"wait_p95_holding_times\":{}",
                number(load),
                number(b),
                number(c),
                number(wait),
                number(wait_p95)
            );
            if let Some(rate) = args.rate {
                json.push_str(&format!(",\"rate_per_s\":{}", number(rate)));
            }
            if let Some(mean) = mean_run {
                json.push_str(&format!(
                    ",\"mean_run_s\":{},\"mean_wait_s\":{},\"wait_p95_s\":{}",
                    number(mean),
                    number(wait * mean),
                    number(wait_p95 * mean)
                ));
            }
            if let Some(target) = args.target {
                json.push_str(&format!(",\"target\":{}", number(target)));
            }
            if let Some((_, bound)) = &wait_target {
                json.push_str(&format!(
                    ",\"target_wait_holding_times\":{},\"wait_figure\":\"{figure}\"",
                    number(*bound)
                ));
            }
            json.push_str("}\n");
            json
        }
        ErlangFormat::Text => {
            let mut text = String::new();
            if let Some(target) = args.target {
                text.push_str(&format!(
                    "smallest cap with blocking ≤ {} at {} Erlangs: {cap}\n",
                    short(target),
                    load
                ));
            }
            if let Some((shown, _)) = &wait_target {
                text.push_str(&format!(
                    "smallest cap with the {figure} wait under {shown} at {load} Erlangs: {cap}\n"
                ));
            }
            let how = computed.map_or("arrival rate × mean run time".to_string(), |how| {
                format!("{how}: arrival rate × mean run time")
            });
            text.push_str(&format!(
                "cap      {cap} slots\nload     {load} Erlangs ({how})\n"
            ));
            text.push_str(&format!(
                "erlang_b {b:.6}  share of arrivals rejected, retry: none (M/M/c/c)\n"
            ));
            if wait.is_finite() {
                text.push_str(&format!(
                    "erlang_c {c:.6}  share of arrivals that wait, retry: queue (M/M/c)\n\
                     wait     {wait:.6}  mean wait of all arrivals, in mean run times\n\
                     wait_p95 {wait_p95:.6}  95th percentile of the wait of all arrivals, in mean run times\n"
                ));
                if let Some(mean) = mean_run {
                    text.push_str(&format!(
                        "         with {} s runs: mean wait {:.3} s, p95 {:.3} s\n",
                        short(mean),
                        wait * mean,
                        wait_p95 * mean
                    ));
                }
            } else {
                text.push_str(
                    "erlang_c 1         the queue is unstable: load ≥ cap, waits grow without bound\n",
                );
            }
            text
        }
    };
    match args.format {
        ErlangFormat::Text => output::print_text(&text)?,
        ErlangFormat::Json => output::print(&text)?,
    }
    Ok(Status::Ok)
}

/// `--target-wait`: a duration with `--mean` (in mean run times after dividing by it), or
/// a bare number of mean run times without.
fn wait_bound(text: &str, mean_run: Option<f64>) -> anyhow::Result<f64> {
    let bare = text.trim().parse::<f64>().ok();
    let bound = match (mean_run, bare) {
        (Some(mean), _) => {
            let wait = crate::args::parse_at(text)
                .map_err(|why| anyhow::anyhow!("--target-wait {text}: {why}"))?;
            wait.as_micros() as f64 / 1e6 / mean
        }
        (None, Some(bare)) => bare,
        (None, None) => anyhow::bail!(
            "--target-wait {text}: a wait in time needs the mean run time to compare with; \
             give --mean (or --rate and --mean), or a bare number of mean run times"
        ),
    };
    if !(bound.is_finite() && bound > 0.0) {
        anyhow::bail!("--target-wait {text}: give a wait above 0, e.g. --target-wait 2s");
    }
    Ok(bound)
}

/// `--rate`: `3/s`, `180/m`, `5/h` (a bare number is per second), in arrivals per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let (count, per_second) = match trimmed.split_once('/') {
        Some((count, "s")) => (count, 1.0),
        Some((count, "m")) => (count, 1.0 / 60.0),
        Some((count, "h")) => (count, 1.0 / 3_600.0),
        Some((_, unit)) => {
            return Err(format!(
                "`{unit}` is not a rate unit: write the rate as `3/s`, `180/m` or `5/h`"
            ))
        }
        None => (trimmed, 1.0),
    };
    match count.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 => Ok(value * per_second),
        _ => Err(format!(
            "`{trimmed}` is not a rate above 0: write it as `3/s`, `180/m` or `5/h`"
        )),
    }
}

/// A number for a sentence: in scientific notation when it is tiny (`1e-300`, not 300
/// zeros).
fn short(value: f64) -> String {
    if value != 0.0 && value.abs() < 1e-4 {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// A JSON number: Rust's shortest round-trip form; `null` for infinity.
fn number(value: f64) -> String {
    if value.is_finite() {
        format!("{value}")
    } else {
        "null".to_string()
    }
}
