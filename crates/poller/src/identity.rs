//! The identity of a feed item, computed by Maven (F-6): the guid; else the normalised
//! link; else a hash of title + enclosure + date. Never a hash of the content: a feed that
//! fixes a typo in a summary must not look like a new item.
//!
//! When the parser's rule for an id changes, [`former_keys`] gives the keys the items had under
//! the old rule, so the worker can honour seen marks written under them.

use std::collections::HashSet;

use sha2::{Digest, Sha256};
use time::format_description::well_known::Rfc3339;
use url::Url;

/// A key longer than this (in bytes) is replaced by its hash.
pub const MAX_KEY: usize = 256;

/// Query parameters that only track the reader; dropped when a link is an identity.
const TRACKING: [&str; 6] = ["fbclid", "gclid", "mc_cid", "mc_eid", "yclid", "_hsenc"];

fn hex_sha256(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        // Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
        h.update((p.len() as u64).to_be_bytes());
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

fn bounded(key: String) -> String {
    if key.len() <= MAX_KEY {
        key
    } else {
        format!("h:{}", hex_sha256(&[&key]))
    }
}

/// A link as an identity: absolute (against `base`), without fragment, tracking parameters or
/// an empty query, and without its scheme (a feed moving to https keeps its items' identity).
pub fn normalise_link(link: &str, base: Option<&Url>) -> Option<String> {
    let link = link.trim();
    if link.is_empty() {
        return None;
    }
    let mut u = match base {
        Some(b) => b.join(link).ok()?,
        None => Url::parse(link).ok()?,
    };
    if u.cannot_be_a_base() || u.host_str().is_none() {
        return None;
    }
    u.set_fragment(None);
    if u.query().is_some() {
        let kept: Vec<(String, String)> = u
            .query_pairs()
            .filter(|(k, _)| {
                let k = k.to_ascii_lowercase();
                !k.starts_with("utm_") && !TRACKING.contains(&k.as_str())
            })
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if kept.is_empty() {
            u.set_query(None);
        } else {
            u.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    let s = u.as_str();
    let rest = s.split_once("://").map_or(s, |(_, r)| r);
    Some(rest.to_owned())
}

/// The identity of one item before repeats are disambiguated; `None` when it has no guid, no
/// usable link, and no title, enclosure or date to hash.
pub fn item_key(item: &feeds::Item, base: Option<&Url>) -> Option<String> {
    key_with_id(item, item.id.as_deref(), base)
}

/// [`item_key`] with `id` standing for the item's id.
fn key_with_id(item: &feeds::Item, id: Option<&str>, base: Option<&Url>) -> Option<String> {
    if let Some(id) = id.map(str::trim).filter(|s| !s.is_empty()) {
        return Some(bounded(format!("id:{id}")));
    }
    if let Some(l) = item.link.as_deref().and_then(|l| normalise_link(l, base)) {
        return Some(bounded(format!("link:{l}")));
    }
    fallback_hash(item).map(|h| format!("hash:{h}"))
}

/// A hash of title + first enclosure + date; `None` when all three are missing.
fn fallback_hash(item: &feeds::Item) -> Option<String> {
    let title = item.title.as_deref().map(str::trim).unwrap_or("");
    let enclosure = item.enclosures.first().map_or("", |e| e.url.trim());
    let date = item
        .published
        .or(item.updated)
        .and_then(|d| d.format(&Rfc3339).ok())
        .unwrap_or_default();
    if title.is_empty() && enclosure.is_empty() && date.is_empty() {
        return None;
    }
    Some(hex_sha256(&[title, enclosure, &date]))
}

/// The key of every item of one fetch, in document order. An id repeated within the fetch
/// keeps its key on its first occurrence; a later one gets the key plus the short hash of its
/// title + enclosure + date (and a counter if that repeats too), so the same document gives
/// the same keys every time.
pub fn item_keys(items: &[feeds::Item], base: Option<&Url>) -> Vec<Option<String>> {
    keys_with(items, base, |item| item.id.as_deref())
}

/// The keys earlier releases gave the items of one fetch, where they differ from `keys` (the
/// [`item_keys`] of the same items): an RSS 1.0 item was keyed by its `dc:identifier` before its
/// `rdf:about` became its id (`feeds::Item::former_id`). Computed by the same rules over the
/// former ids, so repeats are told apart as they were; `None` where the key did not change.
/// Empty when no item has a former id (the usual case: nothing is computed).
pub fn former_keys(
    items: &[feeds::Item],
    base: Option<&Url>,
    keys: &[Option<String>],
) -> Vec<Option<String>> {
    if items.iter().all(|i| i.former_id.is_none()) {
        return Vec::new();
    }
    keys_with(items, base, |item| {
        item.former_id.as_deref().or(item.id.as_deref())
    })
    .into_iter()
    .zip(keys)
    .map(|(former, key)| former.filter(|f| Some(f) != key.as_ref()))
    .collect()
}

/// [`item_keys`] with `id_of` giving each item's id.
fn keys_with<'i>(
    items: &'i [feeds::Item],
    base: Option<&Url>,
    id_of: impl Fn(&'i feeds::Item) -> Option<&'i str>,
) -> Vec<Option<String>> {
    let mut taken: HashSet<String> = HashSet::with_capacity(items.len());
    items
        .iter()
        .map(|item| {
            let key = key_with_id(item, id_of(item), base)?;
            if taken.insert(key.clone()) {
                return Some(key);
            }
            let h = fallback_hash(item).unwrap_or_default();
            let short = &h[..h.len().min(12)];
            let stem = bounded(format!("{key}#{short}"));
            let mut candidate = stem.clone();
            let mut n = 2u32;
            while !taken.insert(candidate.clone()) {
                candidate = format!("{stem}-{n}");
                n += 1;
            }
            Some(candidate)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn item(id: Option<&str>, link: Option<&str>, title: Option<&str>) -> feeds::Item {
        feeds::Item {
            id: id.map(str::to_owned),
            link: link.map(str::to_owned),
            title: title.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn links_normalise() {
        let base = Url::parse("https://example.org/blog/feed.xml").unwrap();
        let table: &[(&str, Option<&str>)] = &[
            (
                "https://Example.ORG:443/a?b=1#frag",
                Some("example.org/a?b=1"),
            ),
            ("http://example.org/a", Some("example.org/a")),
            (
                "/post/1?utm_source=rss&utm_medium=x",
                Some("example.org/post/1"),
            ),
            (
                "post/2?id=7&fbclid=zz",
                Some("example.org/blog/post/2?id=7"),
            ),
            ("https://example.org", Some("example.org/")),
            ("mailto:a@example.org", None),
            ("   ", None),
        ];
        for (link, want) in table {
            assert_eq!(
                normalise_link(link, Some(&base)).as_deref(),
                *want,
                "{link:?}"
            );
        }
        assert_eq!(normalise_link("/relative", None), None);
    }

    #[test]
    fn guid_then_link_then_hash_never_content() {
        let base = Url::parse("https://example.org/").unwrap();
        let a = item(Some(" g-1 "), Some("/x"), Some("T"));
        assert_eq!(item_key(&a, Some(&base)).as_deref(), Some("id:g-1"));
        let b = item(None, Some("/x#top"), Some("T"));
        assert_eq!(
            item_key(&b, Some(&base)).as_deref(),
            Some("link:example.org/x")
        );
        let mut c = item(None, None, Some("Title"));
        c.published = Some(datetime!(2026-11-30 05:00 UTC));
        let k = item_key(&c, None).unwrap();
        assert!(k.starts_with("hash:") && k.len() == 5 + 64, "{k}");
        // Content changes do not change the identity; the title does.
        let mut c2 = c.clone();
        c2.summary_text = Some("fixed a typo".into());
        c2.content = Some("<p>new body</p>".into());
        assert_eq!(item_key(&c2, None), Some(k.clone()));
        c2.title = Some("Title 2".into());
        assert_ne!(item_key(&c2, None), Some(k));
        assert_eq!(item_key(&item(None, None, None), None), None);
        let mut only_enclosure = item(None, None, None);
        only_enclosure.enclosures.push(feeds::Enclosure {
            url: "https://example.org/ep1.mp3".into(),
            ..Default::default()
        });
        assert!(item_key(&only_enclosure, None)
            .unwrap()
            .starts_with("hash:"));
    }

    #[test]
    fn long_keys_are_hashed() {
        let long = "g".repeat(5000);
        let k = item_key(&item(Some(&long), None, None), None).unwrap();
        assert!(k.starts_with("h:") && k.len() == 2 + 64);
        let k2 = item_key(&item(Some(&format!("{long}x")), None, None), None).unwrap();
        assert_ne!(k, k2);
    }

    proptest::proptest! {
        #[test]
        fn keys_are_unique_bounded_and_stable(
            raw in proptest::collection::vec(
                (
                    proptest::option::of("[a-c]{0,3}|.{0,400}"),
                    proptest::option::of("(https?://[a-c]\\.example/[a-c]{0,3})|.{0,20}"),
                    proptest::option::of("[a-c]{0,2}"),
                ),
                0..30,
            )
        ) {
            let items: Vec<feeds::Item> = raw
                .iter()
                .map(|(id, link, title)| item(id.as_deref(), link.as_deref(), title.as_deref()))
                .collect();
            let keys = item_keys(&items, None);
            proptest::prop_assert_eq!(keys.len(), items.len());
            let some: Vec<&String> = keys.iter().flatten().collect();
            let unique: HashSet<&String> = some.iter().copied().collect();
            proptest::prop_assert_eq!(unique.len(), some.len());
            for k in &some {
                proptest::prop_assert!(k.len() <= MAX_KEY + 16, "{} bytes", k.len());
            }
            proptest::prop_assert_eq!(item_keys(&items, None), keys);
        }
    }

    #[test]
    fn repeated_ids_are_disambiguated_stably() {
        let items = vec![
            item(Some("same"), None, Some("one")),
            item(Some("same"), None, Some("two")),
            item(Some("same"), None, Some("two")),
            item(Some("other"), None, Some("x")),
            item(None, None, None),
        ];
        let keys = item_keys(&items, None);
        assert_eq!(keys[0].as_deref(), Some("id:same"));
        let k1 = keys[1].clone().unwrap();
        let k2 = keys[2].clone().unwrap();
        assert!(k1.starts_with("id:same#"));
        assert_eq!(k2, format!("{k1}-2"));
        assert_eq!(keys[3].as_deref(), Some("id:other"));
        assert_eq!(keys[4], None);
        assert_eq!(item_keys(&items, None), keys, "same document, same keys");
        let unique: HashSet<_> = keys.iter().flatten().collect();
        assert_eq!(unique.len(), 4);
    }

    #[test]
    fn former_keys_are_the_keys_of_the_former_ids_where_they_differ() {
        let with_former = |id: &str, former: &str, title: &str| feeds::Item {
            former_id: Some(former.to_owned()),
            ..item(Some(id), None, Some(title))
        };
        let plain = vec![item(Some("a"), None, None), item(None, None, Some("t"))];
        let keys = item_keys(&plain, None);
        assert!(former_keys(&plain, None, &keys).is_empty(), "nothing to do");

        let items = vec![
            with_former("http://x/1", "urn:1", "one"),
            item(Some("plain"), None, Some("p")),
            // Two items that shared an identifier: told apart as the earlier release did.
            with_former("http://x/2", "urn:dup", "two"),
            with_former("http://x/3", "urn:dup", "three"),
        ];
        let keys = item_keys(&items, None);
        let former = former_keys(&items, None, &keys);
        assert_eq!(keys[0].as_deref(), Some("id:http://x/1"));
        assert_eq!(former[0].as_deref(), Some("id:urn:1"));
        assert_eq!(former[1], None, "unchanged key");
        assert_eq!(former[2].as_deref(), Some("id:urn:dup"));
        let was: Vec<feeds::Item> = items
            .iter()
            .map(|i| feeds::Item {
                id: i.former_id.clone().or(i.id.clone()),
                former_id: None,
                ..i.clone()
            })
            .collect();
        assert_eq!(former[3], item_keys(&was, None)[3]);
        assert!(former[3].as_deref().unwrap().starts_with("id:urn:dup#"));
    }
}
