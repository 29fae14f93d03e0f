//! The shape of a transcript line, as far as the importer reads it: typed serde structs
//! that keep only the fields the scenario needs and skip everything else without building
//! it in memory (a line's file contents, diffs and tool outputs are read past, not kept).
//!
//! Every field is lenient: a field of an unexpected JSON type is read as absent
//! ([`Text::Other`], [`Num::Other`]), never as a reason to refuse the line, since the
//! transcript format changes between versions.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A text field: absent, a string, or some other JSON value.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Text {
    /// Not in the object.
    #[default]
    Missing,
    /// A string.
    Str(String),
    /// A number, object, list, `true`/`false` or `null`.
    Other,
}

impl Text {
    /// The string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Text::Str(text) => Some(text),
            Text::Missing | Text::Other => None,
        }
    }

    /// The string, if it is one, moved out.
    pub fn into_string(self) -> Option<String> {
        match self {
            Text::Str(text) => Some(text),
            Text::Missing | Text::Other => None,
        }
    }
}

/// A number field, kept as JSON wrote it so that its range can be checked.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) enum Num {
    /// Not in the object.
    #[default]
    Missing,
    /// A whole number.
    Int(i128),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// Not a number.
    Other,
}

/// A `true`/`false` field (anything else is `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flag(pub Option<bool>);

/// An object field of type `T`; any other JSON value is `None`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

/// A message's `content`: a string, or a list of blocks.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Content {
    /// Absent or of another type.
    #[default]
    None,
    /// A plain string.
    Str(String),
    /// Blocks (`text`, `tool_use`, `tool_result`, …); a string in the list is a text block.
    Blocks(Vec<Block>),
}

impl Content {
    /// The joined text (a string's text, or the text blocks joined by newlines).
    pub fn text(&self) -> String {
        match self {
            Content::None => String::new(),
            Content::Str(text) => text.clone(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|block| block.text.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// One content block.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
pub(crate) struct Block {
    #[serde(rename = "type")]
    pub kind: Text,
    pub id: Text,
    pub name: Text,
    pub input: Obj<Input>,
    pub tool_use_id: Text,
    pub content: Content,
    pub is_error: Flag,
    pub text: Text,
}

/// The input fields of a tool call the importer reads.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
pub(crate) struct Input {
    pub subagent_type: Text,
    pub description: Text,
    pub prompt: Text,
    pub name: Text,
    pub model: Text,
    pub isolation: Text,
    pub run_in_background: Flag,
    pub command: Text,
    pub block: Flag,
    pub task_id: Text,
    #[serde(rename = "agentId")]
    pub agent_id_camel: Text,
    pub agent_id: Text,
}

/// `message` of a line.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
pub(crate) struct Message {
    pub id: Text,
    pub model: Text,
    pub content: Content,
}

/// `toolUseResult` of a line (an Agent call's outcome).
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
pub(crate) struct Detail {
    pub status: Text,
    #[serde(rename = "isAsync")]
    pub is_async: Flag,
    #[serde(rename = "totalDurationMs")]
    pub total_duration_ms: Num,
    #[serde(rename = "agentId")]
    pub agent_id: Text,
}

/// One transcript line (one JSON object).
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
pub(crate) struct RawLine {
    #[serde(rename = "type")]
    pub kind: Text,
    pub uuid: Text,
    #[serde(rename = "parentUuid")]
    pub parent_uuid: Text,
    pub timestamp: Text,
    #[serde(rename = "sessionId")]
    pub session_id: Text,
    #[serde(rename = "agentId")]
    pub agent_id: Text,
    pub entrypoint: Text,
    pub version: Text,
    #[serde(rename = "permissionMode")]
    pub permission_mode: Text,
    pub message: Obj<Message>,
    #[serde(rename = "toolUseResult")]
    pub tool_use_result: Obj<Detail>,
    pub operation: Text,
    pub content: Content,
}

/// Reads past a list or map without keeping it.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the scalar visits of a lenient visitor: every one gives `$other`.
macro_rules! other_scalars {
    ($other:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Text, E> {
        Ok(Text::Str(text.to_string()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Text, E> {
        Ok(Text::Str(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text, A::Error> {
        drain_seq(seq).map(|()| Text::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text, A::Error> {
        drain_map(map).map(|()| Text::Other)
    }

    other_scalars!(Text::Other);
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct NumVisitor;

impl<'de> Visitor<'de> for NumVisitor {
    type Value = Num;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<Num, E> {
        Ok(Num::Int(i128::from(number)))
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<Num, E> {
        Ok(Num::Int(i128::from(number)))
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<Num, E> {
        Ok(Num::Float(number))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Num, E> {
        Ok(Num::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Num, E> {
        Ok(Num::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Num, E> {
        Ok(Num::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Num, A::Error> {
        drain_seq(seq).map(|()| Num::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Num, A::Error> {
        drain_map(map).map(|()| Num::Other)
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NumVisitor)
    }
}

struct FlagVisitor;

impl<'de> Visitor<'de> for FlagVisitor {
    type Value = Flag;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<Flag, E> {
        Ok(Flag(Some(flag)))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Flag, E> {
        Ok(Flag(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Flag, E> {
        Ok(Flag(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Flag, E> {
        Ok(Flag(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Flag, E> {
        Ok(Flag(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Flag, E> {
        Ok(Flag(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Flag, A::Error> {
        drain_seq(seq).map(|()| Flag(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Flag, A::Error> {
        drain_map(map).map(|()| Flag(None))
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FlagVisitor)
    }
}

struct ObjVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Obj<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|value| Obj(Some(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Obj<T>, A::Error> {
        drain_seq(seq).map(|()| Obj(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Obj<T>, E> {
        Ok(Obj(None))
    }

    other_scalars!(Obj(None));
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ObjVisitor(PhantomData))
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Option<Block>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Option<Block>, E> {
        Ok(Some(Block {
            text: Text::Str(text.to_string()),
            ..Block::default()
        }))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Block>, A::Error> {
        Block::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<Block>, A::Error> {
        drain_seq(seq).map(|()| None)
    }

    other_scalars!(None);
}

/// One list element of `content`: a block, a string (a text block), or something skipped.
struct AnyBlock(Option<Block>);

impl<'de> Deserialize<'de> for AnyBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BlockVisitor).map(AnyBlock)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Content, E> {
        Ok(Content::Str(text.to_string()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Content, E> {
        Ok(Content::Str(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut blocks = Vec::new();
        while let Some(AnyBlock(block)) = seq.next_element::<AnyBlock>()? {
            blocks.extend(block);
        }
        Ok(Content::Blocks(blocks))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Content, A::Error> {
        drain_map(map).map(|()| Content::None)
    }

    other_scalars!(Content::None);
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> RawLine {
        serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn fields_of_an_unexpected_type_are_read_as_absent() {
        let read = line(
            r#"{"type":"assistant","uuid":7,"timestamp":{"a":[1]},"message":"text",
                "toolUseResult":[1,2],"content":{"x":1},"extra":{"deep":[[[]]]}}"#,
        );
        assert_eq!(read.kind.as_str(), Some("assistant"));
        assert_eq!(read.uuid, Text::Other);
        assert_eq!(read.timestamp, Text::Other);
        assert_eq!(read.message, Obj(None));
        assert_eq!(read.tool_use_result, Obj(None));
        assert_eq!(read.content, Content::None);
    }

    #[test]
    fn blocks_and_numbers_are_read_as_written() {
        let read = line(
            r#"{"type":"user","message":{"content":["hi",{"type":"tool_result","tool_use_id":"t1",
                "content":[{"type":"text","text":"a"},"b"],"is_error":"yes"},3]},
                "toolUseResult":{"status":"completed","totalDurationMs":1e18,"isAsync":1}}"#,
        );
        let message = read.message.0.unwrap_or_default();
        let Content::Blocks(blocks) = &message.content else {
            panic!("{message:?}");
        };
        assert_eq!(blocks.len(), 2, "the number in the list is skipped");
        assert_eq!(blocks[0].text.as_str(), Some("hi"));
        assert_eq!(blocks[1].content.text(), "a\nb");
        assert_eq!(blocks[1].is_error, Flag(None));
        let detail = read.tool_use_result.0.unwrap_or_default();
        assert_eq!(detail.total_duration_ms, Num::Float(1e18));
        assert_eq!(detail.is_async, Flag(None));
    }
}
