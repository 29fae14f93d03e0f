//! How the lines are laid out: detail levels, grouping of same-instant lines, following one
//! agent, colour, chapter headings and the closing summary.

use super::narrate::*;
use super::*;
use crate::runmodel::{group, RunModel};

/// How much the narration shows (`--detail`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// Decisions and what people see; bookkeeping hidden, same-instant runs of identical
    /// lines grouped.
    #[default]
    Brief,
    /// Every event, one line each.
    Full,
}

/// What a narration shows and how ([`TextWriter::with_options`]).
#[derive(Clone, Debug, Default)]
pub struct NarrationOptions {
    /// How much to show.
    pub detail: Detail,
    /// ANSI colours (agents, refusals, prompts, headings).
    pub color: bool,
    /// Narrate only this agent (name or id) and what touches it.
    pub follow: Option<String>,
    /// One-line headings, each shown before the first event at or after its instant.
    pub chapters: Vec<(crate::time::SimTime, String)>,
    /// Commands to try next, shown after the closing summary.
    pub next: Vec<String>,
    /// Close with a summary of what happened.
    pub summary: bool,
    /// The terminal's width in columns: a longer line is wrapped, the reason going under
    /// the decision with a hanging indent. `None`: never wrapped.
    pub width: Option<usize>,
}

/// How a word of a wrapped line is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ink {
    Plain,
    What,
    Cite,
}

/// One word of a wrapped line: its text, colour, and whether a space goes before it.
type Word = (String, Ink, bool);

/// The narrowest a wrapped part may be, however narrow the terminal: a column of one word
/// per line helps nobody.
const MIN_ROOM: usize = 20;

/// The runs the narration's model keeps: its closing summary needs only the counts and the
/// chain, and a chain through a run past this is cut short with a word saying so.
const MODEL_ROWS: u64 = 100_000;

/// A line waiting for the end of its instant, so that alike neighbours can be grouped
/// ([`crate::runmodel::group`]).
struct Held {
    /// The model's key and the line's shape: neighbours alike in both may merge.
    key: (group::Key, Option<String>),
    told: Told,
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";

/// Writes the narration into any [`Write`]: with [`Detail::Brief`] (the default), decisions
/// and what people see, same-instant runs of identical lines grouped; with
/// [`Detail::Full`], one line per event.
///
/// Output is buffered internally. The first I/O error is remembered (later events are
/// dropped) and returned by [`TextWriter::finish`].
pub struct TextWriter<W: Write> {
    out: Buffered<W>,
    narrator: Narrator,
    options: NarrationOptions,
    line: String,
    /// The instant whose lines are held, and the lines.
    held_at: crate::time::SimTime,
    held: Vec<Held>,
    chapter: usize,
    /// The run model: the closing summary's end, counts and the chain that set the end.
    model: Option<crate::runmodel::Builder>,
    /// Events that touched the followed agent (with `follow`).
    followed: u64,
}

impl<W: Write> TextWriter<W> {
    /// A writer into `out`, brief, without colours.
    pub fn new(out: W) -> TextWriter<W> {
        TextWriter::with_options(out, NarrationOptions::default())
    }

    /// A writer into `out` with `options`.
    pub fn with_options(out: W, options: NarrationOptions) -> TextWriter<W> {
        let narrator = match options.detail {
            Detail::Brief => Narrator::brief(),
            Detail::Full => Narrator::new(),
        };
        TextWriter {
            out: Buffered::new(out, 1024),
            narrator,
            options,
            line: String::with_capacity(256),
            held_at: crate::time::SimTime::ZERO,
            held: Vec::new(),
            chapter: 0,
            model: Some(crate::runmodel::Builder::new(MODEL_ROWS)),
            followed: 0,
        }
    }

    /// Ends the current instant (its held lines are grouped and written), hands everything
    /// buffered to the underlying writer and flushes it; returns the remembered error, if a
    /// write has failed. Call it between instants (`--realtime` does before each wait), not
    /// in the middle of one, or that instant's identical lines are not grouped.
    pub fn flush(&mut self) -> io::Result<()> {
        self.release();
        self.out.flush()
    }

    /// The followed name (`NarrationOptions::follow`) when no event so far touched it: a
    /// misspelt name, or an agent that never ran.
    pub fn follow_missed(&self) -> Option<&str> {
        match &self.options.follow {
            Some(name) if self.followed == 0 => Some(name),
            _ => None,
        }
    }

    /// Writes out what is left (and the closing summary) and returns the underlying
    /// writer, or the first I/O error.
    pub fn finish(mut self) -> io::Result<W> {
        self.release();
        if self.options.summary {
            let model = self
                .model
                .take()
                .map(crate::runmodel::Builder::finish)
                .unwrap_or_default();
            let mut text = closing(&model, &self.options);
            if let Some(width) = self.options.width {
                text = wrap_prose(&text, width);
            }
            self.emit_raw(&text);
        }
        self.out.finish()
    }

    fn emit_raw(&mut self, text: &str) {
        if let Some(buffer) = self.out.buffer() {
            buffer.extend_from_slice(text.as_bytes());
            self.out.written();
        }
    }

    /// The heading of the last chapter that begins at or before `t`, before the line at
    /// `t`: a chapter that another began after before any line of it was written (with
    /// `follow`, one where the followed agent did nothing) gets no heading of its own.
    fn chapters_until(&mut self, t: crate::time::SimTime) {
        while let Some((at, title)) = self.options.chapters.get(self.chapter) {
            if *at > t {
                break;
            }
            let superseded = self
                .options
                .chapters
                .get(self.chapter + 1)
                .is_some_and(|(next, _)| *next <= t);
            if superseded {
                self.chapter += 1;
                continue;
            }
            let mut text = format!("── {} ──", visible(title));
            if let Some(width) = self
                .options
                .width
                .filter(|width| text.chars().count() > *width)
            {
                // Wrapped, the rest under the title's first word.
                let words: Vec<Word> = text
                    .split(' ')
                    .map(|word| (word.to_string(), Ink::Plain, true))
                    .collect();
                let room = width.saturating_sub(3).max(MIN_ROOM);
                text.clear();
                for (index, part) in fill(&words, width.max(MIN_ROOM), room).iter().enumerate() {
                    if index > 0 {
                        text.push_str("\n   ");
                    }
                    paint(&mut text, part, false, None);
                }
            }
            let text = if self.options.color {
                format!("{BOLD}{text}{RESET}\n")
            } else {
                format!("{text}\n")
            };
            self.chapter += 1;
            self.emit_raw(&text);
        }
    }

    /// Writes the held lines of the instant that is over.
    /// Alike neighbours (the model's groups, [`group::split`], whose lines also read alike)
    /// become one line per position of their pattern, naming every subject.
    fn release(&mut self) {
        let held = std::mem::take(&mut self.held);
        let keys: Vec<&(group::Key, Option<String>)> = held.iter().map(|h| &h.key).collect();
        let subjects: Vec<Option<&String>> = held
            .iter()
            .map(|h| h.key.1.as_ref().and(h.told.subject.as_ref()))
            .collect();
        for (start, len, period) in group::split(&keys, &subjects) {
            for position in 0..period {
                let members: Vec<&Held> = held[start + position..start + len]
                    .iter()
                    .step_by(period)
                    .collect();
                let Some(last) = members.last() else {
                    continue;
                };
                let mut told = last.told.clone();
                if members.len() > 1 {
                    let names: Vec<String> = members
                        .iter()
                        .filter_map(|h| h.told.subject.clone())
                        .collect();
                    let joined = join_subjects(&names);
                    let last = names.last().map(String::as_str).unwrap_or("");
                    if told.who == last {
                        told.who = joined;
                    } else if let Some(at) = told.what.find(last) {
                        told.what.replace_range(at..at + last.len(), &joined);
                    }
                }
                self.put(self.held_at, &told);
            }
        }
    }

    /// Writes one line, coloured if asked.
    fn put(&mut self, t: crate::time::SimTime, told: &Told) {
        self.chapters_until(t);
        self.line.clear();
        if let Some(width) = self.options.width {
            if self.put_wrapped(t, told, width) {
                return;
            }
        }
        if self.options.color {
            // The colours are the only escape sequences: the scenario's own text is made
            // visible first (a name must not drive the terminal).
            let told = &Told {
                who: visible(&told.who),
                what: visible(&told.what),
                why: told.why.as_deref().map(visible),
                cite: told.cite.as_deref().map(visible),
                subject: None,
                tone: told.tone,
            };
            let mut plain = told.clone();
            plain.who = format!("{CYAN}{}{RESET}", told.who);
            let colour = match told.tone {
                Tone::Refusal => Some(RED),
                Tone::Prompt => Some(YELLOW),
                Tone::Plain => None,
            };
            if let Some(colour) = colour {
                plain.what = format!("{colour}{}{RESET}", told.what);
            }
            plain.cite = None;
            // The escape codes take no room on screen: pad by the plain name's width.
            let pad = self
                .narrator
                .who_width
                .saturating_sub(told.who.chars().count());
            let _ = write!(self.line, "{t}  {}", plain.who);
            self.line.extend(std::iter::repeat_n(' ', pad));
            self.line.push_str("  ");
            self.line.push_str(&plain.what);
            if let Some(why) = &plain.why {
                self.line.push_str(": ");
                self.line.push_str(why);
            }
            if let Some(cite) = &told.cite {
                let _ = write!(self.line, " {DIM}({cite}){RESET}");
            }
        } else {
            self.narrator.write(t, told, &mut self.line);
        }
        self.line.push('\n');
        let line = std::mem::take(&mut self.line);
        self.emit_raw(&line);
        self.line = line;
    }

    /// Writes `told` over several lines when its one line would be wider than `width`:
    /// what happened after the time and the name (itself wrapped under the same start
    /// when too long), then the reason and the rule two columns further in. Returns false
    /// (nothing written) when the line fits.
    fn put_wrapped(&mut self, t: crate::time::SimTime, told: &Told, width: usize) -> bool {
        let who = visible(&told.who);
        let what = visible(&told.what);
        let why = told.why.as_deref().map(visible);
        let cite = told.cite.as_deref().map(visible);
        let who_width = who.chars().count().max(self.narrator.who_width);
        // `hh:mm:ss.mmm` and two spaces, the name column and two spaces; a name wider than
        // the column (a group's "a … z (n)") pushes the first line only.
        let start = 12 + 2 + who_width + 2;
        let indent = 12 + 2 + self.narrator.who_width + 2;
        let mut length = start + what.chars().count();
        if let Some(why) = &why {
            length += 2 + why.chars().count();
        }
        if let Some(cite) = &cite {
            length += 2 + cite.chars().count() + 1;
        }
        if length <= width {
            return false;
        }
        let words = |text: &str, ink: Ink| -> Vec<Word> {
            text.split(' ')
                .filter(|word| !word.is_empty())
                .map(|word| (word.to_string(), ink, true))
                .collect()
        };
        let mut head = words(&what, Ink::What);
        let mut tail = Vec::new();
        if let Some(why) = &why {
            head.push((":".to_string(), Ink::Plain, false));
            tail.extend(words(why, Ink::Plain));
        }
        if let Some(cite) = &cite {
            // The rule stays in one piece: it is what a reader looks up. Without a reason
            // it closes what happened.
            let word = (format!("({cite})"), Ink::Cite, true);
            if why.is_some() {
                tail.push(word);
            } else {
                head.push(word);
            }
        }
        let room = width.saturating_sub(indent).max(MIN_ROOM);
        // No room beside a long name: what happened starts on the next line.
        let beside = width.saturating_sub(start) >= MIN_ROOM;
        let mut lines = if beside {
            fill(&head, width - start, room)
        } else {
            let mut lines = vec![Vec::new()];
            lines.extend(fill(&head, room, room));
            lines
        };
        let tail_lines = if tail.is_empty() {
            Vec::new()
        } else {
            let room = width.saturating_sub(indent + 2).max(MIN_ROOM);
            fill(&tail, room, room)
        };
        let color = self.options.color;
        let mut text = format!("{t}  ");
        if color {
            let _ = write!(text, "{CYAN}{who}{RESET}");
        } else {
            text.push_str(&who);
        }
        if beside {
            text.extend(std::iter::repeat_n(' ', who_width - who.chars().count()));
            text.push_str("  ");
        }
        let tone = match told.tone {
            Tone::Refusal => Some(RED),
            Tone::Prompt => Some(YELLOW),
            Tone::Plain => None,
        };
        let first = lines.remove(0);
        paint(&mut text, &first, color, tone);
        for line in lines {
            text.push('\n');
            text.extend(std::iter::repeat_n(' ', indent));
            paint(&mut text, &line, color, tone);
        }
        for line in tail_lines {
            text.push('\n');
            text.extend(std::iter::repeat_n(' ', indent + 2));
            paint(&mut text, &line, color, tone);
        }
        text.push('\n');
        self.emit_raw(&text);
        true
    }

    /// Does `event` touch the followed agent?
    fn followed(&self, event: &Event) -> bool {
        let Some(name) = &self.options.follow else {
            return true;
        };
        if matches!(event.kind, EventKind::SessionStarted { .. }) {
            return true;
        }
        let mut touches = false;
        let names = &self.narrator;
        event.visit_fields(&mut |field, value| {
            let hit = match value {
                Field::Agent(agent) => agent.is(name) || names.label(agent) == *name,
                Field::Str(text) => matches!(field, "name" | "to") && text == name,
                Field::U64(..) | Field::Bool(..) | Field::List(..) => false,
            };
            touches |= hit;
        });
        touches
    }
}

/// `text` as one field of a terminal line ([`subsim_escape::terminal::line`]): what coloured
/// output does to the scenario's own strings before it adds its colours.
fn visible(text: &str) -> String {
    subsim_escape::terminal::line(text).into_owned()
}

/// `words` in lines of at most `first_room` columns for the first line and `room` for the
/// others (a longer word gets a line of its own). Always at least one line.
fn fill(words: &[Word], first_room: usize, room: usize) -> Vec<Vec<Word>> {
    // A word longer than a line (a path) is cut after a `/` or `-` where one fits, else
    // where the line ends; its pieces are glued but may start a line (`true`).
    let piece_room = room.min(first_room).max(1);
    let mut pieces: Vec<(Word, bool)> = Vec::with_capacity(words.len());
    for word in words {
        let mut rest: Vec<char> = word.0.chars().collect();
        let mut first = true;
        while rest.len() > piece_room {
            let cut = rest[..piece_room]
                .iter()
                .rposition(|c| *c == '/' || *c == '-')
                .map_or(piece_room, |at| at + 1);
            let text: String = rest.drain(..cut).collect();
            pieces.push(((text, word.1, word.2 && first), !first));
            first = false;
        }
        pieces.push((
            (rest.into_iter().collect(), word.1, word.2 && first),
            !first,
        ));
    }
    let mut lines: Vec<Vec<Word>> = vec![Vec::new()];
    let mut used = 0;
    for (index, (word, cut)) in pieces.iter().enumerate() {
        let limit = if lines.len() == 1 { first_room } else { room };
        let line = lines.last_mut().expect("one line at least");
        let size = word.0.chars().count();
        // Words glued to this one (the colon after what happened) go where it goes.
        let glued: usize = pieces[index + 1..]
            .iter()
            .take_while(|(next, cut)| !next.2 && !cut)
            .map(|(next, _)| next.0.chars().count())
            .sum();
        let gap = usize::from(word.2 && !line.is_empty());
        if !line.is_empty() && (word.2 || *cut) && used + gap + size + glued > limit {
            let mut word = word.clone();
            word.2 = true;
            lines.push(vec![word]);
            used = size;
        } else {
            line.push(word.clone());
            used += gap + size;
        }
    }
    lines
}

/// A "Try next" command as printed, two columns in: whole when it fits `width` (a reader
/// copies it whole); else its `# comment` goes on a line of its own under it, so the
/// command still pastes as it is.
fn next_lines(command: &str, width: Option<usize>) -> Vec<String> {
    let whole = format!("  {command}");
    let fits = width.is_none_or(|width| whole.chars().count() <= width);
    match command.split_once("  #") {
        Some((run, comment)) if !fits => vec![
            format!("  {}", run.trim_end()),
            format!("      #{}", comment.trim_end()),
        ],
        _ => vec![whole],
    }
}

/// `text`'s sentences wrapped to `width`, continuing two columns in; indented lines (the
/// commands to try next, which a reader copies whole) are left as they are.
fn wrap_prose(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with(' ') || line.chars().count() <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let words: Vec<Word> = line
            .split(' ')
            .map(|word| (word.to_string(), Ink::Plain, true))
            .collect();
        let room = width.saturating_sub(2).max(MIN_ROOM);
        for (index, part) in fill(&words, width.max(MIN_ROOM), room).iter().enumerate() {
            if index > 0 {
                out.push_str("  ");
            }
            paint(&mut out, part, false, None);
            out.push('\n');
        }
    }
    out
}

/// Appends the words of one wrapped line, each run of one ink in its colour.
fn paint(out: &mut String, line: &[Word], color: bool, tone: Option<&str>) {
    let mut open: Option<&str> = None;
    for (index, (text, ink, space)) in line.iter().enumerate() {
        let want = match (color, ink) {
            (false, _) | (true, Ink::Plain) => None,
            (true, Ink::What) => tone,
            (true, Ink::Cite) => Some(DIM),
        };
        if open != want {
            if open.is_some() {
                out.push_str(RESET);
            }
            if *space && index > 0 {
                out.push(' ');
            }
            if let Some(colour) = want {
                out.push_str(colour);
            }
            open = want;
        } else if *space && index > 0 {
            out.push(' ');
        }
        out.push_str(text);
    }
    if open.is_some() {
        out.push_str(RESET);
    }
}

/// The closing summary and the commands to try next, from the run model.
fn closing(model: &RunModel, options: &NarrationOptions) -> String {
    let counts = &model.counts;
    let mut text = String::from("── Summary ──\n");
    let took = match model.end.at {
        0 => "0s".to_string(),
        micros => human_duration(micros),
    };
    let started = counts.all.started;
    let _ = write!(
        text,
        "In {took} of virtual time: {started} {} started",
        if started == 1 { "run" } else { "runs" },
    );
    if counts.all.resumed > 0 {
        let _ = write!(text, " and {} resumed", counts.all.resumed);
    }
    let _ = write!(text, "; at most {} running at once", counts.peak_running);
    if let Some(cap) = model.cap {
        let _ = write!(text, " (the cap is {cap})");
    }
    text.push_str(".\n");
    let rejected = counts.all.rejected;
    if rejected > 0 {
        let parts: Vec<String> = counts
            .rejected_by
            .iter()
            .map(|((reason, rule), count)| format!("{} ×{count} ({rule})", reason.facts().words))
            .collect();
        let _ = writeln!(
            text,
            "{rejected} {} rejected: {}.",
            if rejected == 1 { "spawn" } else { "spawns" },
            parts.join(", ")
        );
    }
    if counts.prompts > 0 {
        let _ = writeln!(
            text,
            "{} permission {} answered, after {} of waiting in all.",
            counts.prompts,
            if counts.prompts == 1 {
                "prompt"
            } else {
                "prompts"
            },
            human_duration(counts.prompt_wait_us)
        );
    }
    if counts.refused > 0 {
        let _ = writeln!(
            text,
            "{} tool {} refused.",
            counts.refused,
            if counts.refused == 1 { "call" } else { "calls" }
        );
    }
    let _ = writeln!(
        text,
        "{} {} delivered.",
        counts.notifications,
        if counts.notifications == 1 {
            "notification or result"
        } else {
            "notifications and results"
        }
    );
    let _ = writeln!(text, "{}", model.because_brief());
    if !options.next.is_empty() {
        text.push_str("Try next:\n");
        for command in &options.next {
            for line in next_lines(&visible(command), options.width) {
                let _ = writeln!(text, "{line}");
            }
        }
    }
    text
}

/// Is `event` bookkeeping, shown with `--detail full` only (not a decision of the model)?
fn bookkeeping(event: &Event) -> bool {
    !crate::runmodel::decision(event)
}

/// `a`, `a and b`, or `a … z (n)`.
fn join_subjects(subjects: &[String]) -> String {
    match subjects {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [first, .., last] => format!("{first} … {last} ({})", subjects.len()),
    }
}

/// What a line looks like with its subject and numbers left out: lines with the same
/// shape at the same instant are grouped.
fn shape(told: &Told) -> Option<String> {
    let subject = told.subject.as_deref()?;
    let mut key = String::new();
    for part in [&told.who, &told.what] {
        key.push_str(&part.replacen(subject, "\u{0}", 1));
        key.push('\u{1}');
    }
    if let Some(why) = &told.why {
        key.push_str(why);
    }
    if let Some(cite) = &told.cite {
        key.push_str(cite);
    }
    // Counts (`(20 running)`) and ids differ between otherwise identical lines.
    let mut shape = String::with_capacity(key.len());
    for c in key.chars() {
        if c.is_ascii_digit() {
            if !shape.ends_with('#') {
                shape.push('#');
            }
        } else {
            shape.push(c);
        }
    }
    Some(shape)
}

impl<W: Write> Sink for TextWriter<W> {
    fn event(&mut self, event: &Event) {
        if self.out.buffer().is_none() {
            return;
        }
        if let Some(model) = &mut self.model {
            model.add(event);
        }
        let followed = self.followed(event);
        let told = self.narrator.tell(event);
        if !followed {
            return;
        }
        if self.options.follow.is_some() && !matches!(event.kind, EventKind::SessionStarted { .. })
        {
            self.followed += 1;
        }
        if self.options.detail == Detail::Full {
            self.put(event.t, &told);
            return;
        }
        if bookkeeping(event) {
            return;
        }
        if event.t != self.held_at {
            self.release();
            self.held_at = event.t;
        }
        // Grouped at the instant's end, neighbours only: never across another decision.
        self.held.push(Held {
            key: (group::key(event), shape(&told)),
            told,
        });
    }
}

#[cfg(test)]
mod next_tests {
    use super::next_lines;

    #[test]
    fn a_try_next_line_wider_than_the_terminal_puts_its_comment_under_the_command() {
        let command = "subsim run scenarios/demo.yaml --detail full     # every event, panel rows";
        assert_eq!(next_lines(command, Some(100)), vec![format!("  {command}")]);
        assert_eq!(next_lines(command, None), vec![format!("  {command}")]);
        assert_eq!(
            next_lines(command, Some(60)),
            vec![
                "  subsim run scenarios/demo.yaml --detail full".to_string(),
                "      # every event, panel rows".to_string()
            ]
        );
        // No comment: the command is kept whole, whatever the width.
        assert_eq!(
            next_lines("subsim explain CAP-7 --seed 1", Some(10)),
            vec!["  subsim explain CAP-7 --seed 1".to_string()]
        );
    }
}
