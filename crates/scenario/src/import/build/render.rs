//! The scenario's YAML, and cutting a replay to what one scenario file holds.

use super::*;

/// What a scenario file may hold, with room for the header and the session block: bytes
/// (the loader reads 4 MiB) and an over-estimate of YAML values (the loader reads
/// 100,000).
pub(super) const FIT_BYTES: usize = 3_500_000;

pub(super) const FIT_VALUES: usize = 90_000;

/// An over-estimate of the YAML values (scalars, lists, maps) a rendered text holds:
/// every key is two, every list item and flow map one more.
pub(super) fn values_in(text: &str) -> usize {
    text.matches(": ").count() * 2
        + text.matches(":\n").count() * 2
        + text.matches("- ").count()
        + text.matches('{').count()
        + 1
}

pub(super) fn pad(y: &mut String, indent: usize) {
    y.extend(std::iter::repeat_n(' ', indent));
}

/// Writes a block list of steps at `indent`.
pub(super) fn render_steps(y: &mut String, steps: &[Out], indent: usize) {
    for step in steps {
        match step {
            Out::Comment(text) => {
                pad(y, indent);
                let _ = writeln!(y, "# {}", one_line(text, 160));
            }
            Out::Work(ms) => {
                pad(y, indent);
                let _ = writeln!(y, "- work: {}", ms_text(*ms));
            }
            Out::Tool {
                name,
                duration_ms,
                prompt,
                input,
            } => {
                pad(y, indent);
                let mut fields = vec![format!("name: {}", quote(name))];
                if let Some(input) = input {
                    fields.push(format!("input: {}", quote(input)));
                }
                if let Some(ms) = duration_ms {
                    fields.push(format!("duration: {}", ms_text(*ms)));
                }
                if let Some(prompt) = prompt {
                    fields.push(format!("prompt: {prompt}"));
                }
                let _ = writeln!(y, "- tool: {{{}}}", fields.join(", "));
            }
            Out::WaitFor(name) => {
                pad(y, indent);
                let _ = writeln!(y, "- wait: {{for: {}}}", quote(name));
            }
            Out::Report(text) => {
                pad(y, indent);
                let _ = writeln!(y, "- report: {}", quote(text));
            }
            Out::Fail => {
                pad(y, indent);
                let _ = writeln!(
                    y,
                    "# the notification said `failed`; the cause is not in the transcript"
                );
                pad(y, indent);
                let _ = writeln!(y, "- fail: {{api_error: server}}");
            }
            Out::Spawns(calls) => {
                if let [call] = calls.as_slice() {
                    pad(y, indent);
                    let _ = writeln!(y, "# {}", one_line(&call.comment, 200));
                    pad(y, indent);
                    let _ = writeln!(y, "- spawn:");
                    render_spawn(y, call, indent + 4, false);
                } else {
                    pad(y, indent);
                    let _ = writeln!(y, "# {} Agent calls in one response", calls.len());
                    pad(y, indent);
                    let _ = writeln!(y, "- spawn:");
                    for call in calls {
                        pad(y, indent + 4);
                        let _ = writeln!(y, "# {}", one_line(&call.comment, 200));
                        render_spawn(y, call, indent + 4, true);
                    }
                }
            }
        }
    }
}

pub(super) fn render_spawn(y: &mut String, call: &SpawnOut, indent: usize, item: bool) {
    let mut first = item;
    let mut field = |y: &mut String, text: String| {
        if first {
            pad(y, indent);
            y.push_str("- ");
            first = false;
        } else {
            pad(y, indent + if item { 2 } else { 0 });
        }
        y.push_str(&text);
        y.push('\n');
    };
    if let Some(agent) = &call.agent {
        field(y, format!("agent: {}", quote(agent)));
    }
    field(y, format!("name: {}", quote(&call.name)));
    field(y, format!("background: {}", call.background));
    if let Some(model) = &call.model {
        field(y, format!("model: {}", quote(model)));
    }
    if let Some(isolation) = &call.isolation {
        field(y, format!("isolation: {}", quote(isolation)));
    }
    if let Some(prompt) = &call.prompt {
        field(y, format!("prompt: {}", quote(prompt)));
    }
    if call.behavior.is_empty() {
        field(y, "behavior: []".to_string());
    } else {
        field(y, "behavior:".to_string());
        render_steps(y, &call.behavior, indent + if item { 4 } else { 2 });
    }
}

impl Builder {
    /// Cuts the replay before the first response of main's that would take it past what
    /// a scenario file may hold, and says what was dropped: how many Agent calls, from
    /// which line, and the lines of the first of them.
    pub(super) fn fit(&mut self, main: &mut Vec<Out>) {
        let (mut bytes, mut values) = (0usize, 0usize);
        let step_cost = |steps: &[Out]| {
            let mut text = String::new();
            render_steps(&mut text, steps, 2);
            (text.len(), values_in(&text))
        };
        let marks = std::mem::take(&mut self.marks);
        for (index, mark) in marks.iter().enumerate() {
            let next = marks.get(index + 1);
            let end = next.map_or(main.len(), |next| next.steps);
            let facts_end = next.map_or(self.facts.len(), |next| next.facts);
            let (step_bytes, step_values) = step_cost(&main[mark.steps..end]);
            let fact_text: String = self.facts[mark.facts..facts_end]
                .iter()
                .map(|(what, yaml, _)| format!("  # {what}\n  - {yaml}\n"))
                .collect();
            bytes += step_bytes + fact_text.len();
            values += step_values + values_in(&fact_text);
            if bytes <= FIT_BYTES && values <= FIT_VALUES {
                continue;
            }
            if index == 0 {
                return; // nothing fits: the import says so (TooManyCalls)
            }
            let dropped = self.spawn_calls - mark.spawn_calls;
            let lines: Vec<String> = marks[index..]
                .iter()
                .take(20)
                .map(|mark| mark.line.to_string())
                .collect();
            self.warnings.push(format!(
                "the replay stops before line {}: with the responses from there on it would \
                 pass what one scenario file holds (4 MiB, 100,000 values); dropped: {dropped} \
                 of {} Agent calls, in the responses at lines {}{}",
                mark.line,
                self.spawn_calls,
                lines.join(", "),
                if marks.len() - index > 20 {
                    format!(" and {} more", marks.len() - index - 20)
                } else {
                    String::new()
                }
            ));
            main.truncate(mark.steps);
            self.facts.truncate(mark.facts);
            self.denials.truncate(mark.denials);
            self.stops.truncate(mark.stops);
            self.answer_times.truncate(mark.answers);
            self.spawn_calls = mark.spawn_calls;
            return;
        }
    }

    pub(super) fn render(
        &mut self,
        path: &Path,
        session_id: &str,
        version: Option<&str>,
        model: Option<&str>,
        main: &[Out],
    ) -> String {
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut y = String::new();
        let _ = writeln!(y, "# Imported by `subsim import` from {file_name}.");
        if self.options.keep_text {
            let _ = writeln!(
                y,
                "# --keep-text: prompts, reports and Bash commands are copied as written."
            );
        } else {
            let _ = writeln!(
                y,
                "# Prompts, results and file contents are not copied, and e-mail addresses and secrets are masked (--keep-text keeps them)."
            );
        }
        let short_id: String = session_id.chars().take(8).collect();
        let _ = writeln!(
            y,
            "name: {}",
            quote(&format!(
                "Imported session {short_id} (Claude Code {})",
                version.unwrap_or("version unknown")
            ))
        );
        let _ = writeln!(y, "description: |");
        let _ = writeln!(
            y,
            "  Replays session {} as measured: Agent calls {}, subagent transcripts {}.",
            quote(&self.text(session_id)),
            self.spawn_calls,
            self.subs.values().filter(|sub| sub.claimed).count()
        );
        let _ = writeln!(
            y,
            "  The expect: block is what the session showed; `subsim check` says whether the model reproduces it."
        );
        self.render_session(&mut y, version, model);
        let defined: Vec<String> = self.custom_types.iter().cloned().collect();
        if !defined.is_empty() {
            let _ = writeln!(y, "agents:");
            for agent in &defined {
                let _ = writeln!(y, "  {}:", quote(agent));
                let _ = writeln!(
                    y,
                    "    description: {}",
                    quote("a custom agent type the session used (its definition file was not imported)")
                );
            }
        }
        if main.is_empty() {
            let _ = writeln!(y, "main: []");
        } else {
            let _ = writeln!(y, "main:");
            render_steps(&mut y, main, 2);
        }
        if !self.stops.is_empty() || !self.denials.is_empty() {
            let _ = writeln!(y, "user:");
        }
        if !self.answer_times.is_empty() {
            // One think time for every prompt (the format has no per-prompt time): the
            // mean of what the person took, each listed.
            let total: u64 = self.answer_times.iter().sum();
            let mean = total / self.answer_times.len() as u64;
            let listed: Vec<String> = self
                .answer_times
                .iter()
                .take(10)
                .map(|ms| ms_text(*ms))
                .collect();
            let more = self.answer_times.len().saturating_sub(10);
            let _ = writeln!(
                y,
                "  think: {}   # the person's measured answer times: {}{} (their mean)",
                ms_text(mean),
                listed.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        if !self.denials.is_empty() {
            let _ = writeln!(y, "  answers:");
            for (name, tool, prompt) in &self.denials {
                let _ = writeln!(
                    y,
                    "    - {{agent: {}, tool: {}, prompt: {prompt}, answer: deny}}",
                    quote(name),
                    quote(tool)
                );
            }
        }
        if !self.stops.is_empty() {
            self.stops.sort();
            let _ = writeln!(y, "  actions:");
            for (at, name) in &self.stops {
                let _ = writeln!(y, "    - {{at: {}, stop: {}}}", ms_text(*at), quote(name));
            }
        }
        // The first fact: every Agent call of the transcript is one spawn_requested.
        self.facts.insert(
            0,
            (
                format!(
                    "the transcript holds {} Agent tool calls (Task/Agent)",
                    self.spawn_calls
                ),
                format!(
                    "count: {{kind: spawn_requested}}\n    equals: {}",
                    self.spawn_calls
                ),
                None,
            ),
        );
        let _ = writeln!(y, "expect:");
        for (index, (what, fact, source)) in self.facts.iter().enumerate() {
            // The transcript line of the fact (by the file's name: the scenario does not
            // carry the path it was imported from).
            let at = source
                .as_ref()
                .map(|source| {
                    let name = Path::new(&source.file)
                        .file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    format!(" ({})", line_range(&name, source.lines))
                })
                .unwrap_or_default();
            let _ = writeln!(y, "  # {}: {}{at}", index + 1, one_line(what, 160));
            let _ = writeln!(y, "  - {fact}");
        }
        y
    }

    /// The `session:` block: what the transcript shows (version, kind, model, permission
    /// mode, fork mode, the session's length), each with where it came from, and what it
    /// could not show.
    pub(super) fn render_session(
        &mut self,
        y: &mut String,
        version: Option<&str>,
        model: Option<&str>,
    ) {
        let _ = writeln!(y, "session:");
        match (self.kind, self.entrypoint.as_deref()) {
            (Some(kind), _) => {
                let _ = writeln!(y, "  kind: {kind}   # from the transcript's `entrypoint`");
            }
            (None, Some(entry)) => {
                let _ = writeln!(
                    y,
                    "  kind: interactive   # the transcript's `entrypoint` is {}",
                    quote(&one_line(entry, 40))
                );
            }
            (None, None) => {
                let _ = writeln!(
                    y,
                    "  # kind: the transcript has no `entrypoint`; interactive is assumed"
                );
            }
        }
        match version {
            Some(version) => {
                let _ = writeln!(y, "  version: {}", quote(version));
            }
            None => {
                let _ = writeln!(
                    y,
                    "  # the transcript names no version: the simulator's default applies"
                );
            }
        }
        if let Some(model) = model {
            let _ = writeln!(y, "  model: {}", quote(model));
        }
        match self.permission_mode.as_deref() {
            Some(mode) if PERMISSION_MODES.contains(&mode) => {
                let _ = writeln!(
                    y,
                    "  permission_mode: {}   # the transcript's `permissionMode`",
                    quote(mode)
                );
            }
            Some(other) => {
                self.warnings.push(format!(
                    "the transcript's permissionMode {} is not one the simulator knows; the \
                     default mode applies",
                    quote(&one_line(other, 40))
                ));
            }
            None => {}
        }
        let version = version
            .and_then(|text| text.parse::<Version>().ok())
            .unwrap_or_default();
        if let Some((value, why)) = self.fork_mode(version) {
            let _ = writeln!(
                y,
                "  env: {{CLAUDE_CODE_FORK_SUBAGENT: \"{value}\"}}   # {why}"
            );
        }
        let span = u64::try_from(self.session_end.saturating_sub(self.t0)).unwrap_or(0);
        if span.saturating_add(2 * UNFINISHED_MS) > LONG_SESSION_MS {
            let hours = span / 3_600_000 + 48;
            self.warnings.push(format!(
                "the session spans {}, past the simulator's 30-day `max_time`; the scenario \
                 sets `limits: {{max_time: {hours}h}}`",
                ms_text(span)
            ));
            let _ = writeln!(
                y,
                "  limits: {{max_time: {hours}h}}   # the session spans {}",
                ms_text(span)
            );
        }
        let _ = writeln!(
            y,
            "  # not in a transcript, so not imported: settings (permissions, hooks, env), \
             agent definition files, MCP servers"
        );
    }

    /// `CLAUDE_CODE_FORK_SUBAGENT` when what the Agent calls show disagrees with the
    /// default fork mode of the session's kind and version (FORK-1, FORK-2): a call of
    /// main's that ran in the foreground, or one that passes `run_in_background`, shows
    /// fork mode off (FGBG-1 case 3, FORK-3); a `fork` call shows it on.
    pub(super) fn fork_mode(&mut self, version: Version) -> Option<(&'static str, String)> {
        let default_on = self.kind.is_none()
            && subsim_rules::version::Gates::for_version(version).fork_mode_interactive_default;
        let evidence = self.fork_evidence;
        let off = evidence
            .foreground
            .map(|line| format!("the Agent call at line {line} ran in the foreground"))
            .or_else(|| {
                evidence
                    .run_in_background
                    .map(|line| format!("the Agent call at line {line} passes run_in_background"))
            });
        let on = evidence
            .fork
            .map(|line| format!("the Agent call at line {line} asks for a fork"));
        match (default_on, off, on) {
            (_, Some(off), Some(on)) => {
                self.warnings.push(format!(
                    "fork mode: {off} (fork mode off) but {on} (fork mode on); the default \
                     of {version} applies"
                ));
                None
            }
            (true, Some(off), None) => {
                self.warnings.push(format!(
                    "fork mode is on by default in an interactive {version} session, but \
                     {off}: the scenario turns it off (CLAUDE_CODE_FORK_SUBAGENT=0)"
                ));
                Some(("0", format!("fork mode off: {off} (FORK-2)")))
            }
            (false, None, Some(on)) => {
                self.warnings.push(format!(
                    "fork mode is off by default in this session, but {on}: the scenario \
                     turns it on (CLAUDE_CODE_FORK_SUBAGENT=1)"
                ));
                Some(("1", format!("fork mode on: {on} (FORK-2)")))
            }
            _ => None,
        }
    }
}
