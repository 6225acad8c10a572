//! The parsed feed and its JSON form (F-9).

use serde::{Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The kind of document that was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Format {
    /// RSS 2.0 (also 2.01, 2.1, or no version).
    #[serde(rename = "rss2.0")]
    Rss2,
    /// RSS 1.0 (RDF).
    #[serde(rename = "rss1.0")]
    Rss1,
    /// RSS 0.90 (RDF) and 0.91–0.94.
    #[serde(rename = "rss0.9x")]
    Rss09x,
    /// Atom 1.0.
    #[serde(rename = "atom1.0")]
    Atom1,
    /// Atom 0.3.
    #[serde(rename = "atom0.3")]
    Atom03,
    /// JSON Feed 1.0 or 1.1.
    #[serde(rename = "json1.x")]
    Json1,
    /// Microsoft's Channel Definition Format (1997): `CHANNEL`/`ITEM` with `HREF`, `ABSTRACT`,
    /// `LASTMOD`.
    #[serde(rename = "cdf")]
    Cdf,
}

impl Format {
    /// The name used in the JSON form.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Rss2 => "rss2.0",
            Format::Rss1 => "rss1.0",
            Format::Rss09x => "rss0.9x",
            Format::Atom1 => "atom1.0",
            Format::Atom03 => "atom0.3",
            Format::Json1 => "json1.x",
            Format::Cdf => "cdf",
        }
    }
}

#[allow(clippy::ref_option)] // serde's `serialize_with` passes `&Option<T>`
fn ser_time<S: Serializer>(t: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
    match t.and_then(|t| t.format(&Rfc3339).ok()) {
        Some(v) => s.serialize_str(&v),
        None => s.serialize_none(),
    }
}

/// A link with its relation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Link {
    /// Absolute when a base was known.
    pub href: String,
    /// `alternate`, `self`, `enclosure`, `related`, …
    pub rel: Option<String>,
    /// Media type.
    #[serde(rename = "type")]
    pub mime: Option<String>,
    /// Human-readable title.
    pub title: Option<String>,
}

/// An author.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Person {
    /// Display name.
    pub name: Option<String>,
    /// E-mail address.
    pub email: Option<String>,
    /// Home page.
    pub uri: Option<String>,
}

/// A media attachment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Enclosure {
    /// Absolute when a base was known.
    pub url: String,
    /// Media type.
    #[serde(rename = "type")]
    pub mime: Option<String>,
    /// Size in bytes, when given and numeric.
    pub length: Option<u64>,
}

/// One entry of a feed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Item {
    /// `guid` / `id` / JSON `id` as written (RSS 1.0: `rdf:about`, else `dc:identifier`).
    pub id: Option<String>,
    /// Plain text.
    pub title: Option<String>,
    /// The alternate link.
    pub link: Option<String>,
    /// All links in document order; enclosures appear with rel `enclosure`.
    pub links: Vec<Link>,
    /// Publication time, UTC.
    #[serde(serialize_with = "ser_time")]
    pub published: Option<OffsetDateTime>,
    /// Last update time, UTC.
    #[serde(serialize_with = "ser_time")]
    pub updated: Option<OffsetDateTime>,
    /// Authors in document order.
    pub authors: Vec<Person>,
    /// The first author's name.
    pub author: Option<String>,
    /// Category terms in document order.
    pub categories: Vec<String>,
    /// Summary as HTML (text escaped when the feed said text), relative URIs resolved. An
    /// element present but empty gives `""`, an absent one `None` (so for titles and content).
    pub summary: Option<String>,
    /// Plain-text rendering of `summary`.
    pub summary_text: Option<String>,
    /// Full content as HTML, relative URIs resolved.
    pub content: Option<String>,
    /// Plain-text rendering of `content`.
    pub content_text: Option<String>,
    /// Media attachments.
    pub enclosures: Vec<Enclosure>,
    /// The id earlier versions of this parser gave the item, where that differs from `id`
    /// because the rule changed: an RSS 1.0 item with both `rdf:about` (now the id) and a
    /// different `dc:identifier` (the id before 2026-12). A reader that keys items by id uses
    /// it to recognise items it keyed the old way. Not part of the JSON form.
    #[serde(skip)]
    pub former_id: Option<String>,
}

/// A parsed feed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Feed {
    /// What was recognised.
    pub format: Format,
    /// The XML was not well-formed and had to be recovered.
    pub bozo: bool,
    /// Everything that was repaired or dropped, in plain words.
    pub warnings: Vec<String>,
    /// Plain text.
    pub title: Option<String>,
    /// Plain text (RSS description, Atom subtitle/tagline).
    pub subtitle: Option<String>,
    /// The alternate link.
    pub link: Option<String>,
    /// All feed-level links in document order.
    pub links: Vec<Link>,
    /// Atom id / JSON feed_url.
    pub id: Option<String>,
    /// Language tag.
    pub language: Option<String>,
    /// Last update time, UTC.
    #[serde(serialize_with = "ser_time")]
    pub updated: Option<OffsetDateTime>,
    /// Feed authors.
    pub authors: Vec<Person>,
    /// Items in document order.
    pub items: Vec<Item>,
    /// RSS `<ttl>`: minutes the channel may be cached before it is fetched again. Used by the
    /// poller's schedule; not part of the JSON form.
    #[serde(skip)]
    pub ttl: Option<u32>,
}

impl Feed {
    pub(crate) fn new(format: Format) -> Feed {
        Feed {
            format,
            bozo: false,
            warnings: Vec::new(),
            title: None,
            subtitle: None,
            link: None,
            links: Vec::new(),
            id: None,
            language: None,
            updated: None,
            authors: Vec::new(),
            items: Vec::new(),
            ttl: None,
        }
    }

    /// The JSON object of F-9, pretty-printed.
    pub fn to_json(&self) -> String {
        // Serialising plain data structures with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The JSON object of F-9 as a value.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
