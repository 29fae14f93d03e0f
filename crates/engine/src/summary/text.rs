//! The summary as an aligned two-column text table.

use super::*;

impl Summary {
    /// An aligned two-column table for people.
    pub fn render_text(&self) -> String {
        let mut rows: Vec<(String, String)> = Vec::new();
        let mut row = |label: &str, value: String| rows.push((label.to_string(), value));
        row("events", self.events.to_string());
        row(
            "makespan",
            format!(
                "{} ({})",
                self.last_t,
                human_duration(self.last_t.as_micros())
            ),
        );
        row("spawns requested", self.spawns_requested.to_string());
        row(
            "  started",
            format!("{} (every run, /subtask forks included)", self.started),
        );
        row("  rejected", self.rejected_total().to_string());
        for (reason, count) in RejectReason::ALL.iter().zip(self.rejected) {
            if count > 0 {
                row(&format!("    {}", reason.as_str()), count.to_string());
            }
        }
        row(
            "blocking",
            format!(
                "{:.3} ({} of {} spawn requests hit the cap)",
                self.blocking(),
                self.rejected(RejectReason::ConcurrentLimit),
                self.spawns_requested
            ),
        );
        row(
            "resumes",
            format!("{} ({} past the cap)", self.resumes, self.resumes_past_cap),
        );
        let cap = match self.cap {
            Some(cap) => format!(" (cap {cap})"),
            None => " (no cap)".to_string(),
        };
        row("peak running", format!("{}{cap}", self.peak_running));
        row(
            "mean running",
            format!("{:.2} (time-weighted)", self.mean_running()),
        );
        if let Some(load) = self.load_report() {
            row(
                "load",
                format!(
                    "after a warm-up of {}s, over {}s; intervals are 95 % (batch means)",
                    secs(load.warmup),
                    secs(load.window)
                ),
            );
            if let Some(offered) = load.saturated {
                row(
                    "  warning",
                    format!(
                        "offered load {offered:.2} Erlangs ≥ cap {}: the queue is at or past \
                         saturation, so the mean wait is unstable and grows with the run's \
                         length",
                        self.cap.unwrap_or_default()
                    ),
                );
            }
            load_rows(&mut row, "  ", &load.all, load.retries);
            row(
                "  throughput",
                format!("{:.3} runs finished/s", load.throughput),
            );
            if load.by_type.len() > 1 {
                for (name, stats) in &load.by_type {
                    if stats.arrivals > 0 {
                        row(&format!("  type {name}"), String::new());
                        load_rows(&mut row, "    ", stats, load.retries);
                    }
                }
            }
            for (name, retries, stats) in &load.by_stream {
                row(&format!("  stream {name}"), String::new());
                stream_rows(&mut row, "    ", stats, *retries);
            }
        }
        let shown: u64 = self.prompts_by_route.iter().sum();
        let routes = self
            .routes_shown()
            .map(|(route, count)| format!("{route} {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "prompts shown",
            if routes.is_empty() {
                "0".to_string()
            } else {
                format!("{shown} ({routes})")
            },
        );
        row("  auto-denied", self.auto_denied.to_string());
        if self.withdrawn > 0 {
            row("  withdrawn", self.withdrawn.to_string());
        }
        for (route, waits) in self.routes_waited() {
            let stats = WaitStats::of(waits);
            let label = match route {
                "main" => "  wait, main session".to_string(),
                other => format!("  wait, {other}"),
            };
            row(
                &label,
                // Seconds with three decimals, as every other wait of the table.
                format!(
                    "mean {}s, p95 {}s ({} answered)",
                    secs(stats.mean_us as f64 / 1e6),
                    secs(stats.p95_us as f64 / 1e6),
                    stats.count
                ),
            );
        }
        let (prompt_waits, queue, queue_peak) = self.prompt_report();
        if prompt_waits.count > 0 {
            row("  wait, all prompts", wait_line(&prompt_waits));
            row(
                "  prompt queue",
                format!(
                    "mean {:.3} {}, peak {queue_peak} (shown, not yet answered)",
                    queue.mean,
                    interval(queue, |value| format!("{value:.3}"))
                ),
            );
            let by_type = self.prompt_report_by_type();
            if by_type.len() > 1 {
                for report in &by_type {
                    row(&format!("  type {}", report.agent_type), String::new());
                    let waits = &report.waits;
                    if waits.count > 0 {
                        let line = wait_line(waits);
                        row("    wait", format!("{line} ({} answered)", waits.count));
                    }
                    row(
                        "    prompt queue",
                        format!(
                            "mean {:.3} {}, peak {}",
                            report.queue.mean,
                            interval(report.queue, |value| format!("{value:.3}")),
                            report.queue_peak
                        ),
                    );
                }
            }
        }
        let finished: u64 = self.finished.iter().sum();
        let outcomes = OUTCOMES
            .iter()
            .zip(self.finished)
            .filter(|(_, count)| *count > 0)
            .map(|(outcome, count)| format!("{} {count}", outcome.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "finished",
            if outcomes.is_empty() {
                "0".to_string()
            } else {
                format!("{finished} ({outcomes})")
            },
        );
        let notifications = self.notifications();
        let notified: u64 = notifications.values().sum();
        let whats = notifications
            .iter()
            .map(|(what, count)| format!("{what} {count}"))
            .collect::<Vec<_>>()
            .join(", ");
        row(
            "notifications",
            if whats.is_empty() {
                "0".to_string()
            } else {
                format!("{notified} ({whats})")
            },
        );
        if let Some((limit, value)) = self.limit {
            row(
                "stopped by",
                format!("safety limit {limit} = {}", limit.bound_text(value)),
            );
        }
        // Labels and values carry type and stream names: each is one field of a terminal
        // line, so a name's newline or escape sequence is shown, not obeyed.
        let rows: Vec<(String, String)> = rows
            .into_iter()
            .map(|(label, value)| {
                let line = subsim_escape::terminal::line;
                (line(&label).into_owned(), line(&value).into_owned())
            })
            .collect();
        let width = rows
            .iter()
            .map(|(label, _)| label.chars().count())
            .max()
            .unwrap_or(0);
        let mut text = String::new();
        for (label, value) in rows {
            let _ = writeln!(text, "{label:<width$}  {value}");
        }
        text
    }
}

/// Seconds, three decimals.
fn secs(value: f64) -> String {
    format!("{value:.3}")
}

/// `[lo, hi]` of an estimate, each written by `show`; `(n = 1, no interval)` when it
/// rests on fewer than two batch means (one observation gives no spread to measure).
fn interval(estimate: Estimate, show: impl Fn(f64) -> String) -> String {
    if !estimate.has_interval() {
        return format!("(n = {}, no interval)", estimate.batches);
    }
    format!("[{}, {}]", show(estimate.lo), show(estimate.hi))
}

/// A prompt-wait line of the table (all prompts, or one type's): the mean with its
/// interval, then the percentiles and the longest, in seconds.
fn wait_line(waits: &SecondsDistribution) -> String {
    format!(
        "mean {}s {}, p50 {}s, p95 {}s, p99 {}s, max {}s",
        secs(waits.mean.mean),
        interval(waits.mean, secs),
        secs(waits.p50),
        secs(waits.p95),
        secs(waits.p99),
        secs(waits.max)
    )
}

/// The text rows of one [`TypeReport`].
fn load_rows(row: &mut impl FnMut(&str, String), indent: &str, stats: &TypeReport, retries: bool) {
    let fraction = |value: f64| format!("{value:.4}");
    row(
        &format!("{indent}arrivals"),
        format!(
            "{} ({} attempts, retries included)",
            stats.arrivals, stats.attempts
        ),
    );
    row(
        &format!("{indent}blocking"),
        format!(
            "{} {} per arrival (first attempt hit the cap); {} per attempt",
            fraction(stats.blocking.mean),
            interval(stats.blocking, fraction),
            fraction(stats.blocking_attempts)
        ),
    );
    if !retries {
        // Nobody waits under `retry: none`: no delayed share, no waits.
        let running = running_row(stats);
        row(&format!("{indent}running"), running);
        return;
    }
    row(
        &format!("{indent}delayed"),
        format!(
            "{} {} of arrivals waited for a retry",
            fraction(stats.delayed.mean),
            interval(stats.delayed, fraction)
        ),
    );
    for (label, wait) in [
        ("wait", &stats.wait),
        ("wait, delayed", &stats.delayed_wait),
    ] {
        if wait.count > 0 {
            row(
                &format!("{indent}{label}"),
                format!(
                    "mean {}s {}, p50 {}s, p95 {}s, p99 {}s, max {}s ({} started)",
                    secs(wait.mean.mean),
                    interval(wait.mean, secs),
                    secs(wait.p50),
                    secs(wait.p95),
                    secs(wait.p99),
                    secs(wait.max),
                    wait.count
                ),
            );
        }
    }
    let running = running_row(stats);
    row(&format!("{indent}running"), running);
}

/// The text rows of one stream: [`load_rows`] without the running count (which is
/// measured per type, not per stream).
fn stream_rows(
    row: &mut impl FnMut(&str, String),
    indent: &str,
    stats: &TypeReport,
    retries: bool,
) {
    let mut rows = Vec::new();
    load_rows(
        &mut |label: &str, value: String| rows.push((label.to_string(), value)),
        indent,
        stats,
        retries,
    );
    for (label, value) in rows {
        if label.trim_start() != "running" {
            row(&label, value);
        }
    }
}

/// The `running` row's text: mean running with its interval, and utilisation.
fn running_row(stats: &TypeReport) -> String {
    let fraction = |value: f64| format!("{value:.4}");
    let two = |value: f64| format!("{value:.2}");
    let mut running = format!(
        "{} {} (time-weighted)",
        two(stats.running.mean),
        interval(stats.running, two)
    );
    if let Some(utilisation) = stats.utilisation {
        let _ = write!(
            running,
            "; utilisation {} {}",
            fraction(utilisation.mean),
            interval(utilisation, fraction)
        );
    }
    running
}
