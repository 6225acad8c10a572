//! The gofeed conformance corpus, mapped onto our model.
//!
//! Each fixture pairs an input with the parse gofeed expects in one of its models (RSS, Atom,
//! JSON Feed, or its "universal" translation). We map the core fields of that model (feed title
//! and link; items' count, title, link, guid/id, dates, description/summary, content, authors)
//! onto ours and compare only what the expectation states. `gofeed_known_differences.txt` lists
//! the fixtures we knowingly read differently, each with a reason; the test fails on any other
//! failure and on a listed fixture that starts passing.

use feeds::{html_to_text, Feed, Hints, Item};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/gofeed/testdata"
);
const KNOWN: &str = include_str!("gofeed_known_differences.txt");

#[derive(Clone, Copy)]
enum Model {
    Rss,
    Atom,
    Json,
    Universal,
}

fn cases() -> Vec<(PathBuf, PathBuf, Model)> {
    let mut out = Vec::new();
    let dirs = [
        ("parser/rss", Model::Rss),
        ("parser/atom", Model::Atom),
        ("parser/json", Model::Json),
        ("translator/rss", Model::Universal),
        ("translator/atom", Model::Universal),
        ("translator/json", Model::Universal),
    ];
    for (dir, model) in dirs {
        let dir = Path::new(CORPUS).join(dir);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("gofeed corpus missing at {}: {e}", dir.display()));
        let mut names: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        names.sort();
        for input in names {
            let name = input.file_name().unwrap().to_string_lossy().into_owned();
            let expected = if let Some(stem) = name.strip_suffix(".xml") {
                input.with_file_name(format!("{stem}.json"))
            } else if let Some(stem) = name.strip_suffix(".json") {
                if stem.ends_with("_expected") {
                    continue;
                }
                input.with_file_name(format!("{stem}_expected.json"))
            } else {
                continue;
            };
            if expected.exists() {
                out.push((input, expected, model));
            }
        }
    }
    out
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text equality across the HTML/plain-text divide: equal as written, or equal once both are
/// rendered as plain text.
fn text_matches(ours: Option<&str>, theirs: &str) -> bool {
    let Some(ours) = ours else {
        return norm(theirs).is_empty();
    };
    norm(ours) == norm(theirs)
        || norm(ours) == norm(&html_to_text(theirs))
        || norm(&html_to_text(ours)) == norm(theirs)
        || norm(&html_to_text(ours)) == norm(&html_to_text(theirs))
}

fn s(v: &Value) -> Option<&str> {
    v.as_str()
}

struct Check {
    problems: Vec<String>,
}

impl Check {
    fn text(&mut self, what: &str, ours: Option<&str>, theirs: Option<&Value>) {
        if let Some(t) = theirs.and_then(s) {
            if !text_matches(ours, t) {
                self.problems
                    .push(format!("{what}: ours {ours:?}, theirs {t:?}"));
            }
        }
    }

    fn eq(&mut self, what: &str, ours: Option<&str>, theirs: Option<&Value>) {
        if let Some(t) = theirs.and_then(s) {
            if ours.map(str::trim) != Some(t.trim()) {
                self.problems
                    .push(format!("{what}: ours {ours:?}, theirs {t:?}"));
            }
        }
    }

    fn date(&mut self, what: &str, ours: Option<time::OffsetDateTime>, theirs: Option<&Value>) {
        if let Some(t) = theirs.and_then(s) {
            let want =
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok();
            if ours != want {
                self.problems
                    .push(format!("{what}: ours {ours:?}, theirs {t:?}"));
            }
        }
    }

    /// Their author names (and e-mails) must each be found among ours.
    fn authors(
        &mut self,
        what: &str,
        item_authors: &[feeds::Person],
        theirs: &[(Option<String>, Option<String>)],
    ) {
        for (name, email) in theirs {
            let found = item_authors.iter().any(|a| {
                name.as_deref()
                    .is_none_or(|n| a.name.as_deref().map(norm) == Some(norm(n)))
                    && email
                        .as_deref()
                        .is_none_or(|e| a.email.as_deref() == Some(e.trim()))
            });
            if !found {
                self.problems.push(format!(
                    "{what}: missing author {name:?} <{email:?}> in {item_authors:?}"
                ));
            }
        }
    }
}

fn person_list(v: Option<&Value>) -> Vec<(Option<String>, Option<String>)> {
    v.and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|p| {
                    (
                        p.get("name").and_then(s).map(String::from),
                        p.get("email").and_then(s).map(String::from),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn check_item(c: &mut Check, i: usize, ours: &Item, t: &Value, model: Model) {
    let w = |f: &str| format!("items[{i}].{f}");
    c.text(&w("title"), ours.title.as_deref(), t.get("title"));
    match model {
        Model::Rss => {
            c.eq(&w("link"), ours.link.as_deref(), t.get("link"));
            c.eq(
                &w("guid"),
                ours.id.as_deref(),
                t.get("guid").and_then(|g| g.get("value")),
            );
            c.text(
                &w("description"),
                ours.summary.as_deref(),
                t.get("description"),
            );
            c.text(&w("content"), ours.content.as_deref(), t.get("content"));
            c.date(&w("pubDate"), ours.published, t.get("pubDateParsed"));
            if let Some(a) = t.get("author").and_then(s) {
                let a = html_to_text(a);
                let ok = ours.authors.first().is_some_and(|p| {
                    p.name.as_deref().is_none_or(|n| a.contains(n))
                        && p.email.as_deref().is_none_or(|e| a.contains(e))
                });
                if !ok {
                    c.problems.push(format!(
                        "{}: ours {:?}, theirs {a:?}",
                        w("author"),
                        ours.authors
                    ));
                }
            }
        }
        Model::Atom => {
            if let Some(links) = t.get("links").and_then(Value::as_array) {
                let theirs: Vec<&str> = links
                    .iter()
                    .filter_map(|l| l.get("href").and_then(s))
                    .collect();
                let mine: Vec<&str> = ours.links.iter().map(|l| l.href.as_str()).collect();
                if theirs != mine {
                    c.problems
                        .push(format!("{}: ours {mine:?}, theirs {theirs:?}", w("links")));
                }
            }
            c.eq(&w("id"), ours.id.as_deref(), t.get("id"));
            c.text(
                &w("summary"),
                ours.summary.as_deref(),
                t.get("summary").and_then(|v| v.get("value")),
            );
            c.text(
                &w("content"),
                ours.content.as_deref(),
                t.get("content").and_then(|v| v.get("value")),
            );
            c.date(&w("published"), ours.published, t.get("publishedParsed"));
            c.date(&w("updated"), ours.updated, t.get("updatedParsed"));
            c.authors(&w("authors"), &ours.authors, &person_list(t.get("authors")));
        }
        Model::Json => {
            c.eq(&w("id"), ours.id.as_deref(), t.get("id"));
            c.eq(&w("url"), ours.link.as_deref(), t.get("url"));
            c.text(&w("summary"), ours.summary.as_deref(), t.get("summary"));
            c.text(
                &w("content_html"),
                ours.content.as_deref(),
                t.get("content_html"),
            );
            c.text(
                &w("content_text"),
                ours.content_text.as_deref(),
                t.get("content_text"),
            );
            c.authors(&w("authors"), &ours.authors, &person_list(t.get("authors")));
        }
        Model::Universal => {
            c.eq(&w("link"), ours.link.as_deref(), t.get("link"));
            c.eq(&w("guid"), ours.id.as_deref(), t.get("guid"));
            c.text(
                &w("description"),
                ours.summary.as_deref(),
                t.get("description"),
            );
            c.text(&w("content"), ours.content.as_deref(), t.get("content"));
            c.date(&w("published"), ours.published, t.get("publishedParsed"));
            c.date(&w("updated"), ours.updated, t.get("updatedParsed"));
            c.authors(&w("authors"), &ours.authors, &person_list(t.get("authors")));
        }
    }
}

fn check(feed: &Feed, want: &Value, model: Model) -> Vec<String> {
    let mut c = Check {
        problems: Vec::new(),
    };
    c.text("title", feed.title.as_deref(), want.get("title"));
    match model {
        Model::Rss | Model::Universal => c.eq("link", feed.link.as_deref(), want.get("link")),
        Model::Json => c.eq(
            "home_page_url",
            feed.link.as_deref(),
            want.get("home_page_url"),
        ),
        Model::Atom => {
            if let Some(links) = want.get("links").and_then(Value::as_array) {
                let theirs: Vec<&str> = links
                    .iter()
                    .filter_map(|l| l.get("href").and_then(s))
                    .collect();
                let mine: Vec<&str> = feed.links.iter().map(|l| l.href.as_str()).collect();
                if theirs != mine {
                    c.problems
                        .push(format!("links: ours {mine:?}, theirs {theirs:?}"));
                }
            }
        }
    }
    let items = want
        .get("items")
        .or_else(|| want.get("entries"))
        .and_then(Value::as_array);
    let items: &[Value] = items.map_or(&[], Vec::as_slice);
    if items.len() != feed.items.len() {
        c.problems.push(format!(
            "item count: ours {}, theirs {}",
            feed.items.len(),
            items.len()
        ));
        return c.problems;
    }
    for (i, (ours, theirs)) in feed.items.iter().zip(items).enumerate() {
        check_item(&mut c, i, ours, theirs, model);
    }
    c.problems
}

#[test]
fn gofeed_corpus() {
    let known: BTreeMap<&str, &str> = KNOWN
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.split_once(char::is_whitespace)
                .map_or((l, ""), |(p, r)| (p, r.trim()))
        })
        .collect();
    for (path, reason) in &known {
        assert!(
            !reason.is_empty(),
            "{path}: a known difference needs a reason"
        );
    }
    let (mut passed, mut failed) = (0, 0);
    let mut regressions = Vec::new();
    let mut now_passing = Vec::new();
    let mut seen = Vec::new();
    for (input, expected, model) in cases() {
        let rel = input
            .strip_prefix(CORPUS)
            .unwrap()
            .to_string_lossy()
            .trim_start_matches('/')
            .to_owned();
        let bytes = std::fs::read(&input).unwrap();
        let want: Value = serde_json::from_slice(&std::fs::read(&expected).unwrap()).unwrap();
        let problems = match feeds::parse(&bytes, &Hints::default()) {
            Ok(feed) => check(&feed, &want, model),
            Err(e) => vec![format!("not a feed: {e}")],
        };
        let is_known = known.contains_key(rel.as_str());
        seen.push(rel.clone());
        if problems.is_empty() {
            passed += 1;
            if is_known {
                now_passing.push(rel);
            }
        } else {
            failed += 1;
            if !is_known {
                regressions.push(format!("{rel}:\n    {}", problems.join("\n    ")));
            }
        }
    }
    println!(
        "gofeed corpus: {passed} passed, {failed} failed ({} known differences)",
        known.len()
    );
    let stale: Vec<_> = known
        .keys()
        .filter(|k| !seen.iter().any(|s| s == *k))
        .collect();
    assert!(
        stale.is_empty(),
        "known differences that are not in the corpus: {stale:?}"
    );
    assert!(
        regressions.is_empty(),
        "{} unexpected failures:\n{}",
        regressions.len(),
        regressions.join("\n")
    );
    assert!(
        now_passing.is_empty(),
        "now passing, remove from gofeed_known_differences.txt: {now_passing:?}"
    );
}
