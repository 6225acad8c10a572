//! One poll at a time (`poll_now`): conditional GET, baselines, identity, failures, 410,
//! limits, redirects, pruning.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use poller::{FeedState, Kind, Outcome};

use crate::server::{rss, rss_with, Reply, Server};
use crate::{door, options, spec, spec_with, Env};

fn ten() -> Vec<(String, String, i64)> {
    (0..10)
        .map(|i| (format!("g{i}"), format!("Item {i}"), i))
        .collect()
}

fn doc(items: &[(String, String, i64)]) -> String {
    let v: Vec<(&str, &str, i64)> = items
        .iter()
        .map(|(g, t, d)| (g.as_str(), t.as_str(), *d))
        .collect();
    rss(&v)
}

fn noted(o: &Outcome) -> (u32, Kind) {
    match o {
        Outcome::Fetched { noted, kind, .. } => (*noted, *kind),
        other => panic!("expected a fetched outcome, got {other:?}"),
    }
}

#[tokio::test]
async fn conditional_get_sends_the_validators_exactly_as_received_and_304_is_success() {
    const ETAG: &str = "W/\"v1  ;weird\"";
    const LM: &str = "Mon, 30 Nov 2026 04:00:00 GMT";
    let body = doc(&ten());
    let server = Server::start(move |req| {
        match (req.header("if-none-match"), req.header("if-modified-since")) {
            (Some(ETAG), Some(LM)) => Reply::status(304),
            (None, None) => Reply::Full(
                200,
                vec![("ETag", ETAG.into()), ("Last-Modified", LM.into())],
                body.clone().into_bytes(),
            ),
            // Validators sent but not exactly the ones given: make the test fail loudly.
            _ => Reply::status(400),
        }
    })
    .await;
    let env = Env::new().await;
    let p = env.poller(vec![spec("news", &server.url("/feed"))]).await;

    let first = p.poll_now("news").await.unwrap();
    assert_eq!(noted(&first.outcome), (3, Kind::Baseline));
    let second = p.poll_now("news").await.unwrap();
    assert_eq!(second.outcome, Outcome::NotModified);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].header("if-none-match"), Some(ETAG));
    assert_eq!(reqs[1].header("if-modified-since"), Some(LM));
    let st = &p.status()[0];
    assert_eq!(st.state, FeedState::Scheduled);
    assert!(st.last_success.is_some());
    assert_eq!(st.last_error, None);
    assert_eq!(st.items_noted, 3);
    assert_eq!(env.notes("news").await.len(), 3);

    // A restart keeps the validators (they are in the store).
    drop(p);
    let p = env.poller(vec![spec("news", &server.url("/feed"))]).await;
    assert_eq!(
        p.poll_now("news").await.unwrap().outcome,
        Outcome::NotModified
    );
    // A changed url does not reuse the old url's validators.
    let p = env.poller(vec![spec("news", &server.url("/other"))]).await;
    let r = p.poll_now("news").await.unwrap();
    assert!(matches!(r.outcome, Outcome::Fetched { .. }));
    assert_eq!(
        server.requests().last().unwrap().header("if-none-match"),
        None
    );
}

#[tokio::test]
async fn baseline_then_every_new_item_exactly_once_across_restarts() {
    let items = Arc::new(Mutex::new(ten()));
    let it = items.clone();
    let server = Server::start(move |_| Reply::ok(doc(&it.lock().unwrap()))).await;
    let env = Env::new().await;
    let url = server.url("/feed");
    let p = env.poller(vec![spec("news", &url)]).await;

    let r = p.poll_now("news").await.unwrap();
    assert_eq!(noted(&r.outcome), (3, Kind::Baseline));
    let keys: Vec<String> = env.notes("news").await.into_iter().map(|n| n.0).collect();
    assert_eq!(
        keys,
        ["id:g2", "id:g1", "id:g0"],
        "newest three, oldest first"
    );
    assert_eq!(
        env.store
            .fact("rss:latest:news")
            .await
            .unwrap()
            .map(|v| v.contains("id:g0")),
        Some(true)
    );

    // Nothing new: nothing noted.
    assert_eq!(
        noted(&p.poll_now("news").await.unwrap().outcome),
        (0, Kind::Normal)
    );

    // Two new items, then a restart of the poller between polls.
    items
        .lock()
        .unwrap()
        .insert(0, ("n1".into(), "New 1".into(), 0));
    items
        .lock()
        .unwrap()
        .insert(0, ("n2".into(), "New 2".into(), 0));
    assert_eq!(
        noted(&p.poll_now("news").await.unwrap().outcome),
        (2, Kind::Normal)
    );
    drop(p);
    let p = env.poller(vec![spec("news", &url)]).await;
    assert_eq!(
        p.status()[0].items_noted,
        5,
        "counted from the store after a restart"
    );
    assert_eq!(
        noted(&p.poll_now("news").await.unwrap().outcome),
        (0, Kind::Normal)
    );
    let notes = env.notes("news").await;
    assert_eq!(notes.len(), 5);
    assert_eq!(notes[4].1, "New 2\nAbout New 2");
    let mut keys: Vec<String> = notes.into_iter().map(|n| n.0).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 5, "no duplicates");
}

#[tokio::test]
async fn repeated_guids_within_a_fetch_are_told_apart() {
    let body = rss(&[
        ("dup", "First", 0),
        ("dup", "Second", 1),
        ("dup", "Second", 1),
        ("ok", "Other", 2),
    ]);
    let server = Server::start(move |_| Reply::ok(body.clone())).await;
    let env = Env::new().await;
    let mut s = spec("d", &server.url("/"));
    s.baseline = 10;
    let p = env.poller(vec![s]).await;
    assert_eq!(
        noted(&p.poll_now("d").await.unwrap().outcome),
        (4, Kind::Baseline)
    );
    assert_eq!(
        noted(&p.poll_now("d").await.unwrap().outcome),
        (0, Kind::Normal)
    );
    assert_eq!(env.store.seen_count("d").await.unwrap(), 4);
}

#[tokio::test]
async fn changed_guids_with_old_dates_rebaseline_instead_of_flooding() {
    let items = Arc::new(Mutex::new(ten()));
    let it = items.clone();
    let server = Server::start(move |_| Reply::ok(doc(&it.lock().unwrap()))).await;
    let env = Env::new().await;
    let p = env.poller(vec![spec("cms", &server.url("/feed"))]).await;
    assert_eq!(
        noted(&p.poll_now("cms").await.unwrap().outcome),
        (3, Kind::Baseline)
    );

    // A CMS migration: every guid changes, the dates stay; plus one genuinely new item.
    {
        let mut v = items.lock().unwrap();
        for (g, _, _) in v.iter_mut() {
            *g = format!("https://new.example/{g}");
        }
        v.insert(0, ("brand-new".into(), "Brand new".into(), -1));
    }
    let r = p.poll_now("cms").await.unwrap();
    let Outcome::Fetched {
        noted: n,
        kind,
        warning,
        ..
    } = &r.outcome
    else {
        panic!("{r:?}")
    };
    assert_eq!((*n, *kind), (1, Kind::Rebaseline));
    assert!(
        warning.as_deref().unwrap().contains("re-baselined"),
        "{warning:?}"
    );
    let notes = env.notes("cms").await;
    assert_eq!(notes.len(), 4);
    assert_eq!(notes[3].0, "id:brand-new");
    assert!(p.status()[0]
        .warning
        .as_deref()
        .unwrap()
        .contains("re-baselined"));
    // Next fetch: all seen, nothing noted.
    assert_eq!(noted(&p.poll_now("cms").await.unwrap().outcome).0, 0);
}

#[tokio::test]
async fn retry_after_on_429_is_respected_and_shown() {
    let server =
        Server::start(|_| Reply::Full(429, vec![("Retry-After", "7200".into())], Vec::new())).await;
    let env = Env::new().await;
    let p = env.poller(vec![spec("busy", &server.url("/"))]).await;
    let err = p.poll_now("busy").await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(429));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7200)));
    assert_eq!(
        err.to_string(),
        "http status 429 Too Many Requests (retry after 7200 s)"
    );
    let st = &p.status()[0];
    assert_eq!(st.state, FeedState::BackingOff);
    assert_eq!(st.failures, 1);
    assert_eq!(
        st.last_error.as_deref(),
        Some("http status 429 Too Many Requests (retry after 7200 s)")
    );
    let wait = st.next_poll.unwrap() - time::OffsetDateTime::now_utc();
    assert!(wait >= time::Duration::seconds(7100), "next poll in {wait}");
    // 503 too.
    server.set(|_| Reply::Full(503, vec![("Retry-After", "600".into())], Vec::new()));
    let err = p.poll_now("busy").await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(600)));
    assert_eq!(p.status()[0].failures, 2);
    // The backoff survives a restart.
    let p = env.poller(vec![spec("busy", &server.url("/"))]).await;
    let st = &p.status()[0];
    assert_eq!((st.failures, st.state.clone()), (2, FeedState::BackingOff));
    assert!(
        st.next_poll.unwrap() - time::OffsetDateTime::now_utc() >= time::Duration::seconds(500)
    );
}

#[tokio::test]
async fn gone_disables_the_feed_persistently_until_its_url_changes() {
    let server = Server::start(|_| Reply::status(410)).await;
    let env = Env::new().await;
    let url = server.url("/gone");
    let p = env.poller(vec![spec("old", &url)]).await;
    let err = p.poll_now("old").await.unwrap_err();
    assert!(err.is_gone(), "{err}");
    let st = &p.status()[0];
    assert!(!st.enabled);
    assert!(matches!(&st.state, FeedState::Disabled { reason } if reason.contains("410 Gone")));
    assert!(!p.has_active_feeds());
    assert_eq!(server.count(), 1);

    // After a restart: still disabled, and no request is made.
    let p = env.poller(vec![spec("old", &url)]).await;
    assert!(!p.status()[0].enabled);
    assert!(p.status()[0]
        .last_error
        .as_deref()
        .unwrap()
        .contains("410 Gone"));
    assert!(matches!(
        p.poll_now("old").await.unwrap_err(),
        poller::Error::Disabled { .. }
    ));
    p.run(tokio_util::sync::CancellationToken::new()).await; // returns at once: nothing active
    assert_eq!(server.count(), 1);

    // The owner changes the url: the mark is cleared.
    server.set(|_| Reply::ok(rss(&[("a", "A", 0)])));
    let p = env.poller(vec![spec("old", &server.url("/new"))]).await;
    assert!(p.status()[0].enabled);
    assert!(p.poll_now("old").await.is_ok());
}

#[tokio::test]
async fn a_3_mib_feed_is_refused_as_too_large() {
    let big = {
        let mut s = rss(&[("a", "A", 0)]);
        s.insert_str(
            s.len() - "</channel></rss>".len(),
            &format!("<!--{}-->", "x".repeat(3 << 20)),
        );
        s
    };
    let server = Server::start(move |_| Reply::ok(big.clone())).await;
    let env = Env::new().await;
    let p = env.poller(vec![spec("big", &server.url("/"))]).await;
    let err = p.poll_now("big").await.unwrap_err();
    assert!(err.is_too_large(), "{err}");
    assert_eq!(
        p.status()[0].last_error.as_deref(),
        Some("too large: body exceeds 2097152 bytes")
    );
    assert!(env.notes("big").await.is_empty());
    // The door's own cap applies: a feed allowed 4 MiB takes it.
    let mut d = door("big");
    d.max_body = 4 << 20;
    let p = env
        .poller(vec![spec_with("big", &server.url("/"), d)])
        .await;
    assert_eq!(noted(&p.poll_now("big").await.unwrap().outcome).0, 1);
}

#[tokio::test]
async fn an_endless_slow_body_is_cut_by_the_total_deadline() {
    let server = Server::start(|_| Reply::Endless).await;
    let env = Env::new().await;
    let mut d = door("slow");
    d.timeouts.total = Duration::from_millis(700);
    let p = env
        .poller(vec![spec_with("slow", &server.url("/"), d)])
        .await;
    let err = p.poll_now("slow").await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(
        p.status()[0].last_error.as_deref(),
        Some("timeout: request took longer than 700ms")
    );
    assert_eq!(p.status()[0].state, FeedState::BackingOff);
}

#[tokio::test]
async fn failures_are_specific_and_back_off() {
    let server = Server::start(|req| match req.path.as_str() {
        "/html" => Reply::Full(
            200,
            vec![("Content-Type", "text/html".into())],
            b"<!doctype html><html><body>hi</body></html>".to_vec(),
        ),
        _ => Reply::status(404),
    })
    .await;
    let env = Env::new().await;
    let p = env
        .poller(vec![
            spec("html", &server.url("/html")),
            spec("missing", &server.url("/nope")),
        ])
        .await;
    let err = p.poll_now("html").await.unwrap_err();
    assert!(err.is_not_a_feed());
    assert_eq!(
        err.to_string(),
        "not a feed: the input is an HTML page, not a feed"
    );
    let err = p.poll_now("missing").await.unwrap_err();
    assert_eq!(err.to_string(), "http status 404 Not Found");
    let first = p.status()[1].next_poll.unwrap();
    p.poll_now("missing").await.unwrap_err();
    let st = &p.status()[1];
    assert_eq!(st.failures, 2);
    assert!(st.next_poll.unwrap() > first);
    assert!(matches!(
        p.poll_now("nope").await.unwrap_err(),
        poller::Error::UnknownFeed(_)
    ));
    // A refusal by webfetch: a loopback feed without allow_private.
    let mut d = door("strict");
    d.allow_private = false;
    let p = env
        .poller(vec![spec_with("strict", &server.url("/html"), d)])
        .await;
    let err = p.poll_now("strict").await.unwrap_err();
    assert!(err.is_refused(), "{err}");
}

#[tokio::test]
async fn ttl_and_max_age_raise_the_interval() {
    let body = rss_with(&[("a", "A", 0)], "<ttl>90</ttl>");
    let server = Server::start(move |req| match req.path.as_str() {
        "/ttl" => Reply::ok(body.clone()),
        _ => Reply::Full(
            200,
            vec![("Cache-Control", "public, max-age=7200".into())],
            rss(&[("b", "B", 0)]).into_bytes(),
        ),
    })
    .await;
    let env = Env::new().await;
    let p = env
        .poller(vec![
            spec("ttl", &server.url("/ttl")),
            spec("cc", &server.url("/cc")),
        ])
        .await;
    let r = p.poll_now("ttl").await.unwrap();
    assert_eq!(r.ttl, Some(Duration::from_secs(90 * 60)));
    let r = p.poll_now("cc").await.unwrap();
    assert_eq!(r.max_age(), Some(Duration::from_secs(7200)));
    let st = p.status();
    let gap = |i: usize| st[i].next_poll.unwrap() - st[i].last_success.unwrap();
    assert!(gap(0) >= time::Duration::minutes(90), "{}", gap(0));
    assert!(gap(1) >= time::Duration::hours(2), "{}", gap(1));
    assert!(gap(1) <= time::Duration::hours(24));
}

#[tokio::test]
async fn seen_keys_are_pruned_only_after_a_successful_non_empty_fetch() {
    let items = Arc::new(Mutex::new(ten()));
    let fail = Arc::new(Mutex::new(false));
    let (it, f) = (items.clone(), fail.clone());
    let server = Server::start(move |_| {
        if *f.lock().unwrap() {
            Reply::status(500)
        } else {
            Reply::ok(doc(&it.lock().unwrap()))
        }
    })
    .await;
    let env = Env::new().await;
    let mut opts = options();
    opts.prune_after = Duration::ZERO;
    let p = env
        .poller_with(vec![spec("pr", &server.url("/"))], opts)
        .await;
    p.poll_now("pr").await.unwrap();
    assert_eq!(env.store.seen_count("pr").await.unwrap(), 10);
    // A failed fetch prunes nothing.
    *fail.lock().unwrap() = true;
    p.poll_now("pr").await.unwrap_err();
    assert_eq!(env.store.seen_count("pr").await.unwrap(), 10);
    // An empty feed prunes nothing.
    *fail.lock().unwrap() = false;
    items.lock().unwrap().clear();
    p.poll_now("pr").await.unwrap();
    assert_eq!(env.store.seen_count("pr").await.unwrap(), 10);
    // Half the items left the feed: with prune_after zero they are forgotten; the rest stay.
    *items.lock().unwrap() = ten().into_iter().take(5).collect();
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(noted(&p.poll_now("pr").await.unwrap().outcome).0, 0);
    assert_eq!(env.store.seen_count("pr").await.unwrap(), 5);
}

#[tokio::test]
async fn a_redirect_is_followed_and_reported_never_written_back() {
    // A door without allow_private follows redirects; 127.0.0.2 stands in for a public host.
    let ip = Ipv4Addr::new(127, 0, 0, 2);
    let server = Server::start_on(IpAddr::V4(ip), |req| match req.path.as_str() {
        "/old" => Reply::Full(301, vec![("Location", "/new".into())], Vec::new()),
        _ => Reply::ok(rss(&[("a", "A", 0)])),
    })
    .await;
    let env = Env::new().await;
    let url = server.url("/old");
    let mut d = door("moved");
    d.allow_private = false;
    let fetcher = webfetch::Fetcher::builder(d)
        .pretend_public(webfetch::testing::PretendPublic::loopback(ip).unwrap())
        .build();
    let mut s = spec("moved", &url);
    s.fetcher = fetcher;
    let p = env.poller(vec![s]).await;
    let r = p.poll_now("moved").await.unwrap();
    let new = server.url("/new");
    assert_eq!(r.moved_to.as_deref(), Some(new.as_str()));
    let st = &p.status()[0];
    assert_eq!(st.moved_to.as_deref(), Some(new.as_str()));
    assert_eq!(st.url, url, "the configured url is kept");
    // The next poll starts from the configured url again.
    p.poll_now("moved").await.unwrap();
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/old", "/new", "/old", "/new"]);

    // A door with allow_private follows no redirect: a clear refusal.
    let p = env.poller(vec![spec("moved", &url)]).await;
    let err = p.poll_now("moved").await.unwrap_err();
    assert!(err.is_refused());
    assert_eq!(
        err.to_string(),
        "refused: redirect on a door that allows private addresses"
    );
}

/// An RSS 1.0 document whose items carry both `rdf:about` and a different `dc:identifier`.
fn rdf(items: &[(&str, i64)]) -> String {
    let base = time::OffsetDateTime::now_utc() - time::Duration::hours(1);
    let mut s = String::from(
        r#"<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns="http://purl.org/rss/1.0/"><channel rdf:about="https://example.org/rss"><title>RDF</title><link>https://example.org/</link></channel>"#,
    );
    for (n, days) in items {
        let date = (base - time::Duration::days(*days))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        s.push_str(&format!(
            r#"<item rdf:about="https://example.org/{n}"><title>Item {n}</title><link>https://example.org/{n}</link><dc:identifier>urn:example:{n}</dc:identifier><dc:date>{date}</dc:date></item>"#
        ));
    }
    s.push_str("</rdf:RDF>");
    s
}

/// An RSS 1.0 item's id became its `rdf:about` instead of its `dc:identifier`; a store an
/// earlier release wrote holds the identifier keys. Those items are not noted again: their
/// seen marks migrate to the new keys in the first fetch, without a re-baseline.
#[tokio::test]
async fn items_rekeyed_from_dc_identifier_to_rdf_about_are_not_noted_again() {
    let old: Vec<(String, i64)> = (1..=10).map(|i| (format!("n{i}"), i)).collect();
    let mut served: Vec<(String, i64)> = vec![("fresh".into(), 0)];
    served.extend(old.iter().cloned());
    let body = rdf(&served
        .iter()
        .map(|(n, d)| (n.as_str(), *d))
        .collect::<Vec<_>>());
    let server = Server::start(move |_| Reply::ok(body.clone())).await;
    let env = Env::new().await;
    // What the earlier release committed for this feed: every item seen under its identifier.
    env.store
        .commit_feed_batch(store::FeedBatch {
            feed: "rdf".into(),
            notes: Vec::new(),
            seen_keys: old
                .iter()
                .map(|(n, _)| format!("id:urn:example:{n}"))
                .collect(),
            facts: Vec::new(),
            remove_facts: Vec::new(),
        })
        .await
        .unwrap();
    let p = env.poller(vec![spec("rdf", &server.url("/rdf"))]).await;

    let r = p.poll_now("rdf").await.unwrap();
    let Outcome::Fetched {
        noted: n,
        kind,
        warning,
        ..
    } = &r.outcome
    else {
        panic!("{r:?}")
    };
    assert_eq!((*n, *kind, warning.as_deref()), (1, Kind::Normal, None));
    let notes = env.notes("rdf").await;
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].0, "id:https://example.org/fresh");
    // Migrated: the new keys are marked seen.
    let new_keys: Vec<String> = served
        .iter()
        .map(|(n, _)| format!("id:https://example.org/{n}"))
        .collect();
    assert_eq!(
        env.store.seen_keys("rdf", &new_keys).await.unwrap().len(),
        11
    );
    assert_eq!(
        noted(&p.poll_now("rdf").await.unwrap().outcome),
        (0, Kind::Normal)
    );
    assert_eq!(env.notes("rdf").await.len(), 1);
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_honoured_and_a_hostile_one_is_capped_at_a_day() {
    let in_two_hours = (time::OffsetDateTime::now_utc() + time::Duration::hours(2))
        .format(time::macros::format_description!(
            "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
        ))
        .unwrap();
    let server = Server::start(move |_| {
        Reply::Full(429, vec![("Retry-After", in_two_hours.clone())], Vec::new())
    })
    .await;
    let env = Env::new().await;
    let p = env.poller(vec![spec("busy", &server.url("/"))]).await;
    let err = p.poll_now("busy").await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(429));
    let asked = err.retry_after().unwrap();
    assert!(
        (Duration::from_secs(7100)..=Duration::from_secs(7200)).contains(&asked),
        "{asked:?}"
    );
    let wait = p.status()[0].next_poll.unwrap() - time::OffsetDateTime::now_utc();
    assert!(wait >= time::Duration::seconds(7000), "next poll in {wait}");

    // Ten years, as seconds or as a date: the next poll is no more than a day away.
    let day = time::Duration::seconds(i64::try_from(poller::MAX_DELAY.as_secs()).unwrap());
    for hostile in ["315360000", "Fri, 01 Dec 2036 00:00:00 GMT"] {
        server.set(move |_| Reply::Full(429, vec![("Retry-After", hostile.into())], Vec::new()));
        let err = p.poll_now("busy").await.unwrap_err();
        assert!(err.retry_after().unwrap() > Duration::from_secs(86_400 * 365));
        let wait = p.status()[0].next_poll.unwrap() - time::OffsetDateTime::now_utc();
        assert!(
            wait <= day + time::Duration::seconds(5) && wait >= day / 2,
            "{hostile}: next poll in {wait}"
        );
    }
}

#[tokio::test]
async fn a_refresh_polls_now_but_keeps_the_hosts_spacing_and_the_backoff() {
    let body = doc(&ten());
    let server =
        Server::start(move |_| Reply::Full(200, Vec::new(), body.clone().into_bytes())).await;
    let env = Env::new().await;
    let mut spaced = door("a");
    spaced.host_interval = Duration::from_secs(3600);
    let p = env
        .poller(vec![
            spec_with("a", &server.url("/a"), spaced.clone()),
            spec_with("b", &server.url("/b"), spaced),
        ])
        .await;
    let done = p.refresh(None).await.unwrap();
    assert_eq!(done.len(), 2);
    match &done[0] {
        poller::Refreshed::Polled { name, result } => {
            assert_eq!(name, "a");
            assert_eq!(noted(&result.as_ref().unwrap().outcome).0, 3);
        }
        other => panic!("{other:?}"),
    }
    // The second feed is on the same host: it waits for the host's next slot.
    match &done[1] {
        poller::Refreshed::HeldBack {
            name,
            reason,
            until,
        } => {
            assert_eq!(name, "b");
            assert!(reason.contains("its host was asked"), "{reason}");
            assert!(*until > time::OffsetDateTime::now_utc() + time::Duration::minutes(50));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1);

    // A spacing that ends within the refresh's waits is waited out: both feeds are polled.
    let mut short = door("a");
    short.host_interval = Duration::from_millis(1000);
    let p = env
        .poller(vec![
            spec_with("c", &server.url("/c"), short.clone()),
            spec_with("d", &server.url("/d"), short),
        ])
        .await;
    let started = tokio::time::Instant::now();
    let done = p.refresh(None).await.unwrap();
    assert!(
        done.iter()
            .all(|d| matches!(d, poller::Refreshed::Polled { result: Ok(_), .. })),
        "{done:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(server.requests().len(), 3);

    // A failing feed backs off: a refresh does not poll it before its time.
    let server = Server::start(|_| Reply::status(500)).await;
    let mut down = spec("down", &server.url("/"));
    down.interval = Duration::from_secs(600);
    let p = env.poller(vec![down]).await;
    let done = p.refresh(Some("down")).await.unwrap();
    assert!(
        matches!(&done[0], poller::Refreshed::Polled { result: Err(e), .. } if e.contains("500"))
    );
    let done = p.refresh(Some("down")).await.unwrap();
    match &done[0] {
        poller::Refreshed::HeldBack { reason, .. } => {
            assert_eq!(reason, "backing off after 1 failed polls");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
    assert!(p.refresh(Some("nope")).await.is_err());
}
