//! A tolerant parser for RSS 0.90–2.0, RSS 1.0 (RDF), Atom 0.3/1.0, JSON Feed 1.x and Microsoft CDF.
//!
//! [`parse`] takes the bytes of a response and optional hints (the feed URL, the HTTP
//! `Content-Type`) and returns a [`Feed`]: the items plus a list of warnings. Only input that is
//! not a feed at all is an error ([`NotAFeed`]); every recoverable problem degrades one field or
//! one item and is reported as a warning. There is no IO here.
//!
//! The pipeline: bytes are normalised to UTF-8 (BOM, HTTP charset, XML declaration, valid UTF-8
//! first, windows-1252 last), then either a JSON Feed is read with `serde_json`, or a tolerant
//! element tree is built on quick-xml's tokenizer and the feed vocabulary is read off it. Text
//! fields are delivered both as HTML (relative URIs resolved) and as plain text.
//!
//! The modules, in the order the bytes meet them: `decode.rs` normalises
//! to UTF-8 (BOM, then HTTP charset, then XML declaration — also when comments or whitespace come
//! first; valid UTF-8 wins over a wrong declaration; windows-1252 for ISO-8859-1 and for bytes that
//! are not the UTF-8 an undeclared document implies; characters XML forbids stripped); its module
//! doc says how the HTTP charset and the declaration combine.
//! `dtd.rs` expands general entities declared in an internal DTD subset before the tree is built:
//! nesting at most 16 deep, at most 1 MiB inserted per document, external and parameter entities
//! never read, nothing copied when no declared entity is used. `dom.rs` builds a compact, tolerant
//! element tree on quick-xml's tokenizer: nodes are offsets into the decoded text, a mismatched
//! end tag closes the nearest open element of that name, a core `item` or `entry` start closes
//! whatever was left open inside its channel or feed (as an HTML parser recovers), stray end tags
//! are dropped, and elements still open at the end mark the document truncated so only complete
//! items are kept; depth and node count are bounded; namespace URIs are recorded, so an
//! Atom-shaped root in an unknown namespace is read as Atom (with a warning), and Userland's and
//! Harvard's RSS namespaces as none. `xml.rs` reads RSS 0.9x/1.0/2.0, Atom 0.3/1.0 (also an Atom
//! Entry Document, as a feed of its one entry, with a warning) and Microsoft CDF by local name,
//! Dublin Core and dcterms dates with one ranked rule for competing date elements (`DatePick`),
//! iTunes and Media RSS items, and decides which body is the summary and which the content in one
//! documented order (`read_item`; Userland's un-namespaced `body` is content like `xhtml:body`);
//! an element that is present but empty is `""`, not null; XHTML content keeps the namespace
//! declarations it inherits; of two alternate links an HTML-typed one beats an untyped one; an
//! RSS 1.0 item's id is its `rdf:about` before its `dc:identifier`, which stays known as
//! `Item::former_id` (outside the JSON form) because it was the id before. `json.rs` reads JSON
//! Feed 1.x (well-formed character references in titles decoded, as readers do). `html.rs` renders plain text (only ASCII whitespace collapses)
//! and resolves relative URIs against `xml:base`, else the HTTP Content-Location, else the feed
//! URL (an IRI base stays an IRI); `date.rs` parses dates with its own zone table;
//! `entities.rs` holds HTML named references; `outcome.rs` the limits, `NotAFeed` and the warnings
//! collector; `model.rs` is the F-9 shape, whose serde names are an interface. `bozo` is set for
//! XML that had to be repaired, an unknown encoding name, bytes read in another encoding than the
//! one declared or implied, a non-XML content type, bytes invalid in their encoding and undeclared
//! namespace prefixes.
//!
//! Beside the parser, two readers the feeds commands need, also without IO: `opml` reads and
//! writes OPML 1.0/2.0 subscription lists (strictly: a broken file is an error naming its line
//! and column; a DTD is never read), and `discover` finds the feeds an HTML page names in its
//! `<link rel="alternate">` elements.

// This crate reads untrusted bytes: a failure is an error value, never a panic. Tests may
// use `expect` (clippy.toml allows it in tests); a test module that needs `panic!` allows
// `clippy::panic` itself.
#![warn(clippy::expect_used, clippy::panic)]

mod date;
mod decode;
pub mod discover;
mod dom;
mod dtd;
mod entities;
mod html;
mod json;
mod model;
pub mod opml;
mod outcome;
mod xml;

pub use html::to_text as html_to_text;
pub use model::{Enclosure, Feed, Format, Item, Link, Person};
use outcome::Warnings;
pub use outcome::{NotAFeed, MAX_INPUT, MAX_ITEMS, MAX_WARNINGS};

use url::Url;

/// What the caller knows about where the bytes came from.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hints<'a> {
    /// The URL the feed was fetched from; relative links are resolved against it.
    pub url: Option<&'a str>,
    /// The HTTP `Content-Type` header; its `charset` parameter is used for decoding.
    pub content_type: Option<&'a str>,
    /// The HTTP `Content-Location` header, resolved against `url`: relative links are resolved
    /// against it rather than `url` (an `xml:base` still wins over both).
    pub content_location: Option<&'a str>,
}

/// The base URI of the document: `Content-Location` resolved against the URL it came from,
/// else that URL. A value that does not parse is ignored.
fn document_base(hints: &Hints<'_>) -> Option<Url> {
    let url = hints.url.and_then(|u| Url::parse(u.trim()).ok());
    let located = hints
        .content_location
        .map(str::trim)
        .and_then(|c| match &url {
            Some(u) => u.join(c).ok(),
            None => Url::parse(c).ok(),
        });
    located.or(url)
}

/// How much [`parse_with`] renders.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Fill `summary_text` / `content_text` (default). Without it they stay `None`, and a caller
    /// that only needs identities first can render the items it keeps with [`html_to_text`].
    /// Titles are plain text either way.
    pub plain_text: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { plain_text: true }
    }
}

/// Parses a feed. See the crate documentation.
pub fn parse(bytes: &[u8], hints: &Hints<'_>) -> Result<Feed, NotAFeed> {
    parse_with(bytes, hints, &Options::default())
}

/// [`parse`] with [`Options`].
pub fn parse_with(bytes: &[u8], hints: &Hints<'_>, options: &Options) -> Result<Feed, NotAFeed> {
    if bytes.len() > MAX_INPUT {
        return Err(NotAFeed::TooLarge { max: MAX_INPUT });
    }
    let decoded = decode::decode(bytes, hints.content_type);
    let mut warnings = Warnings::default();
    for w in decoded.warnings {
        warnings.push(w);
    }
    let suspect = decoded.suspect;
    let text = decoded
        .text
        .trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if text.trim_end().is_empty() {
        return Err(NotAFeed::Empty);
    }
    let base = document_base(hints);
    if text.starts_with('{') || text.starts_with('[') {
        return json::parse(options.plain_text, text, base.as_ref(), warnings).map(|mut f| {
            f.bozo |= suspect;
            f
        });
    }
    if !text.starts_with('<') {
        return Err(NotAFeed::NotMarkup);
    }
    let mut suspect = suspect;
    if let Some(ct) = hints.content_type.filter(|ct| !is_xml_media_type(ct)) {
        suspect = true;
        let ct: String = ct.trim().chars().take(80).collect();
        warnings.push(format!("served as {ct:?}, not an XML media type"));
    }
    xml::parse(options.plain_text, text, base, warnings, decoded.repaired).map(|mut f| {
        f.bozo |= suspect;
        f
    })
}

/// Whether a `Content-Type` names XML (`text/xml`, `application/xml`, `…+xml`), the media
/// types feedparser accepts without setting `bozo`. An empty header says nothing.
fn is_xml_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence.is_empty()
        || essence.ends_with("/xml")
        || essence.ends_with("+xml")
        || essence.starts_with("application/xml-")
        || essence.starts_with("text/xml-")
}

#[doc(hidden)]
pub mod fuzzing {
    //! Entry points for the fuzz targets.

    /// Parses arbitrary bytes with and without hints and serialises what comes out.
    pub fn parse_bytes(data: &[u8]) {
        let hints = crate::Hints {
            url: Some("http://example.com/feed/"),
            content_type: None,
            content_location: None,
        };
        if let Ok(feed) = crate::parse(data, &hints) {
            let _ = feed.to_json();
        }
        if let Ok(list) = crate::opml::read(data) {
            let _ = crate::opml::write("fuzz", &list.subscriptions);
        }
        if let Ok(s) = std::str::from_utf8(data) {
            let _ = crate::html::to_text(s);
            let _ = crate::date::parse(s);
            let _ = crate::discover::discover(s, "http://example.com/page/");
        }
    }
}
