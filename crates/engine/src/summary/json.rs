//! The summary as one JSON object, and the small writer that places its commas.

use super::*;

impl Summary {
    /// The statistics as one JSON object (keys in a fixed order; byte-for-byte deterministic).
    pub fn render_json(&self) -> String {
        let mut json = Json::default();
        json.open();
        json.key("events").u64(self.events);
        json.key("makespan_us").u64(self.last_t.as_micros());
        match self.cap {
            Some(cap) => json.key("cap").u64(u64::from(cap)),
            None => json.key("cap").raw("null"),
        };
        json.key("spawns").open();
        json.key("requested").u64(self.spawns_requested);
        json.key("started").u64(self.started);
        json.key("rejected").u64(self.rejected_total());
        json.key("rejected_by_reason").open();
        for (reason, count) in RejectReason::ALL.iter().zip(self.rejected) {
            json.key(reason.as_str()).u64(count);
        }
        json.close();
        json.close();
        json.key("blocking").f64(self.blocking());
        json.key("resumes").open();
        json.key("total").u64(self.resumes);
        json.key("past_cap").u64(self.resumes_past_cap);
        json.close();
        json.key("running").open();
        json.key("peak").u64(u64::from(self.peak_running));
        json.key("mean").f64(self.mean_running());
        json.close();
        json.key("prompts").open();
        json.key("shown").open();
        for (route, count) in self.routes_shown() {
            json.key(route).u64(count);
        }
        json.close();
        json.key("auto_denied").u64(self.auto_denied);
        json.key("withdrawn").u64(self.withdrawn);
        json.key("wait").open();
        for (route, waits) in self.routes_waited() {
            let stats = WaitStats::of(waits);
            json.key(route).open();
            json.key("answered").u64(stats.count);
            json.key("mean_us").u64(stats.mean_us);
            json.key("p95_us").u64(stats.p95_us);
            json.close();
        }
        json.close();
        json.close();
        let (prompt_waits, queue, queue_peak) = self.prompt_report();
        json.key("prompt_waits");
        json_distribution(&mut json, &prompt_waits);
        json.key("prompt_queue").open();
        json.key("mean");
        json_estimate(&mut json, queue);
        json.key("peak").u64(u64::from(queue_peak));
        json.close();
        json.key("prompts_by_type").open();
        for report in self.prompt_report_by_type() {
            json.key(&report.agent_type).open();
            json.key("waits");
            json_distribution(&mut json, &report.waits);
            json.key("queue").open();
            json.key("mean");
            json_estimate(&mut json, report.queue);
            json.key("peak").u64(u64::from(report.queue_peak));
            json.close();
            json.close();
        }
        json.close();
        match self.load_report() {
            Some(load) => {
                json.key("load").open();
                json.key("retries")
                    .raw(if load.retries { "true" } else { "false" });
                json.key("warmup").f64(load.warmup);
                json.key("window").f64(load.window);
                json.key("throughput").f64(load.throughput);
                json_type(&mut json, &load.all);
                json.key("by_type").open();
                for (name, stats) in &load.by_type {
                    json.key(name).open();
                    json_type(&mut json, stats);
                    json.close();
                }
                json.close();
                if !load.by_stream.is_empty() {
                    json.key("by_stream").open();
                    for (name, retries, stats) in &load.by_stream {
                        json.key(name).open();
                        json.key("retries")
                            .raw(if *retries { "true" } else { "false" });
                        json_arrivals(&mut json, stats);
                        json.close();
                    }
                    json.close();
                }
                json.key("saturated").raw(if load.saturated.is_some() {
                    "true"
                } else {
                    "false"
                });
                json.close();
            }
            None => {
                json.key("load").raw("null");
            }
        }
        json.key("finished").open();
        for (outcome, count) in OUTCOMES.iter().zip(self.finished) {
            json.key(outcome.as_str()).u64(count);
        }
        json.close();
        json.key("notifications").open();
        for (what, count) in &self.notifications() {
            json.key(what).u64(*count);
        }
        json.close();
        match self.limit {
            Some((limit, value)) => {
                json.key("limit").open();
                json.key("name").string(limit.as_str());
                json.key("value").u64(value);
                json.close();
            }
            None => {
                json.key("limit").raw("null");
            }
        }
        json.close();
        let mut text = String::from_utf8(json.out).expect("the JSON writer writes UTF-8");
        text.push('\n');
        text
    }
}

fn json_estimate(json: &mut Json, estimate: Estimate) {
    json.open();
    json.key("mean").f64(estimate.mean);
    json.key("lo").f64(estimate.lo);
    json.key("hi").f64(estimate.hi);
    // Fewer than two batch means: `lo` and `hi` are the mean, not an interval.
    json.key("interval").raw(if estimate.has_interval() {
        "true"
    } else {
        "false"
    });
    json.close();
}

fn json_distribution(json: &mut Json, distribution: &SecondsDistribution) {
    json.open();
    json.key("count").u64(distribution.count);
    json.key("mean");
    json_estimate(json, distribution.mean);
    json.key("p50").f64(distribution.p50);
    json.key("p95").f64(distribution.p95);
    json.key("p99").f64(distribution.p99);
    json.key("max").f64(distribution.max);
    json.close();
}

/// The members of one [`TypeReport`], into the open object.
fn json_type(json: &mut Json, stats: &TypeReport) {
    json_arrivals(json, stats);
    json.key("running");
    json_estimate(json, stats.running);
    json.key("utilisation");
    match stats.utilisation {
        Some(utilisation) => json_estimate(json, utilisation),
        None => {
            json.raw("null");
        }
    }
}

/// The members of one [`TypeReport`] about its arrivals (all but the running count).
fn json_arrivals(json: &mut Json, stats: &TypeReport) {
    json.key("arrivals").u64(stats.arrivals);
    json.key("attempts").u64(stats.attempts);
    json.key("blocking");
    json_estimate(json, stats.blocking);
    json.key("blocking_attempts").f64(stats.blocking_attempts);
    json.key("delayed");
    json_estimate(json, stats.delayed);
    json.key("wait");
    json_distribution(json, &stats.wait);
    json.key("delayed_wait");
    json_distribution(json, &stats.delayed_wait);
}

/// A tiny JSON object writer: enough for the summary, with commas placed for us.
#[derive(Default)]
struct Json {
    out: Vec<u8>,
    /// Per open object: has it had a member yet?
    had_member: Vec<bool>,
}

impl Json {
    fn open(&mut self) -> &mut Json {
        self.out.push(b'{');
        self.had_member.push(false);
        self
    }

    fn close(&mut self) -> &mut Json {
        self.had_member.pop();
        self.out.push(b'}');
        self
    }

    fn key(&mut self, key: &str) -> &mut Json {
        if let Some(had) = self.had_member.last_mut() {
            if *had {
                self.out.push(b',');
            }
            *had = true;
        }
        write_string(&mut self.out, key);
        self.out.push(b':');
        self
    }

    fn u64(&mut self, value: u64) -> &mut Json {
        crate::render::jsonl::write_u64(&mut self.out, value);
        self
    }

    /// Six decimals, trailing zeros trimmed: deterministic and readable.
    fn f64(&mut self, value: f64) -> &mut Json {
        let value = if value.is_finite() { value } else { 0.0 };
        let text = format!("{value:.6}");
        let text = text.trim_end_matches('0');
        let text = text
            .strip_suffix('.')
            .map_or(text.to_string(), |whole| format!("{whole}.0"));
        self.out.extend_from_slice(text.as_bytes());
        self
    }

    fn string(&mut self, value: &str) -> &mut Json {
        write_string(&mut self.out, value);
        self
    }

    fn raw(&mut self, value: &str) -> &mut Json {
        self.out.extend_from_slice(value.as_bytes());
        self
    }
}
