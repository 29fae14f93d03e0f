//! A conversation → its steps: Agent calls as `spawn`, a subagent's tool calls as `tool`
//! steps with their measured durations, blocking output reads as `wait`, the gaps as `work`.

use super::facts::{outcome, permission_of, Permission};
use super::*;

/// The longest measured duration taken as written (a year): beyond it a figure is not a
/// measurement, and in microseconds it would overflow the scenario's durations.
pub(super) const MAX_MEASURED_MS: u64 = 365 * 24 * 3_600 * 1_000;

/// A measured duration as JSON wrote it, in whole milliseconds, or why it is not one
/// (negative, not finite, over [`MAX_MEASURED_MS`], not a number).
pub(super) fn duration_ms(value: Num) -> Result<Option<u64>, String> {
    let ms = match value {
        Num::Missing => return Ok(None),
        Num::Int(ms) => ms as f64,
        Num::Float(ms) => ms,
        Num::Other => return Err("is not a number".to_string()),
    };
    // 1e308 is shown as written, not as its 309 digits.
    let shown = if ms.abs() >= 1e15 {
        format!("{ms:e}")
    } else {
        format!("{ms}")
    };
    if !ms.is_finite() || ms < 0.0 {
        return Err(format!("is {shown}, not a duration"));
    }
    if ms > MAX_MEASURED_MS as f64 {
        return Err(format!("is {shown} ms, more than a year"));
    }
    Ok(Some(ms.round() as u64))
}

/// `totalDurationMs` of a result, when it is a usable duration.
pub(super) fn total_ms(result: &ToolResult) -> Option<u64> {
    duration_ms(result.total_duration()).ok().flatten()
}

/// `duration_ms` of a notification's `<usage>`, read as a JSON number.
pub(super) fn notice_duration(notice: &Notice) -> Result<Option<u64>, String> {
    let Some(token) = &notice.duration_ms else {
        return Ok(None);
    };
    match serde_json::from_str::<serde_json::Value>(token) {
        Ok(serde_json::Value::Number(number)) => match number.as_u64() {
            Some(ms) => duration_ms(Num::Int(i128::from(ms))),
            None => duration_ms(number.as_f64().map_or(Num::Other, Num::Float)),
        },
        _ => Err(format!("`{}` is not a number", one_line(token, 40))),
    }
}

/// When a call started: for a foreground call that completed, its result's time less its
/// `totalDurationMs` (never before the call was written); otherwise when it was written.
pub(super) fn measured_start(call: &ToolUse, result: Option<&ToolResult>) -> i64 {
    let Some(result) = result.filter(|_| call.is_spawn()) else {
        return call.t_ms;
    };
    let completed = result.status() == Some("completed");
    match total_ms(result).and_then(|total| i64::try_from(total).ok()) {
        Some(total) if completed => result.t_ms.saturating_sub(total).max(call.t_ms),
        _ => call.t_ms,
    }
}

/// The `work` that keeps a run going until a stop at `stop_at` (real time) finds it
/// running: from where its transcript ends to the stop, plus [`UNFINISHED_MS`].
pub(super) fn unfinished(covered_until: i64, stop_at: i64) -> u64 {
    u64::try_from(stop_at.saturating_sub(covered_until))
        .unwrap_or(0)
        .saturating_add(UNFINISHED_MS)
}

/// A replayed run: its behaviour, its report, until when its transcript covers (real
/// time), and when its transcript shows its work done.
type Replayed = (Vec<Out>, Option<String>, i64, Option<i64>);

impl Builder {
    /// The steps of one conversation. `owner` is the name of the subagent it belongs to
    /// (`None` for main), the tools its replayed run will have ([`Builder::run_tools`]) and
    /// whether it runs in the background (where its prompts appear, PERM-3/4):
    /// a call of any other tool is folded into the surrounding `work`, so that the replay
    /// does not lose its time to a refusal the real session did not have.
    pub(super) fn script(
        &mut self,
        conv: &Conversation,
        start: i64,
        owner: Option<(&str, &[String], bool)>,
        depth: usize,
    ) -> Vec<Out> {
        let mut steps = Vec::new();
        let mut cursor = start;
        // Prompts of this run so far (the trace numbers them 1, 2, …).
        let mut prompts = 0u32;
        // What its tool calls showed about permission (tool, what, call and result lines),
        // and the tools of the calls that ran: the facts of [`Builder::permission_facts`].
        let mut seen: Vec<(String, Permission, (usize, usize))> = Vec::new();
        let mut ran: BTreeSet<&str> = BTreeSet::new();
        let notices = Notices::new(conv.notices.clone());
        // Calls of one response share a message id; keep the order of first appearance.
        let mut groups: Vec<Vec<&ToolUse>> = Vec::new();
        let mut group_of: HashMap<&str, usize> = HashMap::new();
        for call in &conv.calls {
            match group_of.get(call.message_id.as_str()) {
                Some(&index) => groups[index].push(call),
                None => {
                    group_of.insert(&call.message_id, groups.len());
                    groups.push(vec![call]);
                }
            }
        }
        for group in groups {
            if owner.is_none() {
                self.mark(steps.len(), group.first().map_or(0, |call| call.line));
            }
            // A foreground call that completed started at (result − totalDurationMs), the
            // measured start; other calls at the time they were written.
            let group_time = group
                .iter()
                .map(|call| measured_start(call, conv.results.get(&call.id)))
                .min()
                .unwrap_or(cursor);
            let spawns: Vec<&ToolUse> = group
                .iter()
                .copied()
                .filter(|call| call.is_spawn())
                .collect();
            let waits: Vec<&ToolUse> = group
                .iter()
                .copied()
                .filter(|call| reads_output(call) && call.input().block.0 != Some(false))
                .collect();
            let tools: Vec<&ToolUse> = match owner {
                None => Vec::new(), // main's own tool calls are folded into its work
                // Spawns and output reads are replayed as `spawn` and `wait_for` (or
                // folded), never as `tool` steps.
                Some((_, kept, _)) => group
                    .iter()
                    .copied()
                    .filter(|call| {
                        !call.is_spawn() && !reads_output(call) && kept.contains(&call.name)
                    })
                    .collect(),
            };
            if spawns.is_empty() && tools.is_empty() && waits.is_empty() {
                continue;
            }
            if group_time > cursor {
                steps.push(Out::Work((group_time - cursor) as u64));
                cursor = group_time;
            }
            if !spawns.is_empty() {
                let mut calls = Vec::new();
                let mut resume = cursor;
                for call in spawns {
                    if let Some((spawn, back)) =
                        self.spawn(conv, &notices, call, owner.map(|(name, _, _)| name), depth)
                    {
                        if let Some(back) = back {
                            resume = resume.max(back);
                        }
                        calls.push(spawn);
                    }
                }
                if !calls.is_empty() {
                    steps.push(Out::Spawns(calls));
                }
                cursor = resume;
            }
            for call in waits {
                let id = call
                    .text("task_id")
                    .or_else(|| call.text("agentId"))
                    .or_else(|| call.text("agent_id"));
                let Some(name) = id.and_then(|id| self.agent_names.get(id)).cloned() else {
                    continue; // a shell's output, or an agent this import does not know
                };
                steps.push(Out::WaitFor(name));
                if let Some(result) = conv.results.get(&call.id) {
                    cursor = cursor.max(result.t_ms);
                }
            }
            if !tools.is_empty() {
                // Calls of one response run together: ordered by when each came back,
                // each step lasts from the previous return to its own, so the total and
                // every return time are kept.
                let mut timed: Vec<(&ToolUse, Option<&ToolResult>)> = tools
                    .iter()
                    .map(|call| (*call, conv.results.get(&call.id)))
                    .collect();
                timed.sort_by_key(|(call, result)| result.map_or(call.t_ms, |r| r.t_ms));
                for (call, result) in timed {
                    let permission = permission_of(result);
                    let input = if self.options.keep_text && call.name == "Bash" {
                        call.text("command")
                            .map(|text| self.kept_text(text, "Bash command", call.line))
                    } else {
                        None
                    };
                    let lines = (call.line, result.map_or(call.line, |result| result.line));
                    match permission {
                        Permission::PersonDenied => {
                            // The person said no: the step prompts, and `user.answers`
                            // denies exactly that prompt (the others keep the default
                            // answer).
                            prompts += 1;
                            if let Some((name, _, _)) = owner {
                                self.denials
                                    .push((name.to_string(), call.name.clone(), prompts));
                            }
                            seen.push((call.name.clone(), permission, lines));
                            steps.push(Out::Tool {
                                name: call.name.clone(),
                                duration_ms: None,
                                prompt: Some(true),
                                input,
                            });
                            // The time up to the answer is the person's: the scenario's
                            // think time stands for it (not the next `work`).
                            if let Some(result) = result {
                                let answered = u64::try_from(result.t_ms.saturating_sub(cursor));
                                self.answer_times.push(answered.unwrap_or(0));
                                cursor = cursor.max(result.t_ms);
                            }
                            continue;
                        }
                        Permission::AutoDenied => {
                            // A prompt the rules route (PERM-4/5): the model auto-denies it
                            // where the documentation says so.
                            prompts += 1;
                            seen.push((call.name.clone(), permission, lines));
                            steps.push(Out::Tool {
                                name: call.name.clone(),
                                duration_ms: None,
                                prompt: Some(true),
                                input,
                            });
                            continue;
                        }
                        Permission::ModeDenied if self.dont_ask() => {
                            // PERM-9: no `prompt:`, so that the mode decides (and denies
                            // what it does not let run), never the person.
                            seen.push((call.name.clone(), permission, lines));
                            steps.push(Out::Tool {
                                name: call.name.clone(),
                                duration_ms: None,
                                prompt: None,
                                input,
                            });
                            continue;
                        }
                        Permission::ModeDenied => {
                            // Denied in `dontAsk` mode in a session whose recorded mode is
                            // another: the mode changed, which the scenario cannot replay.
                            self.warnings.push(format!(
                                "{}:{}: a {} call denied in dontAsk mode, but the session's \
                                 recorded mode is {}; replayed as a call that ran (the mode \
                                 change is not imported)",
                                one_line(&conv.file, 200),
                                lines.1,
                                call.name,
                                self.permission_mode.as_deref().unwrap_or("not recorded")
                            ));
                        }
                        Permission::None => {
                            ran.insert(call.name.as_str());
                        }
                    }
                    let end = result.map_or(call.t_ms, |result| result.t_ms);
                    let duration = end.saturating_sub(cursor).max(0) as u64;
                    cursor = cursor.max(end);
                    steps.push(Out::Tool {
                        name: call.name.clone(),
                        duration_ms: Some(duration),
                        prompt: Some(false),
                        input,
                    });
                }
            }
        }
        if let Some((name, _, background)) = owner {
            self.permission_facts(name, background, &conv.file, &seen, &ran);
            let end = conv.end_ms.unwrap_or(cursor);
            if end > cursor {
                steps.push(Out::Work((end - cursor) as u64));
            }
        }
        steps
    }

    /// Marks the start of one response of main's (see [`Mark`]).
    pub(super) fn mark(&mut self, steps: usize, line: usize) {
        self.marks.push(Mark {
            steps,
            facts: self.facts.len(),
            denials: self.denials.len(),
            stops: self.stops.len(),
            answers: self.answer_times.len(),
            spawn_calls: self.spawn_calls,
            line,
        });
    }

    /// Notes what one Agent call shows about fork mode (see [`ForkEvidence`]).
    pub(super) fn note_fork_evidence(
        &mut self,
        call: &ToolUse,
        agent_type: &str,
        outcome: &Outcome,
        background: bool,
        by_main: bool,
    ) {
        let evidence = &mut self.fork_evidence;
        let line = Some(call.line);
        if agent_type == "fork" {
            evidence.fork = evidence.fork.or(line);
        }
        if call.input().run_in_background.0.is_some() {
            evidence.run_in_background = evidence.run_in_background.or(line);
        }
        if by_main {
            match outcome {
                Outcome::Completed(_) | Outcome::Interrupted if !background => {
                    evidence.foreground = evidence.foreground.or(line);
                }
                Outcome::Launched => evidence.background = evidence.background.or(line),
                Outcome::Completed(..)
                | Outcome::UnknownType
                | Outcome::Interrupted
                | Outcome::Refused(..)
                | Outcome::NoResult => {}
            }
        }
    }

    /// The `subagent_type` of an Agent call, trimmed; empty (general-purpose, SPAWN-3)
    /// when the call gives none, with a warning when it gives something that is not text.
    pub(super) fn agent_type(&mut self, call: &ToolUse) -> String {
        match &call.input().subagent_type {
            Text::Str(text) => text.trim().to_string(),
            Text::Missing => String::new(),
            Text::Other => {
                self.warnings.push(format!(
                    "{} call at line {}: its subagent_type is not text; replayed as \
                     general-purpose",
                    call.name, call.line
                ));
                String::new()
            }
        }
    }

    /// How long a subagent without a transcript ran, from what its call's result and its
    /// notification measured; a measured figure that is not a duration, or that is longer
    /// than the transcript's own times allow, is said and replaced by those times.
    pub(super) fn measured(
        &mut self,
        name: &str,
        call: &ToolUse,
        result: Option<&ToolResult>,
        outcome: &Outcome,
        notice: Option<&Notice>,
    ) -> Option<u64> {
        let between = |from: i64, to: i64| u64::try_from(to.saturating_sub(from)).unwrap_or(0);
        match outcome {
            Outcome::Completed(total) => {
                let result = result?;
                let span = between(call.t_ms, result.t_ms);
                match total {
                    Some(total) if *total > span.saturating_add(TOTAL_SLACK_MS) => {
                        self.warnings.push(format!(
                            "{name} (line {}): totalDurationMs says {} but its result came {} \
                             after the call; the transcript's times are replayed",
                            call.line,
                            ms_text(*total),
                            ms_text(span)
                        ));
                        Some(span)
                    }
                    Some(total) => Some(*total),
                    None => Some(span),
                }
            }
            Outcome::Launched => {
                let notice = notice?;
                let launch = result.map_or(call.t_ms, |result| result.t_ms);
                let span = between(launch, notice.t_ms);
                match notice_duration(notice) {
                    Ok(Some(ms)) => Some(ms),
                    Ok(None) => Some(span),
                    Err(why) => {
                        self.warnings.push(format!(
                            "{name} (line {}): its notification's duration_ms {why}; the time \
                             up to the notification ({}) is replayed",
                            call.line,
                            ms_text(span)
                        ));
                        Some(span)
                    }
                }
            }
            Outcome::Interrupted => result.map(|result| between(call.t_ms, result.t_ms)),
            Outcome::UnknownType | Outcome::Refused(_) | Outcome::NoResult => None,
        }
    }

    /// One Agent call: its `spawn` item, and when the caller gets going again (the
    /// result's time for a foreground call).
    pub(super) fn spawn(
        &mut self,
        conv: &Conversation,
        notices: &Notices,
        call: &ToolUse,
        caller: Option<&str>,
        depth: usize,
    ) -> Option<(SpawnOut, Option<i64>)> {
        self.spawn_calls += 1;
        let agent_type = self.agent_type(call);
        let description = self.text(call.text("description").unwrap_or(""));
        let result = conv.results.get(&call.id);
        let outcome = outcome(result);
        if let Some(Err(why)) = result.map(|result| duration_ms(result.total_duration())) {
            self.warnings.push(format!(
                "{} call at line {}: its result's totalDurationMs {why}; ignored (the \
                 transcript's times are replayed)",
                call.name, call.line
            ));
        }
        let agent_type = self.replayed_type(call, agent_type, &outcome);
        let agent_id = result.and_then(ToolResult::agent_id).map(str::to_string);
        let name = self.spawn_name(call, &description, &agent_type, agent_id.as_deref());
        // What the call asked for, when it says (`run_in_background`): the model places it
        // by FGBG-1, and a run the session placed otherwise is a departure. A call that
        // does not say is replayed where it ran.
        let background = call
            .input()
            .run_in_background
            .0
            .unwrap_or(matches!(outcome, Outcome::Launched));
        self.note_fork_evidence(call, &agent_type, &outcome, background, caller.is_none());
        let shown_type = if agent_type.is_empty() {
            "general-purpose"
        } else {
            agent_type.as_str()
        };
        let comment = format!(
            "{} call {:?} ({}, {}){}",
            call.name,
            one_line(&description, 80),
            shown_type,
            if background {
                "background"
            } else {
                "foreground"
            },
            caller
                .map(|caller| format!(", made by {caller}"))
                .unwrap_or_default()
        );
        let sub_key = self.find_sub(call, agent_id.as_deref(), &agent_type);
        let notice = notices
            .find(agent_id.as_deref(), &call.id)
            .or_else(|| self.main_notices.find(agent_id.as_deref(), &call.id))
            .cloned();
        // Not in its launcher's file: written in another agent's (NOTIFY-3 departed).
        let stray = match (&notice, &outcome) {
            (None, Outcome::Launched | Outcome::NoResult) => agent_id
                .as_deref()
                .and_then(|id| self.stray_notices.get(id))
                .or_else(|| self.stray_notices.get(&call.id))
                .cloned(),
            _ => None,
        };
        let notice = notice.or_else(|| stray.as_ref().map(|(_, found)| found.clone()));
        let (mut behavior, report, covered_until, done_at) =
            if matches!(outcome, Outcome::UnknownType) {
                // Refused before it ran: no behaviour, no definition.
                (Vec::new(), None, call.t_ms, None)
            } else if let Some(key) = sub_key.filter(|_| depth < MAX_NESTING) {
                let tools = self.run_tools(&agent_type, background, depth + 1);
                let run = (name.as_str(), tools.as_slice(), background);
                self.replay_transcript(key, call, &outcome, run, depth)?
            } else {
                let (behavior, covered_until) =
                    self.replay_measured(&name, call, result, &outcome, notice.as_ref());
                if let Some(id) = &agent_id {
                    self.warnings.push(format!(
                        "subagent {id} ({name}): its transcript was not found; replayed as one \
                     `work` of its measured time"
                    ));
                }
                (behavior, None, covered_until, None)
            };
        let spawned = Spawned {
            call,
            result,
            outcome: &outcome,
            notice: notice.as_ref(),
            name: &name,
            who: format!("{} call {name} ({shown_type})", call.name),
            covered_until,
            caller_conv: conv,
            caller: caller.unwrap_or("main"),
            done_at,
            stray: stray.as_ref().map(|(file, found)| (file.as_str(), found)),
        };
        self.outcome_facts(&spawned, &agent_type, &mut behavior);
        if !matches!(outcome, Outcome::UnknownType | Outcome::Refused(_)) {
            self.reported(call, report.as_deref(), &agent_type, &mut behavior);
        }
        let model = call
            .text("model")
            .filter(|model| !model.trim().is_empty())
            .map(str::to_string);
        let isolation = self.isolation(call, &name);
        let prompt = match call.text("prompt") {
            Some(text) if self.options.keep_text => Some(self.kept_text(text, "prompt", call.line)),
            _ => None,
        };
        let resume = match outcome {
            Outcome::Completed(_) | Outcome::Interrupted if !background => {
                Some(result.map_or(call.t_ms, |result| result.t_ms))
            }
            Outcome::Completed(..)
            | Outcome::Launched
            | Outcome::UnknownType
            | Outcome::Interrupted
            | Outcome::Refused(..)
            | Outcome::NoResult => None,
        };
        Some((
            SpawnOut {
                comment,
                agent: (!agent_type.is_empty()).then_some(agent_type),
                name,
                background,
                model,
                isolation,
                prompt,
                behavior,
            },
            resume,
        ))
    }

    /// The tools the replayed run of an Agent call will have, as the simulator resolves
    /// them for the scenario this import writes ([`tools::default_pool_tools`]): its pool
    /// is the default one (no `tools`, no MCP servers), a `fork` call is a fork (TOOLS-2),
    /// a built-in type denies what its definition does (SPAWN-9; the custom types written
    /// under `agents:` set no fields), and the run inherits the main mode (PERM-2, PERM-10,
    /// PERM-11), which decides `ExitPlanMode`. `depth` is the run's own.
    pub(super) fn run_tools(
        &self,
        agent_type: &str,
        background: bool,
        depth: usize,
    ) -> Vec<String> {
        let gates = self.gates;
        // The mode `session.permission_mode` is written with, else the default.
        let main_mode = self
            .permission_mode
            .as_deref()
            .filter(|mode| PERMISSION_MODES.contains(mode))
            .and_then(|mode| mode.parse::<PermissionMode>().ok())
            .unwrap_or_default();
        let (permission_mode, _) = prompt::effective_mode(main_mode, None, false, true, &gates);
        let placement = Placement {
            mode: if background {
                Mode::Background
            } else {
                Mode::Foreground
            },
            fork: agent_type == FORK_TYPE,
            permission_mode,
            ..Placement::at(
                u32::try_from(depth).unwrap_or(u32::MAX),
                gates.default_depth,
            )
        };
        let disallowed: Vec<String> = BuiltIn::from_name(agent_type)
            .map(|built_in| {
                built_in
                    .disallowed_tools()
                    .iter()
                    .map(|tool| tool.to_string())
                    .collect()
            })
            .unwrap_or_default();
        tools::default_pool_tools(placement, gates, &disallowed)
    }

    /// The type a call is replayed with: `agent_type`, or general-purpose (empty) when it
    /// is longer than any agent name and the call was not refused for it.
    pub(super) fn replayed_type(
        &mut self,
        call: &ToolUse,
        agent_type: String,
        outcome: &Outcome,
    ) -> String {
        if agent_type.chars().count() > MAX_TYPE_CHARS && !matches!(outcome, Outcome::UnknownType) {
            self.warnings.push(format!(
                "{} call at line {}: its subagent_type is {} characters, longer than any \
                 agent name ({MAX_TYPE_CHARS}); replayed as general-purpose",
                call.name,
                call.line,
                agent_type.chars().count()
            ));
            String::new()
        } else {
            agent_type
        }
    }

    /// The spawned run's name, unique in the scenario: from the call's `name`, else its
    /// description, else its type; kept for the run's `agent_id`.
    pub(super) fn spawn_name(
        &mut self,
        call: &ToolUse,
        description: &str,
        agent_type: &str,
        agent_id: Option<&str>,
    ) -> String {
        let wanted = match call.text("name").filter(|name| !name.trim().is_empty()) {
            Some(name) => slug(&self.text(name), 6),
            None => {
                let from_description = slug(description, 4);
                if from_description.is_empty() {
                    slug(agent_type, 4)
                } else {
                    from_description
                }
            }
        };
        let name = self.unique_name(&wanted);
        if let Some(id) = agent_id {
            self.agent_names.insert(id.to_string(), name.clone());
        }
        name
    }

    /// The behaviour of a call whose subagent transcript was found (`key`): that
    /// transcript, replayed as the run `(name, tools, background)`; with the run's last
    /// text and until when it covers (real time).
    pub(super) fn replay_transcript(
        &mut self,
        key: String,
        call: &ToolUse,
        outcome: &Outcome,
        run: (&str, &[String], bool),
        depth: usize,
    ) -> Option<Replayed> {
        let name = run.0;
        let sub_conv = {
            let sub = self.subs.get_mut(&key)?;
            sub.claimed = true;
            std::mem::take(&mut sub.conv)
        };
        if let Some(id) = &sub_conv.agent_id {
            self.agent_names
                .entry(id.clone())
                .or_insert_with(|| name.to_string());
        }
        self.agent_names
            .entry(key)
            .or_insert_with(|| name.to_string());
        let start = sub_conv.start_ms.unwrap_or(call.t_ms);
        if let (Outcome::Completed(Some(total)), Some(end)) = (outcome, sub_conv.end_ms) {
            // Measured on real files: a subagent transcript spans its totalDurationMs
            // within 0.15 s; far off, the file is probably not this call's.
            let span = end.saturating_sub(start);
            if span.abs_diff(i64::try_from(*total).unwrap_or(i64::MAX)) > 5_000 {
                self.warnings.push(format!(
                    "{name}: its transcript spans {} but the call took {} \
                     (totalDurationMs); the transcript's times are replayed",
                    ms_text(u64::try_from(span).unwrap_or(0)),
                    ms_text(*total)
                ));
            }
        }
        let behavior = self.script(&sub_conv, start, Some(run), depth + 1);
        let report = sub_conv.last_text.clone();
        let done_at = sub_conv.end_ms.filter(|_| sub_conv.done);
        Some((behavior, report, sub_conv.end_ms.unwrap_or(start), done_at))
    }

    /// The behaviour of a call without a transcript: one `work` of its measured time (up
    /// to the session's end when nothing measures it); with until when it covers.
    pub(super) fn replay_measured(
        &mut self,
        name: &str,
        call: &ToolUse,
        result: Option<&ToolResult>,
        outcome: &Outcome,
        notice: Option<&Notice>,
    ) -> (Vec<Out>, i64) {
        let measured = self.measured(name, call, result, outcome, notice);
        let measured =
            measured.unwrap_or_else(|| self.session_end.saturating_sub(call.t_ms).max(0) as u64);
        let behavior = if measured > 0 {
            vec![Out::Work(measured)]
        } else {
            Vec::new()
        };
        let covered_until = call
            .t_ms
            .saturating_add(i64::try_from(measured).unwrap_or(0));
        (behavior, covered_until)
    }

    /// The call's `isolation`: `worktree`, or left out with a warning when it is another
    /// value.
    pub(super) fn isolation(&mut self, call: &ToolUse, name: &str) -> Option<String> {
        match call.text("isolation") {
            Some("worktree") => Some("worktree".to_string()),
            Some(other) if !other.is_empty() => {
                self.warnings.push(format!(
                    "{name}: isolation `{other}` is not modelled; left out"
                ));
                None
            }
            _ => None,
        }
    }
}
