//! Tool definitions and pure functions over them: the fingerprint (A-7) and results reduced to
//! text (M-5). What Maven does with a tool (verdicts, local names) is the `allowlist` crate's.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use serde_json::value::RawValue;

use crate::text::{cap_bytes, cap_string};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// The fingerprint scheme's prefix. A new canonical form gets a new prefix.
pub const FINGERPRINT_SCHEME: &str = "sha256:v1:";
/// Longest type or URI quoted in a summary of a non-text block.
const SUMMARY_FIELD_CAP: usize = 200;

/// One tool as the server declared it: the raw JSON object received, plus its name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Tool {
    /// `name`, as received.
    pub name: String,
    /// The whole object, as received (key order preserved).
    pub raw: Map<String, Value>,
}

impl Tool {
    /// A tool from one entry of a `tools/list` page; `None` unless it is an object with a
    /// string `name`.
    pub fn from_value(v: Value) -> Option<Tool> {
        let Value::Object(raw) = v else { return None };
        let name = raw.get("name")?.as_str()?.to_owned();
        Some(Tool { name, raw })
    }

    /// `description`, if it is a string (uncapped: cap it with [`cap_chars`]).
    pub fn description(&self) -> Option<&str> {
        self.raw.get("description").and_then(Value::as_str)
    }

    /// Whether the tool claims `annotations.readOnlyHint: true` (a claim by the server, not a
    /// fact).
    pub fn read_only_claim(&self) -> bool {
        self.raw
            .get("annotations")
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// A-6: destructive unless it claims read-only (no hint ⇒ assume it writes).
    pub fn destructive(&self) -> bool {
        !self.read_only_claim()
    }

    /// A-7 fingerprint of this tool.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.raw)
    }
}

/// A-7: SHA-256 over the canonical JSON (keys sorted by their UTF-8 bytes at every depth,
/// compact, strings escaped as serde_json writes them, no Unicode folding) of the whole tool
/// object minus its top-level `_meta`, written as [`FINGERPRINT_SCHEME`] + lowercase hex.
pub fn fingerprint(tool: &Map<String, Value>) -> String {
    let mut buf = Vec::with_capacity(256);
    buf.push(b'{');
    let mut keys: Vec<&String> = tool.keys().filter(|k| k.as_str() != "_meta").collect();
    keys.sort_unstable();
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        canonical_str(&mut buf, k);
        buf.push(b':');
        if let Some(v) = tool.get(k.as_str()) {
            canonical(&mut buf, v);
        }
    }
    buf.push(b'}');
    let digest = Sha256::digest(&buf);
    let mut out = String::with_capacity(FINGERPRINT_SCHEME.len() + 64);
    out.push_str(FINGERPRINT_SCHEME);
    out.push_str(&hex::encode(digest));
    out
}

fn canonical_str(buf: &mut Vec<u8>, s: &str) {
    // Serialising a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *buf, s);
}

fn canonical(buf: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Object(m) => {
            buf.push(b'{');
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                canonical_str(buf, k);
                buf.push(b':');
                if let Some(v) = m.get(k.as_str()) {
                    canonical(buf, v);
                }
            }
            buf.push(b'}');
        }
        Value::Array(a) => {
            buf.push(b'[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                canonical(buf, v);
            }
            buf.push(b']');
        }
        other => {
            let _ = serde_json::to_writer(&mut *buf, other);
        }
    }
}

pub use crate::text::cap_chars;

/// A `tools/call` result reduced for the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolOutcome {
    /// Text blocks joined by newlines; other blocks summarised by type; capped.
    pub text: String,
    /// The server flagged the result as an error (`isError: true`).
    pub is_error: bool,
    /// The text was cut at the cap.
    pub truncated: bool,
}

impl ToolOutcome {
    /// Reduce a raw `tools/call` result.
    ///
    /// The result is read in one pass into borrowed views (text is not copied unless it has
    /// escapes; other blocks and unknown members are skipped, not built), with the leniency
    /// of a generic JSON reading: a member of the wrong type counts as absent, a repeated
    /// member's last value wins.
    pub fn from_result(raw: &RawValue, cap: usize) -> Result<ToolOutcome, String> {
        let Lenient(r) = serde_json::from_str::<Lenient<CallResult<'_>>>(raw.get())
            .map_err(|_| "not JSON".to_owned())?;
        if !r.object {
            return Err("the result is not an object".to_owned());
        }
        if let (Some(s), Content::Blocks(b)) = (r.structured, &r.content) {
            if !b.is_empty() {
                // Not shown, but still read through, as a generic reading would.
                serde_json::from_str::<Lenient<Skip>>(s.get())
                    .map_err(|_| "not JSON".to_owned())?;
            }
        }
        let (text, truncated) = match r.content {
            Content::Blocks(blocks) if !blocks.is_empty() => reduce_blocks(blocks, cap),
            Content::Blocks(_) | Content::Absent => match r.structured {
                Some(s) => {
                    // Rare: re-serialised compactly, as a generic JSON value would be.
                    let v: Value =
                        serde_json::from_str(s.get()).map_err(|_| "not JSON".to_owned())?;
                    cap_text(serde_json::to_string(&v).unwrap_or_default(), cap)
                }
                None => (String::new(), false),
            },
            Content::NotArray => return Err("content is not an array".to_owned()),
        };
        Ok(ToolOutcome {
            text,
            is_error: r.is_error,
            truncated,
        })
    }
}

/// Reduce content blocks (tool results) or resource contents to text capped at `cap` bytes;
/// returns the text and whether it was cut.
pub fn reduce_content(blocks: &[Value], cap: usize) -> (String, bool) {
    reduce_blocks(blocks.iter().map(Block::from_value), cap)
}

/// The members of one content block that the reduction reads; every string borrowed from the
/// frame where it has no escapes.
#[derive(Debug, Default)]
struct Block<'a> {
    kind: Option<Cow<'a, str>>,
    text: Option<Cow<'a, str>>,
    mime_type: Option<Cow<'a, str>>,
    uri: Option<Cow<'a, str>>,
    resource_uri: Option<Cow<'a, str>>,
    /// A `blob` member is present (any value).
    blob: bool,
}

impl<'a> Block<'a> {
    fn from_value(b: &'a Value) -> Block<'a> {
        let s = |k: &str| b.get(k).and_then(Value::as_str).map(Cow::Borrowed);
        Block {
            kind: s("type"),
            text: s("text"),
            mime_type: s("mimeType"),
            uri: s("uri"),
            resource_uri: b
                .get("resource")
                .and_then(|r| r.get("uri"))
                .and_then(Value::as_str)
                .map(Cow::Borrowed),
            blob: b.get("blob").is_some(),
        }
    }
}

fn reduce_blocks<'a>(blocks: impl IntoIterator<Item = Block<'a>>, cap: usize) -> (String, bool) {
    let mut out = String::new();
    for (i, b) in blocks.into_iter().enumerate() {
        if out.len() > cap {
            break;
        }
        if i > 0 {
            out.push('\n');
        }
        let field = |s: &Option<Cow<'_, str>>| {
            s.as_deref()
                .map(|s| cap_chars(s, SUMMARY_FIELD_CAP))
                .unwrap_or_default()
                .to_owned()
        };
        match (b.kind.as_deref(), b.text.as_deref()) {
            (Some("text") | None, Some(t)) => {
                let room = cap.saturating_sub(out.len()).saturating_add(1);
                out.push_str(cap_bytes(t, room));
            }
            (Some(kind @ ("image" | "audio")), _) => {
                let _ = write!(out, "[{kind} {}]", field(&b.mime_type));
            }
            (Some("resource"), _) => {
                let _ = write!(out, "[resource {}]", field(&b.resource_uri));
            }
            (Some("resource_link"), _) => {
                let _ = write!(out, "[resource link {}]", field(&b.uri));
            }
            (None, None) if b.blob => {
                let _ = write!(out, "[blob {}]", field(&b.mime_type));
            }
            (Some(k), _) => {
                let _ = write!(out, "[{} block]", cap_chars(k, SUMMARY_FIELD_CAP));
            }
            (None, None) => out.push_str("[block]"),
        }
    }
    cap_text(out, cap)
}

// ---- lenient borrowed reading of a tools/call result -----------------------------------------

/// How a lenient reader takes one JSON value: the shapes it does not read become
/// [`Shape::other`] (consumed and dropped), like a lookup in a generic JSON value that finds
/// the wrong type.
trait Shape<'de>: Sized {
    /// Any value this shape does not read.
    fn other() -> Self;
    fn boolean(_b: bool) -> Self {
        Self::other()
    }
    fn string(_s: Cow<'de, str>) -> Self {
        Self::other()
    }
    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<Lenient<Skip>>()?.is_some() {}
        Ok(Self::other())
    }
    fn map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map
            .next_entry::<Lenient<Str<'de>>, Lenient<Skip>>()?
            .is_some()
        {}
        Ok(Self::other())
    }
}

/// Any JSON value read as the shape `T`.
struct Lenient<T>(T);

impl<'de, T: Shape<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor(PhantomData)).map(Lenient)
    }
}

struct ShapeVisitor<T>(PhantomData<T>);

impl<'de, T: Shape<'de>> Visitor<'de> for ShapeVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<T, E> {
        Ok(T::boolean(b))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<T, E> {
        Ok(T::other())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<T, E> {
        Ok(T::other())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<T, E> {
        Ok(T::other())
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::other())
    }
    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<T, E> {
        Ok(T::string(Cow::Borrowed(s)))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        Ok(T::string(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<T, E> {
        Ok(T::string(Cow::Owned(s)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::map(map)
    }
}

/// Any value, read through and dropped. Read as a generic JSON value would be (numbers out of
/// range, lone surrogates and nesting past serde_json's depth limit are errors), not merely
/// skipped, so a result is refused exactly when a generic reading refuses it.
struct Skip;

impl Shape<'_> for Skip {
    fn other() -> Self {
        Skip
    }
}

/// A string, or `None` for any other value.
struct Str<'a>(Option<Cow<'a, str>>);

impl<'de> Shape<'de> for Str<'de> {
    fn other() -> Self {
        Str(None)
    }
    fn string(s: Cow<'de, str>) -> Self {
        Str(Some(s))
    }
}

/// `true`, or false for any other value.
struct IsTrue(bool);

impl Shape<'_> for IsTrue {
    fn other() -> Self {
        IsTrue(false)
    }
    fn boolean(b: bool) -> Self {
        IsTrue(b)
    }
}

/// Read an object's members one by one: `each` takes the key and reads (or skips) its value.
fn members<'de, A, F>(mut map: A, mut each: F) -> Result<(), A::Error>
where
    A: MapAccess<'de>,
    F: FnMut(&str, &mut A) -> Result<(), A::Error>,
{
    while let Some(Lenient(Str(key))) = map.next_key::<Lenient<Str<'de>>>()? {
        each(key.as_deref().unwrap_or_default(), &mut map)?;
    }
    Ok(())
}

fn string<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    Ok(map.next_value::<Lenient<Str<'de>>>()?.0 .0)
}

impl<'de> Shape<'de> for Block<'de> {
    fn other() -> Self {
        Block::default()
    }
    fn map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        let mut b = Block::default();
        members(map, |key, map| {
            match key {
                "type" => b.kind = string(map)?,
                "text" => b.text = string(map)?,
                "mimeType" => b.mime_type = string(map)?,
                "uri" => b.uri = string(map)?,
                "resource" => b.resource_uri = map.next_value::<Lenient<ResourceUri<'de>>>()?.0 .0,
                "blob" => {
                    map.next_value::<Lenient<Skip>>()?;
                    b.blob = true;
                }
                _ => {
                    map.next_value::<Lenient<Skip>>()?;
                }
            }
            Ok(())
        })?;
        Ok(b)
    }
}

/// The `uri` of an embedded resource, if it is an object with a string `uri`.
struct ResourceUri<'a>(Option<Cow<'a, str>>);

impl<'de> Shape<'de> for ResourceUri<'de> {
    fn other() -> Self {
        ResourceUri(None)
    }
    fn map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        let mut uri = None;
        members(map, |key, map| {
            if key == "uri" {
                uri = string(map)?;
            } else {
                map.next_value::<Lenient<Skip>>()?;
            }
            Ok(())
        })?;
        Ok(ResourceUri(uri))
    }
}

/// The `content` member.
#[derive(Default)]
enum Content<'a> {
    #[default]
    Absent,
    NotArray,
    Blocks(Vec<Block<'a>>),
}

impl<'de> Shape<'de> for Content<'de> {
    fn other() -> Self {
        Content::NotArray
    }
    fn seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1).min(16));
        while let Some(Lenient(b)) = seq.next_element::<Lenient<Block<'de>>>()? {
            blocks.push(b);
        }
        Ok(Content::Blocks(blocks))
    }
}

/// A `tools/call` result: the members the reduction reads.
#[derive(Default)]
struct CallResult<'a> {
    /// The result was an object at all.
    object: bool,
    is_error: bool,
    content: Content<'a>,
    structured: Option<&'a RawValue>,
}

impl<'de> Shape<'de> for CallResult<'de> {
    fn other() -> Self {
        CallResult::default()
    }
    fn map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        let mut r = CallResult {
            object: true,
            ..CallResult::default()
        };
        members(map, |key, map| {
            match key {
                "content" => r.content = map.next_value::<Lenient<Content<'de>>>()?.0,
                "isError" => r.is_error = map.next_value::<Lenient<IsTrue>>()?.0 .0,
                "structuredContent" => {
                    let v = map.next_value::<&'de RawValue>()?;
                    if let Some(earlier) = r.structured.replace(v) {
                        // Repeated: the earlier value is dropped, but read through as a
                        // generic reading would (found by fuzzing: `[5e888]` then `{}`).
                        serde_json::from_str::<Lenient<Skip>>(earlier.get())
                            .map_err(serde::de::Error::custom)?;
                    }
                }
                _ => {
                    map.next_value::<Lenient<Skip>>()?;
                }
            }
            Ok(())
        })?;
        Ok(r)
    }
}

fn cap_text(s: String, cap: usize) -> (String, bool) {
    if s.len() <= cap {
        (s, false)
    } else {
        (cap_string(s, cap), true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: Value) -> Tool {
        Tool::from_value(v).unwrap()
    }

    #[test]
    fn fingerprint_is_canonical() {
        let a = tool(
            json!({"name":"t","inputSchema":{"type":"object","properties":{"b":{},"a":{}}},"annotations":{"readOnlyHint":true}}),
        );
        let b = tool(
            json!({"annotations":{"readOnlyHint":true},"inputSchema":{"properties":{"a":{},"b":{}},"type":"object"},"name":"t"}),
        );
        let with_meta = tool(
            json!({"name":"t","_meta":{"x":1},"inputSchema":{"type":"object","properties":{"b":{},"a":{}}},"annotations":{"readOnlyHint":true}}),
        );
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.fingerprint(), with_meta.fingerprint());
        assert!(a.fingerprint().starts_with(FINGERPRINT_SCHEME));
        assert_eq!(a.fingerprint().len(), FINGERPRINT_SCHEME.len() + 64);
        // Every declared part counts, hints and unknown keys included; nested _meta counts.
        for changed in [
            json!({"name":"t","inputSchema":{"type":"object","properties":{"b":{},"a":{}}},"annotations":{"readOnlyHint":false}}),
            json!({"name":"t","inputSchema":{"type":"object","properties":{"b":{},"a":{}}},"annotations":{"readOnlyHint":true},"title":"T"}),
            json!({"name":"t","inputSchema":{"type":"object","properties":{"b":{},"a":{}}},"annotations":{"readOnlyHint":true},"x-extra":1}),
            json!({"name":"t","inputSchema":{"type":"object","properties":{"b":{},"a":{},"_meta":{}}},"annotations":{"readOnlyHint":true}}),
            json!({"name":"t","inputSchema":{"type":"object","properties":{"b":{},"A":{}}},"annotations":{"readOnlyHint":true}}),
        ] {
            assert_ne!(a.fingerprint(), tool(changed).fingerprint());
        }
        // A known vector: the canonical form of {"name":"t"} is {"name":"t"}.
        let known = tool(json!({"name":"t"}));
        let want = hex::encode(Sha256::digest(br#"{"name":"t"}"#));
        assert_eq!(known.fingerprint(), format!("{FINGERPRINT_SCHEME}{want}"));
        // No Unicode folding: NFC and NFD spellings differ.
        assert_ne!(
            tool(json!({"name":"t","description":"\u{e9}"})).fingerprint(),
            tool(json!({"name":"t","description":"e\u{301}"})).fingerprint()
        );
    }

    #[test]
    fn results_reduce_to_capped_text() {
        let raw = |v: Value| RawValue::from_string(v.to_string()).unwrap();
        let r = ToolOutcome::from_result(
            &raw(json!({"content":[
                {"type":"text","text":"hello"},
                {"type":"image","data":"AAAA","mimeType":"image/png"},
                {"type":"resource_link","uri":"file:///x","name":"x"},
                {"type":"resource","resource":{"uri":"mem://y","text":"secret"}},
                {"type":"weird"}
            ],"isError":true})),
            1000,
        )
        .unwrap();
        assert_eq!(
            r.text,
            "hello\n[image image/png]\n[resource link file:///x]\n[resource mem://y]\n[weird block]"
        );
        assert!(r.is_error && !r.truncated);
        let long = ToolOutcome::from_result(
            &raw(json!({"content":[{"type":"text","text":"é".repeat(100)}]})),
            11,
        )
        .unwrap();
        assert_eq!(long.text, "é".repeat(5));
        assert!(long.truncated);
        let structured =
            ToolOutcome::from_result(&raw(json!({"content":[],"structuredContent":{"a":1}})), 100)
                .unwrap();
        assert_eq!(structured.text, r#"{"a":1}"#);
        assert!(ToolOutcome::from_result(&raw(json!({"content":"x"})), 10).is_err());
        assert!(ToolOutcome::from_result(&raw(json!([1])), 10).is_err());
    }

    #[test]
    fn description_cap_counts_characters() {
        assert_eq!(cap_chars("ééé", 2), "éé");
        assert_eq!(cap_chars("ab", 5), "ab");
    }

    /// The reduction as it was first written, over a whole generic JSON value: the borrowed
    /// reader must agree with it on every input.
    fn reference(raw: &str, cap: usize) -> Result<ToolOutcome, String> {
        let v: Value = serde_json::from_str(raw).map_err(|_| "not JSON".to_owned())?;
        let Value::Object(obj) = v else {
            return Err("the result is not an object".to_owned());
        };
        let is_error = obj.get("isError").and_then(Value::as_bool) == Some(true);
        let (text, truncated) = match obj.get("content") {
            Some(Value::Array(blocks)) if !blocks.is_empty() => reduce_content(blocks, cap),
            Some(Value::Array(_)) | None => match obj.get("structuredContent") {
                Some(s) => cap_text(serde_json::to_string(s).unwrap_or_default(), cap),
                None => (String::new(), false),
            },
            Some(_) => return Err("content is not an array".to_owned()),
        };
        Ok(ToolOutcome {
            text,
            is_error,
            truncated,
        })
    }

    fn check(raw: &str, cap: usize) {
        let got = ToolOutcome::from_result(&RawValue::from_string(raw.to_owned()).unwrap(), cap);
        assert_eq!(got, reference(raw, cap), "{raw} (cap {cap})");
    }

    /// Found by the `tool_result` fuzz target: with serde_json's `raw_value` feature, a generic
    /// `Value` reading takes a member named `$serde_json::private::RawValue` for a smuggled raw
    /// value (a string is parsed again as JSON and replaces the whole object; anything else is
    /// refused). A server's result is not read that way: the member is an ordinary unknown one.
    #[test]
    fn a_member_named_like_serde_jsons_raw_value_token_is_an_ordinary_member() {
        let read =
            |s: &str| ToolOutcome::from_result(&RawValue::from_string(s.to_owned()).unwrap(), 100);
        let empty = ToolOutcome {
            text: String::new(),
            is_error: false,
            truncated: false,
        };
        assert_eq!(
            read(r#"{"$serde_json::private::RawValue":true}"#),
            Ok(empty)
        );
        let smuggled = r#"{"$serde_json::private::RawValue":"{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}","content":[{"type":"text","text":"a"}]}"#;
        assert_eq!(
            read(smuggled),
            Ok(ToolOutcome {
                text: "a".to_owned(),
                is_error: false,
                truncated: false,
            })
        );
    }

    #[test]
    fn hostile_result_shapes_read_as_a_generic_value_would() {
        let cases = [
            r#"{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}"#,
            r#"{"content":[{"type":"text","text":"a","text":"b","type":"x"}]}"#,
            r#"{"cont\u0065nt":[{"typ\u0065":"t\u0065xt","text":"a\nb\u00e9\ud83d\ude00"}]}"#,
            r#"{"content":null}"#,
            r#"{"content":{}}"#,
            r#"{"content":"x"}"#,
            r#"{"content":[]}"#,
            r#"{"content":[],"structuredContent":{"b":[1,2.5,-3e2,"\u0041"],"a":null}}"#,
            r#"{"content":[{"type":"text","text":"a"}],"x":1e999}"#,
            r#"{"content":[{"type":"text","text":"a","n":-1e400}]}"#,
            r#"{"content":[{"type":"text","text":"a"}],"structuredContent":{"n":1e999}}"#,
            r#"{"content":[],"structuredContent":{"n":1e999}}"#,
            r#"{"content":[],"structuredContent":[5e888],"structuredContent":{"a":1}}"#,
            r#"{"structuredContent":"\ud800","structuredContent":1}"#,
            r#"{"structuredContent":{"a":1},"structuredContent":[2]}"#,
            r#"{"content":[{"type":"text","text":"a","x":"\ud800"}]}"#,
            r#"{"content":[{"type":"text","text":"a"}],"\udc00":1}"#,
            r#"{"content":[{"type":"text","text":"a"}],"deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
            r#"{"content":[{"type":"text","text":"a"}],"structuredContent":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
            r#"{"structuredContent":null}"#,
            r#"{"content":[1,"two",null,true,[{"type":"text","text":"x"}],{}]}"#,
            r#"{"content":[{"type":7,"text":"t"},{"type":null},{"text":5}]}"#,
            r#"{"content":[{"blob":null},{"blob":"AA","mimeType":"a/b"},{"type":"x","blob":1}]}"#,
            r#"{"content":[{"type":"image","mimeType":{"x":1}},{"type":"audio"}]}"#,
            r#"{"content":[{"type":"resource","resource":"mem://x"},{"type":"resource","resource":{"uri":["u"]}},{"type":"resource","resource":{"uri":"a","uri":"b"}}]}"#,
            r#"{"content":[{"type":"resource_link","uri":7},{"type":"resource_link"}]}"#,
            r#"{"isError":true}"#,
            r#"{"isError":"true"}"#,
            r#"{"isError":1}"#,
            r#"{"isError":true,"isError":false}"#,
            r#"{"isError":false,"isError":true,"content":[{"text":"e"}]}"#,
            r#"[1]"#,
            r#""str""#,
            r#"null"#,
            r#"{}"#,
            r#"{"content":[{"type":"text","text":"éééééé"},{"type":"text","text":"more"}]}"#,
        ];
        let long_kind = format!(r#"{{"content":[{{"type":"{}"}}]}}"#, "k".repeat(300));
        let long_mime = format!(
            r#"{{"content":[{{"type":"image","mimeType":"{}"}}]}}"#,
            "é".repeat(300)
        );
        for raw in cases.iter().copied().chain([&*long_kind, &*long_mime]) {
            for cap in [0, 1, 3, 7, 64, 4096] {
                check(raw, cap);
            }
        }
    }

    fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let key = prop_oneof![
            Just("type".to_owned()),
            Just("text".to_owned()),
            Just("content".to_owned()),
            Just("isError".to_owned()),
            Just("structuredContent".to_owned()),
            Just("mimeType".to_owned()),
            Just("uri".to_owned()),
            Just("resource".to_owned()),
            Just("blob".to_owned()),
            "[a-z]{0,3}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop_oneof![
                Just("text".to_owned()),
                Just("image".to_owned()),
                Just("resource".to_owned()),
                Just("resource_link".to_owned()),
                ".{0,12}",
            ]
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn borrowed_reader_agrees_with_a_generic_value(v in arb_json(), cap in 0usize..40) {
            check(&v.to_string(), cap);
        }
    }
}
