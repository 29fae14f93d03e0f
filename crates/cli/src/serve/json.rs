//! Every JSON body the server answers and every JSON `data:` of its streams is written
//! here, each string (keys too) through [`subsim_escape::json`], the workspace's one JSON
//! escaper (issue #24): a name, a message or a narration line a posted scenario made goes
//! out as a literal every JSON reader parses back as the same string, with U+2028 and
//! U+2029 escaped (which a script could read as line ends) and no control character raw.
//! The trace lines and the summary of `/api/run` are written by the engine's own writers,
//! through the same escaper.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// `value` as JSON text.
pub fn text(value: &Value) -> String {
    let mut out = String::new();
    push(&mut out, value);
    out
}

fn push(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&number.to_string()),
        Value::String(string) => subsim_escape::json::push(out, string),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                push(out, item);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (index, (key, item)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                subsim_escape::json::push(out, key);
                out.push(':');
                push(out, item);
            }
            out.push('}');
        }
    }
}

/// `value` as the body of a `status` answer (`application/json`).
pub fn response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        text(value),
    )
        .into_response()
}

/// `value` as the body of a 200 answer.
pub fn ok(value: &Value) -> Response {
    response(StatusCode::OK, value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use subsim_escape::hostile::{long, ATOMS};

    /// Every hostile class, alone, all at once and very long, as keys and as values in
    /// nested objects and lists: parsed back equal, with nothing raw that a reader of the
    /// body or of a stream could take for a line end (C0 controls, DEL, U+2028, U+2029).
    #[test]
    fn hostile_strings_in_bodies_parse_back_equal_and_nothing_raw_goes_out() {
        let mut strings: Vec<String> = ATOMS.iter().map(|atom| atom.to_string()).collect();
        strings.push(ATOMS.concat());
        strings.push(long());
        for string in &strings {
            let mut key = serde_json::Map::new();
            key.insert(string.clone(), json!(1));
            let value = json!({
                "error": string,
                "diagnostics": [{"message": string, "line": 3, "column": 1, "help": null}],
                "nested": {"list": [string, true, 1.5, -2]},
                "key": Value::Object(key),
            });
            let written = text(&value);
            let back: Value = serde_json::from_str(&written)
                .unwrap_or_else(|error| panic!("{string:?}: {error}: {written:?}"));
            assert_eq!(back, value, "{string:?}");
            assert!(
                !written
                    .chars()
                    .any(|c| c < ' ' || matches!(c, '\u{7f}' | '\u{2028}' | '\u{2029}')),
                "{string:?} went out raw: {written:?}"
            );
        }
    }
}
