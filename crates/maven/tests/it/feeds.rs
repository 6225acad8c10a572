//! The feed poller inside a real daemon process: F-8 (no enabled feed, no task), restarts
//! between polls, a kill -9 in the middle of writing a batch, and `maven feeds status`.
//!
//! The feeds are served by a scripted HTTP/1.1 responder on 127.0.0.1; every feed pointing at
//! it has `allow_private`. `feed_min_interval` is lowered to "1s". Tests wait for states
//! (notes counted, polls served), never for durations.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{maven, serve_feed, stderr, Daemon, Home};

/// What the responder serves: a status and a body, and how many requests it answered.
#[derive(Default)]
struct Script {
    status: u16,
    body: String,
    served: usize,
}

/// A loopback responder: one request per connection, answered from the shared script.
struct Feed {
    url: String,
    script: Arc<Mutex<Script>>,
}

impl Feed {
    fn start(status: u16, body: String) -> Feed {
        let script = Arc::new(Mutex::new(Script {
            status,
            body,
            served: 0,
        }));
        let s = script.clone();
        let url = serve_feed(move || {
            let mut g = s.lock().unwrap();
            g.served += 1;
            (g.status, g.body.clone())
        });
        Feed { url, script }
    }

    fn set(&self, body: String) {
        self.script.lock().unwrap().body = body;
    }

    fn served(&self) -> usize {
        self.script.lock().unwrap().served
    }
}

/// RSS with items `g<from>`..`g<to>` (higher = newer), dated a day apart.
fn rss(from: u32, to: u32) -> String {
    let now = time::OffsetDateTime::now_utc();
    let mut s = String::from(
        r#"<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.org/</link>"#,
    );
    for i in (from..=to).rev() {
        let d = (now - time::Duration::days(i64::from(100 - i)))
            .format(&time::format_description::well_known::Rfc2822)
            .unwrap();
        s.push_str(&format!(
            "<item><guid>g{i}</guid><title>Item {i}</title><description>Body {i}</description><link>https://example.org/{i}</link><pubDate>{d}</pubDate></item>"
        ));
    }
    s.push_str("</channel></rss>");
    s
}

fn config(feeds: &[(&str, &str, bool)]) -> String {
    let feeds: Vec<Value> = feeds
        .iter()
        .map(|(name, url, enabled)| {
            json!({"name": name, "url": url, "interval": "1s", "enabled": enabled, "allow_private": true})
        })
        .collect();
    json!({"feed_min_interval": "1s", "feeds": feeds}).to_string()
}

/// Starts a daemon with extra environment and waits until it answers.
fn start_with_env(home: &Home, env: &[(&str, &Path)]) -> Daemon {
    let mut c = maven();
    c.arg("--data")
        .arg(home.data())
        .arg("--config")
        .arg(home.config());
    for (k, v) in env {
        c.env(k, v);
    }
    let child = c
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut d = Daemon { child: Some(child) };
    wait_until(home, "the daemon answers", |_| {
        assert!(
            d.child.as_mut().unwrap().try_wait().unwrap().is_none(),
            "the daemon exited early"
        );
        home.data().join("maven.sock").exists() && home.run(&["status", "--json"]).status.success()
    });
    d
}

/// Polls `cond` (with the feeds status) until it holds, for at most 60 s.
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn wait_until(home: &Home, what: &str, mut cond: impl FnMut(&Home) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond(home) {
        assert!(Instant::now() < deadline, "not within 60 s: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn feeds_status(home: &Home) -> Vec<Value> {
    home.json(&["feeds", "status", "--json"])
        .as_array()
        .unwrap()
        .clone()
}

fn noted(home: &Home, name: &str) -> u64 {
    feeds_status(home)
        .iter()
        .find(|f| f["name"] == name)
        .and_then(|f| f["items_noted"].as_u64())
        .unwrap_or(0)
}

/// Every note key of a feed; asserts there are no duplicates.
fn note_keys(home: &Home, name: &str) -> Vec<String> {
    let notes = home.json(&[
        "notes",
        "--json",
        "--limit",
        "1000",
        "--source",
        &format!("rss:{name}"),
    ]);
    let mut keys: Vec<String> = notes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["key"].as_str().unwrap().to_owned())
        .collect();
    keys.sort();
    let before = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), before, "duplicate notes: {notes}");
    keys
}

#[test]
fn no_enabled_feed_means_no_poller_and_no_request() {
    let server = Feed::start(200, rss(1, 5));
    let home = Home::new();
    home.write_config(&config(&[("dark", &server.url, false)]));
    let d = home.start();
    let rows = feeds_status(&home);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["name"], "dark");
    assert_eq!(rows[0]["enabled"], false);
    assert_eq!(rows[0]["next_poll"], Value::Null);
    let out = d.signal("-TERM");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("feed poller started"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.served(), 0);
}

#[test]
fn restart_between_polls_notes_nothing_twice() {
    let server = Feed::start(200, rss(1, 10));
    let home = Home::new();
    home.write_config(&config(&[("news", &server.url, true)]));
    let d = home.start();
    wait_until(&home, "the baseline is noted", |h| noted(h, "news") == 3);
    assert_eq!(note_keys(&home, "news"), ["id:g10", "id:g8", "id:g9"]);

    server.set(rss(1, 12));
    wait_until(&home, "two new items are noted", |h| noted(h, "news") == 5);
    let out = d.signal("-TERM");
    assert!(out.status.success(), "{}", stderr(&out));

    // While the daemon is down one more item appears; after the restart it is noted once,
    // and nothing noted before is noted again, however many polls follow.
    server.set(rss(1, 13));
    let before = server.served();
    let _d = home.start();
    wait_until(&home, "three polls after the restart", |_| {
        server.served() >= before + 3
    });
    assert_eq!(noted(&home, "news"), 6);
    let keys = note_keys(&home, "news");
    assert_eq!(
        keys,
        ["id:g10", "id:g11", "id:g12", "id:g13", "id:g8", "id:g9"]
    );
    let st = &feeds_status(&home)[0];
    assert_eq!(
        st["state"]
            .as_str()
            .map(|s| s == "scheduled" || s == "polling"),
        Some(true)
    );
    assert!(st["last_success"].as_str().unwrap().ends_with('Z'));
    assert_eq!(st["last_error"], Value::Null);
}

#[test]
fn kill_9_while_a_batch_is_being_written_loses_and_duplicates_nothing() {
    let server = Feed::start(200, rss(1, 10));
    let home = Home::new();
    home.write_config(&config(&[("news", &server.url, true)]));
    let hold = home.dir.path().join("hold");
    let held = home.dir.path().join("hold.held");
    let d = start_with_env(&home, &[("MAVEN_TEST_FEED_COMMIT_HOLD", &hold)]);
    wait_until(&home, "the baseline is noted", |h| noted(h, "news") == 3);

    // Hold the next batch right before its transaction, with new items in it, and kill -9.
    std::fs::write(&hold, b"").unwrap();
    server.set(rss(1, 14));
    wait_until(&home, "a batch is held before its commit", |_| {
        held.exists()
    });
    let out = d.signal("-KILL");
    assert!(!out.status.success());
    std::fs::remove_file(&hold).unwrap();

    let before = server.served();
    let _d = start_with_env(&home, &[("MAVEN_TEST_FEED_COMMIT_HOLD", &hold)]);
    wait_until(&home, "the new items are noted after the restart", |h| {
        noted(h, "news") == 7
    });
    wait_until(&home, "two more polls", |_| server.served() >= before + 3);
    assert_eq!(noted(&home, "news"), 7);
    assert_eq!(
        note_keys(&home, "news"),
        ["id:g10", "id:g11", "id:g12", "id:g13", "id:g14", "id:g8", "id:g9"]
    );
}

#[test]
fn feeds_status_shows_a_gone_feed_and_status_carries_the_same_rows() {
    let ok = Feed::start(200, rss(1, 4));
    let gone = Feed::start(410, String::new());
    let home = Home::new();
    home.write_config(&config(&[("ok", &ok.url, true), ("gone", &gone.url, true)]));
    let _d = home.start();
    wait_until(&home, "both feeds were polled", |h| {
        let rows = feeds_status(h);
        rows[0]["last_success"].is_string() && rows[1]["state"] == "disabled"
    });
    let rows = feeds_status(&home);
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        &keys[..7],
        [
            "name",
            "url",
            "enabled",
            "last_success",
            "last_error",
            "next_poll",
            "items_noted"
        ]
    );
    assert_eq!(rows[0]["items_noted"], 3);
    assert!(rows[0]["next_poll"].as_str().unwrap().ends_with('Z'));
    assert_eq!(rows[1]["enabled"], false);
    assert_eq!(rows[1]["next_poll"], Value::Null);
    assert!(
        rows[1]["last_error"]
            .as_str()
            .unwrap()
            .starts_with("410 Gone"),
        "{}",
        rows[1]
    );
    assert_eq!(gone.served(), 1, "a gone feed is asked once");

    let status = home.json(&["status", "--json"]);
    assert_eq!(status["feeds"].as_array().unwrap().len(), 2);
    assert_eq!(status["feeds"][1]["state"], "disabled");
    let human = home.run(&["feeds", "status"]);
    assert!(human.status.success());
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("disabled") && text.contains("error: 410 Gone"),
        "{text}"
    );
}

/// T-1/F-7: after a poll of a loopback feed, "what's new in my feeds?" answers from its notes,
/// once; the next new item comes in the next digest.
#[test]
fn the_feeds_digest_answers_from_a_polled_feed() {
    let home = Home::new();
    let feed = Feed::start(200, rss(1, 5));
    home.write_config(&config(&[("news", &feed.url, true)]));
    let d = home.start();
    wait_until(&home, "the baseline noted", |h| noted(h, "news") == 3);
    let say = |text: &str| {
        let mut args = vec!["say"];
        args.extend(text.split(' '));
        let out = home.run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let answer = say("what's new in my feeds?");
    assert!(answer.starts_with("news (3 new):"), "{answer}");
    assert!(
        answer.contains("Item 5") && answer.contains("Item 3") && !answer.contains("Item 2"),
        "{answer}"
    );
    assert!(
        answer.find("Item 5") < answer.find("Item 3"),
        "newest first: {answer}"
    );
    assert_eq!(
        say("что нового в лентах?"),
        "В лентах ничего нового с тех пор, как вы спрашивали."
    );
    feed.set(rss(1, 6));
    wait_until(&home, "the new item noted", |h| noted(h, "news") == 4);
    let answer = say("news");
    assert!(
        answer.starts_with("news (1 new):") && answer.contains("Item 6"),
        "{answer}"
    );
    drop(d);
}
