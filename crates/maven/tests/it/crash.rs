//! Crash consistency: a real daemon is killed with SIGKILL at seeded-random points while a
//! loopback feed grows under it (notes being written) and its MCP server's tool list changes
//! between runs (rows proposed, redefined, withdrawn, re-offered), with the owner enabling and
//! disabling rows between runs. After every kill the store is opened directly and checked:
//!
//! - no duplicate note (keys counted against distinct keys) and no note the feed never
//!   published;
//! - no lost acknowledged note: every note `maven notes --json` showed before the kill is
//!   still there;
//! - no row in an impossible state: identities and names unique, an enabled row was enabled by
//!   the owner and carries its approved shape, destructive never lowered;
//! - `tool_events` consistent with `tools`: each row's trail starts with its creation, every
//!   event starts where the previous one ended, and the last one ends in the row's state.
//!
//! `MAVEN_CRASH_ROUNDS` (default 10) sets the number of kills, `MAVEN_CRASH_SEED` the seed
//! (printed, so a failure can be replayed).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::invariants::{block_on, check_rows, env_or, Rng};
use crate::support::{eventually, serve_feed, testkit_mcp, Daemon, Home};

/// A loopback RSS feed that publishes one more item on every request.
struct GrowingFeed {
    url: String,
    published: Arc<Mutex<u32>>,
}

impl GrowingFeed {
    fn start() -> GrowingFeed {
        let published = Arc::new(Mutex::new(3u32));
        let p = published.clone();
        let url = serve_feed(move || {
            let n = {
                let mut g = p.lock().unwrap();
                *g += 1;
                *g
            };
            (200, rss(n.saturating_sub(19).max(1), n))
        });
        GrowingFeed { url, published }
    }

    fn published(&self) -> u32 {
        *self.published.lock().unwrap()
    }
}

/// RSS with items `g<from>`..`g<to>`, newest first, a minute apart.
fn rss(from: u32, to: u32) -> String {
    let base = time::OffsetDateTime::now_utc() - time::Duration::days(1);
    let mut s = String::from(
        r#"<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.org/</link>"#,
    );
    for i in (from..=to).rev() {
        let d = (base + time::Duration::minutes(i64::from(i)))
            .format(&time::format_description::well_known::Rfc2822)
            .unwrap();
        s.push_str(&format!(
            "<item><guid>g{i}</guid><title>Item {i}</title><description>Body {i}</description><link>https://example.org/{i}</link><pubDate>{d}</pubDate></item>"
        ));
    }
    s.push_str("</channel></rss>");
    s
}

const TOOL_NAMES: &[&str] = &["list", "del", "a-b", "a_b", "x"];
const DESCRIPTIONS: &[&str] = &["Lists things.", "Deletes things.", "Does x."];

/// A random tool list, written atomically (the server re-reads it on every listing).
fn write_tools(path: &std::path::Path, rng: &mut Rng) {
    let mut tools = Vec::new();
    for name in TOOL_NAMES {
        if rng.chance(30) {
            continue;
        }
        let mut t = json!({
            "name": name,
            "description": DESCRIPTIONS[rng.below(DESCRIPTIONS.len() as u64) as usize],
            "inputSchema": {"type": "object"},
        });
        if rng.chance(50) {
            t["annotations"] = json!({"readOnlyHint": true});
        }
        tools.push(t);
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, Value::Array(tools).to_string()).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The keys of every note of the feed, asserting they are distinct.
async fn note_keys(s: &store::Store) -> BTreeSet<String> {
    let notes = s
        .notes(store::NotesQuery {
            source_prefix: Some("rss:crash".into()),
            limit: 1_000_000,
            before_id: None,
        })
        .await
        .unwrap();
    let keys: BTreeSet<String> = notes.iter().map(|n| n.key.clone()).collect();
    assert_eq!(keys.len(), notes.len(), "duplicate notes: {keys:?}");
    keys
}

/// Checks every invariant on the store of a dead daemon; returns the rows' destructive flags.
async fn check(
    s: &store::Store,
    acked: &BTreeSet<String>,
    published: u32,
    destructive: &BTreeMap<(String, String), bool>,
) -> BTreeMap<(String, String), bool> {
    let keys = note_keys(s).await;
    for k in acked {
        assert!(keys.contains(k), "acknowledged note {k} lost");
    }
    for k in &keys {
        let n: u32 = k
            .strip_prefix("id:g")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected note key {k}"));
        assert!((1..=published).contains(&n), "note {k} was never published");
    }

    check_rows(s, destructive).await
}

/// The owner enables or disables some rows while the daemon is down.
async fn owner_acts(s: &store::Store, rng: &mut Rng) {
    for r in s.tools().await.unwrap() {
        let to = match r.state {
            store::ToolState::Proposed | store::ToolState::Disabled if rng.chance(50) => {
                store::ToolState::Enabled
            }
            store::ToolState::Enabled if rng.chance(30) => store::ToolState::Disabled,
            _ => continue,
        };
        s.owner_sets_tool_state(
            &r.name,
            to,
            &stepup::testing::step_up(),
            "the owner says so",
        )
        .await
        .unwrap();
    }
}

fn acked_keys(home: &Home) -> Option<BTreeSet<String>> {
    let out = home.run(&[
        "notes",
        "--json",
        "--limit",
        "10000",
        "--source",
        "rss:crash",
    ]);
    if !out.status.success() {
        return None;
    }
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    Some(
        v.as_array()?
            .iter()
            .filter_map(|n| n["key"].as_str().map(str::to_owned))
            .collect(),
    )
}

#[test]
fn sigkill_at_random_points_keeps_notes_and_tool_rows_consistent() {
    let rounds: u32 = env_or("MAVEN_CRASH_ROUNDS", 10);
    let seed: u64 = env_or("MAVEN_CRASH_SEED", 0x5eed);
    eprintln!("crash consistency: {rounds} rounds, MAVEN_CRASH_SEED={seed}");
    let mut rng = Rng(seed);

    let feed = GrowingFeed::start();
    let home = Home::new();
    // Its own directory: the file is replaced by a rename, and the sandbox grants the directory.
    let kit = home.dir.path().join("kit");
    std::fs::create_dir_all(&kit).unwrap();
    let tools = kit.join("tools.json");
    write_tools(&tools, &mut rng);
    home.write_config(
        &json!({
            "feed_min_interval": "1s",
            "feeds": [{"name": "crash", "url": feed.url, "allow_private": true, "interval": "1s"}],
            "mcp_servers": {"kit": {
                "command": testkit_mcp().to_str().unwrap(),
                "args": [format!("--tools-file={}", tools.display())],
                "enabled": true,
                "sandbox": {"read": [kit]}
            }},
        })
        .to_string(),
    );
    let db = home.data().join("maven.db");

    let mut acked = BTreeSet::new();
    let mut destructive = BTreeMap::new();
    let mut kills_after_ready = 0;
    for round in 0..rounds {
        let d: Daemon = home.spawn();
        if rng.chance(20) {
            // Kill somewhere in start-up: opening the store, the first poll, discovery.
            std::thread::sleep(Duration::from_millis(rng.below(400)));
        } else {
            eventually("the daemon answers", || {
                home.run(&["status", "--json"])
                    .status
                    .success()
                    .then_some(())
            });
            std::thread::sleep(Duration::from_millis(rng.below(1500)));
            if let Some(keys) = acked_keys(&home) {
                acked.extend(keys);
            }
            std::thread::sleep(Duration::from_millis(rng.below(1500)));
            kills_after_ready += 1;
        }
        let out = d.signal("-KILL");
        assert!(
            !out.status.success(),
            "round {round}: the daemon was killed"
        );

        if !db.exists() {
            continue; // killed before the store was created
        }
        let published = feed.published();
        destructive = block_on(async {
            #[expect(
                clippy::disallowed_methods,
                reason = "a test reads the database of a daemon that has stopped"
            )]
            let s = store::Store::open(&db).await.unwrap();
            let now = check(&s, &acked, published, &destructive).await;
            owner_acts(&s, &mut rng).await;
            s.close().await.unwrap();
            now
        });
        write_tools(&tools, &mut rng);
    }

    // A last clean run: the newest item gets noted, once, and nothing acknowledged is gone.
    let d = home.start();
    let target = feed.published() + 1;
    eventually("the newest item is noted after the kills", || {
        acked_keys(&home)
            .filter(|k| k.contains(&format!("id:g{target}")))
            .map(|_| ())
    });
    let out = d.signal("-TERM");
    assert!(out.status.success());
    let published = feed.published();
    let keys = block_on(async {
        #[expect(
            clippy::disallowed_methods,
            reason = "a test reads the database of a daemon that has stopped"
        )]
        let s = store::Store::open(&db).await.unwrap();
        check(&s, &acked, published, &destructive).await;
        let keys = note_keys(&s).await;
        s.close().await.unwrap();
        keys
    });
    eprintln!(
        "crash consistency: {rounds} kills ({kills_after_ready} after ready), {} notes, {} acknowledged, {} rows",
        keys.len(),
        acked.len(),
        destructive.len()
    );
    assert!(
        acked.len() >= 3 || kills_after_ready == 0,
        "notes were acknowledged"
    );
}
