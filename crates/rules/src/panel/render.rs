//! The panel and the `/tasks` list as text.

use super::*;

/// The deepest tree level [`render_panel`] indents: a deeper row is indented as this one
/// and says its level (`[level 40] a40`). Every line is padded to the longest label, so
/// a chain of N nested runs drew N² spaces (20,000 levels: 800 MB for one panel), and a
/// label past 65,535 characters panicked as a format width.
pub const MAX_DRAWN_LEVEL: u32 = 32;

/// The panel as text, the way a person sees it: one line per row, indented two spaces per
/// tree level (to [`MAX_DRAWN_LEVEL`]), `(+N)` after a label with descendants in the panel, then the status word;
/// the footer hint on the last line when it is shown.
pub fn render_panel(view: &PanelView) -> String {
    let mut out = String::new();
    // The status words line up in one column, after the longest indented label.
    let labels: Vec<String> = view
        .rows
        .iter()
        .map(|row| {
            let indent = "  ".repeat(row.level.min(MAX_DRAWN_LEVEL) as usize);
            let mut label = if row.level > MAX_DRAWN_LEVEL {
                format!("{indent}[level {}] {}", row.level, row.label)
            } else {
                format!("{indent}{}", row.label)
            };
            if row.descendants > 0 {
                let _ = write!(label, " (+{})", row.descendants);
            }
            label
        })
        .collect();
    let width = labels
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    for (row, label) in view.rows.iter().zip(&labels) {
        let _ = writeln!(out, "{label:width$}  {}", row.status.as_str());
    }
    if let Some(hint) = view.footer_hint {
        let _ = writeln!(out, "{hint}");
    }
    out
}

/// The `/tasks` list as text: a `/tasks` heading, then one line per entry (label, status,
/// and from v2.1.242 the model and any effort), running work first.
pub fn render_tasks(view: &PanelView) -> String {
    let mut out = String::from("/tasks\n");
    if view.tasks.is_empty() {
        out.push_str("  (no tasks)\n");
        return out;
    }
    let width = view
        .tasks
        .iter()
        .map(|task| task.label.chars().count())
        .max()
        .unwrap_or(0);
    for task in &view.tasks {
        let mut line = format!(
            "  {:<width$}  {:<7}",
            task.label,
            task.status.as_str(),
            width = width
        );
        if let Some(model) = &task.model {
            let _ = write!(line, "  {model}");
            if let Some(effort) = &task.effort {
                let _ = write!(line, " · effort {effort}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
