use super::*;
use crate::Version;

/// Two entries share a cache line, a million take 32 MB (issue #7, W2's footprint).
#[test]
fn an_entry_is_32_bytes() {
    assert_eq!(std::mem::size_of::<Entry>(), 32);
}

const S: Micros = 1_000_000;

fn gates(patch: u32) -> Gates {
    Gates::for_version(Version::v2_1(patch))
}

fn run(id: u32, parent: Option<u32>, name: &str, fork: bool, background: bool) -> Started<'_> {
    Started {
        id,
        parent,
        name: Some(Rc::from(name)),
        fork,
        background,
        model: "sonnet",
        effort: None,
    }
}

fn bg(id: u32, name: &str) -> Started<'_> {
    run(id, None, name, false, true)
}

/// (row, status, descendants, level) for every row.
fn rows(view: &PanelView) -> Vec<(RowId, Status, u32, u32)> {
    view.rows
        .iter()
        .map(|row| (row.id, row.status, row.descendants, row.level))
        .collect()
}

/// `update` gives exactly what diffing two full views gives, and the same next change,
/// over long pseudo-random histories: starts (nested, forks, foreground), finishes of
/// every kind, resumes, Ctrl+B, dismissals, restarts of a known id, several changes at
/// one instant and 30 s windows ending, under the versions whose gates differ.
#[test]
fn update_matches_diffing_views() {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut draw = move |bound: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    for round in 0..240 {
        let patch = [204, 207, 208, 231, 232, 241, 242, 292][round % 8];
        let g = gates(patch);
        let screen_reader = round % 5 == 0;
        let mut panel = Panel::new();
        let mut shown = Panel::new().view(0, &g, screen_reader);
        let mut now: Micros = 0;
        let mut next: Option<Micros> = None;
        let mut ids = 0u32;
        let mut out = Vec::new();
        for _ in 0..60 {
            // Time moves on: not at all, a little, to the next change, or far.
            now = match draw(6) {
                0 | 1 => now,
                2 => now + draw(3 * S) + 1,
                3 => next.unwrap_or(now + 1),
                4 => now + RETENTION - draw(2) * S,
                _ => now + RETENTION + draw(2),
            };
            for _ in 0..=draw(3) {
                let id = (draw(u64::from(ids) + 1) as u32) + 1;
                match draw(9) {
                    0..=2 => {
                        ids += 1;
                        let parent =
                            (ids > 1 && draw(3) > 0).then(|| draw(u64::from(ids - 1)) as u32 + 1);
                        let effort = ["high", "low"][draw(2) as usize];
                        panel.on_start(
                            Started {
                                id: ids,
                                parent,
                                name: ids.is_multiple_of(2).then(|| Rc::from("r")),
                                fork: draw(4) == 0,
                                background: draw(3) > 0,
                                model: ["sonnet", "opus"][draw(2) as usize],
                                effort: (draw(2) == 0).then_some(effort),
                            },
                            now,
                        );
                    }
                    3 | 4 => {
                        let kind = [Outcome::Completed, Outcome::Failed, Outcome::Stopped]
                            [draw(3) as usize];
                        panel.on_finish(id, kind, now);
                    }
                    5 => panel.on_resume(id, draw(2) == 0, now),
                    6 => panel.on_background(id, now),
                    7 => {
                        panel.on_dismiss(id, now, &g);
                    }
                    _ => {
                        // An id started again keeps its launcher (agent ids are not reused
                        // for another agent).
                        if let Some(parent) = panel.entry(id).map(Entry::parent) {
                            panel.on_start(run(id, parent, "again", draw(2) == 0, true), now);
                        }
                    }
                }
            }
            let view = panel.view(now, &g, screen_reader);
            let expected = panel.changes(&shown, &view);
            out.clear();
            next = panel.update(now, &g, screen_reader, &mut out);
            assert_eq!(out, expected, "round {round} at {now}");
            assert_eq!(
                next,
                panel.next_change(now, &g, screen_reader),
                "round {round} at {now}"
            );
            shown = view;
        }
    }
}

/// One finish of one background run, looked at some time later.
fn check_finish(
    kind: Outcome,
    fork: bool,
    patch: u32,
    look_at: Micros,
    row: Option<Status>,
    hint: bool,
    listed: Option<Status>,
) {
    let mut panel = Panel::new();
    panel.on_start(run(1, None, "r", fork, true), 0);
    panel.on_finish(1, kind, 10 * S);
    let view = panel.view(10 * S + look_at, &gates(patch), false);
    let label = format!("{kind:?} fork={fork} 2.1.{patch} +{look_at}us");
    let agent_row = view.rows.iter().find(|r| r.id == RowId::Agent(1));
    assert_eq!(agent_row.map(|r| r.status), row, "row: {label}");
    assert_eq!(view.footer_hint.is_some(), hint, "hint: {label}");
    assert_eq!(
        view.tasks.first().map(|t| t.status),
        listed,
        "tasks: {label}"
    );
}

#[test]
fn finish_rows_panel_2_3_4_5() {
    use Outcome::{Completed as Success, Failed as Failure};
    use Status::{Done, Failed};
    let last = RETENTION - 1;
    // PANEL-2 from v2.1.232: removed at once, hint and /tasks for 30 s.
    check_finish(Success, false, 232, 0, None, true, Some(Done));
    check_finish(Success, false, 232, last, None, true, Some(Done));
    check_finish(Success, false, 232, RETENTION, None, false, None);
    // Before v2.1.232: kept 30 s, no hint; /tasks 30 s (Q-23).
    check_finish(Success, false, 231, 0, Some(Done), false, Some(Done));
    check_finish(Success, false, 231, last, Some(Done), false, Some(Done));
    check_finish(Success, false, 231, RETENTION, None, false, None);
    // PANEL-5: before v2.1.208 a completed subagent leaves /tasks at once.
    check_finish(Success, false, 207, 0, Some(Done), false, None);
    check_finish(Success, false, 208, 0, Some(Done), false, Some(Done));
    // PANEL-3: failure or stop kept 30 s; they leave /tasks at once.
    check_finish(Failure, false, 292, 0, Some(Failed), false, None);
    check_finish(Failure, false, 292, last, Some(Failed), false, None);
    check_finish(Failure, false, 292, RETENTION, None, false, None);
    check_finish(
        Outcome::Stopped,
        false,
        292,
        last,
        Some(Status::Stopped),
        false,
        None,
    );
    check_finish(
        Outcome::Stopped,
        false,
        200,
        last,
        Some(Status::Stopped),
        false,
        None,
    );
    // PANEL-4: forks alike.
    check_finish(Success, true, 232, 0, None, true, Some(Done));
    check_finish(Success, true, 231, last, Some(Done), false, Some(Done));
    check_finish(Failure, true, 292, last, Some(Failed), false, None);
}

#[test]
fn screen_reader_has_no_hint() {
    let mut panel = Panel::new();
    panel.on_start(bg(1, "r"), 0);
    panel.on_finish(1, Outcome::Completed, S);
    assert!(panel.view(S, &gates(292), false).footer_hint.is_some());
    assert!(panel.view(S, &gates(292), true).footer_hint.is_none());
}

#[test]
fn foreground_runs_get_no_rows_q_21() {
    let mut panel = Panel::new();
    panel.on_start(run(1, None, "fg", false, false), 0);
    let view = panel.view(0, &gates(292), false);
    assert!(view.rows.is_empty());
    assert!(view.tasks.is_empty());
    panel.on_finish(1, Outcome::Failed, S);
    assert!(panel.view(S, &gates(292), false).rows.is_empty());
    // Ctrl+B: moved to the background, it gets a row.
    let mut moved = Panel::new();
    moved.on_start(run(1, None, "fg", false, false), 0);
    moved.on_background(1, S);
    assert_eq!(moved.view(S, &gates(292), false).rows.len(), 1);
}

#[test]
fn main_row_with_forks_panel_1() {
    let mut panel = Panel::new();
    panel.on_start(bg(1, "bg"), 0);
    assert_eq!(
        rows(&panel.view(0, &gates(292), false)),
        [(RowId::Agent(1), Status::Running, 0, 0)]
    );
    panel.on_start(run(2, None, "fork", true, true), S);
    assert_eq!(
        rows(&panel.view(S, &gates(292), false)),
        [
            (RowId::Main, Status::Running, 2, 0),
            (RowId::Agent(1), Status::Running, 0, 1),
            (RowId::Agent(2), Status::Running, 0, 1),
        ]
    );
    // A failed fork keeps the main row for its 30 s.
    panel.on_finish(2, Outcome::Failed, 2 * S);
    let kept = panel.view(2 * S, &gates(292), false);
    assert_eq!(kept.rows[0].id, RowId::Main);
    let gone = panel.view(2 * S + RETENTION, &gates(292), false);
    assert_eq!(rows(&gone), [(RowId::Agent(1), Status::Running, 0, 0)]);
}

#[test]
fn nested_tree_and_descendants_q_22() {
    let mut panel = Panel::new();
    panel.on_start(bg(1, "lead"), 0);
    panel.on_start(run(2, Some(1), "a", false, true), S);
    panel.on_start(run(3, Some(2), "a1", false, true), S);
    panel.on_start(run(4, Some(1), "b", false, true), S);
    let g = gates(292);
    assert_eq!(
        rows(&panel.view(S, &g, false)),
        [
            (RowId::Agent(1), Status::Running, 3, 0),
            (RowId::Agent(2), Status::Running, 1, 1),
            (RowId::Agent(3), Status::Running, 0, 2),
            (RowId::Agent(4), Status::Running, 0, 1),
        ]
    );
    // A success leaves at once and stops counting; a failure counts for its 30 s.
    panel.on_finish(3, Outcome::Completed, 2 * S);
    panel.on_finish(4, Outcome::Failed, 2 * S);
    assert_eq!(
        rows(&panel.view(2 * S, &g, false)),
        [
            (RowId::Agent(1), Status::Running, 2, 0),
            (RowId::Agent(2), Status::Running, 0, 1),
            (RowId::Agent(4), Status::Failed, 0, 1),
        ]
    );
    let depths: Vec<u32> = panel
        .view(2 * S, &g, false)
        .rows
        .iter()
        .map(|r| r.depth)
        .collect();
    assert_eq!(depths, [1, 2, 2]);
}

#[test]
fn child_of_a_rowless_parent_hangs_higher() {
    let mut panel = Panel::new();
    panel.on_start(run(1, None, "fg", false, false), 0);
    panel.on_start(run(2, Some(1), "bg-child", false, true), 0);
    let view = panel.view(0, &gates(292), false);
    assert_eq!(rows(&view), [(RowId::Agent(2), Status::Running, 0, 0)]);
    assert_eq!(view.rows[0].depth, 2);
}

#[test]
fn dismiss_clears_sooner() {
    let g = gates(292);
    let mut panel = Panel::new();
    panel.on_start(bg(1, "r"), 0);
    assert_eq!(panel.on_dismiss(1, 0, &g), (false, "PANEL-7"));
    panel.on_finish(1, Outcome::Stopped, S);
    assert!(panel.has_row(1, 2 * S, &g));
    assert_eq!(panel.on_dismiss(1, 2 * S, &g), (true, "PANEL-3"));
    assert!(!panel.has_row(1, 2 * S, &g));
    assert_eq!(panel.on_dismiss(1, 3 * S, &g), (false, "PANEL-3"));
    assert_eq!(panel.on_dismiss(9, 3 * S, &g), (false, "PANEL-7"));
    // A success row has nothing to dismiss from v2.1.232; before, it does.
    let mut success = Panel::new();
    success.on_start(bg(1, "r"), 0);
    success.on_finish(1, Outcome::Completed, S);
    assert_eq!(success.on_dismiss(1, S, &g), (false, "PANEL-3"));
    assert_eq!(success.on_dismiss(1, S, &gates(231)), (true, "PANEL-3"));
}

#[test]
fn failed_row_kept_agrees_with_has_row_at_the_window_s_edges() {
    let g = gates(292);
    let mut panel = Panel::new();
    panel.on_start(bg(1, "r"), 0);
    panel.on_finish(1, Outcome::Stopped, S);
    for at in [S, S + RETENTION - 1, S + RETENTION, S + RETENTION + 1] {
        assert_eq!(
            failed_row_kept(true, S, at),
            (panel.has_row(1, at, &g), "PANEL-3"),
            "{at}"
        );
    }
    assert!(!failed_row_kept(false, S, S).0);
}

#[test]
fn resumed_shows_running_from_2_1_205() {
    let mut panel = Panel::new();
    panel.on_start(bg(1, "r"), 0);
    panel.on_finish(1, Outcome::Failed, S);
    panel.on_resume(1, true, 2 * S);
    let new = panel.view(2 * S, &gates(205), false);
    assert_eq!(new.rows[0].status, Status::Running);
    assert_eq!(new.tasks[0].status, Status::Running);
    let old = panel.view(2 * S, &gates(204), false);
    assert_eq!(old.rows[0].status, Status::Failed);
    assert_eq!(old.tasks[0].status, Status::Failed);
    assert!(old.tasks[0].running);
    // Long after the old 30 s, the resumed run still has its row.
    assert!(panel.has_row(1, 100 * S, &gates(292)));
    // The row's change back to running is RESUME-8's, fork or not.
    let g = gates(205);
    let mut panel = Panel::new();
    panel.on_start(bg(1, "r"), 0);
    panel.on_start(run(2, None, "f", true, true), 0);
    panel.on_finish(1, Outcome::Failed, S);
    panel.on_finish(2, Outcome::Failed, S);
    let failed = panel.view(S, &g, false);
    panel.on_resume(1, true, 2 * S);
    panel.on_resume(2, true, 2 * S);
    let resumed = panel.view(2 * S, &g, false);
    let running: Vec<(RowId, RuleId)> = panel
        .changes(&failed, &resumed)
        .iter()
        .filter_map(|change| match change {
            PanelChange::RowStatusChanged {
                row,
                to: Status::Running,
                rule,
                ..
            } => Some((*row, *rule)),
            _ => None,
        })
        .collect();
    assert_eq!(
        running,
        [(RowId::Agent(1), "RESUME-8"), (RowId::Agent(2), "RESUME-8")]
    );
}

#[test]
fn a_parent_cycle_ends_the_ancestor_chain() {
    // Each run names the other as its parent (a caller's mistake): the chain stops at
    // the first id met again instead of going round.
    let mut panel = Panel::new();
    panel.on_start(run(1, Some(2), "a", false, true), 0);
    panel.on_start(run(2, Some(1), "b", false, true), 0);
    assert_eq!(panel.ancestors(1), [2, 1]);
    assert_eq!(panel.ancestors(2), [1, 2]);
}

#[test]
fn a_deep_chain_of_rows_is_drawn_in_linear_space() {
    let rows = 3000;
    let mut panel = Panel::new();
    for id in 1..=rows {
        panel.on_start(run(id, (id > 1).then(|| id - 1), "r", false, true), 0);
    }
    let view = panel.view(0, &gates(292), false);
    assert_eq!(view.rows.len(), rows as usize);
    let text = render_panel(&view);
    let widest = text.lines().map(|line| line.chars().count()).max().unwrap();
    assert!(widest < 200, "{widest}");
    assert!(text.contains("[level 33] r"), "{text}");
}

/// `view` finds each row's depth, its parent row and its descendants in one pass down
/// the entries (a parent starts before its children); the per-row walk up the
/// ancestors it replaced gives the same, on a tree where some runs have no row
/// (foreground) and some have finished.
#[test]
fn one_pass_tree_matches_the_walk_up_the_ancestors() {
    let mut panel = Panel::new();
    let mut state = 0x9e37_79b9_u32;
    for id in 1..=400u32 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let parent = (id > 1 && !state.is_multiple_of(5)).then(|| 1 + state % (id - 1));
        panel.on_start(run(id, parent, "r", false, !state.is_multiple_of(3)), S);
    }
    for id in (1..=400u32).step_by(7) {
        panel.on_finish(id, Outcome::Failed, 2 * S);
    }
    let view = panel.view(2 * S, &gates(292), false);
    let shown: Vec<u32> = view
        .rows
        .iter()
        .filter_map(|row| match row.id {
            RowId::Agent(id) => Some(id),
            RowId::Main => None,
        })
        .collect();
    assert!(shown.len() > 100 && shown.len() < 400, "{}", shown.len());
    for row in &view.rows {
        let RowId::Agent(id) = row.id else { continue };
        let ancestors = panel.ancestors(id);
        assert_eq!(row.depth, ancestors.len() as u32 + 1, "depth of {id}");
        let shown_ancestors = ancestors.iter().filter(|a| shown.contains(a)).count();
        assert_eq!(row.level, shown_ancestors as u32, "level of {id}");
        let below = shown
            .iter()
            .filter(|&&other| panel.ancestors(other).contains(&id))
            .count();
        assert_eq!(row.descendants, below as u32, "descendants of {id}");
    }
}

#[test]
fn a_name_started_again_and_again_is_shared_not_copied() {
    // A named run's row label is the engine's text of the name, not a copy of it: a
    // million runs of one long name held it a million times more.
    let name: Rc<str> = Rc::from("n".repeat(250).as_str());
    let mut panel = Panel::new();
    for id in 1..=1000 {
        panel.on_start(
            Started {
                name: Some(Rc::clone(&name)),
                ..bg(id, "")
            },
            0,
        );
    }
    assert_eq!(Rc::strong_count(&name), 1001);
}

#[test]
fn tasks_order_and_model_panel_8() {
    let mut panel = Panel::new();
    panel.on_start(bg(1, "first"), 0);
    panel.on_start(
        Started {
            effort: Some("high"),
            model: "opus",
            ..bg(2, "second")
        },
        0,
    );
    panel.on_start(bg(3, "third"), 0);
    panel.on_finish(3, Outcome::Completed, S);
    panel.on_finish(1, Outcome::Completed, 2 * S);
    let view = panel.view(2 * S, &gates(242), false);
    let order: Vec<(&str, Status)> = view
        .tasks
        .iter()
        .map(|t| (t.label.as_str(), t.status))
        .collect();
    assert_eq!(
        order,
        [
            ("second", Status::Running),
            ("third", Status::Done),
            ("first", Status::Done)
        ]
    );
    assert_eq!(view.tasks[0].model.as_deref(), Some("opus"));
    assert_eq!(view.tasks[0].effort.as_deref(), Some("high"));
    assert_eq!(view.tasks[1].effort, None);
    let old = panel.view(2 * S, &gates(241), false);
    assert_eq!(old.tasks[0].model, None);
    assert_eq!(old.tasks[0].effort, None);
}

#[test]
fn next_change_finds_the_expiries() {
    let g = gates(292);
    let mut panel = Panel::new();
    assert_eq!(panel.next_change(0, &g, false), None);
    panel.on_start(bg(1, "ok"), 0);
    panel.on_start(bg(2, "bad"), 0);
    panel.on_finish(1, Outcome::Completed, S);
    panel.on_finish(2, Outcome::Failed, 3 * S);
    assert_eq!(panel.next_change(S, &g, false), Some(S + RETENTION));
    assert_eq!(
        panel.next_change(S + RETENTION, &g, false),
        Some(3 * S + RETENTION)
    );
    assert_eq!(panel.next_change(3 * S + RETENTION, &g, false), None);
    // Before v2.1.208 in screen-reader mode, a success whose kept row was dismissed
    // changes nothing visible at +30 s: no hint, no /tasks entry, no row.
    let old = gates(207);
    let mut quiet = Panel::new();
    quiet.on_start(bg(1, "ok"), 0);
    quiet.on_finish(1, Outcome::Completed, S);
    quiet.on_dismiss(1, S, &old);
    assert_eq!(quiet.next_change(S, &old, true), None);
}

/// `on_start` says where the entry is; `on_finish_at` there is `on_finish` (also when
/// the index is wrong: the id decides); the preload hint reads an entry and changes
/// nothing.
#[test]
fn finish_at_the_index_start_gave() {
    let g = gates(292);
    let mut by_id = Panel::new();
    let mut at_index = Panel::new();
    for (id, name) in [(3, "a"), (1_000_000, "far"), (4, "b")] {
        assert_eq!(
            by_id.on_start(bg(id, name), 0),
            at_index.on_start(bg(id, name), 0)
        );
    }
    assert_eq!(
        at_index.on_start(bg(3, "a"), S),
        0,
        "an id seen before keeps its entry"
    );
    by_id.on_start(bg(3, "a"), S);
    let before = at_index.clone();
    assert_ne!(at_index.preload_entry(1), 0);
    assert_eq!(at_index.preload_entry(7), 0);
    assert_eq!(at_index, before);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    by_id.update(S, &g, false, &mut a);
    at_index.update(S, &g, false, &mut b);
    by_id.on_finish(1_000_000, Outcome::Completed, 2 * S);
    at_index.on_finish_at(1, 1_000_000, Outcome::Completed, 2 * S);
    by_id.on_finish(4, Outcome::Failed, 2 * S);
    at_index.on_finish_at(0, 4, Outcome::Failed, 2 * S);
    by_id.on_finish(3, Outcome::Stopped, 3 * S);
    at_index.on_finish_at(9, 3, Outcome::Stopped, 3 * S);
    assert_eq!(at_index, by_id);
    by_id.update(3 * S, &g, false, &mut a);
    at_index.update(3 * S, &g, false, &mut b);
    assert_eq!(a, b);
    assert!(!a.is_empty());
}

#[test]
fn ids_out_of_order_and_far_ahead_are_found() {
    let mut index = IdIndex::default();
    // Out of order: 3 comes after 5, inside the vector 5 made.
    index.insert(5, 0);
    index.insert(3, 1);
    assert_eq!(
        (index.get(5), index.get(3), index.get(4)),
        (Some(0), Some(1), None)
    );
    // Far ahead: 5000 is kept in the map; once later ids grow the vector past it, it
    // must still be found (it was lost: the vector's 0 for "none" hid the map).
    let mut index = IdIndex::default();
    index.insert(5000, 0);
    for id in 1..=1990 {
        index.insert(id, id);
    }
    index.insert(5001, 1991);
    assert_eq!(index.get(5001), Some(1991));
    assert_eq!(index.get(5000), Some(0));
    assert_eq!(index.get(1990), Some(1990));
    assert_eq!(index.get(4999), None);
}

#[test]
fn changes_name_reasons_and_rules() {
    let g = gates(292);
    let mut panel = Panel::new();
    let v0 = panel.view(0, &g, false);
    panel.on_start(bg(1, "ok"), 0);
    panel.on_start(run(2, None, "fork", true, true), 0);
    let v1 = panel.view(0, &g, false);
    assert_eq!(
        panel.changes(&v0, &v1),
        [
            PanelChange::RowAdded {
                row: RowId::Main,
                rule: "PANEL-1"
            },
            PanelChange::RowAdded {
                row: RowId::Agent(1),
                rule: "PANEL-1"
            },
            PanelChange::RowAdded {
                row: RowId::Agent(2),
                rule: "PANEL-4"
            },
        ]
    );
    panel.on_finish(1, Outcome::Completed, S);
    panel.on_finish(2, Outcome::Failed, S);
    let v2 = panel.view(S, &g, false);
    let changes = panel.changes(&v1, &v2);
    assert_eq!(
        changes,
        [
            PanelChange::RowRemoved {
                row: RowId::Agent(1),
                reason: RemovalReason::Succeeded,
                rule: "PANEL-2"
            },
            PanelChange::RowStatusChanged {
                row: RowId::Agent(2),
                from: Status::Running,
                to: Status::Failed,
                rule: "PANEL-4"
            },
            PanelChange::FooterHintShown { rule: "PANEL-2" },
        ]
    );
    let kinds: Vec<&str> = changes
        .iter()
        .map(|change| change.kind().as_str())
        .collect();
    assert_eq!(
        kinds,
        ["row_removed", "row_status_changed", "footer_hint_shown"]
    );
    let rules: Vec<RuleId> = changes.iter().map(PanelChange::rule).collect();
    assert_eq!(rules, ["PANEL-2", "PANEL-4", "PANEL-2"]);
    let reasons: Vec<&str> = RemovalReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(reasons, ["succeeded", "expired", "dismissed", "no_forks"]);
    let at = panel.next_change(S, &g, false).unwrap();
    let v3 = panel.view(at, &g, false);
    assert_eq!(
        panel.changes(&v2, &v3),
        [
            PanelChange::RowRemoved {
                row: RowId::Main,
                reason: RemovalReason::NoForks,
                rule: "PANEL-1"
            },
            PanelChange::RowRemoved {
                row: RowId::Agent(2),
                reason: RemovalReason::Expired,
                rule: "PANEL-4"
            },
            PanelChange::FooterHintCleared { rule: "PANEL-2" },
        ]
    );
    // Dismissal, and a resume re-adding the row.
    let mut other = Panel::new();
    other.on_start(bg(5, "x"), 0);
    other.on_finish(5, Outcome::Stopped, S);
    let before = other.view(S, &g, false);
    other.on_dismiss(5, 2 * S, &g);
    let after = other.view(2 * S, &g, false);
    assert_eq!(
        other.changes(&before, &after),
        [PanelChange::RowRemoved {
            row: RowId::Agent(5),
            reason: RemovalReason::Dismissed,
            rule: "PANEL-3"
        }]
    );
    other.on_resume(5, true, 3 * S);
    let resumed = other.view(3 * S, &g, false);
    assert_eq!(
        other.changes(&after, &resumed),
        [PanelChange::RowAdded {
            row: RowId::Agent(5),
            rule: "RESUME-8"
        }]
    );
    // Before v2.1.232 a success is a status change, then an expiry.
    let old = gates(231);
    let mut kept = Panel::new();
    kept.on_start(bg(1, "ok"), 0);
    let running = kept.view(0, &old, false);
    kept.on_finish(1, Outcome::Completed, S);
    let done = kept.view(S, &old, false);
    let expired = kept.view(S + RETENTION, &old, false);
    assert_eq!(
        kept.changes(&running, &done),
        [PanelChange::RowStatusChanged {
            row: RowId::Agent(1),
            from: Status::Running,
            to: Status::Done,
            rule: "PANEL-2"
        }]
    );
    assert_eq!(
        kept.changes(&done, &expired),
        [PanelChange::RowRemoved {
            row: RowId::Agent(1),
            reason: RemovalReason::Expired,
            rule: "PANEL-2"
        }]
    );
}

#[test]
fn rendering() {
    let g = gates(292);
    let mut panel = Panel::new();
    panel.on_start(bg(1, "lead"), 0);
    panel.on_start(run(2, Some(1), "worker", false, true), 0);
    panel.on_start(run(3, None, "draft-tests", true, true), 0);
    panel.on_start(bg(4, "quick"), 0);
    panel.on_finish(4, Outcome::Completed, S);
    panel.on_finish(2, Outcome::Failed, S);
    let view = panel.view(S, &g, false);
    assert_eq!(
        render_panel(&view),
        "main (+3)      running\n  lead (+1)    running\n    worker     failed\n  draft-tests  running\n/tasks to see subagents\n"
    );
    assert_eq!(
        render_tasks(&view),
        "/tasks\n  lead         running  sonnet\n  draft-tests  running  sonnet\n  quick        done     sonnet\n"
    );
    assert_eq!(
        render_tasks(&Panel::new().view(0, &g, false)),
        "/tasks\n  (no tasks)\n"
    );
    assert_eq!(render_panel(&Panel::new().view(0, &g, false)), "");
}

#[test]
fn unnamed_runs_show_their_id_and_any_id_is_found() {
    let g = gates(292);
    let mut panel = Panel::new();
    panel.on_start(
        Started {
            name: None,
            ..bg(7, "")
        },
        0,
    );
    // An id far past the number of runs is kept in the map, not the vector.
    panel.on_start(bg(4_000_000_000, "far"), 0);
    let view = panel.view(0, &g, false);
    let labels: Vec<&str> = view.rows.iter().map(|row| row.label.as_str()).collect();
    assert_eq!(labels, ["a7", "far"]);
    assert!(panel.has_row(4_000_000_000, 0, &g));
    assert!(!panel.has_row(8, 0, &g));
}

#[test]
fn a_window_opened_late_ends_first() {
    let g = gates(292);
    let mut panel = Panel::new();
    let mut out = Vec::new();
    panel.on_start(run(1, None, "fg", false, false), 0);
    panel.on_start(bg(2, "bg"), 0);
    panel.on_finish(1, Outcome::Failed, S);
    panel.on_finish(2, Outcome::Failed, 2 * S);
    assert_eq!(
        panel.update(2 * S, &g, false, &mut out),
        Some(2 * S + RETENTION)
    );
    // Ctrl+B on the finished foreground run: its row and its window (which ends
    // before run 2's) appear now.
    panel.on_background(1, 3 * S);
    out.clear();
    assert_eq!(
        panel.update(3 * S, &g, false, &mut out),
        Some(S + RETENTION)
    );
    assert_eq!(
        out,
        [PanelChange::RowAdded {
            row: RowId::Agent(1),
            rule: "RESUME-8"
        }]
    );
    out.clear();
    assert_eq!(
        panel.update(S + RETENTION, &g, false, &mut out),
        Some(2 * S + RETENTION)
    );
    assert_eq!(out.len(), 1);
}

#[test]
fn only_interactive_sessions_have_a_panel() {
    assert_eq!(
        session_has_panel(SessionKind::Interactive),
        (true, "PANEL-1")
    );
    assert!(!session_has_panel(SessionKind::Headless).0);
    assert!(!session_has_panel(SessionKind::Sdk).0);
}

#[test]
fn keys_and_commands() {
    assert_eq!(
        x_key(RowId::Main, true, false),
        (XAction::TypeIntoPrompt, "PANEL-7")
    );
    assert_eq!(
        x_key(RowId::Agent(1), true, true).0,
        XAction::TypeIntoPrompt
    );
    assert_eq!(x_key(RowId::Agent(1), true, false).0, XAction::Stop);
    assert_eq!(x_key(RowId::Agent(1), false, false).0, XAction::Dismiss);

    let route = |input, patch| transcript_input(input, &gates(patch)).0;
    assert_eq!(route(ViewInput::Message, 292), ViewRoute::ViewedAgent);
    assert_eq!(route(ViewInput::Skill, 292), ViewRoute::ViewedAgent);
    assert_eq!(
        route(ViewInput::Command("clear"), 292),
        ViewRoute::MainAfterConfirmation
    );
    assert_eq!(route(ViewInput::Command("help"), 292), ViewRoute::Main);
    assert_eq!(
        route(ViewInput::Command("model"), 199),
        ViewRoute::Refused(messages::TRANSCRIPT_MAIN_SETTINGS_NOTICE)
    );
    assert_eq!(route(ViewInput::Command("fast"), 198), ViewRoute::Main);

    assert_eq!(
        read_now(Waiting::Backgroundable, &gates(286)),
        (ReadNow::MovedToBackground, "PANEL-10")
    );
    assert_eq!(
        read_now(Waiting::Backgroundable, &gates(285)).0,
        ReadNow::AfterCurrentWork
    );
    assert_eq!(
        read_now(Waiting::WritingResponse, &gates(292)).0,
        ReadNow::AfterCurrentWork
    );
    assert_eq!(
        read_now(Waiting::NotBackgroundable, &gates(292)).0,
        ReadNow::AfterCurrentWork
    );

    assert_eq!(
        agents_command(&gates(197)),
        (AgentsCommand::Wizard, "PANEL-11")
    );
    assert_eq!(
        agents_command(&gates(198)).0,
        AgentsCommand::Reminder(messages::AGENTS_REMINDER)
    );
    assert_eq!(
        startup_header(Some("code-reviewer")).as_deref(),
        Some("@code-reviewer")
    );
    assert_eq!(startup_header(None), None);
}
