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

/// A path and its answer: status, content type, body.
type Routes = Arc<Mutex<Vec<(String, u16, String, String)>>>;

/// A loopback site for `maven feeds add`: each path answers its status, content type and
/// body (anything else 404), one request per connection.
struct Site {
    base: String,
    routes: Routes,
}

impl Site {
    #[expect(
        clippy::disallowed_methods,
        reason = "a test peer, not a door of Maven's"
    )]
    fn start() -> Site {
        use std::io::Write;
        let routes: Routes = Arc::default();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let r = routes.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let head = crate::support::read_head(&mut conn);
                let head = String::from_utf8_lossy(&head);
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                let found = r
                    .lock()
                    .unwrap()
                    .iter()
                    .find(|(p, ..)| *p == path)
                    .map(|(_, s, ct, b)| (*s, ct.clone(), b.clone()));
                let (status, ct, body) =
                    found.unwrap_or((404, "text/plain".into(), "not found".into()));
                let resp = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(resp.as_bytes());
            }
        });
        Site { base, routes }
    }

    fn route(&self, path: &str, status: u16, ct: &str, body: &str) -> String {
        self.routes
            .lock()
            .unwrap()
            .push((path.into(), status, ct.into(), body.into()));
        format!("{}{path}", self.base)
    }
}

/// `maven` with this home's data directory and config file, whether the file exists or not.
fn run_with_config(home: &Home, args: &[&str]) -> std::process::Output {
    maven()
        .arg("--data")
        .arg(home.data())
        .arg("--config")
        .arg(home.config())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn configured(home: &Home) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&std::fs::read(home.config()).unwrap()).unwrap();
    v["feeds"].as_array().cloned().unwrap_or_default()
}

fn titled_rss(title: &str) -> String {
    rss(1, 3).replacen("<title>T</title>", &format!("<title>{title}</title>"), 1)
}

#[test]
fn feeds_add_takes_a_feed_or_the_feed_a_page_links_to_and_refuses_what_is_not_one() {
    let site = Site::start();
    let feed = site.route(
        "/feed.xml",
        200,
        "application/rss+xml",
        &titled_rss("Loopback News"),
    );
    let _ = site.route("/blog/atom.xml", 200, "application/atom+xml",
        r#"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title><id>urn:x</id><updated>2026-11-30T05:00:00Z</updated><entry><id>urn:1</id><title>One</title><updated>2026-11-30T05:00:00Z</updated></entry></feed>"#);
    let page = site.route("/blog/index.html", 200, "text/html; charset=utf-8",
        r#"<!doctype html><html><head><title>Blog</title><link rel="stylesheet" href="/s.css"><link rel="alternate" type="application/atom+xml" title="Blog" href="atom.xml"><link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body>hi</body></html>"#);
    let bare = site.route(
        "/bare.html",
        200,
        "text/html",
        "<html><head><title>x</title></head><body>no feeds</body></html>",
    );
    let _ = site.route(
        "/fake.xml",
        200,
        "text/html",
        "<html><body>moved</body></html>",
    );
    let lying = site.route("/lying.html", 200, "text/html",
        r#"<html><head><link rel="alternate" type="application/rss+xml" href="/fake.xml"></head></html>"#);
    let junk = site.route("/junk", 200, "text/plain", "just words");
    let home = Home::new();

    // A loopback address is refused without --allow-private, with the reason and the fix.
    let out = run_with_config(&home, &["feeds", "add", &feed]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{feed} was refused"))
            && err.contains("loopback")
            && err.contains("--allow-private")
            && err.contains("widen its door (allow_private on the block"),
        "{err}"
    );
    assert!(!home.config().exists(), "nothing written on a refusal");

    // A feed URL: fetched, parsed, named after its title; the file is created.
    let out = run_with_config(&home, &["feeds", "add", &feed, "--allow-private"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("added the feed loopback-news"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("no daemon is running"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        configured(&home),
        [json!({"name": "loopback-news", "url": feed, "allow_private": true})]
    );

    // A page: its <link rel="alternate"> is followed, the relative href resolved.
    let out = run_with_config(
        &home,
        &["feeds", "add", &page, "--allow-private", "--name", "blog"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "the page names other feeds too (add each with `maven feeds add URL`): {feed}"
        )),
        "{}",
        stdout(&out)
    );
    let feeds = configured(&home);
    assert_eq!(feeds[1]["name"], "blog");
    assert_eq!(feeds[1]["url"], format!("{}/blog/atom.xml", site.base));
    assert!(home.dir.path().join("config.json.bak").exists());
    let check = run_with_config(&home, &["config", "check"]);
    assert!(check.status.success(), "{}", stderr(&check));

    let before = std::fs::read(home.config()).unwrap();
    let refuse = |args: &[&str], code: i32, words: &str| {
        let out = run_with_config(&home, args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(words), "{args:?}: {}", stderr(&out));
        assert_eq!(
            std::fs::read(home.config()).unwrap(),
            before,
            "{args:?} wrote the file"
        );
    };
    refuse(
        &["feeds", "add", &bare, "--allow-private"],
        1,
        &format!("{bare} is an HTML page with no <link rel=\"alternate\"> to a feed"),
    );
    refuse(
        &["feeds", "add", &lying, "--allow-private"],
        1,
        &format!(
            "{}/fake.xml (the feed {lying} names) answers an HTML page, not a feed",
            site.base
        ),
    );
    refuse(
        &["feeds", "add", &junk, "--allow-private"],
        1,
        &format!("{junk} is not a feed"),
    );
    // Duplicates: the same URL (given, or found on a page), the same name.
    refuse(
        &["feeds", "add", &feed, "--allow-private"],
        1,
        "is already configured as the feed \"loopback-news\"",
    );
    refuse(
        &["feeds", "add", &page, "--allow-private"],
        1,
        "is already configured as the feed \"blog\"",
    );
    let other = site.route(
        "/other.xml",
        200,
        "application/rss+xml",
        &titled_rss("Other"),
    );
    refuse(
        &["feeds", "add", &other, "--allow-private", "--name", "blog"],
        1,
        "a feed named \"blog\" is already in",
    );
    refuse(
        &["feeds", "add", &other, "--name", "no spaces"],
        2,
        "--name no spaces",
    );
}

#[test]
fn import_skips_and_names_duplicates_and_export_round_trips_through_a_real_xml_parser() {
    let home = Home::new();
    home.write_config(
        &json!({"feeds": [{"name": "lwn", "url": "https://lwn.net/headlines/rss"}]}).to_string(),
    );
    let opml = home.dir.path().join("subs.opml");
    std::fs::write(
        &opml,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE opml [<!ENTITY boom "boom">]>
<opml version="2.0"><head><title>Mine</title></head><body>
  <outline text="Linux">
    <outline type="rss" text="LWN again" xmlUrl="https://lwn.net/headlines/rss"/>
    <outline text="Kernel">
      <outline type="rss" text="Kernel &amp; friends &boom;" xmlUrl="https://example.org/kernel.xml?a=1&amp;b=2"/>
    </outline>
  </outline>
  <outline type="rss" text="Kernel twice" xmlUrl="https://example.org/kernel.xml?a=1&amp;b=2"/>
  <outline type="rss" text="Новости" xmlUrl="https://example.org/новости.xml"/>
</body></opml>"#,
    )
    .unwrap();
    let out = home.run(&["feeds", "import", opml.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains(
            "skipped https://lwn.net/headlines/rss: already configured as the feed \"lwn\""
        ) && said.contains(&format!(
            "skipped https://example.org/kernel.xml?a=1&b=2: listed more than once in {}",
            opml.display()
        )) && said.contains("2 feeds added"),
        "{said}"
    );
    let names: Vec<Value> = configured(&home)
        .iter()
        .map(|f| f["name"].clone())
        .collect();
    assert_eq!(
        names,
        [
            json!("lwn"),
            json!("kernel-friends-boom"),
            // A title in another script is spelled in ASCII, not replaced by the host.
            json!("novosti")
        ]
    );

    // A malformed list: the file and the position named, nothing written.
    let bad = home.dir.path().join("bad.opml");
    std::fs::write(
        &bad,
        "<opml><body>\n<outline xmlUrl=\"https://e.org/\">\n</body></opml>",
    )
    .unwrap();
    let before = std::fs::read(home.config()).unwrap();
    let out = home.run(&["feeds", "import", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "{}: not an OPML list: line 3, column",
            bad.display()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(home.config()).unwrap(), before);

    // The export is well-formed XML to another parser, and reads back through the import.
    let out = home.run(&["feeds", "export"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let exported = home.dir.path().join("out.opml");
    std::fs::write(&exported, &out.stdout).unwrap();
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, xml.etree.ElementTree as ET\n\
             r = ET.parse(sys.argv[1]).getroot()\n\
             assert r.tag == 'opml' and r.get('version') == '2.0'\n\
             for o in r.iter('outline'): print(o.get('text') + ' ' + o.get('xmlUrl'))",
        )
        .arg(&exported)
        .output()
        .expect("python3 runs");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&py.stdout),
        "lwn https://lwn.net/headlines/rss\n\
         kernel-friends-boom https://example.org/kernel.xml?a=1&b=2\n\
         novosti https://example.org/новости.xml\n"
    );
    let fresh = Home::new();
    fresh.write_config("{}");
    let out = fresh.run(&["feeds", "import", exported.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = fresh.run(&["feeds", "export"]);
    assert_eq!(stdout(&again), String::from_utf8_lossy(&out_of(&home)));
}

fn out_of(home: &Home) -> Vec<u8> {
    home.run(&["feeds", "export"]).stdout
}

#[test]
fn refresh_polls_now_and_a_new_item_appears_without_waiting_for_the_schedule() {
    let home = Home::new();
    let out = home.run(&["feeds", "refresh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no maven daemon is running"),
        "{}",
        stderr(&out)
    );

    let server = Feed::start(200, rss(1, 5));
    home.write_config(
        &json!({"feed_min_interval": "1s", "feeds": [
            {"name": "news", "url": server.url, "interval": "1h", "allow_private": true}
        ]})
        .to_string(),
    );
    let _d = home.start();
    let refresh = |h: &Home| {
        let out = h.run(&["feeds", "refresh", "news"]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    wait_until(&home, "the baseline is noted", |h| {
        refresh(h);
        noted(h, "news") == 3
    });
    // The next scheduled poll is an hour away: only a refresh can note the new item.
    server.set(rss(1, 6));
    let mut said = String::new();
    wait_until(&home, "a refresh polls", |h| {
        said = refresh(h);
        // Within a second of the last poll the host's spacing holds the feed back, and says so.
        assert!(
            said.starts_with("news: polled")
                || said.contains("news: not polled: its host was asked"),
            "{said}"
        );
        said.starts_with("news: polled")
    });
    assert_eq!(said.trim(), "news: polled, 1 new");
    assert_eq!(noted(&home, "news"), 4);

    // An added feed asks the running daemon to reload (a daemon without `reload` says how to
    // apply it).
    let other = Feed::start(200, rss(1, 2));
    let out = home.run(&[
        "feeds",
        "add",
        &other.url,
        "--allow-private",
        "--name",
        "other",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("the running daemon reloaded its configuration")
            || said.contains("restart the daemon to apply it"),
        "{said}"
    );
    let out = home.run(&["feeds", "refresh", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no feed named \"nope\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_digest_names_failing_feeds_and_a_note_shows_its_published_time() {
    let ok = Feed::start(200, rss(1, 5));
    let broken = Feed::start(500, String::new());
    let home = Home::new();
    let mut cfg: Value = serde_json::from_str(&config(&[
        ("ok", &ok.url, true),
        ("broken", &broken.url, true),
    ]))
    .unwrap();
    cfg["feeds"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "local", "url": ok.url, "interval": "1s"}));
    home.write_config(&cfg.to_string());
    let _d = home.start();
    wait_until(&home, "every feed polled", |h| {
        let rows = feeds_status(h);
        noted(h, "ok") == 3
            && rows[1]["last_error"].is_string()
            && rows[2]["last_error"].is_string()
    });
    let out = home.run(&["say", "news"]);
    let said = stdout(&out);
    assert!(said.starts_with("ok (3 new):"), "{said}");
    assert!(
        said.contains("Failing: broken (http status 500 Internal Server Error")
            && said.contains("local (refused"),
        "{said}"
    );
    let out = home.run(&["say", "что", "нового"]);
    assert!(
        stdout(&out).contains("Не обновляются: broken (http status 500"),
        "{}",
        stdout(&out)
    );

    // `feeds status` gives the refused feed doctor's fix.
    let text = stdout(&home.run(&["feeds", "status"]));
    assert!(
        text.contains("fix: change the URL of the feed \"local\", or widen its door (allow_private on the block, fetch.allow_hosts / fetch.deny_hosts) if the address is yours"),
        "{text}"
    );
    let fix_lines = text.lines().filter(|l| l.contains("fix:")).count();
    assert_eq!(fix_lines, 1, "{text}");

    // Each note carries its item's pubDate; `maven notes` shows it.
    let notes = home.json(&["notes", "--json", "--source", "rss:ok"]);
    let now = time::OffsetDateTime::now_utc();
    for n in notes.as_array().unwrap() {
        let i: i64 = n["key"]
            .as_str()
            .unwrap()
            .trim_start_matches("id:g")
            .parse()
            .unwrap();
        let published = time::OffsetDateTime::parse(
            n["published"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        let want = now - time::Duration::days(100 - i);
        assert!(
            (published - want).abs() < time::Duration::minutes(10),
            "{n}"
        );
    }
    let text = stdout(&home.run(&["notes", "--source", "rss:ok"]));
    assert!(text.starts_with("[published 20"), "{text}");
}

#[test]
fn with_no_feed_configured_the_digest_says_how_to_add_one() {
    let home = Home::new();
    home.write_config("{}");
    let _d = home.start();
    let out = home.run(&["say", "news"]);
    assert!(
        stdout(&out).starts_with("You have no feeds yet. Add one with `maven feeds add URL`"),
        "{}",
        stdout(&out)
    );
}
