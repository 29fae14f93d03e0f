//! The JSON Lines trace writer: one JSON object per event, fields in the order
//! [`Event::visit_fields`] gives them.
//!
//! Hand-written rather than serde-based, for speed (no allocation per event: one reused
//! byte buffer, integers formatted on the stack) and so the engine needs no serde. It is
//! not a general JSON library: it writes only the four field shapes the trace has.

use std::io::{self, Write};
use std::rc::Rc;

use crate::event::{AgentRef, Event, Field, MAIN};
use crate::sink::Sink;

use super::Buffered;

/// Every string in the trace is written by the workspace's one JSON escaper.
pub(crate) use subsim_escape::json::write as write_string;

/// Writes the trace as JSON Lines into any [`Write`].
///
/// Output is buffered internally, so there is no need to wrap `W` in a `BufWriter`. The
/// first I/O error is remembered (later events are dropped) and returned by
/// [`JsonlWriter::finish`]; nothing is lost silently.
///
/// ```
/// use subsim_engine::render::JsonlWriter;
/// use subsim_engine::{Event, EventKind, SimTime, Sink};
/// use subsim_engine::event::Limit;
/// let mut writer = JsonlWriter::new(Vec::new());
/// writer.event(&Event { t: SimTime(1_500), seq: 0, rule: Some("CAP-1"),
///     kind: EventKind::LimitReached { limit: Limit::MaxEvents, value: 10 } });
/// let bytes = writer.finish().unwrap();
/// assert_eq!(String::from_utf8(bytes).unwrap(),
///     "{\"t_us\":1500,\"seq\":0,\"kind\":\"limit_reached\",\"limit\":\"max_events\",\"value\":10,\"rule\":\"CAP-1\"}\n");
/// ```
pub struct JsonlWriter<W: Write> {
    out: Buffered<W>,
    lists: ListCache,
    /// The compact form ([`JsonlWriter::compact`]): the lists last written, by field.
    compact: Option<LastLists>,
}

/// The compact form's memory: each list field's value as last written (`tools`, `context`,
/// `mcp_servers` of `agent_started`), and whether the marker is still to be written.
#[derive(Default)]
struct LastLists {
    fields: Vec<(&'static str, Vec<Rc<str>>)>,
    marked: bool,
}

impl LastLists {
    /// Whether `items` is what `name` held last; if not, it is from now on.
    fn unchanged(&mut self, name: &'static str, items: &[Rc<str>]) -> bool {
        let same = |known: &[Rc<str>]| {
            known.len() == items.len()
                && known
                    .iter()
                    .zip(items)
                    .all(|(a, b)| Rc::ptr_eq(a, b) || **a == **b)
        };
        match self.fields.iter_mut().find(|(known, _)| *known == name) {
            Some((_, last)) if same(last) => true,
            Some((_, last)) => {
                last.clear();
                last.extend(items.iter().cloned());
                false
            }
            None => {
                self.fields.push((name, items.to_vec()));
                false
            }
        }
    }
}

/// The bytes of the lists written last (a run's tools, context pieces, MCP servers), kept
/// with clones of their items: most `agent_started` events share their lists with the
/// previous one (runs of one definition share a profile), and copying the bytes is much
/// cheaper than escaping twenty names again. Holding the item `Rc`s keeps them alive, so
/// equal item pointers mean equal text.
#[derive(Default)]
struct ListCache {
    entries: Vec<(Vec<Rc<str>>, Vec<u8>)>,
    next: usize,
}

/// The list fields the compact form may leave out: those every `agent_started` writes.
const COMPACT_LISTS: [&str; 3] = ["tools", "context", "mcp_servers"];

/// How many lists [`ListCache`] keeps (an `agent_started` has three).
const CACHED_LISTS: usize = 4;

impl ListCache {
    fn write(&mut self, out: &mut Vec<u8>, items: &[Rc<str>]) {
        if items.len() < 2 {
            write_list(out, items);
            return;
        }
        let same = |cached: &[Rc<str>]| {
            cached.len() == items.len() && cached.iter().zip(items).all(|(a, b)| Rc::ptr_eq(a, b))
        };
        if let Some((_, bytes)) = self.entries.iter().find(|(cached, _)| same(cached)) {
            out.extend_from_slice(bytes);
            return;
        }
        let start = out.len();
        write_list(out, items);
        let entry = (items.to_vec(), out[start..].to_vec());
        if self.entries.len() < CACHED_LISTS {
            self.entries.push(entry);
        } else {
            self.entries[self.next] = entry;
            self.next = (self.next + 1) % CACHED_LISTS;
        }
    }
}

impl<W: Write> JsonlWriter<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> JsonlWriter<W> {
        JsonlWriter {
            out: Buffered::new(out, 4096),
            lists: ListCache::default(),
            compact: None,
        }
    }

    /// A writer of the compact form (`subsim run --format jsonl --compact`): a list field
    /// (`tools`, `context`, `mcp_servers` of `agent_started`) whose value is the same as in
    /// the latest earlier line that has that field is left out, and the first line gets
    /// `"compact_lists":true`. A reader restores the full form by carrying each list
    /// field's last value forward into the `agent_started` lines that lack it; the default
    /// form ([`JsonlWriter::new`]) always writes every list.
    pub fn compact(out: W) -> JsonlWriter<W> {
        JsonlWriter {
            compact: Some(LastLists::default()),
            ..JsonlWriter::new(out)
        }
    }

    /// Hands everything buffered to the underlying writer and flushes it.
    ///
    /// Used between events when output must appear at once (`--realtime`). Returns the
    /// remembered error, if an earlier write failed.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes out what is left and returns the underlying writer, or the first I/O error.
    pub fn finish(self) -> io::Result<W> {
        self.out.finish()
    }

    /// Whether a write has failed (later events are being dropped).
    pub fn failed(&self) -> bool {
        self.out.error.is_some()
    }
}

impl<W: Write> Sink for JsonlWriter<W> {
    fn event(&mut self, event: &Event) {
        let Some(buffer) = self.out.buffer() else {
            return;
        };
        match &mut self.compact {
            None => write_event_with(buffer, event, &mut self.lists),
            Some(last) => write_compact(buffer, event, &mut self.lists, last),
        }
        self.out.written();
    }
}

/// Appends one event as a JSON object and a newline to `out`.
pub fn write_event(out: &mut Vec<u8>, event: &Event) {
    write_event_with(out, event, &mut ListCache::default());
}

fn write_event_with(out: &mut Vec<u8>, event: &Event, lists: &mut ListCache) {
    out.push(b'{');
    let mut first = true;
    event.visit_fields(&mut |name, value| {
        if !first {
            out.push(b',');
        }
        first = false;
        // Field names are fixed ASCII identifiers: no escaping needed.
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        match value {
            Field::Str(text) => write_string(out, text),
            Field::U64(number) => write_u64(out, number),
            Field::Bool(true) => out.extend_from_slice(b"true"),
            Field::Bool(false) => out.extend_from_slice(b"false"),
            Field::List(items) => lists.write(out, items),
            Field::Agent(agent) => write_agent(out, agent),
        }
    });
    out.extend_from_slice(b"}\n");
}

/// [`write_event_with`] in the compact form (see [`JsonlWriter::compact`]).
fn write_compact(out: &mut Vec<u8>, event: &Event, lists: &mut ListCache, last: &mut LastLists) {
    out.push(b'{');
    let mut first = true;
    event.visit_fields(&mut |name, value| {
        if let Field::List(items) = value {
            // Only the lists every `agent_started` writes: an optional one (the `skills_*`
            // lists) left out would read as the last value carried forward.
            if COMPACT_LISTS.contains(&name) && last.unchanged(name, items) {
                return;
            }
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        write_value(out, value, lists);
    });
    if !last.marked {
        last.marked = true;
        out.extend_from_slice(b",\"compact_lists\":true");
    }
    out.extend_from_slice(b"}\n");
}

fn write_value(out: &mut Vec<u8>, value: Field<'_>, lists: &mut ListCache) {
    match value {
        Field::Str(text) => write_string(out, text),
        Field::U64(number) => write_u64(out, number),
        Field::Bool(true) => out.extend_from_slice(b"true"),
        Field::Bool(false) => out.extend_from_slice(b"false"),
        Field::List(items) => lists.write(out, items),
        Field::Agent(agent) => write_agent(out, agent),
    }
}

fn write_list(out: &mut Vec<u8>, items: &[Rc<str>]) {
    out.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_string(out, item);
    }
    out.push(b']');
}

/// An agent is written as its id string, `"main"` or `"a12"`, without allocating.
fn write_agent(out: &mut Vec<u8>, agent: &AgentRef) {
    if agent.id == MAIN {
        out.extend_from_slice(b"\"main\"");
    } else {
        out.extend_from_slice(b"\"a");
        write_u64(out, u64::from(agent.id));
        out.push(b'"');
    }
}

/// Appends the decimal digits of `number`.
pub fn write_u64(out: &mut Vec<u8>, mut number: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (number % 10) as u8;
        number /= 10;
        if number == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;
    use crate::time::SimTime;
    use subsim_rules::Mode;

    #[test]
    fn integers() {
        for number in [0, 7, 10, 99, 1_000_000, u64::MAX] {
            let mut out = Vec::new();
            write_u64(&mut out, number);
            assert_eq!(String::from_utf8(out).unwrap(), number.to_string());
        }
    }

    #[test]
    fn compact_leaves_out_unchanged_lists_and_marks_the_first_line() {
        let worker = Rc::new(crate::event::RunProfile::new(
            "worker",
            "sonnet",
            &["Bash", "Read"],
        ));
        let other = Rc::new(crate::event::RunProfile::new("other", "sonnet", &["Read"]));
        let start = |id: u32, profile: &Rc<crate::event::RunProfile>| Event {
            t: SimTime(u64::from(id)),
            seq: u64::from(id),
            rule: None,
            kind: EventKind::AgentStarted {
                agent: AgentRef { id, name: None },
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running: 1,
                cap_checked: true,
                profile: profile.clone(),
            },
        };
        let events = [
            start(1, &worker),
            start(2, &worker),
            start(3, &other),
            start(4, &worker),
        ];
        let mut full = JsonlWriter::new(Vec::new());
        let mut compact = JsonlWriter::compact(Vec::new());
        for event in &events {
            full.event(event);
            compact.event(event);
        }
        let full = String::from_utf8(full.finish().unwrap()).unwrap();
        let compact = String::from_utf8(compact.finish().unwrap()).unwrap();
        let full: Vec<&str> = full.lines().collect();
        let compact: Vec<&str> = compact.lines().collect();
        // The first line has every list, and the marker.
        assert_eq!(compact[0], full[0].replace("}", ",\"compact_lists\":true}"));
        // Same lists again: all three left out.
        assert_eq!(
            compact[1],
            full[1]
                .replace(",\"tools\":[\"Bash\",\"Read\"]", "")
                .replace(",\"context\":[]", "")
                .replace(",\"mcp_servers\":[]", "")
        );
        // Another tool list is written, the unchanged empty ones are not; then the first
        // list again is a change too.
        assert!(compact[2].contains("\"tools\":[\"Read\"]"));
        assert!(!compact[2].contains("\"context\""));
        assert!(compact[3].contains("\"tools\":[\"Bash\",\"Read\"]"));
        assert!(!compact[3].contains("compact_lists"));
    }

    #[test]
    fn agent_started_line() {
        let event = Event {
            t: SimTime::from_millis(12_000),
            seq: 41,
            rule: Some("FGBG-1"),
            kind: EventKind::AgentStarted {
                agent: AgentRef {
                    id: 12,
                    name: Some("researcher \"1\"".into()),
                },
                parent: AgentRef::MAIN,
                depth: 1,
                mode: Mode::Background,
                fork: false,
                running: 3,
                cap_checked: true,
                profile: Rc::new(crate::event::RunProfile::new(
                    "general-purpose",
                    "sonnet",
                    &["Bash", "Read"],
                )),
            },
        };
        let mut out = Vec::new();
        write_event(&mut out, &event);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"t_us":12000000,"seq":41,"kind":"agent_started","agent":"a12","name":"researcher \"1\"","#,
                r#""agent_type":"general-purpose","parent":"main","depth":1,"mode":"background","fork":false,"#,
                r#""model":"sonnet","tools":["Bash","Read"],"running":3,"cap_checked":true,"model_rule":"MODEL-2","permission_mode":"default","context":[],"mcp_servers":[],"rule":"FGBG-1"}"#,
                "\n"
            )
        );
    }

    struct FailAfter {
        left: usize,
    }

    impl Write for FailAfter {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
            }
            let taken = bytes.len().min(self.left);
            self.left -= taken;
            Ok(taken)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn io_errors_are_reported_by_finish() {
        let mut writer = JsonlWriter::new(FailAfter { left: 10 });
        let event = Event {
            t: SimTime::ZERO,
            seq: 0,
            rule: None,
            kind: EventKind::LimitReached {
                limit: crate::event::Limit::MaxEvents,
                value: 1,
            },
        };
        writer.event(&event);
        // The first event is flushed at once (an interrupted run keeps it), so the
        // failure shows at once; later events stay buffered until a flush.
        assert!(writer.failed(), "the first event is flushed at once");
        assert!(writer.flush().is_err());
        writer.event(&event);
        let error = writer.finish().err().expect("the failed write is reported");
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
    }
}
