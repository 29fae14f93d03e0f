//! The model as one JSON object: `subsim run --format model` and the playground's final
//! `event: model`. Times are integer µs (`*_us`); agents are shown by name, else id.
//! Each of `draws` is a duration drawn from a distribution: when (`t_us`), for whom
//! (`agent`, its `label`; `arrival` for a load retry), what for, how long (`drawn_us`, up
//! to `until_us`), from what (`drawn_from`), on which stream (`drawn_on`) and in words
//! (`text`).

use std::fmt::Write as _;

use super::RunModel;
use crate::event::id_string;

fn string(out: &mut String, text: &str) {
    subsim_escape::json::push(out, text);
}

fn rule(out: &mut String, rule: Option<&str>) {
    match rule {
        Some(rule) => string(out, rule),
        None => out.push_str("null"),
    }
}

impl RunModel {
    /// The model as one line of JSON (see the module docs of [`super`] for the facts).
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str("{\"version\":");
        string(&mut out, &self.version);
        match self.cap {
            Some(cap) => {
                let _ = write!(out, ",\"cap\":{cap}");
            }
            None => out.push_str(",\"cap\":null"),
        }
        let _ = write!(
            out,
            ",\"end\":{{\"t_us\":{},\"seq\":{},\"kind\":",
            self.end.at, self.end.seq
        );
        string(&mut out, self.end.kind);
        out.push_str(",\"because\":");
        string(&mut out, &self.because());
        out.push_str("},\"chain\":[");
        for (i, link) in self.chain.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"from_us\":{},\"to_us\":{},\"agent\":",
                link.from, link.to
            );
            string(&mut out, &link.agent);
            out.push_str(",\"text\":");
            string(&mut out, &link.text);
            out.push_str(",\"rule\":");
            rule(&mut out, link.rule);
            out.push('}');
        }
        let c = &self.counts;
        let _ = write!(
            out,
            "],\"counts\":{{\"started\":{},\"resumed\":{},\"finished\":{},\"rejected\":{},\
             \"peak_running\":{},\"prompts\":{},\"prompt_wait_us\":{},\"refused\":{},\
             \"notifications\":{},\"events\":{},\"by_agent\":{{",
            c.all.started,
            c.all.resumed,
            c.all.finished,
            c.all.rejected,
            c.peak_running,
            c.prompts,
            c.prompt_wait_us,
            c.refused,
            c.notifications,
            c.events
        );
        for (i, (agent, tally)) in c.by_agent.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            string(&mut out, agent);
            let _ = write!(
                out,
                ":{{\"started\":{},\"resumed\":{},\"finished\":{},\"rejected\":{}}}",
                tally.started, tally.resumed, tally.finished, tally.rejected
            );
        }
        out.push_str("},\"rejected_by\":[");
        for (i, ((reason, by), count)) in c.rejected_by.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"reason\":");
            string(&mut out, reason.as_str());
            out.push_str(",\"rule\":");
            string(&mut out, by);
            let _ = write!(out, ",\"count\":{count}}}");
        }
        out.push_str("]},\"runs\":[");
        for (i, run) in self.runs.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"id\":");
            string(&mut out, &id_string(run.id));
            out.push_str(",\"label\":");
            string(&mut out, &run.label);
            out.push_str(",\"agent_type\":");
            string(&mut out, &run.agent_type);
            out.push_str(",\"parent\":");
            string(&mut out, &id_string(run.parent));
            let _ = write!(out, ",\"depth\":{},\"mode\":", run.depth);
            string(&mut out, run.mode);
            let _ = write!(out, ",\"started_us\":{}", run.started.0);
            match run.finished {
                Some(at) => {
                    let _ = write!(out, ",\"finished_us\":{at}");
                }
                None => out.push_str(",\"finished_us\":null"),
            }
            out.push_str(",\"spans\":[");
            for (j, span) in run.spans.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                let _ = write!(
                    out,
                    "{{\"from_us\":{},\"to_us\":{},\"state\":\"{}\",\"rule\":",
                    span.from,
                    span.to,
                    span.state.key()
                );
                rule(&mut out, span.rule);
                out.push('}');
            }
            out.push_str("],\"marks\":[");
            for (j, mark) in run.marks.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                let _ = write!(
                    out,
                    "{{\"t_us\":{},\"kind\":\"{}\",\"text\":",
                    mark.at, mark.kind
                );
                string(&mut out, &mark.text);
                out.push_str(",\"rule\":");
                rule(&mut out, mark.rule);
                out.push('}');
            }
            out.push_str("]}");
        }
        let _ = write!(
            out,
            "],\"more_runs\":{},\"more_marks\":{},\"running\":[",
            self.more_runs, self.more_marks
        );
        for (i, (at, n)) in self.running.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "[{at},{n}]");
        }
        out.push_str("],\"order\":[");
        for (i, group) in self.order.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"t_us\":{},\"period\":{},\"seqs\":[",
                group.at, group.period
            );
            for (j, seq) in group.seqs.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{seq}");
            }
            out.push_str("],\"kinds\":[");
            for (j, kind) in group.kinds.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                string(&mut out, kind);
            }
            out.push_str("],\"subjects\":[");
            for (j, subject) in group.subjects.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                string(&mut out, subject);
            }
            out.push_str("]}");
        }
        out.push_str("],\"draws\":[");
        for (i, draw) in self.draws.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                "{{\"t_us\":{},\"seq\":{},\"agent\":",
                draw.at, draw.seq
            );
            match draw.agent {
                Some(id) => string(&mut out, &id_string(id)),
                None => out.push_str("null"),
            }
            out.push_str(",\"label\":");
            match &draw.label {
                Some(label) => string(&mut out, label),
                None => out.push_str("null"),
            }
            match draw.arrival {
                Some(arrival) => {
                    let _ = write!(out, ",\"arrival\":{arrival}");
                }
                None => out.push_str(",\"arrival\":null"),
            }
            out.push_str(",\"what\":");
            string(&mut out, draw.what);
            let _ = write!(
                out,
                ",\"drawn_us\":{},\"until_us\":{},\"drawn_from\":",
                draw.drawn_us,
                draw.until()
            );
            string(&mut out, &draw.drawn_from);
            out.push_str(",\"drawn_on\":");
            string(&mut out, draw.drawn_on);
            out.push_str(",\"text\":");
            string(&mut out, &draw.text);
            out.push('}');
        }
        let _ = write!(
            out,
            "],\"more_draws\":{},\"more_decisions\":{},\"limit\":",
            self.more_draws, self.more_decisions
        );
        rule(&mut out, self.limit);
        out.push_str("}\n");
        out
    }
}
