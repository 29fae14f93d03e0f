//! Every view agrees with the trace (issue #32): each shipped scenario, and generated ones,
//! run once through the JSON Lines trace (the ground truth), the run model (as a value and
//! as `run --format model`'s JSON), the statistics (`run --format json`, kept through the
//! kernel's typed entries on a run of its own) and the narration's closing summary. They
//! must agree on the end, the runs started, resumed, finished and rejected per agent, the
//! peak running count, the order of decisions and the durations drawn.
//!
//! The binary's own views (gantt, Chrome, the report) draw from the same model; their
//! corpus check is `crates/cli/src/timeline.rs`'s `every_shipped_scenario_*` tests.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use subsim_engine::render::{JsonlWriter, NarrationOptions, TextWriter};
use subsim_engine::runmodel::{Builder, RunModel};
use subsim_engine::sink::Tee;
use subsim_engine::summary::Summary;
use subsim_engine::time::human_duration;
use subsim_engine::{SimSpec, Simulation};
use subsim_tests::{repo_root, scenario_files};

/// Scenarios left out, with the reason. Each writes more events than this test should
/// parse three times in a debug build; `tests/integration/summary_paths.rs` and
/// `queueing.rs` cover them.
const TOO_BIG: u64 = 50_000;

/// The rows the model keeps here: enough that no shipped scenario under [`TOO_BIG`] is
/// thinned, so every run and decision is compared.
const ROWS: u64 = 1_000_000;

/// Runs started, resumed, finished and rejected.
type Tally = [u64; 4];

/// What every view must agree on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Facts {
    /// The session's end: its last decision (every event but a panel row), µs.
    end_us: u64,
    /// In all.
    all: Tally,
    /// Per agent type.
    by_agent: BTreeMap<String, Tally>,
    /// The highest running count.
    peak: u32,
    /// The `seq` of each decision, in order.
    decisions: Vec<u64>,
    /// Each duration drawn from a distribution (issue #32): the `seq` of the event that
    /// carries it and the time drawn, in order.
    draws: Vec<(u64, u64)>,
}

/// The facts of a JSON Lines trace: the ground truth.
fn of_trace(jsonl: &[u8]) -> Facts {
    let mut facts = Facts::default();
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    for line in jsonl.split(|b| *b == b'\n').filter(|line| !line.is_empty()) {
        let event: Value = serde_json::from_slice(line).expect("each trace line is JSON");
        let kind = event["kind"].as_str().expect("kind");
        let seq = event["seq"].as_u64().expect("seq");
        let t = event["t_us"].as_u64().expect("t_us");
        if kind != "panel_changed" && kind != "duration_drawn" {
            facts.end_us = facts.end_us.max(t);
        }
        if let Some(drawn) = event["drawn_us"].as_u64().or(event["think_us"].as_u64()) {
            facts.draws.push((seq, drawn));
        }
        if let Some(running) = event["running"].as_u64() {
            facts.peak = facts.peak.max(u32::try_from(running).expect("u32"));
        }
        let text = |key: &str| event[key].as_str().unwrap_or_default().to_string();
        let mut count = |agent_type: String, which: usize| {
            facts.all[which] += 1;
            facts.by_agent.entry(agent_type).or_default()[which] += 1;
        };
        match kind {
            "agent_started" => {
                types.insert(text("agent"), text("agent_type"));
                count(text("agent_type"), 0);
            }
            "agent_resumed" => count(types[&text("agent")].clone(), 1),
            "agent_finished" => count(types[&text("agent")].clone(), 2),
            "spawn_rejected" => count(text("agent_type"), 3),
            _ => {}
        }
        let decision = match kind {
            "panel_changed" | "spawn_requested" | "duration_drawn" => false,
            "report_delivered" => !event["scan"].is_null() || !event["review"].is_null(),
            "definition_noted" => event["outcome"] != "loaded",
            _ => true,
        };
        if decision {
            facts.decisions.push(seq);
        }
    }
    facts
}

fn tally(tally: &subsim_engine::runmodel::Tally) -> Tally {
    [tally.started, tally.resumed, tally.finished, tally.rejected]
}

/// The facts the model holds.
fn of_model(model: &RunModel) -> Facts {
    Facts {
        end_us: model.end.at,
        all: tally(&model.counts.all),
        by_agent: model
            .counts
            .by_agent
            .iter()
            .map(|(agent, t)| (agent.to_string(), tally(t)))
            .collect(),
        peak: model.counts.peak_running,
        decisions: model
            .order
            .iter()
            .flat_map(|group| group.seqs.iter().copied())
            .collect(),
        draws: model
            .draws
            .iter()
            .map(|draw| (draw.seq, draw.drawn_us))
            .collect(),
    }
}

/// The facts `run --format model` prints.
fn of_model_json(json: &str) -> Facts {
    let model: Value = serde_json::from_str(json).expect("the model is JSON");
    let tally = |t: &Value| -> Tally {
        ["started", "resumed", "finished", "rejected"].map(|key| t[key].as_u64().expect(key))
    };
    let counts = &model["counts"];
    Facts {
        end_us: model["end"]["t_us"].as_u64().expect("end"),
        all: tally(counts),
        by_agent: counts["by_agent"]
            .as_object()
            .expect("by_agent")
            .iter()
            .map(|(agent, t)| (agent.clone(), tally(t)))
            .collect(),
        peak: u32::try_from(counts["peak_running"].as_u64().expect("peak")).expect("u32"),
        decisions: model["order"]
            .as_array()
            .expect("order")
            .iter()
            .flat_map(|group| group["seqs"].as_array().expect("seqs").clone())
            .map(|seq| seq.as_u64().expect("seq"))
            .collect(),
        draws: model["draws"]
            .as_array()
            .expect("draws")
            .iter()
            .map(|draw| {
                let number = |key: &str| draw[key].as_u64().expect(key);
                (number("seq"), number("drawn_us"))
            })
            .collect(),
    }
}

/// Where `view` says otherwise than `truth`, in words (empty: they agree).
fn disagreements(truth: &Facts, name: &str, view: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    if view.end_us != truth.end_us {
        out.push(format!(
            "{name}: end {} µs, trace {}",
            view.end_us, truth.end_us
        ));
    }
    if view.all != truth.all {
        out.push(format!(
            "{name}: started/resumed/finished/rejected {:?}, trace {:?}",
            view.all, truth.all
        ));
    }
    if view.by_agent != truth.by_agent {
        out.push(format!(
            "{name}: per agent {:?}, trace {:?}",
            view.by_agent, truth.by_agent
        ));
    }
    if view.peak != truth.peak {
        out.push(format!("{name}: peak {}, trace {}", view.peak, truth.peak));
    }
    if view.decisions != truth.decisions {
        let at = view
            .decisions
            .iter()
            .zip(&truth.decisions)
            .position(|(a, b)| a != b)
            .unwrap_or(view.decisions.len().min(truth.decisions.len()));
        out.push(format!(
            "{name}: decision order differs at #{at}: {:?}, trace {:?}",
            view.decisions.get(at),
            truth.decisions.get(at)
        ));
    }
    if view.draws != truth.draws {
        out.push(format!(
            "{name}: draws {:?}, trace {:?}",
            view.draws, truth.draws
        ));
    }
    out
}

/// What `run --format json` says, for the facts it carries (totals, no order).
fn summary_disagreements(truth: &Facts, json: &str) -> Vec<String> {
    let summary: Value = serde_json::from_str(json).expect("the summary is JSON");
    let mut out = Vec::new();
    let pairs = [
        ("end", summary["makespan_us"].as_u64(), truth.end_us),
        (
            "started",
            summary["spawns"]["started"].as_u64(),
            truth.all[0],
        ),
        (
            "resumed",
            summary["resumes"]["total"].as_u64(),
            truth.all[1],
        ),
        (
            "rejected",
            summary["spawns"]["rejected"].as_u64(),
            truth.all[3],
        ),
        (
            "peak",
            summary["running"]["peak"].as_u64(),
            u64::from(truth.peak),
        ),
    ];
    for (what, got, want) in pairs {
        if got != Some(want) {
            out.push(format!("summary json: {what} {got:?}, trace {want}"));
        }
    }
    out
}

/// What the narration's closing summary says: its first line, and the rejections.
fn narration_disagreements(truth: &Facts, text: &str) -> Vec<String> {
    let Some((_, closing)) = text.split_once("── Summary ──\n") else {
        return vec!["narration: no closing summary".into()];
    };
    let runs = |n: u64| if n == 1 { "run" } else { "runs" };
    let mut first = format!(
        "In {} of virtual time: {} {} started",
        match truth.end_us {
            0 => "0s".to_string(),
            micros => human_duration(micros),
        },
        truth.all[0],
        runs(truth.all[0])
    );
    if truth.all[1] > 0 {
        first.push_str(&format!(" and {} resumed", truth.all[1]));
    }
    first.push_str(&format!("; at most {} running at once", truth.peak));
    let mut out = Vec::new();
    if !closing.starts_with(&first) {
        out.push(format!(
            "narration: closing summary {:?}, trace says {first:?}",
            closing.lines().next()
        ));
    }
    let said = closing
        .lines()
        .find(|line| line.contains(" rejected: "))
        .and_then(|line| line.split(' ').next()?.parse::<u64>().ok())
        .unwrap_or(0);
    if said != truth.all[3] {
        out.push(format!(
            "narration: {said} spawns rejected, trace {}",
            truth.all[3]
        ));
    }
    out
}

/// Runs `spec` through every view; every disagreement with the trace, in words.
fn check(spec: &SimSpec) -> Vec<String> {
    let mut writer = JsonlWriter::new(Vec::new());
    let mut builder = Builder::new(ROWS);
    let options = NarrationOptions {
        summary: true,
        ..NarrationOptions::default()
    };
    let mut narration = TextWriter::with_options(Vec::new(), options);
    Simulation::new(spec.clone()).run(&mut Tee {
        first: &mut writer,
        second: &mut Tee {
            first: &mut builder,
            second: &mut narration,
        },
    });
    let truth = of_trace(&writer.finish().expect("in memory"));
    let model = builder.finish();
    let mut problems = disagreements(&truth, "model", &of_model(&model));
    problems.extend(disagreements(
        &truth,
        "model json",
        &of_model_json(&model.to_json()),
    ));
    if model.more_runs > 0 || model.more_decisions > 0 {
        problems.push("model: thinned under the test's budget".into());
    }
    // `run --format summary/json` on a run of its own, through the typed entries.
    let mut summary = Summary::for_spec(spec);
    Simulation::new(spec.clone()).run_summarized(&mut summary, None, None);
    problems.extend(summary_disagreements(&truth, &summary.render_json()));
    let text = narration.finish().expect("in memory");
    problems.extend(narration_disagreements(
        &truth,
        &String::from_utf8_lossy(&text),
    ));
    problems
}

/// The shipped scenarios this test runs, and those it leaves out with the reason.
fn shipped() -> (Vec<(String, SimSpec)>, Vec<String>) {
    let root = repo_root();
    let mut run = Vec::new();
    let mut left_out = Vec::new();
    for path in scenario_files(&root.join("scenarios")) {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(Path::new(""))
            .display()
            .to_string();
        match subsim_scenario::load_scenario(&path) {
            Err(diagnostics) => {
                left_out.push(format!("{name}: does not load alone: {diagnostics}"))
            }
            Ok(loaded) => {
                let mut summary = Summary::for_spec(&loaded.spec);
                Simulation::new(loaded.spec.clone()).run_summarized(&mut summary, None, None);
                if summary.events() > TOO_BIG {
                    left_out.push(format!(
                        "{name}: {} events (over {TOO_BIG})",
                        summary.events()
                    ));
                } else {
                    run.push((name, loaded.spec));
                }
            }
        }
    }
    (run, left_out)
}

#[test]
fn every_view_agrees_with_the_trace_on_every_shipped_scenario() {
    let (scenarios, left_out) = shipped();
    assert!(
        scenarios.len() >= 300,
        "only {} scenarios ran",
        scenarios.len()
    );
    // Only load scenarios of tens of thousands of arrivals are left out (by size), never
    // one that does not load alone.
    assert!(
        left_out.iter().all(|why| why.contains("events (over")),
        "left out: {left_out:#?}"
    );
    eprintln!(
        "agreement: {} scenarios through every view; left out: {left_out:#?}",
        scenarios.len()
    );
    let mut problems = Vec::new();
    for (name, spec) in &scenarios {
        for problem in check(spec) {
            problems.push(format!("{name}: {problem}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} disagreement(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn every_view_agrees_with_the_trace_on_generated_scenarios(
        spec in crate::properties::scenario()
    ) {
        let problems = check(&spec);
        prop_assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}

/// One fact of a model changed, and what it is.
type Tamper = (&'static str, fn(&mut RunModel));

/// The demo's model, tampered with one fact at a time: each change is caught.
#[test]
fn a_tampered_model_is_caught() {
    let loaded =
        subsim_scenario::load_scenario(&repo_root().join("scenarios/demo.yaml")).expect("demo");
    let mut writer = JsonlWriter::new(Vec::new());
    let mut builder = Builder::new(ROWS);
    Simulation::new(loaded.spec).run(&mut Tee {
        first: &mut writer,
        second: &mut builder,
    });
    let truth = of_trace(&writer.finish().expect("in memory"));
    let model = builder.finish();
    assert!(disagreements(&truth, "model", &of_model(&model)).is_empty());
    let tampered: [Tamper; 6] = [
        ("end", |m| m.end.at += 1),
        ("rejected", |m| m.counts.all.rejected -= 1),
        ("per agent", |m| {
            let first = m.counts.by_agent.values_mut().next().expect("an agent");
            first.finished += 1;
        }),
        ("peak", |m| m.counts.peak_running -= 1),
        ("order", |m| {
            let [a, b] = m.order.get_disjoint_mut([1, 2]).expect("two groups");
            std::mem::swap(&mut a.seqs, &mut b.seqs);
        }),
        ("think time", |m| m.draws[0].drawn_us += 1),
    ];
    for (what, tamper) in tampered {
        let mut bad = model.clone();
        tamper(&mut bad);
        assert!(
            !disagreements(&truth, "model", &of_model(&bad)).is_empty(),
            "tampering with the {what} went unnoticed"
        );
        assert!(
            !disagreements(&truth, "model json", &of_model_json(&bad.to_json())).is_empty(),
            "tampering with the {what} went unnoticed in the JSON"
        );
    }
    // And the summary and narration checks fail on a trace that says otherwise.
    let mut wrong = truth.clone();
    wrong.peak += 1;
    wrong.all[3] = 0;
    let loaded =
        subsim_scenario::load_scenario(&repo_root().join("scenarios/demo.yaml")).expect("demo");
    let mut summary = Summary::for_spec(&loaded.spec);
    Simulation::new(loaded.spec.clone()).run_summarized(&mut summary, None, None);
    assert!(summary_disagreements(&truth, &summary.render_json()).is_empty());
    assert_eq!(
        summary_disagreements(&wrong, &summary.render_json()).len(),
        2
    );
    let mut narration = TextWriter::with_options(
        Vec::new(),
        NarrationOptions {
            summary: true,
            ..NarrationOptions::default()
        },
    );
    Simulation::new(loaded.spec).run(&mut narration);
    let text = String::from_utf8(narration.finish().expect("in memory")).expect("UTF-8");
    assert!(narration_disagreements(&truth, &text).is_empty());
    assert_eq!(narration_disagreements(&wrong, &text).len(), 2);
}
