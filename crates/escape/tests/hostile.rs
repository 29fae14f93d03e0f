//! Every escaper fed every hostile class of string, each output read back by a real reader
//! of its format (a CSV reader, an XML 1.0 parser, a YAML loader, a JSON parser).
//!
//! The classes: C0 and C1 controls, DEL, ESC sequences (colour, clear screen, OSC-8 links),
//! bidirectional overrides and isolates, U+2028/U+2029, noncharacters (U+FFFE, U+FFFF),
//! text that looks like an escape (`\u{202e}`, `\ud800`, `&amp;`), quotes, spreadsheet
//! formula prefixes, markup, YAML indicators, newlines and carriage returns, and very long
//! strings. (A lone surrogate cannot be in a Rust string.)

use proptest::prelude::*;
use subsim_escape::{csv, is_bidi_control, is_noncharacter, json, terminal, xml, yaml};

use subsim_escape::hostile::ATOMS;

fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => prop::sample::select(ATOMS).prop_map(str::to_string),
        2 => any::<char>().prop_map(String::from),
        1 => "[ -~]{0,6}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

use subsim_escape::hostile::long;

fn check_terminal(text: &str) {
    let whole = terminal::text(text);
    assert!(
        whole
            .chars()
            .all(|c| !terminal::is_hostile(c) && (!c.is_control() || c == '\n' || c == '\t')),
        "{whole:?}"
    );
    assert_eq!(
        whole.matches('\n').count(),
        text.matches('\n').count(),
        "text keeps its own lines and adds none"
    );
    let line = terminal::line(text);
    assert!(
        line.chars().all(|c| !c.is_control()
            && !is_bidi_control(c)
            && !is_noncharacter(c)
            && !matches!(c, '\u{2028}' | '\u{2029}')),
        "{line:?}"
    );
    // A cut keeps whole escapes: it is the escape of a prefix of the text.
    for width in [0, 1, 5, 7, 22, 80] {
        let cut = terminal::cut(text, width);
        assert!(cut.chars().count() <= width, "{cut:?}");
        let prefixes = text
            .char_indices()
            .map(|(at, _)| at)
            .chain([text.len()])
            .map(|at| terminal::line(&text[..at]).into_owned());
        assert!(
            prefixes.into_iter().any(|prefix| prefix == cut),
            "{text:?} cut to {width}: {cut:?}"
        );
    }
}

fn check_csv(text: &str) {
    // After a header row, as in every table subsim writes (a reader takes a byte-order mark
    // at the very start of a file as the file's, not the cell's).
    let line = format!(
        "{}{}",
        csv::row(["name", "other"]),
        csv::row([text, "next"])
    );
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(line.as_bytes());
    let records: Vec<::csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(records.len(), 1, "{line:?}");
    let cell = &records[0][0];
    assert_eq!(&records[0][1], "next");
    if csv::needs_prefix(text) {
        assert_eq!(cell, format!("'{text}"));
    } else {
        assert_eq!(cell, text);
    }
    assert_eq!(csv::unescape(cell), text);
    assert!(!csv::is_formula(cell), "{cell:?} starts a formula");
}

/// What the XML escaper shows of `text` when read back: forbidden characters as `\u{…}`.
fn xml_shown(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
            || is_bidi_control(c)
            || is_noncharacter(c)
        {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn check_xml(text: &str) {
    let document = format!(
        "<?xml version=\"1.0\"?><r a=\"{}\" b='{}'>{}</r>",
        xml::attr(text),
        xml::attr(text),
        xml::text(text)
    );
    // Every character is one XML 1.0 allows.
    assert!(
        document.chars().all(|c| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')),
        "{document:?}"
    );
    let parsed =
        roxmltree::Document::parse(&document).unwrap_or_else(|e| panic!("{document:?}: {e}"));
    let root = parsed.root_element();
    let shown = xml_shown(text);
    assert_eq!(root.attribute("a"), Some(shown.as_str()));
    assert_eq!(root.attribute("b"), Some(shown.as_str()));
    assert_eq!(root.text().unwrap_or(""), shown);
}

fn check_yaml(text: &str) {
    let quoted = yaml::quoted(text);
    let back: String =
        serde_saphyr::from_str(&quoted).unwrap_or_else(|e| panic!("{quoted:?}: {e}"));
    assert_eq!(back, text, "{quoted:?}");
    // As a key and a value in a block mapping too (YAML allows an implicit key of at most
    // 1,024 characters: a longer one is the writer's to shorten or write as `? key`).
    if quoted.chars().count() > yaml::MAX_IMPLICIT_KEY {
        return;
    }
    let document = format!("{quoted}: {quoted}\nnext: 1\n");
    let map: std::collections::BTreeMap<String, serde_json::Value> =
        serde_saphyr::from_str(&document).unwrap_or_else(|e| panic!("{document:?}: {e}"));
    assert_eq!(
        map.get(text),
        Some(&serde_json::Value::String(text.to_string()))
    );
    // The scalar is one printable line: a terminal shows it as it is.
    assert_eq!(terminal::line(&quoted), quoted);
}

fn check_json(text: &str) {
    let mut bytes = Vec::new();
    json::write(&mut bytes, text);
    let written = String::from_utf8(bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written, json::string(text));
    let back: String =
        serde_json::from_str(&written).unwrap_or_else(|e| panic!("{written:?}: {e}"));
    assert_eq!(back, text);
    let html = json::string_html(text);
    let back: String = serde_json::from_str(&html).unwrap_or_else(|e| panic!("{html:?}: {e}"));
    assert_eq!(back, text);
    assert!(!html.contains(['<', '>', '&']), "{html:?}");
    assert!(
        !html.chars().any(|c| c.is_control() || is_noncharacter(c)),
        "{html:?}"
    );
    for literal in [&written, &html] {
        assert!(!literal.contains(['\u{2028}', '\u{2029}']), "{literal:?}");
        assert!(
            !literal.chars().any(|c| (c as u32) < 0x20 || c == '\u{7f}'),
            "{literal:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn terminal_output_has_no_control_and_forges_no_line(text in hostile()) {
        check_terminal(&text);
    }

    #[test]
    fn csv_cells_read_back_and_start_no_formula(text in hostile()) {
        check_csv(&text);
    }

    #[test]
    fn xml_stays_well_formed_and_reads_back(text in hostile()) {
        check_xml(&text);
    }

    #[test]
    fn yaml_scalars_load_back_equal(text in hostile()) {
        check_yaml(&text);
    }

    #[test]
    fn json_strings_parse_back_equal(text in hostile()) {
        check_json(&text);
    }
}

#[test]
fn every_atom_alone_and_a_very_long_string() {
    for atom in ATOMS.iter().copied().chain([long().as_str()]) {
        check_terminal(atom);
        check_csv(atom);
        check_xml(atom);
        check_yaml(atom);
        check_json(atom);
    }
}
