//! `maven feeds import FILE.opml` and `maven feeds export`: the configuration's feeds to and
//! from OPML (`feeds::opml`), the blocks written through `feeds_edit`.
//!
//! An import adds every outline with an `xmlUrl` (nested folders read through) whose URL is
//! neither configured already nor listed earlier in the file; each one skipped is named. It
//! fetches nothing: the poller's first fetch of each is the test, and `maven feeds status`
//! says how it went.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use super::feeds_add::{derive_name, valid_name};
use super::feeds_edit;
use crate::exit::{errln, out, outln, EXIT_FAILED, EXIT_USAGE};

/// What an import would add and what it skips, in words.
pub(crate) struct Plan {
    pub(crate) blocks: Vec<(String, String)>,
    pub(crate) skipped: Vec<String>,
}

/// Plans the import of `list` into a file whose feeds are `existing` (name, url).
pub(crate) fn plan(list: &feeds::opml::Opml, existing: &[(String, String)], file: &str) -> Plan {
    let mut taken: Vec<String> = existing.iter().map(|(n, _)| n.clone()).collect();
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut skipped = Vec::new();
    for s in &list.subscriptions {
        let url = s.xml_url.trim();
        let shown_url = shown::line(url);
        if let Some((n, _)) = existing.iter().find(|(_, u)| u == url) {
            skipped.push(format!(
                "{shown_url}: already configured as the feed {:?}",
                shown::line(n)
            ));
            continue;
        }
        if blocks.iter().any(|(_, u)| u == url) {
            skipped.push(format!("{shown_url}: listed more than once in {file}"));
            continue;
        }
        match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => {
                skipped.push(format!("{shown_url}: not an http or https URL"));
                continue;
            }
        }
        let name = derive_name(s.title.as_deref(), url, &taken);
        debug_assert!(valid_name(&name));
        taken.push(name.clone());
        blocks.push((name, url.to_owned()));
    }
    Plan { blocks, skipped }
}

/// `maven feeds import FILE`.
pub(crate) async fn import(config: Option<&Path>, data_dir: &Path, file: &Path) -> ExitCode {
    let shown_file = file.display().to_string();
    let mut bytes = Vec::new();
    let read = std::fs::File::open(file).and_then(|f| {
        f.take(u64::try_from(feeds::opml::MAX_OPML).unwrap_or(u64::MAX) + 1)
            .read_to_end(&mut bytes)
    });
    if let Err(e) = read {
        errln!("maven feeds import: {shown_file}: {e}");
        return ExitCode::from(EXIT_USAGE);
    }
    let list = match feeds::opml::read(&bytes) {
        Ok(l) => l,
        Err(e) => {
            errln!("maven feeds import: {shown_file}: not an OPML list: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let path = super::config_edit::target(config);
    let existing = match feeds_edit::read_file(&path) {
        Ok(f) => feeds_edit::configured_feeds(&f),
        Err(e) => {
            errln!("maven feeds import: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let p = plan(&list, &existing, &shown_file);
    for s in &p.skipped {
        outln!("skipped {s}");
    }
    if p.blocks.is_empty() {
        outln!("no feed to add from {shown_file}");
        return ExitCode::SUCCESS;
    }
    let blocks = p
        .blocks
        .iter()
        .map(|(name, url)| json!({"name": name, "url": url}))
        .collect();
    if let Err(e) = feeds_edit::append_feeds(&path, blocks) {
        errln!("maven feeds import: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    for (name, url) in &p.blocks {
        outln!("added {name}: {}", shown::line(url));
    }
    outln!(
        "{} feeds added to {}, {} skipped",
        p.blocks.len(),
        path.display(),
        p.skipped.len()
    );
    outln!("{}", feeds_edit::reload(data_dir, &path).await);
    ExitCode::SUCCESS
}

/// `maven feeds export`: the configured feeds as OPML 2.0 on stdout.
pub(crate) fn export(config: Option<&Path>) -> ExitCode {
    let Some(cfg) = super::load_config(config) else {
        return ExitCode::from(EXIT_USAGE);
    };
    let subs: Vec<feeds::opml::Subscription> = cfg
        .feeds
        .iter()
        .map(|f| feeds::opml::Subscription {
            title: Some(f.name.clone()),
            xml_url: f.url.clone(),
            html_url: None,
            folders: Vec::new(),
        })
        .collect();
    out!("{}", feeds::opml::write("Maven feeds", &subs));
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_in_the_file_and_the_configuration_are_skipped_and_named() {
        let list = feeds::opml::read(
            br#"<opml version="2.0"><body><outline text="News">
<outline text="LWN" xmlUrl="https://lwn.net/headlines/rss"/>
<outline text="Other" xmlUrl="https://example.org/a.xml"/>
<outline text="Again" xmlUrl="https://example.org/a.xml"/>
<outline text="Bad" xmlUrl="ftp://example.org/x"/>
<outline text="lwn" xmlUrl="https://lwn.net/other"/>
</outline></body></opml>"#,
        )
        .unwrap();
        let existing = vec![("lwn".to_owned(), "https://lwn.net/headlines/rss".to_owned())];
        let p = plan(&list, &existing, "subs.opml");
        assert_eq!(
            p.blocks,
            [
                ("other".to_owned(), "https://example.org/a.xml".to_owned()),
                ("lwn-2".to_owned(), "https://lwn.net/other".to_owned())
            ]
        );
        assert_eq!(
            p.skipped,
            [
                "https://lwn.net/headlines/rss: already configured as the feed \"lwn\"",
                "https://example.org/a.xml: listed more than once in subs.opml",
                "ftp://example.org/x: not an http or https URL"
            ]
        );
    }
}
