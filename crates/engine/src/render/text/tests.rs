use super::layout::*;
use super::narrate::*;
use super::*;
use crate::event::RunProfile;
use crate::event::{IgnoredAction, Outcome};
use crate::time::SimTime;
use subsim_rules::{Mode, SessionKind};

fn agent(id: u32, name: &str) -> AgentRef {
    AgentRef {
        id,
        name: Some(name.into()),
    }
}

fn anonymous(id: u32) -> AgentRef {
    AgentRef { id, name: None }
}

fn session(cap: Option<u32>) -> Event {
    Event {
        t: SimTime::ZERO,
        seq: 0,
        rule: None,
        kind: EventKind::SessionStarted {
            version: "2.1.230".into(),
            session_kind: SessionKind::Interactive,
            cap,
            depth_limit: 3,
            fork_mode: true,
            background_disabled: false,
            main_agent: None,
            permission_mode: subsim_rules::PermissionMode::Default,
            main_isolated: false,
        },
    }
}

/// Narrates `kind` at 12 s after a session with a cap of 20 and a1 named researcher-3.
fn check(kind: EventKind, rule: Option<&'static str>, expected: &str) {
    let mut narrator = Narrator::new();
    let mut line = String::new();
    narrator.line(&session(Some(20)), &mut line);
    line.clear();
    narrator.line(
        &Event {
            t: SimTime::ZERO,
            seq: 1,
            rule: None,
            kind: EventKind::Notification {
                to: agent(3, "researcher-3"),
                from: AgentRef::MAIN,
                what: subsim_rules::notify::Notice::Completion,
            },
        },
        &mut line,
    );
    line.clear();
    narrator.line(
        &Event {
            t: SimTime::from_millis(12_000),
            seq: 2,
            rule,
            kind,
        },
        &mut line,
    );
    assert_eq!(line, expected);
}

#[test]
fn session_started() {
    let mut narrator = Narrator::new();
    let mut line = String::new();
    narrator.line(&session(Some(20)), &mut line);
    assert_eq!(
        line,
        "00:00:00.000  session         Claude Code 2.1.230, interactive session: at most 20 subagents \
         running at once, nesting down to depth 3, fork mode on"
    );
    line.clear();
    let mut narrator = Narrator::new();
    narrator.line(&session(None), &mut line);
    assert!(line.contains("no cap on running subagents"), "{line}");
}

#[test]
fn spawn_requested() {
    check(
        EventKind::SpawnRequested {
            caller: AgentRef::MAIN,
            agent_type: "general-purpose".into(),
            name: Some("researcher-21".into()),
            background: Some(true),
            fork: false,
            arrival: None,
            stream: None,
        },
        None,
        "00:00:12.000  main            asks for a general-purpose subagent named researcher-21 in the background",
    );
    check(
        EventKind::SpawnRequested {
            caller: anonymous(3),
            agent_type: "Explore".into(),
            name: None,
            background: None,
            fork: false,
            arrival: None,
            stream: None,
        },
        None,
        "00:00:12.000  researcher-3    asks for an Explore subagent",
    );
    check(
        EventKind::SpawnRequested {
            caller: AgentRef::MAIN,
            agent_type: "fork".into(),
            name: Some("draft".into()),
            background: None,
            fork: true,
            arrival: None,
            stream: None,
        },
        None,
        "00:00:12.000  main            forks itself as draft",
    );
}

#[test]
fn spawn_rejected() {
    check(
        EventKind::SpawnRejected {
            caller: AgentRef::MAIN,
            agent_type: "general-purpose".into(),
            name: Some("researcher-21".into()),
            reason: RejectReason::ConcurrentLimit,
            message: "Concurrent subagent limit reached".into(),
            hint: None,
            running: 20,
        },
        Some("CAP-1"),
        "00:00:12.000  main            spawn researcher-21 rejected with \"Concurrent subagent limit reached\" (20/20 running): the cap of 20 running subagents is full, and a rejected call is not queued (CAP-1)",
    );
    check(
        EventKind::SpawnRejected {
            caller: AgentRef::MAIN,
            agent_type: "general-purpose".into(),
            name: Some("researcher-22".into()),
            reason: RejectReason::ConcurrentLimit,
            message: "Concurrent subagent limit reached (20/20 running); do not retry".into(),
            hint: None,
            running: 20,
        },
        Some("CAP-1"),
        "00:00:12.000  main            spawn researcher-22 rejected with \"Concurrent subagent limit reached (20/20 running); do not retry\": the cap of 20 running subagents is full, and a rejected call is not queued (CAP-1)",
    );
    check(
        EventKind::SpawnRejected {
            caller: agent(3, "researcher-3"),
            agent_type: "general-purpose".into(),
            name: None,
            reason: RejectReason::DepthLimit,
            message: "".into(),
            hint: None,
            running: 4,
        },
        Some("DEPTH-3"),
        "00:00:12.000  researcher-3    spawn of a general-purpose subagent rejected (depth limit): the caller sits at the depth limit (3), where filter 1 takes `Agent` away (DEPTH-3)",
    );
}

#[test]
fn agent_started() {
    check(
        EventKind::AgentStarted {
            agent: agent(3, "researcher-2"),
            parent: AgentRef::MAIN,
            depth: 1,
            mode: Mode::Background,
            fork: false,
            running: 14,
            cap_checked: true,
            profile: Rc::new(RunProfile::new("general-purpose", "sonnet", &[])),
        },
        Some("FGBG-1"),
        "00:00:12.000  researcher-2    started in the background at depth 1 as a3 (general-purpose on sonnet, launched by main; 14 running): fork mode is off and Claude did not need the result first, so it runs in the background (FGBG-1 case 4)",
    );
    check(
        EventKind::AgentStarted {
            agent: anonymous(7),
            parent: AgentRef::MAIN,
            depth: 1,
            mode: Mode::Background,
            fork: true,
            running: 21,
            cap_checked: false,
            profile: Rc::new(RunProfile::new("fork", "opus", &[])),
        },
        Some("CAP-6"),
        "00:00:12.000  a7              started in the background at depth 1 (a fork of main on opus; 21 running, over the cap of 20), without a cap check: a `/subtask` fork takes a slot but is never checked against the cap (CAP-6)",
    );
}

#[test]
fn tool_called() {
    check(
        EventKind::ToolCalled {
            agent: anonymous(3),
            tool: "Bash".into(),
            step: subsim_rules::toolcall::ToolStep::Tool,
            allowed: true,
            reason: None,
            input: None,
            permission_rule: None,
            cwd: None,
        },
        None,
        "00:00:12.000  researcher-3    uses Bash",
    );
    check(
        EventKind::ToolCalled {
            agent: anonymous(3),
            tool: "Write".into(),
            step: subsim_rules::toolcall::ToolStep::Tool,
            allowed: false,
            reason: Some(crate::event::ToolRefusal::NotInTools),
            input: None,
            permission_rule: None,
            cwd: None,
        },
        Some("TOOLS-6"),
        "00:00:12.000  researcher-3    tries Write, which is not among its tools: filter 1 removes it from every subagent (TOOLS-6)",
    );
}

#[test]
fn permission_requested() {
    check(
        EventKind::PermissionRequested {
            agent: agent(3, "researcher-3"),
            agent_type: Rc::from("worker"),
            tool: "Bash".into(),
            routed_to: Some(subsim_rules::prompt::RoutedTo::Main),
            auto_denied: false,
            prompt: 2,
        },
        Some("PERM-4"),
        "00:00:12.000  researcher-3    permission prompt #2: asks to use Bash — shown in the main session: a background subagent has no terminal of its own, so its prompt goes to the main session, naming it (PERM-4)",
    );
    check(
        EventKind::PermissionRequested {
            agent: agent(3, "researcher-3"),
            agent_type: Rc::from("worker"),
            tool: "Bash".into(),
            routed_to: None,
            auto_denied: true,
            prompt: 1,
        },
        Some("PERM-5"),
        "00:00:12.000  researcher-3    permission prompt #1: asks to use Bash — auto-denied silently, nobody is asked: before v2.1.186 a background subagent could not ask, so the call is denied silently (PERM-5)",
    );
}

#[test]
fn permission_answered() {
    check(
        EventKind::PermissionAnswered {
            agent: anonymous(3),
            tool: "Bash".into(),
            answer: Answer::Approve,
            waited_us: 3_200_000,
            prompt: 2,
            think_us: None,
            think_from: None,
        },
        None,
        "00:00:12.000  person          approved researcher-3's Bash after 3.2s (prompt #2)",
    );
    check(
        EventKind::PermissionAnswered {
            agent: anonymous(3),
            tool: "Bash".into(),
            answer: Answer::Deny,
            waited_us: 500_000,
            prompt: 3,
            think_us: None,
            think_from: None,
        },
        Some("PERM-4"),
        "00:00:12.000  person          denied researcher-3's Bash (Esc) after 500ms (prompt #3): Esc denies only this call (PERM-4)",
    );
}

#[test]
fn permission_withdrawn() {
    check(
        EventKind::PermissionWithdrawn { agent: anonymous(3), tool: "Bash".into(), prompt: 4 },
        Some("Q-38"),
        "00:00:12.000  researcher-3    permission prompt #4 for Bash withdrawn: the run ended before it was answered (Q-38)",
    );
}

#[test]
fn agent_waiting() {
    check(
        EventKind::AgentWaiting { agent: anonymous(3), waiting_for: WaitingFor::Children, count: 2 },
        Some("NOTIFY-6"),
        "00:00:12.000  researcher-3    done with its steps; waits for 2 subagents it launched: in an interactive session a launcher waits for its background children before it reports (NOTIFY-6)",
    );
    check(
        EventKind::AgentWaiting { agent: anonymous(3), waiting_for: WaitingFor::Bash, count: 1 },
        Some("NOTIFY-5"),
        "00:00:12.000  researcher-3    done with its steps; waits for 1 background shell command: a background shell command it started is still running (NOTIFY-5)",
    );
}

#[test]
fn agent_backgrounded() {
    check(
        EventKind::AgentBackgrounded { agent: anonymous(3), running: 5 },
        Some("FGBG-5"),
        "00:00:12.000  researcher-3    moved to the background with Ctrl+B (5 running): Ctrl+B sends the running foreground task to the background (FGBG-5)",
    );
}

#[test]
fn agent_finished() {
    check(
        EventKind::AgentFinished {
            agent: anonymous(3),
            outcome: Outcome::Completed,
            running: 13,
            detail: None,
        },
        None,
        "00:00:12.000  researcher-3    finished: completed (13 running)",
    );
    check(
        EventKind::AgentFinished {
            agent: anonymous(3),
            outcome: Outcome::Failed,
            running: 0,
            detail: Some("API error: rate_limit".into()),
        },
        Some("ERR-4"),
        "00:00:12.000  researcher-3    finished: failed — API error: rate_limit (0 running): a background run cut by an API error is marked failed (ERR-4)",
    );
}

#[test]
fn notification() {
    check(
        EventKind::Notification {
            to: AgentRef::MAIN,
            from: anonymous(3),
            what: subsim_rules::notify::Notice::Completion,
        },
        Some("NOTIFY-3"),
        "00:00:12.000  main            ← researcher-3: completion notification: a background run reports to its launcher by a notification when it ends (NOTIFY-3)",
    );
    check(
        EventKind::Notification {
            to: anonymous(3),
            from: anonymous(3),
            what: subsim_rules::notify::Notice::BashDone,
        },
        Some("NOTIFY-5"),
        "00:00:12.000  researcher-3    ← researcher-3: bash done notification: a background shell command that outlived the turn notifies the subagent when it ends (NOTIFY-5)",
    );
}

#[test]
fn agent_resumed() {
    check(
        EventKind::AgentResumed {
            agent: anonymous(3),
            by: AgentRef::MAIN,
            cap_checked: false,
            running: 21,
            mode: Mode::Background,
            model: Rc::from("opus"),
            effort: None,
        },
        Some("CAP-7"),
        "00:00:12.000  researcher-3    resumed by main in the background on opus (21 running, over the cap of 20), without a cap check: a resume takes a slot without a cap check, so it can push the count past the cap (CAP-7)",
    );
}

#[test]
fn messages() {
    check(
        EventKind::MessageDelivered {
            to: anonymous(3),
            from: AgentRef::MAIN,
        },
        Some("RESUME-17"),
        "00:00:12.000  main            → researcher-3: message delivered while it runs (RESUME-17)",
    );
    check(
        EventKind::MessageRejected {
            to: "ghost".into(),
            by: AgentRef::MAIN,
            reason: crate::event::MessageRejection::UnknownAgent,
            message: "No agent named ghost".into(),
        },
        None,
        "00:00:12.000  main            message to ghost rejected: No agent named ghost (unknown agent)",
    );
}

#[test]
fn stops_and_actions() {
    check(
        EventKind::StopRequested {
            agent: anonymous(3),
            by: AgentRef::MAIN,
            source: StopSource::TaskStop,
        },
        Some("RESUME-9"),
        "00:00:12.000  main            stops researcher-3 (TaskStop) (RESUME-9)",
    );
    check(
        EventKind::StopRequested {
            agent: anonymous(3),
            by: AgentRef::MAIN,
            source: StopSource::User,
        },
        Some("RESUME-10"),
        "00:00:12.000  person          stops researcher-3 from the tasks panel (RESUME-10)",
    );
    check(
        EventKind::ActionIgnored {
            action: IgnoredAction::CtrlB,
            why: "no foreground task is running".into(),
        },
        None,
        "00:00:12.000  person          ctrl b had no effect: no foreground task is running",
    );
}

#[test]
fn limit_reached() {
    check(
        EventKind::LimitReached {
            limit: crate::event::Limit::MaxTime,
            value: 3_600_000_000,
        },
        None,
        "00:00:12.000  session         safety limit reached: max_time = 1h; the run stops here",
    );
}

#[test]
fn who_column_grows_for_long_names() {
    let mut narrator = Narrator::new();
    let mut line = String::new();
    narrator.line(
        &Event {
            t: SimTime::ZERO,
            seq: 0,
            rule: None,
            kind: EventKind::SpawnRequested {
                caller: AgentRef::MAIN,
                agent_type: "general-purpose".into(),
                name: Some("a-rather-long-name".into()),
                background: None,
                fork: false,
                arrival: None,
                stream: None,
            },
        },
        &mut line,
    );
    // The name (18 characters) widened the column before it was ever the subject.
    assert!(
        line.starts_with("00:00:00.000  main                asks"),
        "{line}"
    );
}

fn started(id: u32, name: &str, running: u32) -> EventKind {
    EventKind::AgentStarted {
        agent: agent(id, name),
        parent: AgentRef::MAIN,
        depth: 1,
        mode: Mode::Background,
        fork: false,
        running,
        cap_checked: true,
        profile: Rc::new(RunProfile::new("researcher", "haiku", &[])),
    }
}

fn narrate(options: NarrationOptions, events: &[(u64, Option<&'static str>, EventKind)]) -> String {
    let mut writer = TextWriter::with_options(Vec::new(), options);
    writer.event(&session(Some(20)));
    for (seq, (secs, rule, kind)) in events.iter().enumerate() {
        writer.event(&Event {
            t: SimTime::from_secs(*secs),
            seq: seq as u64 + 1,
            rule: *rule,
            kind: kind.clone(),
        });
    }
    String::from_utf8(writer.finish().unwrap()).unwrap()
}

fn panel_row(id: u32) -> EventKind {
    EventKind::PanelChanged {
        change: subsim_rules::panel::ChangeKind::RowAdded,
        row: anonymous(id),
        reason: None,
        status: Some(subsim_rules::panel::Status::Running),
    }
}

#[test]
fn brief_groups_same_instant_lines_and_hides_bookkeeping() {
    let mut events = Vec::new();
    for id in 1..=3 {
        events.push((
            0,
            Some("FORK-3"),
            started(id, &format!("researcher-{id}"), id),
        ));
        events.push((0, Some("PANEL-1"), panel_row(id)));
    }
    events.push((5, Some("FORK-3"), started(4, "researcher-4", 4)));
    let brief = narrate(NarrationOptions::default(), &events);
    let lines: Vec<&str> = brief.lines().collect();
    assert_eq!(lines.len(), 3, "{brief}");
    assert!(
        lines[1].starts_with("00:00:00.000  researcher-1 … researcher-3 (3)  started in the background at depth 1 (researcher on haiku, launched by main; 3 running): fork mode is on"),
        "{brief}"
    );
    assert!(lines[2].contains("researcher-4"), "{brief}");
    let full = narrate(
        NarrationOptions {
            detail: Detail::Full,
            ..NarrationOptions::default()
        },
        &events,
    );
    // Every event: the session, three starts, three panel rows and the late start.
    assert_eq!(full.lines().count(), 8, "{full}");
    assert!(
        full.contains("row for researcher-2 appears (PANEL-1)"),
        "{full}"
    );
}

fn drawn_work(id: u32, name: &str, drawn_us: u64) -> EventKind {
    EventKind::DurationDrawn {
        agent: Some(agent(id, name)),
        arrival: None,
        what: crate::event::DrawnFor::Work,
        drawn_us,
        drawn_from: Rc::from("exp(3s)"),
        drawn_on: crate::event::DrawnOn::Run,
    }
}

/// Issue #32: a draw is a line of the full detail only, and the brief narration groups
/// the starts around it as if it were not there (it is no decision).
#[test]
fn a_draw_is_told_with_the_full_detail_and_never_splits_a_group() {
    let mut events = Vec::new();
    for id in 1..=3 {
        events.push((0, Some("FORK-3"), started(id, &format!("r-{id}"), id)));
        events.push((0, None, drawn_work(id, &format!("r-{id}"), 4_491_238)));
    }
    let brief = narrate(NarrationOptions::default(), &events);
    assert!(!brief.contains("drawn from"), "{brief}");
    assert_eq!(brief.lines().count(), 2, "{brief}");
    assert!(brief.contains("r-1 … r-3 (3)"), "{brief}");
    let full = narrate(
        NarrationOptions {
            detail: Detail::Full,
            ..NarrationOptions::default()
        },
        &events,
    );
    assert!(
        full.lines()
            .any(|line| line.starts_with("00:00:00.000  r-2 ")
                && line.ends_with("  work 4.491s, drawn from exp(3s), r-2's own stream")),
        "{full}"
    );
}

#[test]
fn follow_keeps_only_what_touches_the_agent() {
    let events = vec![
        (0, Some("FORK-3"), started(1, "scout", 1)),
        (0, Some("FORK-3"), started(2, "bystander", 2)),
        (
            3,
            Some("NOTIFY-3"),
            EventKind::Notification {
                to: AgentRef::MAIN,
                from: anonymous(1),
                what: subsim_rules::notify::Notice::Completion,
            },
        ),
    ];
    let text = narrate(
        NarrationOptions {
            follow: Some("scout".into()),
            ..NarrationOptions::default()
        },
        &events,
    );
    assert!(!text.contains("bystander"), "{text}");
    let mut writer = TextWriter::with_options(
        Vec::new(),
        NarrationOptions {
            follow: Some("nobody".into()),
            ..NarrationOptions::default()
        },
    );
    writer.event(&session(Some(20)));
    assert_eq!(writer.follow_missed(), Some("nobody"));
    assert!(text.contains("← scout: completion notification"), "{text}");
}

#[test]
fn a_deny_rule_is_named_with_the_command() {
    check(
        EventKind::ToolCalled {
            agent: agent(3, "researcher-3"),
            tool: "Bash".into(),
            step: subsim_rules::toolcall::ToolStep::Tool,
            allowed: false,
            reason: Some(crate::event::ToolRefusal::Denied),
            input: Some("git push origin main".into()),
            permission_rule: Some("Bash(git push *)".into()),
            cwd: None,
        },
        Some("PERM-14"),
        "00:00:12.000  researcher-3    Bash `git push origin main` denied: the deny rule `Bash(git push *)` covers it, and deny rules apply to main and every subagent (PERM-14)",
    );
}

#[test]
fn colour_only_when_asked() {
    let events = vec![(0, Some("FORK-3"), started(1, "scout", 1))];
    let plain = narrate(NarrationOptions::default(), &events);
    assert!(!plain.contains('\x1b'), "{plain}");
    let coloured = narrate(
        NarrationOptions {
            color: true,
            ..NarrationOptions::default()
        },
        &events,
    );
    assert!(coloured.contains("\x1b[36mscout\x1b[0m"), "{coloured}");
    // The scenario's own escape sequences are shown, not obeyed.
    let hostile = vec![(0, Some("FORK-3"), started(1, "evil\x1b[2J", 1))];
    let coloured = narrate(
        NarrationOptions {
            color: true,
            ..NarrationOptions::default()
        },
        &hostile,
    );
    assert!(coloured.contains("evil\\u{1b}[2J"), "{coloured}");
    assert!(!coloured.contains("evil\x1b"), "{coloured}");
}

#[test]
fn chapters_and_summary() {
    let events = vec![
        (0, Some("FORK-3"), started(1, "scout", 1)),
        (9, Some("FORK-3"), started(2, "second", 2)),
    ];
    let text = narrate(
        NarrationOptions {
            chapters: vec![
                (SimTime::ZERO, "1. First".into()),
                (SimTime::from_secs(5), "2. Second".into()),
            ],
            next: vec!["subsim explain CAP-1".into()],
            summary: true,
            ..NarrationOptions::default()
        },
        &events,
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "── 1. First ──", "{text}");
    assert!(
        lines[3] == "── 2. Second ──" && lines[4].contains("second"),
        "{text}"
    );
    assert!(
        text.contains("2 runs started; at most 2 running at once (the cap is 20)."),
        "{text}"
    );
    assert!(
        text.ends_with("Try next:\n  subsim explain CAP-1\n"),
        "{text}"
    );
}

/// Issue #32 item 7: `--follow` printed the heading of every chapter the followed agent
/// did nothing in, one after another with no line under them.
#[test]
fn follow_drops_empty_chapter_headings() {
    let events = vec![
        (0, Some("FORK-3"), started(1, "scout", 1)),
        (6, Some("FORK-3"), started(2, "second", 2)),
        (
            9,
            Some("NOTIFY-1"),
            EventKind::AgentFinished {
                agent: agent(1, "scout"),
                outcome: crate::event::Outcome::Completed,
                running: 1,
                detail: None,
            },
        ),
    ];
    let text = narrate(
        NarrationOptions {
            chapters: vec![
                (SimTime::ZERO, "1. First".into()),
                (SimTime::from_secs(5), "2. Second".into()),
                (SimTime::from_secs(8), "3. Third".into()),
            ],
            follow: Some("scout".into()),
            ..NarrationOptions::default()
        },
        &events,
    );
    assert!(!text.contains("2. Second"), "{text}");
    assert!(text.contains("3. Third"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        if line.starts_with("──") {
            assert!(
                lines
                    .get(index + 1)
                    .is_some_and(|next| !next.starts_with("──")),
                "an empty chapter heading: {text}"
            );
        }
    }
}

#[test]
fn writer_writes_lines() {
    let mut writer = TextWriter::new(Vec::new());
    writer.event(&session(Some(20)));
    writer.event(&Event {
        t: SimTime::from_secs(1),
        seq: 1,
        rule: None,
        kind: EventKind::LimitReached {
            limit: crate::event::Limit::MaxEvents,
            value: 2,
        },
    });
    let text = String::from_utf8(writer.finish().unwrap()).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.ends_with("max_events = 2; the run stops here\n"));
}

/// Issue #23 item 9: the demo was 43 lines up to 232 characters wide (85 rows at 80
/// columns). With a width, every line fits: the decision first, then its reason and rule
/// two columns under it, the rule in one piece; lines that fit are unchanged.
#[test]
fn narration_lines_fit_the_width_with_the_reason_hanging_under_the_decision() {
    let events = vec![
        (0, Some("FORK-3"), started(1, "scout", 1)),
        (1, None, started(2, "x", 2)),
    ];
    let wide = narrate(NarrationOptions::default(), &events);
    for width in [60, 80, 100] {
        let options = NarrationOptions {
            width: Some(width),
            ..NarrationOptions::default()
        };
        let narrow = narrate(options.clone(), &events);
        for line in narrow.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}\n{narrow}");
        }
        // Same words, same order.
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(&narrow), words(&wide));
        let lines: Vec<&str> = narrow.lines().collect();
        let reason = lines
            .iter()
            .position(|line| line.contains("fork mode is on"))
            .unwrap();
        assert!(lines[reason - 1].ends_with("running):"), "{narrow}");
        assert!(
            lines[reason].starts_with(&format!("{}fork", " ".repeat(32))),
            "{narrow}"
        );
        assert!(narrow.contains("(FGBG-1 case 3, FORK-3)"), "{narrow}");
        // A line that fits stays one line, as without a width.
        let short = wide
            .lines()
            .find(|line| line.contains("00:00:01.000"))
            .unwrap();
        assert!(
            short.chars().count() > width || narrow.contains(short),
            "{narrow}"
        );
        // Coloured, the same shape: escape codes take no room.
        let coloured = narrate(
            NarrationOptions {
                color: true,
                ..options
            },
            &events,
        );
        let plain: String = strip_ansi(&coloured);
        assert_eq!(plain, narrow);
    }
}

/// `text` without ANSI colour codes.
fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Issue #23 item 9: one rejected spawn closed the narration with "1 spawns rejected".
#[test]
fn one_rejected_spawn_is_one_spawn_in_the_closing_summary() {
    let rejected = EventKind::SpawnRejected {
        caller: AgentRef::MAIN,
        agent_type: "researcher".into(),
        name: Some("r-21".into()),
        reason: RejectReason::ConcurrentLimit,
        message: "Concurrent subagent limit reached (20/20 running)".into(),
        hint: None,
        running: 20,
    };
    let text = narrate(
        NarrationOptions {
            summary: true,
            ..NarrationOptions::default()
        },
        &[(1, Some("CAP-1"), rejected)],
    );
    assert!(
        text.contains("\n1 spawn rejected: concurrency cap ×1 (CAP-1).\n"),
        "{text}"
    );
    assert!(text.contains(": 0 runs started;"), "{text}");
}
