//! JSON Feed 1.0 and 1.1, read field by field so one bad field cannot fail the feed.

use crate::date::{self, Parsed};
use crate::entities::{self, DecodeFlags};
use crate::html;
use crate::model::{Enclosure, Feed, Format, Item, Link, Person};
use crate::outcome::{NotAFeed, Warnings, MAX_ITEMS};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use url::Url;

fn str_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) => {
            let t = s.trim();
            (!t.is_empty()).then(|| t.to_owned())
        }
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A JSON Feed title or description. The spec says plain text, but real producers (micro.blog,
/// WordPress plugins) HTML-escape them, and readers decode that: NetNewsWire decodes character
/// references in titles (`&#39;`, `&amp;`). So do we, for well-formed references only: a bare
/// `&`, an unknown `&name;` and any `<tag>` stay literally as written, since the text is not
/// HTML. One level is decoded (`&amp;amp;` gives `&amp;`).
fn plain_field(obj: &Map<String, Value>, key: &str) -> Option<String> {
    let raw = str_field(obj, key)?;
    let mut flags = DecodeFlags::default();
    let t = html::collapse(&entities::decode(&raw, &mut flags));
    (!t.is_empty()).then_some(t)
}

fn url_field(obj: &Map<String, Value>, key: &str, base: Option<&Url>) -> Option<String> {
    str_field(obj, key).map(|u| html::resolve(&u, base))
}

fn date_field(
    obj: &Map<String, Value>,
    key: &str,
    warnings: &mut Warnings,
) -> Option<OffsetDateTime> {
    let raw = str_field(obj, key)?;
    match date::parse(&raw) {
        Parsed::Ok(d) => Some(d),
        Parsed::UnknownZone(d) => {
            warnings.push(format!(
                "unknown time zone in date {:?}; taken as UTC",
                raw.chars().take(80).collect::<String>()
            ));
            Some(d)
        }
        Parsed::Invalid => {
            warnings.push(format!(
                "unparseable date {:?} in {key}",
                raw.chars().take(80).collect::<String>()
            ));
            None
        }
    }
}

fn authors(obj: &Map<String, Value>, base: Option<&Url>) -> Vec<Person> {
    let person = |v: &Value| -> Option<Person> {
        let o = v.as_object()?;
        let p = Person {
            name: str_field(o, "name").map(|n| html::collapse(&n)),
            email: None,
            uri: url_field(o, "url", base),
        };
        (p.name.is_some() || p.uri.is_some()).then_some(p)
    };
    match obj.get("authors") {
        Some(Value::Array(list)) if !list.is_empty() => list.iter().filter_map(person).collect(),
        _ => obj.get("author").and_then(person).into_iter().collect(),
    }
}

fn read_item(
    o: &Map<String, Value>,
    base: Option<&Url>,
    plain_text: bool,
    warnings: &mut Warnings,
) -> Item {
    let mut item = Item {
        id: str_field(o, "id"),
        title: plain_field(o, "title"),
        ..Item::default()
    };
    if let Some(u) = url_field(o, "url", base) {
        item.links.push(Link {
            href: u.clone(),
            rel: Some("alternate".into()),
            mime: None,
            title: None,
        });
        item.link = Some(u);
    }
    if let Some(u) = url_field(o, "external_url", base) {
        item.links.push(Link {
            href: u,
            rel: Some("related".into()),
            mime: None,
            title: None,
        });
    }
    item.published = date_field(o, "date_published", warnings);
    item.updated = date_field(o, "date_modified", warnings);
    item.authors = authors(o, base);
    item.author = item.authors.first().and_then(|a| a.name.clone());
    if let Some(Value::Array(tags)) = o.get("tags") {
        item.categories = tags
            .iter()
            .filter_map(|t| t.as_str())
            .map(html::collapse)
            .filter(|t| !t.is_empty())
            .collect();
    }
    if let Some(s) = str_field(o, "summary") {
        item.summary = Some(html::escape(&s));
        item.summary_text = Some(html::collapse(&s));
    }
    match (str_field(o, "content_html"), str_field(o, "content_text")) {
        (Some(h), text) => {
            let h = html::resolve_in_html(&h, base).into_owned();
            item.content_text = text
                .map(|t| html::collapse(&t))
                .or_else(|| plain_text.then(|| html::to_text(&h)))
                .filter(|t| !t.is_empty());
            item.content = Some(h);
        }
        (None, Some(t)) => {
            item.content = Some(html::escape(&t));
            item.content_text = Some(html::collapse(&t));
        }
        (None, None) => {}
    }
    if !plain_text {
        item.summary_text = None;
        item.content_text = None;
    }
    if let Some(Value::Array(atts)) = o.get("attachments") {
        for a in atts.iter().filter_map(Value::as_object) {
            let Some(url) = url_field(a, "url", base) else {
                continue;
            };
            let mime = str_field(a, "mime_type");
            let length = a.get("size_in_bytes").and_then(Value::as_u64);
            item.links.push(Link {
                href: url.clone(),
                rel: Some("enclosure".into()),
                mime: mime.clone(),
                title: str_field(a, "title"),
            });
            item.enclosures.push(Enclosure { url, mime, length });
        }
    }
    item
}

/// Parses a JSON Feed.
pub(crate) fn parse(
    plain_text: bool,
    src: &str,
    base: Option<&Url>,
    mut warnings: Warnings,
) -> Result<Feed, NotAFeed> {
    let value: Value =
        serde_json::from_str(src).map_err(|e| NotAFeed::NotJsonFeed(e.to_string()))?;
    let Value::Object(obj) = value else {
        return Err(NotAFeed::NotJsonFeed(
            "the top level is not an object".into(),
        ));
    };
    let version = str_field(&obj, "version").unwrap_or_default();
    if !version.contains("jsonfeed.org/version/") {
        if obj.get("items").is_some_and(Value::is_array) {
            warnings.push(format!("unknown JSON Feed version {version:?}"));
        } else {
            return Err(NotAFeed::NotJsonFeed(
                "no JSON Feed version and no items".into(),
            ));
        }
    }
    let mut feed = Feed::new(Format::Json1);
    let feed_url = url_field(&obj, "feed_url", base);
    let base_owned = feed_url.as_deref().and_then(|u| Url::parse(u).ok());
    let base = base.or(base_owned.as_ref());
    feed.title = plain_field(&obj, "title");
    feed.subtitle = plain_field(&obj, "description");
    feed.link = url_field(&obj, "home_page_url", base);
    if let Some(l) = &feed.link {
        feed.links.push(Link {
            href: l.clone(),
            rel: Some("alternate".into()),
            mime: None,
            title: None,
        });
    }
    if let Some(u) = &feed_url {
        feed.links.push(Link {
            href: u.clone(),
            rel: Some("self".into()),
            mime: None,
            title: None,
        });
    }
    feed.id = feed_url;
    feed.language = str_field(&obj, "language");
    feed.authors = authors(&obj, base);
    match obj.get("items") {
        Some(Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                if feed.items.len() >= MAX_ITEMS {
                    warnings.push(format!("more than {MAX_ITEMS} items; the rest is ignored"));
                    break;
                }
                match v.as_object() {
                    Some(o) => feed
                        .items
                        .push(read_item(o, base, plain_text, &mut warnings)),
                    None => warnings.push(format!("item {i} is not an object; skipped")),
                }
            }
        }
        Some(_) => warnings.push("\"items\" is not an array"),
        None => warnings.push("no \"items\""),
    }
    feed.warnings = warnings.finish();
    Ok(feed)
}
