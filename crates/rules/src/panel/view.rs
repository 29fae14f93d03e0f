//! What a person sees at a given time: rows, footer hint and `/tasks` list, built whole
//! ([`Panel::view`]) or kept up to date ([`Panel::update`]), and when it next changes.

use super::diff::status_rule;
use super::*;

impl Panel {
    /// What a person sees at `at` under `gates`; `screen_reader` hides the footer hint.
    pub fn view(&self, at: Micros, gates: &Gates, screen_reader: bool) -> PanelView {
        // PANEL-1 / Q-21: which runs have rows; `shown[i]` is entry `i`'s row, if it has one.
        let mut shown: Vec<Option<usize>> = vec![None; self.entries.len()];
        let mut visible: Vec<(&Entry, Status, usize)> = Vec::new();
        for (index, entry) in self.entries.iter().enumerate() {
            if let Some(status) = entry.row_status(at, gates) {
                shown[index] = Some(visible.len());
                visible.push((entry, status, index));
            }
        }
        let main_row = visible.iter().any(|(entry, _, _)| entry.fork);
        // PANEL-6: the tree. Each row hangs under its nearest ancestor that has a row. Every
        // run starts after its launcher, so entries are in an order where a parent comes
        // first: one pass down the entries finds each one's depth (its ancestors, main
        // excluded, plus one) and its nearest ancestor with a row from its parent's, where
        // walking up the chain for every row cost O(depth) each (a 20,000-deep chain took
        // seconds). An entry whose parent comes later (none does) walks up as before.
        let mut depth_of: Vec<u32> = Vec::with_capacity(self.entries.len());
        let mut nearest: Vec<Option<usize>> = Vec::with_capacity(self.entries.len());
        for (index, entry) in self.entries.iter().enumerate() {
            let (depth, near) = match entry.parent() {
                None => (1, None),
                Some(parent) => match self.position(parent) {
                    Some(p) if p < index => (depth_of[p] + 1, shown[p].or(nearest[p])),
                    Some(_) => {
                        let ancestors = self.ancestors(entry.id);
                        let near = ancestors
                            .iter()
                            .find_map(|ancestor| self.position(*ancestor).and_then(|a| shown[a]));
                        (ancestors.len() as u32 + 1, near)
                    }
                    // An ancestor without an entry counts, and ends the chain.
                    None => (2, None),
                },
            };
            depth_of.push(depth);
            nearest.push(near);
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); visible.len()];
        let mut roots: Vec<usize> = Vec::new();
        let mut depths: Vec<u32> = Vec::with_capacity(visible.len());
        for (row, &(_, _, index)) in visible.iter().enumerate() {
            depths.push(depth_of[index]);
            match nearest[index] {
                Some(parent) => children[parent].push(row),
                None => roots.push(row),
            }
        }
        // only descendants whose rows are in the panel count: a row's are the rows
        // below it in this tree, added up from the last row (a row comes after its parent).
        let mut descendants: Vec<u32> = vec![0; visible.len()];
        for row in (0..visible.len()).rev() {
            if let Some(parent) = nearest[visible[row].2] {
                debug_assert!(parent < row, "a row comes after its parent's");
                descendants[parent] += 1 + descendants[row];
            }
        }
        let mut rows = Vec::with_capacity(visible.len() + 1);
        let base_level = u32::from(main_row);
        if main_row {
            rows.push(Row {
                id: RowId::Main,
                label: MAIN_LABEL.to_string(),
                depth: 0,
                level: 0,
                status: Status::Running,
                descendants: visible.len() as u32,
                fork: false,
            });
        }
        // Depth-first, children in start order.
        let mut stack: Vec<(usize, u32)> = roots
            .into_iter()
            .rev()
            .map(|index| (index, base_level))
            .collect();
        while let Some((index, level)) = stack.pop() {
            let (entry, status, _) = visible[index];
            rows.push(Row {
                id: RowId::Agent(entry.id),
                label: self.label(entry),
                depth: depths[index],
                level,
                status,
                descendants: descendants[index],
                fork: entry.fork,
            });
            stack.extend(
                children[index]
                    .iter()
                    .rev()
                    .map(|&child| (child, level + 1)),
            );
        }
        PanelView {
            at,
            rows,
            footer_hint: self.footer_hint(at, gates, screen_reader),
            tasks: self.tasks(at, gates),
        }
    }

    /// PANEL-2: the footer hint, 30 s after a success, from v2.1.232, not for screen readers.
    fn footer_hint(&self, at: Micros, gates: &Gates, screen_reader: bool) -> Option<&'static str> {
        self.last_success
            .filter(|&success| {
                gates.success_row_removed_at_once
                    && !screen_reader
                    && success <= at
                    && at < success.saturating_add(RETENTION)
            })
            .map(|_| messages::FOOTER_HINT)
    }

    /// Brings what the panel shows up to `at` (after the latest `on_*` call) and appends
    /// to `out` what changed since the previous call (since an empty panel, the first
    /// time): exactly what [`Panel::changes`] gives for the two [`Panel::view`]s, in the
    /// same order. Returns [`Panel::next_change`]`(at)`, the time to call again if nothing
    /// else happens first.
    ///
    /// It looks only at the runs touched since the previous call and at the 30 s windows
    /// that ended, so a change costs O(log n) (plus the depth of the tree, to order
    /// several changes of one instant). `gates` and `screen_reader` must not change
    /// between calls.
    pub fn update(
        &mut self,
        at: Micros,
        gates: &Gates,
        screen_reader: bool,
        out: &mut Vec<PanelChange>,
    ) -> Option<Micros> {
        // PANEL-2/3/4/5: windows that ended by now. An entry whose row is not shown (as
        // its window knows) has nothing to change: it is not read.
        while let Some((end, index, known)) = self.windows.first() {
            if end > at {
                break;
            }
            self.windows.pop_first();
            match self.known(index, known, gates) {
                Some((false, _)) => {
                    let entry = &self.entries[index as usize];
                    debug_assert!(
                        entry.shown.is_none() || entry.dirty,
                        "a window's memo: the row is not shown (or the entry is dirty anyway)"
                    );
                }
                _ => self.touch(index as usize),
            }
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        let Scratch {
            mut removed,
            mut changed,
            mut added,
            mut now,
        } = std::mem::take(&mut self.scratch);
        for &index in &dirty {
            let entry = &mut self.entries[index as usize];
            entry.dirty = false;
            let status = entry.row_status(at, gates);
            match (entry.shown, status) {
                (Some(_), None) => removed.push(index),
                (None, Some(_)) => added.push(index),
                (Some((from, _)), Some(to)) if from != to => changed.push((index, from, to)),
                _ => {}
            }
            now.push(status);
        }
        // Removals in the order of the rows shown before (the tree before this change).
        if removed.len() > 1 {
            removed.sort_by_cached_key(|&index| self.tree_key(index as usize));
        }
        let main_before = self.shown_forks > 0;
        for (&index, &status) in dirty.iter().zip(&now) {
            let entry = &mut self.entries[index as usize];
            if let Some((_, true)) = entry.shown {
                self.shown_forks -= 1;
            }
            entry.shown = status.map(|status| (status, entry.fork));
            if status.is_some() && entry.fork {
                self.shown_forks += 1;
            }
        }
        dirty.clear();
        self.dirty = dirty;
        let main_after = self.shown_forks > 0;
        // PANEL-1: the main-session row is the first row.
        if main_before && !main_after {
            out.push(PanelChange::RowRemoved {
                row: RowId::Main,
                reason: RemovalReason::NoForks,
                rule: "PANEL-1",
            });
        }
        for &index in &removed {
            let entry = &self.entries[index as usize];
            let (reason, rule) = entry.removal(at);
            out.push(PanelChange::RowRemoved {
                row: RowId::Agent(entry.id),
                reason,
                rule,
            });
        }
        // Status changes and additions in the order of the rows shown now.
        if changed.len() > 1 {
            changed.sort_by_cached_key(|&(index, _, _)| self.tree_key(index as usize));
        }
        for &(index, from, to) in &changed {
            let entry = &self.entries[index as usize];
            out.push(PanelChange::RowStatusChanged {
                row: RowId::Agent(entry.id),
                from,
                to,
                rule: status_rule(to, entry.fork),
            });
        }
        if !main_before && main_after {
            out.push(PanelChange::RowAdded {
                row: RowId::Main,
                rule: "PANEL-1",
            });
        }
        if added.len() > 1 {
            added.sort_by_cached_key(|&index| self.tree_key(index as usize));
        }
        for &index in &added {
            let entry = &self.entries[index as usize];
            out.push(PanelChange::RowAdded {
                row: RowId::Agent(entry.id),
                rule: entry.added_rule(),
            });
        }
        let hint = self.footer_hint(at, gates, screen_reader).is_some();
        match (self.shown_hint, hint) {
            (false, true) => out.push(PanelChange::FooterHintShown { rule: "PANEL-2" }),
            (true, false) => out.push(PanelChange::FooterHintCleared { rule: "PANEL-2" }),
            _ => {}
        }
        self.shown_hint = hint;
        removed.clear();
        changed.clear();
        added.clear();
        now.clear();
        self.scratch = Scratch {
            removed,
            changed,
            added,
            now,
        };
        // The next window whose end changes the view; stale ones are dropped on the way.
        let mut next = None;
        while let Some((end, index, known)) = self.windows.first() {
            let ends = match self.known(index, known, gates) {
                Some((_, ends)) => {
                    debug_assert_eq!(
                        ends,
                        self.entries[index as usize].window_ends(end, at, gates),
                        "a window's memo: whether its end changes the view"
                    );
                    ends
                }
                None => self.entries[index as usize].window_ends(end, at, gates),
            };
            if ends {
                next = Some(end);
                break;
            }
            self.windows.pop_first();
        }
        if gates.success_row_removed_at_once && !screen_reader {
            if let Some(end) = self
                .last_success
                .map(|success| success.saturating_add(RETENTION))
                .filter(|&end| end > at)
            {
                next = Some(next.map_or(end, |next: Micros| next.min(end)));
            }
        }
        next
    }

    /// Where a shown row sits in the tree (PANEL-6): the entry indices of its ancestors
    /// that show rows, outermost first, then its own. Rows in tree order have their keys
    /// in increasing order.
    fn tree_key(&self, index: usize) -> Vec<u32> {
        let mut key: Vec<u32> = self
            .ancestors(self.entries[index].id)
            .into_iter()
            .filter_map(|ancestor| self.position(ancestor))
            .filter(|&position| self.entries[position].shown.is_some())
            .map(|position| position as u32)
            .collect();
        key.reverse();
        key.push(index as u32);
        key
    }

    /// PANEL-5 / PANEL-8 / Q-23: the `/tasks` list at `at`.
    fn tasks(&self, at: Micros, gates: &Gates) -> Vec<TaskLine> {
        let line = |entry: &Entry, status: Status| TaskLine {
            id: entry.id,
            label: self.label(entry),
            status,
            running: entry.running,
            model: gates
                .tasks_show_model
                .then(|| self.names[self.styles[entry.style as usize].0 as usize].clone()),
            effort: self.styles[entry.style as usize]
                .1
                .filter(|_| gates.tasks_show_model)
                .map(|effort| self.names[effort as usize].clone()),
        };
        let listed = self.entries.iter().filter(|entry| entry.has_rows());
        let mut tasks: Vec<TaskLine> = listed
            .clone()
            .filter(|entry| entry.running)
            .map(|entry| line(entry, entry.running_status(gates)))
            .collect();
        // PANEL-5: done work below running work for 30 s (v2.1.208+, Q-23); failed and
        // stopped runs leave the list.
        let mut done: Vec<(Micros, &Entry)> = listed
            .filter_map(|entry| match entry.finished() {
                Some((Ending::Completed, finished_at))
                    if !entry.running
                        && gates.tasks_lists_done
                        && at < finished_at.saturating_add(RETENTION) =>
                {
                    Some((finished_at, entry))
                }
                _ => None,
            })
            .collect();
        done.sort_by_key(|(finished_at, _)| *finished_at);
        tasks.extend(done.into_iter().map(|(_, entry)| line(entry, Status::Done)));
        tasks
    }

    /// The earliest time after `after` at which the view changes with nothing else
    /// happening — a row's or list entry's 30 s running out, or the footer hint's — or
    /// `None` if the view stays as it is. An engine schedules a look at that time.
    pub fn next_change(&self, after: Micros, gates: &Gates, screen_reader: bool) -> Option<Micros> {
        let mut candidates: Vec<Micros> = self
            .entries
            .iter()
            .filter_map(Entry::finished)
            .map(|(_, finished_at)| finished_at.saturating_add(RETENTION))
            .chain(
                self.last_success
                    .map(|success| success.saturating_add(RETENTION)),
            )
            .filter(|&time| time > after)
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().find(|&time| {
            let now = self.view(time, gates, screen_reader);
            let just_before = self.view(time - 1, gates, screen_reader);
            (now.rows, now.footer_hint, now.tasks)
                != (just_before.rows, just_before.footer_hint, just_before.tasks)
        })
    }
}
