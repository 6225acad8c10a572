//! RSS and Atom: reads the feed vocabulary off the tolerant element tree.
//!
//! Elements are matched by local name whatever their namespace, as long as the namespace is a
//! core one (none, RSS 0.90/1.0, Atom 0.3/1.0); extension namespaces (Dublin Core, content,
//! iTunes) are matched explicitly and unknown ones are ignored. So Atom elements inside RSS and
//! feeds that forgot their namespace declarations read the same as clean ones.

use crate::date::{self, Parsed};
use crate::dom::{Doc, Ns, NONE};
use crate::entities::DecodeFlags;
use crate::html;
use crate::model::{Enclosure, Feed, Format, Item, Link, Person};
use crate::outcome::{NotAFeed, Warnings, MAX_ITEMS};
use std::borrow::Cow;
use time::OffsetDateTime;
use url::Url;

/// A text field in both renderings.
struct TextValue {
    html: String,
    text: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Html,
    Xhtml,
}

struct Cx<'d, 'a> {
    doc: &'d Doc<'a>,
    flags: DecodeFlags,
    warnings: Warnings,
    atom: bool,
    /// Render `summary_text` / `content_text`.
    plain_text: bool,
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b if b.is_ascii_whitespace() => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Splits `Name (email)`, `email (Name)`, `Name <email>`, `email` or `Name`.
fn person_from_text(s: &str) -> Option<Person> {
    let trimmed = s.trim();
    let angle_email = trimmed
        .rfind('<')
        .and_then(|lt| trimmed.strip_suffix('>').and_then(|t| t.get(lt + 1..)))
        .is_some_and(|inner| inner.contains('@') && !inner.contains(char::is_whitespace));
    let s = if s.contains(['<', '&']) && !angle_email {
        html::to_text(s)
    } else {
        html::collapse(s)
    };
    if s.is_empty() {
        return None;
    }
    let split = if let (Some(open), true) = (s.find('('), s.ends_with(')')) {
        Some((s[..open].trim(), s[open + 1..s.len() - 1].trim()))
    } else if let (Some(open), true) = (s.find('<'), s.ends_with('>')) {
        Some((s[..open].trim(), s[open + 1..s.len() - 1].trim()))
    } else {
        None
    };
    let (name, email) = match split {
        Some((a, b)) if b.contains('@') && !a.contains('@') => (a, b),
        Some((a, b)) if a.contains('@') => (b, a),
        Some((a, b)) => (a, b),
        None if s.contains('@') && !s.contains(' ') => ("", s.as_str()),
        None => (s.as_str(), ""),
    };
    let p = Person {
        name: non_empty(name.to_owned()),
        email: non_empty(email.trim_start_matches("mailto:").to_owned()),
        uri: None,
    };
    (p.name.is_some() || p.email.is_some()).then_some(p)
}

impl<'a> Cx<'_, 'a> {
    fn local_lower(&self, id: u32) -> Cow<'a, str> {
        let l = self.doc.local(id);
        if l.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(l.to_ascii_lowercase())
        } else {
            Cow::Borrowed(l)
        }
    }

    fn text(&mut self, id: u32) -> Cow<'a, str> {
        self.doc.text(id, &mut self.flags)
    }

    fn trimmed(&mut self, id: u32) -> Option<String> {
        let t = self.text(id);
        let t = t.trim();
        (!t.is_empty()).then(|| t.to_owned())
    }

    fn date(&mut self, id: u32) -> Option<OffsetDateTime> {
        let raw = self.text(id);
        let name = self.doc.name(id);
        self.date_of(&raw, name)
    }

    /// Parses the date `raw` found in `what` (an element or attribute name, for the warning).
    fn date_of(&mut self, raw: &str, what: &str) -> Option<OffsetDateTime> {
        match date::parse(raw) {
            Parsed::Ok(d) => Some(d),
            Parsed::UnknownZone(d) => {
                let raw = raw.trim().chars().take(80).collect::<String>();
                self.warnings
                    .push(format!("unknown time zone in date {raw:?}; taken as UTC"));
                Some(d)
            }
            Parsed::Invalid => {
                let raw = raw.trim().chars().take(80).collect::<String>();
                if !raw.is_empty() {
                    self.warnings
                        .push(format!("unparseable date {raw:?} in <{what}>"));
                }
                None
            }
        }
    }

    /// Reads a text construct. `title` selects how RSS's untyped text is read.
    /// Reads a text construct; the plain-text rendering only when `want_text`.
    fn text_construct(&mut self, id: u32, want_text: bool) -> Option<TextValue> {
        let doc = self.doc;
        let ty = doc.attr(id, "type").map(|t| t.trim().to_ascii_lowercase());
        let mode = doc.attr(id, "mode").map(|t| t.trim().to_ascii_lowercase());
        let atomish = self.atom || matches!(doc.ns(id), Ns::Atom10 | Ns::Atom03);
        let mut kind = match ty.as_deref() {
            Some(t) if t.contains("xhtml") => Kind::Xhtml,
            Some("html" | "text/html") => Kind::Html,
            Some("text" | "text/plain") => Kind::Text,
            Some(_) if atomish => Kind::Text,
            _ if mode.as_deref() == Some("escaped") => Kind::Html,
            _ if atomish => Kind::Text,
            _ => Kind::Html,
        };
        let base = doc.base(id);
        // Atom 1.0: any other media type that is not XML is base64 (RFC 4287 4.1.3.3).
        let binary = atomish
            && ty.as_deref().is_some_and(|t| {
                t == "application/octet-stream"
                    || t.starts_with("image/")
                    || t.starts_with("audio/")
                    || t.starts_with("video/")
            });
        let raw: Cow<'a, str> = if mode.as_deref() == Some("base64") || binary {
            let t = self.text(id);
            match base64_decode(&t) {
                Some(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
                None => {
                    self.warnings
                        .push(format!("invalid base64 in <{}>", doc.name(id)));
                    return None;
                }
            }
        } else if doc.has_children(id) {
            // Inline markup (xhtml, or HTML written without escaping).
            if kind == Kind::Xhtml {
                let first = doc.children(id).next().unwrap_or(NONE);
                if doc.local(first).eq_ignore_ascii_case("div") && doc.children(id).count() == 1 {
                    doc.xml_fragment(first)
                } else {
                    doc.xml_fragment(id)
                }
            } else if doc.ns(id) == Ns::Xhtml {
                // An XHTML `body` in RSS: markup kept as written, like Atom's xhtml.
                kind = Kind::Xhtml;
                doc.xml_fragment(id)
            } else {
                kind = Kind::Xhtml;
                self.text(id)
            }
        } else {
            self.text(id)
        };
        let raw_trim = raw.trim();
        if raw_trim.is_empty() {
            return None;
        }
        Some(match kind {
            Kind::Text => TextValue {
                html: html::escape(raw_trim),
                text: if want_text {
                    html::collapse(raw_trim)
                } else {
                    String::new()
                },
            },
            Kind::Html | Kind::Xhtml => {
                let h = html::resolve_in_html_iri(raw_trim, base, doc.base_is_iri(id));
                let text = if want_text {
                    html::to_text(&h)
                } else {
                    String::new()
                };
                TextValue {
                    html: h.into_owned(),
                    text,
                }
            }
        })
    }

    /// [`Cx::text_construct`] where an element that is present but empty (`<description/>`)
    /// reads as the empty string rather than as no value, as feedparser reads it.
    fn body(&mut self, id: u32) -> TextValue {
        let want = self.plain_text;
        self.text_construct(id, want).unwrap_or(TextValue {
            html: String::new(),
            text: String::new(),
        })
    }

    /// [`Cx::plain`], the empty string for an empty element.
    fn plain_or_empty(&mut self, id: u32) -> String {
        self.text_construct(id, true)
            .map(|t| t.text)
            .unwrap_or_default()
    }

    fn plain(&mut self, id: u32) -> Option<String> {
        self.text_construct(id, true)
            .and_then(|t| non_empty(t.text))
    }

    fn atom_person(&mut self, id: u32) -> Option<Person> {
        if !self.doc.has_children(id) {
            return person_from_text(&self.text(id));
        }
        let mut p = Person::default();
        for c in self.doc.children(id) {
            let v = self.trimmed(c).map(|v| html::collapse(&v));
            match &*self.local_lower(c) {
                "name" if p.name.is_none() => p.name = v,
                "email" if p.email.is_none() => p.email = v,
                "uri" | "url" | "homepage" if p.uri.is_none() => {
                    p.uri =
                        v.map(|u| html::resolve_iri(&u, self.doc.base(c), self.doc.base_is_iri(c)));
                }
                _ => {}
            }
        }
        if p.name.is_none() && p.email.is_none() && p.uri.is_none() {
            // Not an Atom person: markup inside an RSS author.
            return person_from_text(&html::to_text(self.doc.inner(id)));
        }
        Some(p)
    }

    /// `<link href=…>` (Atom) or `<link>text</link>` (RSS).
    fn link(&mut self, id: u32) -> Option<Link> {
        let doc = self.doc;
        if let Some(href) = doc.attr(id, "href") {
            let href = href.trim();
            if href.is_empty() && doc.base(id).is_none() {
                return None;
            }
            let rel = doc
                .attr(id, "rel")
                .map(|r| r.trim().to_owned())
                .filter(|r| !r.is_empty());
            return Some(Link {
                href: html::resolve_iri(href, doc.base(id), doc.base_is_iri(id)),
                rel: Some(rel.unwrap_or_else(|| "alternate".into())),
                mime: doc
                    .attr(id, "type")
                    .map(|t| t.trim().to_owned())
                    .filter(|t| !t.is_empty()),
                title: doc
                    .attr(id, "title")
                    .map(|t| html::collapse(&t))
                    .filter(|t| !t.is_empty()),
            });
        }
        let text = self.trimmed(id)?;
        Some(Link {
            href: html::resolve_iri(&text, doc.base(id), doc.base_is_iri(id)),
            rel: Some("alternate".into()),
            mime: None,
            title: None,
        })
    }

    /// A Media RSS text (`media:title`, `media:description`): plain text unless `type="html"`.
    fn media_text(&mut self, id: u32) -> Option<TextValue> {
        let is_html = self
            .doc
            .attr(id, "type")
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("html"));
        if is_html {
            return self.text_construct(id, self.plain_text);
        }
        let raw = self.text(id);
        let raw = raw.trim();
        if raw.is_empty() {
            return None;
        }
        Some(TextValue {
            html: html::escape(raw),
            text: if self.plain_text {
                html::collapse(raw)
            } else {
                String::new()
            },
        })
    }

    /// `itunes:category`: the `text` attribute, then any nested categories, each its own term.
    fn itunes_categories(&mut self, id: u32, out: &mut Vec<String>, depth: usize) {
        if let Some(t) = self.doc.attr(id, "text") {
            if let Some(t) = non_empty(html::collapse(&t)) {
                out.push(t);
            }
        }
        if depth < 4 {
            for c in self.doc.children(id) {
                if self.doc.ns(c) == Ns::Itunes && self.local_lower(c) == "category" {
                    self.itunes_categories(c, out, depth + 1);
                }
            }
        }
    }

    /// A Media RSS element of an item, or each one inside a `media:group`.
    fn media(&mut self, id: u32, media: &mut Media, in_group: bool) {
        match &*self.local_lower(id) {
            "group" if !in_group => {
                for c in self.doc.children(id) {
                    if self.doc.ns(c) == Ns::Media {
                        self.media(c, media, true);
                    }
                }
            }
            "title" if media.title.is_none() => {
                media.title = self.media_text(id).and_then(|t| {
                    non_empty(if self.plain_text {
                        t.text
                    } else {
                        html::collapse(&html::to_text(&t.html))
                    })
                });
            }
            "description" if media.description.is_none() => {
                media.description = self.media_text(id);
            }
            "category" => {
                if let Some(t) = non_empty(html::collapse(&self.text(id))) {
                    media.categories.push(t);
                }
            }
            _ => {}
        }
    }

    fn category(&mut self, id: u32) -> Option<String> {
        let term = match self.doc.attr(id, "term") {
            Some(t) => t.into_owned(),
            None => self.text(id).into_owned(),
        };
        non_empty(html::collapse(&term))
    }
}

/// Chooses one date among the elements that can carry it.
///
/// Each candidate has a rank: 3 for the current core elements (`published`, `pubDate`,
/// `updated`, `lastBuildDate`), 2 for the deprecated Atom 0.3 ones (`issued`, `modified`), 1 for
/// Dublin Core (`dc:date`, `dcterms:issued`, `dcterms:modified`) and 0 for creation times
/// (`created`, `dcterms:created`). The highest rank wins; among candidates of the same rank the
/// later one wins, as feedparser and gofeed keep the last value they read. So a later core
/// `published` replaces an earlier `issued`, and an extension element only fills a date the core
/// elements left empty. A date that does not parse is no candidate. At the feed level the same
/// rule picks `updated`, where every update element ranks above every publication element
/// (which stand in for an update time only when there is none).
#[derive(Default)]
struct DatePick(Option<(u8, OffsetDateTime)>);

impl DatePick {
    fn offer(&mut self, rank: u8, date: Option<OffsetDateTime>) {
        if let Some(d) = date {
            if self.0.is_none_or(|(r, _)| rank >= r) {
                self.0 = Some((rank, d));
            }
        }
    }

    fn get(&self) -> Option<OffsetDateTime> {
        self.0.map(|(_, d)| d)
    }
}

/// What an item's Media RSS elements say.
#[derive(Default)]
struct Media {
    title: Option<String>,
    description: Option<TextValue>,
    categories: Vec<String>,
}

/// The alternate link among `links`: the first alternate typed as HTML, else the first
/// untyped one, else the first alternate of any type. So of an untyped alternate and one with
/// `type="text/html"`, in either order, the typed one is the link: it says it is the page.
fn pick_link(links: &[Link]) -> Option<String> {
    let alt = |l: &&Link| {
        l.rel
            .as_deref()
            .is_none_or(|r| r.eq_ignore_ascii_case("alternate"))
    };
    let mut untyped = None;
    for l in links.iter().filter(alt) {
        match l.mime.as_deref() {
            Some(m) if m.contains("html") => return Some(l.href.clone()),
            None if untyped.is_none() => untyped = Some(l),
            _ => {}
        }
    }
    untyped
        .or_else(|| links.iter().find(alt))
        .map(|l| l.href.clone())
}

/// Reads one item or entry.
///
/// Bodies: the first `description` or `summary` is the summary. The content is the first of
/// the content elements (`content:encoded`, Atom `content`, a `body` in the XHTML namespace or,
/// in RSS, in none (old Userland feeds), `fullitem`) and a second `description`/`summary` met
/// before any of them (as feedparser reads it), whatever their order. `dc:description`,
/// `itunes:summary` and then `media:description` stand in for a missing summary; the last only
/// when there is no content either.
fn read_item(cx: &mut Cx<'_, '_>, id: u32) -> Item {
    let doc = cx.doc;
    let mut item = Item::default();
    let mut guid_permalink: Option<String> = None;
    let mut rss_link: Option<String> = None;
    let mut published = DatePick::default();
    let mut updated = DatePick::default();
    let mut fallback_authors: Vec<Person> = Vec::new();
    let mut dc_id = None;
    let mut dc_title = None;
    let mut fallback_summary = None;
    let mut media = Media::default();
    for c in doc.children(id) {
        let ns = doc.ns(c);
        let local = cx.local_lower(c);
        match (ns, &*local) {
            (Ns::Dc, "creator" | "author") => {
                if let Some(p) = person_from_text(&cx.text(c)) {
                    fallback_authors.push(p);
                }
            }
            (Ns::Itunes, "author") => {
                if let Some(p) = person_from_text(&cx.text(c)) {
                    fallback_authors.push(p);
                }
            }
            (Ns::Dc, "date" | "issued") => published.offer(1, cx.date(c)),
            (Ns::Dc, "created") => published.offer(0, cx.date(c)),
            (Ns::Dc, "modified") => updated.offer(1, cx.date(c)),
            (Ns::Dc, "subject") => {
                if let Some(t) = non_empty(html::collapse(&cx.text(c))) {
                    item.categories.push(t);
                }
            }
            (Ns::Dc, "identifier") if dc_id.is_none() => dc_id = cx.trimmed(c),
            (Ns::Dc, "title") if dc_title.is_none() => dc_title = cx.plain(c),
            (Ns::Dc, "description") | (Ns::Itunes, "summary") if fallback_summary.is_none() => {
                fallback_summary = cx.text_construct(c, cx.plain_text);
            }
            (Ns::Content, "encoded") if item.content.is_none() => {
                let raw = cx.text(c);
                let h = html::resolve_in_html_iri(raw.trim(), doc.base(c), doc.base_is_iri(c));
                if cx.plain_text {
                    item.content_text = non_empty(html::to_text(&h));
                }
                item.content = Some(h.into_owned());
            }
            (Ns::Xhtml, "body") if item.content.is_none() => {
                if let Some(t) = cx.text_construct(c, cx.plain_text) {
                    item.content_text = non_empty(t.text);
                    item.content = Some(t.html);
                }
            }
            (Ns::Itunes, "category") => cx.itunes_categories(c, &mut item.categories, 0),
            (Ns::Media, _) => cx.media(c, &mut media, false),
            (ns, _) if !ns.is_core() => {}
            (_, "title") if item.title.is_none() => item.title = Some(cx.plain_or_empty(c)),
            (_, "tags") => {
                // Free-form, comma-separated tags.
                let text = cx.text(c);
                for t in text.split(',') {
                    if let Some(t) = non_empty(html::collapse(t)) {
                        item.categories.push(t);
                    }
                }
            }
            (_, "link") => {
                let is_text_link = doc.attr(c, "href").is_none();
                if let Some(l) = cx.link(c) {
                    if is_text_link && rss_link.is_none() {
                        rss_link = Some(l.href.clone());
                    }
                    if l.rel.as_deref() == Some("enclosure") {
                        item.enclosures.push(Enclosure {
                            url: l.href.clone(),
                            mime: l.mime.clone(),
                            length: doc.attr(c, "length").and_then(|v| v.trim().parse().ok()),
                        });
                    }
                    item.links.push(l);
                }
            }
            (_, "guid" | "id") if item.id.is_none() => {
                item.id = cx.trimmed(c);
                let permalink = doc
                    .attr(c, "isPermaLink")
                    .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"));
                if local == "guid" && permalink {
                    guid_permalink = item
                        .id
                        .clone()
                        .filter(|g| g.starts_with("http://") || g.starts_with("https://"));
                }
            }
            (_, "description" | "summary") if item.summary.is_none() => {
                let t = cx.body(c);
                item.summary_text = non_empty(t.text);
                item.summary = Some(t.html);
            }
            (_, "description" | "summary") if item.content.is_none() => {
                // A second summary-like element before any content element is the content.
                let t = cx.body(c);
                item.content_text = non_empty(t.text);
                item.content = Some(t.html);
            }
            // Userland's un-namespaced `body`: read like `xhtml:body`.
            (_, "body") if !cx.atom && item.content.is_none() => {
                if let Some(t) = cx.text_construct(c, cx.plain_text) {
                    item.content_text = non_empty(t.text);
                    item.content = Some(t.html);
                }
            }
            (_, "content" | "encoded" | "fullitem") if item.content.is_none() => {
                if doc.attr(c, "src").is_some() {
                    continue;
                }
                let t = cx.body(c);
                item.content_text = non_empty(t.text);
                item.content = Some(t.html);
            }
            (_, "pubdate" | "published") => published.offer(3, cx.date(c)),
            (_, "issued") => published.offer(2, cx.date(c)),
            (_, "created") => published.offer(0, cx.date(c)),
            (_, "updated") => updated.offer(3, cx.date(c)),
            (_, "modified") => updated.offer(2, cx.date(c)),
            (_, "author") => {
                if let Some(p) = cx.atom_person(c) {
                    item.authors.push(p);
                }
            }
            (_, "category") => {
                if let Some(t) = cx.category(c) {
                    item.categories.push(t);
                }
            }
            (_, "enclosure") => {
                let Some(url) = doc.attr(c, "url").or_else(|| doc.attr(c, "href")) else {
                    continue;
                };
                let url = url.trim();
                if url.is_empty() {
                    continue;
                }
                let url = html::resolve_iri(url, doc.base(c), doc.base_is_iri(c));
                let mime = doc
                    .attr(c, "type")
                    .map(|t| t.trim().to_owned())
                    .filter(|t| !t.is_empty());
                let length = doc.attr(c, "length").and_then(|v| v.trim().parse().ok());
                item.links.push(Link {
                    href: url.clone(),
                    rel: Some("enclosure".into()),
                    mime: mime.clone(),
                    title: None,
                });
                item.enclosures.push(Enclosure { url, mime, length });
            }
            _ => {}
        }
    }
    item.published = published.get();
    item.updated = updated.get();
    // Fallbacks fill a value that is missing or empty.
    let blank = |v: &Option<String>| v.as_deref().is_none_or(str::is_empty);
    if blank(&item.title) {
        if let Some(t) = dc_title.or(media.title) {
            item.title = Some(t);
        }
    }
    item.categories.extend(media.categories);
    if blank(&item.summary) {
        // `media:description` only when the item has no other body (YouTube's Atom entries).
        let media_body = media.description.filter(|_| blank(&item.content));
        if let Some(t) = fallback_summary.or(media_body) {
            item.summary_text = non_empty(t.text);
            item.summary = Some(t.html);
        }
    }
    if let (Some(i), Some(b)) = (item.id.as_deref(), doc.base(id)) {
        if cx.atom && html::is_relative(i) {
            item.id = Some(html::resolve_iri(i, Some(b), doc.base_is_iri(id)));
        }
    }
    if item.authors.is_empty() {
        item.authors = fallback_authors;
    }
    if item.id.is_none() {
        // RSS 1.0: the item's URI (`rdf:about`, mandatory there) is its id, before any
        // `dc:identifier`; earlier readings took the `dc:identifier`, which stays known.
        let about = doc
            .attr(id, "rdf:about")
            .or_else(|| doc.attr(id, "about"))
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        if about.is_some() && dc_id.is_some() && about != dc_id {
            item.former_id = dc_id.clone();
        }
        item.id = about.or(dc_id);
    }
    item.link = rss_link
        .or_else(|| pick_link(&item.links))
        .or(guid_permalink);
    item.author = item.authors.first().and_then(|a| a.name.clone());
    item
}

fn read_feed_fields(cx: &mut Cx<'_, '_>, container: u32, feed: &mut Feed) {
    let doc = cx.doc;
    let mut updated = DatePick::default();
    let mut editors = Vec::new();
    let mut webmasters = Vec::new();
    let mut others = Vec::new();
    let mut rss_link = None;
    let mut dc_title = None;
    let mut dc_subtitle = None;
    for c in doc.children(container) {
        let ns = doc.ns(c);
        let local = cx.local_lower(c);
        match (ns, &*local) {
            (Ns::Dc, "language") if feed.language.is_none() => feed.language = cx.trimmed(c),
            (Ns::Dc, "title") if dc_title.is_none() => dc_title = cx.plain(c),
            (Ns::Dc, "description") | (Ns::Itunes, "summary" | "subtitle")
                if dc_subtitle.is_none() =>
            {
                dc_subtitle = cx.plain(c);
            }
            // Without an update time, the feed's publication time stands in for it.
            (Ns::Dc, "modified") => updated.offer(1, cx.date(c)),
            (Ns::Dc, "date" | "issued") => updated.offer(0, cx.date(c)),
            (Ns::Dc, "creator") | (Ns::Itunes, "author") => {
                if let Some(p) = person_from_text(&cx.text(c)) {
                    others.push(p);
                }
            }
            (ns, _) if !ns.is_core() => {}
            (_, "title") if feed.title.is_none() => feed.title = Some(cx.plain_or_empty(c)),
            (_, "description" | "subtitle" | "tagline") if feed.subtitle.is_none() => {
                feed.subtitle = Some(cx.plain_or_empty(c))
            }
            (_, "link") => {
                let is_text = doc.attr(c, "href").is_none();
                if let Some(l) = cx.link(c) {
                    if is_text && rss_link.is_none() {
                        rss_link = Some(l.href.clone());
                    }
                    feed.links.push(l);
                }
            }
            (_, "language") if feed.language.is_none() => feed.language = cx.trimmed(c),
            (_, "ttl") if feed.ttl.is_none() => {
                feed.ttl = cx.trimmed(c).and_then(|t| t.parse::<u32>().ok());
            }
            (_, "id") if feed.id.is_none() => feed.id = cx.trimmed(c),
            (_, "updated" | "lastbuilddate") => updated.offer(5, cx.date(c)),
            (_, "modified") => updated.offer(4, cx.date(c)),
            (_, "pubdate" | "published") => updated.offer(3, cx.date(c)),
            (_, "issued") => updated.offer(2, cx.date(c)),
            (_, "author") => {
                if let Some(p) = cx.atom_person(c) {
                    feed.authors.push(p);
                }
            }
            (_, "managingeditor") => editors.extend(person_from_text(&cx.text(c))),
            (_, "webmaster") => webmasters.extend(person_from_text(&cx.text(c))),
            _ => {}
        }
    }
    feed.updated = updated.get();
    let blank = |v: &Option<String>| v.as_deref().is_none_or(str::is_empty);
    if blank(&feed.title) {
        if let Some(t) = dc_title {
            feed.title = Some(t);
        }
    }
    if blank(&feed.subtitle) {
        if let Some(t) = dc_subtitle {
            feed.subtitle = Some(t);
        }
    }
    feed.authors.extend(editors);
    if feed.authors.is_empty() {
        feed.authors = webmasters;
    }
    if feed.authors.is_empty() {
        feed.authors = others;
    }
    feed.link = rss_link.or_else(|| pick_link(&feed.links));
}

/// Whether a root `channel` is Microsoft CDF rather than a bare RSS 0.9x channel: CDF puts the
/// link in an `HREF` attribute (on the channel or its items), the date in `LASTMOD`, and the
/// description in `ABSTRACT`.
fn is_cdf(doc: &Doc<'_>, root: u32) -> bool {
    doc.attr(root, "href").is_some()
        || doc.attr(root, "lastmod").is_some()
        || doc.children(root).any(|c| {
            let l = doc.local(c);
            l.eq_ignore_ascii_case("abstract")
                || (l.eq_ignore_ascii_case("item") && doc.attr(c, "href").is_some())
        })
}

/// The `HREF` and `LASTMOD` attributes of a CDF element.
fn cdf_link_and_date(cx: &mut Cx<'_, '_>, id: u32) -> (Option<Link>, Option<OffsetDateTime>) {
    let doc = cx.doc;
    let link = doc
        .attr(id, "href")
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .map(|h| Link {
            href: html::resolve_iri(&h, doc.base(id), doc.base_is_iri(id)),
            rel: Some("alternate".into()),
            mime: None,
            title: None,
        });
    let date = doc
        .attr(id, "lastmod")
        .and_then(|d| cx.date_of(d.trim(), "LASTMOD"));
    (link, date)
}

/// A CDF `TITLE` attribute, as plain text.
fn cdf_title_attr(doc: &Doc<'_>, id: u32) -> Option<String> {
    doc.attr(id, "title").map(|t| html::collapse(&t))
}

/// Reads a CDF channel: `TITLE` (an element, else an attribute), `ABSTRACT` (the summary), the
/// `HREF` (the link) and `LASTMOD` (the updated date) attributes, and its `ITEM`s, including
/// those of nested sub-channels (a few levels deep), in document order.
fn read_cdf(cx: &mut Cx<'_, '_>, root: u32, feed: &mut Feed) {
    let doc = cx.doc;
    let (link, updated) = cdf_link_and_date(cx, root);
    feed.link = link.as_ref().map(|l| l.href.clone());
    feed.links.extend(link);
    feed.updated = updated;
    let mut items = Vec::new();
    let mut channels = vec![(root, 0usize)];
    while let Some((ch, depth)) = channels.pop() {
        for c in doc.children(ch) {
            match &*cx.local_lower(c) {
                "title" if ch == root && feed.title.is_none() => {
                    feed.title = Some(cx.plain_or_empty(c));
                }
                "abstract" if ch == root && feed.subtitle.is_none() => {
                    feed.subtitle = Some(cx.plain_or_empty(c));
                }
                "item" => items.push(c),
                "channel" if depth < 4 => channels.push((c, depth + 1)),
                _ => {}
            }
        }
    }
    if feed.title.is_none() {
        feed.title = cdf_title_attr(doc, root);
    }
    items.sort_unstable();
    for id in items.into_iter().take(MAX_ITEMS) {
        let mut item = Item::default();
        let (link, updated) = cdf_link_and_date(cx, id);
        item.link = link.as_ref().map(|l| l.href.clone());
        item.links.extend(link);
        item.updated = updated;
        for c in doc.children(id) {
            match &*cx.local_lower(c) {
                "title" if item.title.is_none() => item.title = Some(cx.plain_or_empty(c)),
                "abstract" if item.summary.is_none() => {
                    if let Some(t) = cx.media_text(c) {
                        item.summary_text = non_empty(t.text);
                        item.summary = Some(t.html);
                    }
                }
                _ => {}
            }
        }
        if item.title.is_none() {
            item.title = cdf_title_attr(doc, id);
        }
        feed.items.push(item);
    }
}

/// Parses an XML document (already UTF-8).
pub(crate) fn parse(
    plain_text: bool,
    src: &str,
    base: Option<Url>,
    mut warnings: Warnings,
    repaired: bool,
) -> Result<Feed, NotAFeed> {
    let expanded = crate::dtd::expand(src);
    for w in &expanded.warnings {
        warnings.push(w.clone());
    }
    let src = crate::dom::escape_stray_lt(&expanded.text);
    let doc = Doc::build(&src, base);
    let root = doc.root;
    if root == NONE {
        let head: String = src
            .chars()
            .take(1024)
            .collect::<String>()
            .to_ascii_lowercase();
        return Err(
            if head.contains("<html") || head.contains("<!doctype html") {
                NotAFeed::Html
            } else {
                NotAFeed::NotMarkup
            },
        );
    }
    let root_local = doc.local(root).to_ascii_lowercase();
    let find_child = |parent: u32, name: &str| {
        doc.children(parent)
            .find(|&c| doc.local(c).eq_ignore_ascii_case(name))
    };
    let (format, container) = match root_local.as_str() {
        "rss" => {
            let v = doc
                .attr(root, "version")
                .map(|v| v.trim().to_owned())
                .unwrap_or_default();
            let f = if v.starts_with("0.9") {
                Format::Rss09x
            } else {
                Format::Rss2
            };
            (f, find_child(root, "channel").unwrap_or(root))
        }
        "rdf" => {
            let ch = find_child(root, "channel");
            let f = if doc.ns(root) == Ns::Rss090 || ch.is_some_and(|c| doc.ns(c) == Ns::Rss090) {
                Format::Rss09x
            } else {
                Format::Rss1
            };
            (f, ch.unwrap_or(root))
        }
        "feed" => {
            let v = doc
                .attr(root, "version")
                .map(|v| v.trim().to_owned())
                .unwrap_or_default();
            // The Atom 1.0 namespace decides over a version attribute (as feedparser does).
            let f = match doc.ns(root) {
                Ns::Atom10 => Format::Atom1,
                Ns::Atom03 => Format::Atom03,
                _ if v == "0.3" => Format::Atom03,
                _ => Format::Atom1,
            };
            if let Some(uri) = &doc.atom_alias {
                let atom_shaped = doc.children(root).any(|c| {
                    matches!(
                        doc.local(c).to_ascii_lowercase().as_str(),
                        "entry" | "title" | "id" | "link" | "updated" | "modified" | "author"
                    )
                });
                if !atom_shaped {
                    return Err(NotAFeed::UnknownRoot(
                        doc.name(root).chars().take(64).collect(),
                    ));
                }
                warnings.push(format!(
                    "root <{}> is in namespace {uri:?}, not Atom's; read as Atom",
                    doc.name(root)
                ));
            }
            (f, root)
        }
        // An Atom Entry Document (RFC 4287 §2: one entry outside of any feed, `atom:entry` its
        // root), as an AtomPub server answers for one member: a feed of that one entry, with
        // nothing of its own.
        "entry" if matches!(doc.ns(root), Ns::Atom10 | Ns::Atom03 | Ns::None) => {
            let f = if doc.ns(root) == Ns::Atom03 {
                Format::Atom03
            } else {
                Format::Atom1
            };
            warnings.push("the root is an Atom entry, not a feed; read as a feed of one entry");
            (f, root)
        }
        "channel" if is_cdf(&doc, root) => (Format::Cdf, root),
        "channel" => (Format::Rss09x, root),
        "html" => return Err(NotAFeed::Html),
        _ => {
            return Err(NotAFeed::UnknownRoot(
                doc.name(root).chars().take(64).collect(),
            ))
        }
    };
    let atom = matches!(format, Format::Atom1 | Format::Atom03);
    let mut feed = Feed::new(format);
    for w in doc.warnings.iter() {
        warnings.push(w.clone());
    }
    let mut cx = Cx {
        doc: &doc,
        flags: DecodeFlags::default(),
        warnings,
        atom,
        plain_text,
    };
    let entry_document = atom && root_local == "entry";
    if format == Format::Cdf {
        read_cdf(&mut cx, root, &mut feed);
    } else if !entry_document {
        read_feed_fields(&mut cx, container, &mut feed);
    }
    if feed.language.is_none() {
        feed.language = doc
            .attr(root, "xml:lang")
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty());
    }
    // `en_US` is a POSIX locale, not a language tag: BCP 47 separates subtags with '-'.
    if let Some(l) = feed.language.as_mut().filter(|l| l.contains('_')) {
        *l = l.replace('_', "-");
    }
    let item_name = if atom { "entry" } else { "item" };
    let mut ids: Vec<u32> = Vec::new();
    if entry_document {
        ids.push(root);
    } else if format != Format::Cdf {
        ids = doc
            .children(container)
            .filter(|&c| doc.local(c).eq_ignore_ascii_case(item_name))
            .collect();
    }
    if container != root {
        // RSS 0.90 / 1.0 keep items beside the channel.
        ids.extend(
            doc.children(root)
                .filter(|&c| doc.local(c).eq_ignore_ascii_case(item_name)),
        );
        ids.sort_unstable();
    }
    let mut dropped = 0usize;
    for id in ids {
        if doc.truncated && !doc.closed(id) {
            dropped += 1;
            continue;
        }
        if feed.items.len() >= MAX_ITEMS {
            cx.warnings
                .push(format!("more than {MAX_ITEMS} items; the rest is ignored"));
            break;
        }
        let item = read_item(&mut cx, id);
        feed.items.push(item);
    }
    if doc.truncated {
        cx.warnings.push(format!(
            "document is truncated; {dropped} incomplete item(s) dropped"
        ));
    }
    feed.bozo = doc.bozo || repaired || cx.flags.not_xml || expanded.bozo;
    if cx.flags.not_xml {
        cx.warnings
            .push("undefined entity or bare '&' in text (not well-formed XML)");
    }
    if repaired {
        cx.warnings
            .push("characters not allowed in XML were removed");
    }
    feed.warnings = cx.warnings.finish();
    Ok(feed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persons_table() {
        let cases = [
            (
                "Feed Editor (email@example.org)",
                Some("Feed Editor"),
                Some("email@example.org"),
            ),
            (
                "email@example.org (Feed Editor)",
                Some("Feed Editor"),
                Some("email@example.org"),
            ),
            (
                "Feed Editor <email@example.org>",
                Some("Feed Editor"),
                Some("email@example.org"),
            ),
            ("email@example.org", None, Some("email@example.org")),
            ("Feed Editor", Some("Feed Editor"), None),
        ];
        for (input, name, email) in cases {
            let p = person_from_text(input).unwrap();
            assert_eq!(
                (p.name.as_deref(), p.email.as_deref()),
                (name, email),
                "{input}"
            );
        }
        assert!(person_from_text("  ").is_none());
    }

    #[test]
    fn base64() {
        assert_eq!(base64_decode("Jmx0O3A=").unwrap(), b"&lt;p");
        assert!(base64_decode("not base64!").is_none());
    }
}
