//! What changed between two views: the row and footer events to trace, with their rules.

use super::*;

crate::vocabulary! {
    /// Why a row left the panel.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum RemovalReason {
        /// PANEL-2 / PANEL-4: a successful finish removes the row at once (v2.1.232+).
        Succeeded => "succeeded",
        /// PANEL-2/3/4: the row's 30 s after its finish are up.
        Expired => "expired",
        /// PANEL-3: the person cleared it with `x`.
        Dismissed => "dismissed",
        /// PANEL-1: the main-session row goes when the last fork row goes.
        NoForks => "no_forks",
    }
}

/// One visible difference between two views, for the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PanelChange {
    /// A row appeared.
    RowAdded {
        /// Which row.
        row: RowId,
        /// PANEL-1, PANEL-4 (a fork) or RESUME-8 (a resumed run).
        rule: RuleId,
    },
    /// A row left.
    RowRemoved {
        /// Which row.
        row: RowId,
        /// Why.
        reason: RemovalReason,
        /// PANEL-1, PANEL-2, PANEL-3 or PANEL-4.
        rule: RuleId,
    },
    /// A row that stays changed its status word (a failure or stop kept 30 s, a resume).
    RowStatusChanged {
        /// Which row.
        row: RowId,
        /// The old word.
        from: Status,
        /// The new word.
        to: Status,
        /// PANEL-2, PANEL-3, PANEL-4 or RESUME-8.
        rule: RuleId,
    },
    /// PANEL-2: the footer hint appeared.
    FooterHintShown {
        /// `PANEL-2`.
        rule: RuleId,
    },
    /// PANEL-2: the footer hint went away.
    FooterHintCleared {
        /// `PANEL-2`.
        rule: RuleId,
    },
}

crate::vocabulary! {
    /// Which kind of change a [`PanelChange`] is (`panel_changed.change`; PANEL-1…4).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ChangeKind {
        /// A row appeared (PANEL-1, PANEL-4, RESUME-8).
        RowAdded => "row_added",
        /// A row left (PANEL-1…4).
        RowRemoved => "row_removed",
        /// A row that stays changed its status word (PANEL-2…4, RESUME-8).
        RowStatusChanged => "row_status_changed",
        /// PANEL-2: the footer hint appeared.
        FooterHintShown => "footer_hint_shown",
        /// PANEL-2: the footer hint went away.
        FooterHintCleared => "footer_hint_cleared",
    }
}

impl PanelChange {
    /// The kind of change, as the trace writes it.
    pub fn kind(&self) -> ChangeKind {
        match self {
            PanelChange::RowAdded { .. } => ChangeKind::RowAdded,
            PanelChange::RowRemoved { .. } => ChangeKind::RowRemoved,
            PanelChange::RowStatusChanged { .. } => ChangeKind::RowStatusChanged,
            PanelChange::FooterHintShown { .. } => ChangeKind::FooterHintShown,
            PanelChange::FooterHintCleared { .. } => ChangeKind::FooterHintCleared,
        }
    }

    /// The rule behind the change.
    pub fn rule(&self) -> RuleId {
        match self {
            PanelChange::RowAdded { rule, .. }
            | PanelChange::RowRemoved { rule, .. }
            | PanelChange::RowStatusChanged { rule, .. }
            | PanelChange::FooterHintShown { rule }
            | PanelChange::FooterHintCleared { rule } => rule,
        }
    }
}

impl Panel {
    /// The events that take a person from `before` to `after` (two views of this panel,
    /// `after` taken after the latest `on_*` call). Removals come first, then status
    /// changes, then additions (each in row order), then the footer hint.
    pub fn changes(&self, before: &PanelView, after: &PanelView) -> Vec<PanelChange> {
        let mut changes = Vec::new();
        let find = |rows: &[Row], id: RowId| rows.iter().find(|row| row.id == id).cloned();
        for row in &before.rows {
            if find(&after.rows, row.id).is_some() {
                continue;
            }
            let (reason, rule) = self.removal(row, after.at);
            changes.push(PanelChange::RowRemoved {
                row: row.id,
                reason,
                rule,
            });
        }
        for row in &after.rows {
            if let Some(old) = find(&before.rows, row.id) {
                if old.status != row.status {
                    changes.push(PanelChange::RowStatusChanged {
                        row: row.id,
                        from: old.status,
                        to: row.status,
                        rule: status_rule(row.status, row.fork),
                    });
                }
            }
        }
        for row in &after.rows {
            if find(&before.rows, row.id).is_some() {
                continue;
            }
            let rule = match row.id {
                RowId::Main => "PANEL-1",
                RowId::Agent(id) => match self.entry(id) {
                    Some(entry) => entry.added_rule(),
                    None if row.fork => "PANEL-4",
                    None => "PANEL-1",
                },
            };
            changes.push(PanelChange::RowAdded { row: row.id, rule });
        }
        match (before.footer_hint, after.footer_hint) {
            (None, Some(_)) => changes.push(PanelChange::FooterHintShown { rule: "PANEL-2" }),
            (Some(_), None) => changes.push(PanelChange::FooterHintCleared { rule: "PANEL-2" }),
            _ => {}
        }
        changes
    }

    /// Why `row` is gone at `at`.
    fn removal(&self, row: &Row, at: Micros) -> (RemovalReason, RuleId) {
        let RowId::Agent(id) = row.id else {
            return (RemovalReason::NoForks, "PANEL-1");
        };
        match self.entry(id) {
            Some(entry) => entry.removal(at),
            None => (RemovalReason::Expired, "PANEL-3"),
        }
    }
}

/// The rule behind a row's new status word: a resume (RESUME-8), a fork (PANEL-4), a
/// success kept 30 s (PANEL-2, before v2.1.232) or a failure or stop (PANEL-3).
pub(super) fn status_rule(to: Status, fork: bool) -> RuleId {
    match (to, fork) {
        (Status::Running, _) => "RESUME-8",
        (_, true) => "PANEL-4",
        (Status::Done, false) => "PANEL-2",
        _ => "PANEL-3",
    }
}
