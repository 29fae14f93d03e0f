//! `subsim erlang`: the analytic calculator beside the simulator — Erlang B (the loss
//! system `retry: none` forms), Erlang C and the mean wait (the FIFO queue `retry: queue`
//! forms), and the inverse: the smallest cap whose blocking meets a target.

use subsim_engine::erlang;

use crate::args::{ErlangArgs, ErlangFormat};
use crate::Status;
use crate::{budgets, output};

/// Largest cap `--target` searches.
const MAX_CAP: u32 = 1_000_000;

pub fn erlang(args: ErlangArgs) -> anyhow::Result<Status> {
    if !(args.load.is_finite() && args.load >= 0.0) {
        anyhow::bail!(
            "--load must be a number of Erlangs from 0 (arrival rate × mean run time, e.g. \
             --load 20 for 20 arrivals/s of 1 s runs), not {}",
            args.load
        );
    }
    let cap = match (args.cap, args.target) {
        // Erlang B and C take O(cap) steps: 4294967295 ran for tens of seconds.
        (Some(cap), None) => {
            budgets::ERLANG_CAP.check("--cap", u64::from(cap))?;
            cap
        }
        (None, Some(target)) => {
            if !(target > 0.0 && target <= 1.0) {
                anyhow::bail!(
                    "--target is the blocking to stay under, a fraction above 0 and at most 1 \
                     (e.g. --target 0.01 for 1 %), not {target}"
                );
            }
            match erlang::smallest_cap(args.load, target, MAX_CAP) {
                Some(cap) => cap,
                None => anyhow::bail!(
                    "no cap up to {MAX_CAP} keeps blocking at {} Erlangs at or below {}",
                    args.load,
                    short(target)
                ),
            }
        }
        _ => anyhow::bail!("give --cap C or --target B (one of them)"),
    };
    let b = erlang::erlang_b(cap, args.load);
    let c = erlang::erlang_c(cap, args.load);
    let wait = erlang::mean_wait_holding_times(cap, args.load);
    let text = match args.format {
        ErlangFormat::Json => {
            let mut json = format!(
                "{{\"cap\":{cap},\"load\":{},\"erlang_b\":{},\"erlang_c\":{},\"mean_wait_holding_times\":{}",
                number(args.load),
                number(b),
                number(c),
                number(wait)
            );
            if let Some(target) = args.target {
                json.push_str(&format!(",\"target\":{}", number(target)));
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
                    args.load
                ));
            }
            text.push_str(&format!(
                "cap      {cap} slots\nload     {} Erlangs (arrival rate × mean run time)\n",
                args.load
            ));
            text.push_str(&format!(
                "erlang_b {b:.6}  share of arrivals rejected, retry: none (M/M/c/c)\n"
            ));
            if wait.is_finite() {
                text.push_str(&format!(
                    "erlang_c {c:.6}  share of arrivals that wait, retry: queue (M/M/c)\n\
                     wait     {wait:.6}  mean wait of all arrivals, in mean run times\n"
                ));
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
