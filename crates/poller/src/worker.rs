//! One feed: its poll (conditional GET → parse → plan → one store transaction) and its loop.

use std::collections::HashSet;
use std::future::Future;
#[cfg(feature = "test-hooks")]
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use rand::Rng;
use time::OffsetDateTime;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use url::Url;
use webfetch::{header, HeaderValue, Request, StatusCode};

use crate::error::Error;
use crate::facts::{self, fmt_time, parse_time};
use crate::http::{self, Validators};
use crate::identity;
use crate::model::{FeedSpec, FeedState, FeedStatus, Options, Outcome, PollReport};
use crate::plan::{self, Entry, Kind};
use crate::schedule::{HostGate, Schedule, Verdict, MAX_DELAY};

/// What a feed asks for.
const ACCEPT: &str = "application/rss+xml, application/atom+xml, application/feed+json, \
                      application/json;q=0.9, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1";

/// The longest title kept in a note, in characters.
pub const MAX_TITLE_CHARS: usize = 300;
/// The longest summary kept in a note, in characters.
pub const MAX_SUMMARY_CHARS: usize = 1000;
/// The longest link kept with a note, in bytes (longer links are dropped).
pub const MAX_LINK: usize = 8192;

pub(crate) struct Worker {
    pub(crate) spec: FeedSpec,
    host: String,
    store: store::Store,
    opts: Options,
    status: Mutex<FeedStatus>,
    inner: Mutex<Inner>,
    /// Serialises polls of this feed.
    busy: tokio::sync::Mutex<()>,
}

struct Inner {
    schedule: Schedule,
    /// When the next scheduled poll is due (tokio clock).
    next_at: Instant,
    /// The last RSS `<ttl>` seen (a 304 carries none, so it is remembered).
    ttl: Option<Duration>,
    disabled: Option<String>,
}

fn cut(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((i, _)) => format!("{}…", s[..i].trim_end()),
    }
}

/// The note of one item: its title, and its plain-text summary (or content), capped.
pub(crate) fn note_text(item: &feeds::Item) -> String {
    let title = item.title.as_deref().map(|t| cut(t, MAX_TITLE_CHARS));
    let summary = item
        .summary_text
        .as_deref()
        .or(item.content_text.as_deref())
        .map(|s| cut(s, MAX_SUMMARY_CHARS))
        .filter(|s| !s.is_empty() && Some(s) != title.as_ref());
    match (title.filter(|t| !t.is_empty()), summary) {
        (Some(t), Some(s)) => format!("{t}\n{s}"),
        (Some(t), None) => t,
        (None, Some(s)) => s,
        (None, None) => item
            .link
            .as_deref()
            .or(item.enclosures.first().map(|e| e.url.as_str()))
            .map(|l| cut(l, MAX_TITLE_CHARS))
            .unwrap_or_else(|| "(untitled item)".to_owned()),
    }
}

/// The link kept with a note: the item's link, else its first enclosure.
pub(crate) fn note_link(item: &feeds::Item) -> Option<String> {
    item.link
        .as_deref()
        .or(item.enclosures.first().map(|e| e.url.as_str()))
        .map(str::trim)
        .filter(|l| !l.is_empty() && l.len() <= MAX_LINK)
        .map(str::to_owned)
}

impl Worker {
    /// Loads the feed's persisted state (clearing a 410 mark whose URL is no longer the
    /// configured one) and its note count.
    pub(crate) async fn load(
        spec: FeedSpec,
        store: store::Store,
        opts: Options,
    ) -> Result<Worker, Error> {
        let name = spec.name.clone();
        let host = Url::parse(&spec.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
            .unwrap_or_default();
        let mut disabled = None;
        let dkey = facts::key("disabled", &name);
        if let Some(d) = facts::decode::<facts::Disabled>(store.fact(&dkey).await?) {
            if d.url == spec.url {
                disabled = Some(d.reason);
            } else {
                store.delete_fact(&dkey).await?;
                tracing::info!(feed = %name, "the feed's url changed; its 410 Gone mark is cleared");
            }
        }
        let poll = facts::decode::<facts::Poll>(store.fact(&facts::key("poll", &name)).await?)
            .filter(|p| p.url == spec.url)
            .unwrap_or_default();
        let source = format!("rss:{name}");
        let items_noted = store
            .note_counts(Some(&source))
            .await?
            .into_iter()
            .find(|c| c.source == source)
            .map_or(0, |c| c.count);
        let schedule = Schedule::new(spec.interval, opts.min_interval, poll.failures);
        let now_wall = OffsetDateTime::now_utc();
        let first = schedule.first_delay(rand::thread_rng().gen());
        // A restart does not poll earlier than the previous run had planned (politeness),
        // nor later than a day from now.
        let planned = parse_time(poll.next_poll.as_deref())
            .map(|t| {
                Duration::try_from(t - now_wall)
                    .unwrap_or(Duration::ZERO)
                    .min(MAX_DELAY)
            })
            .unwrap_or(Duration::ZERO);
        let next_at = Instant::now() + first.max(planned);
        let state = match (&disabled, spec.enabled) {
            (Some(reason), _) => FeedState::Disabled {
                reason: reason.clone(),
            },
            (None, false) => FeedState::Off,
            (None, true) if poll.failures > 0 => FeedState::BackingOff,
            (None, true) => FeedState::Scheduled,
        };
        let status = FeedStatus {
            name: name.clone(),
            url: spec.url.clone(),
            enabled: spec.enabled && disabled.is_none(),
            state,
            last_success: parse_time(poll.last_success.as_deref()),
            last_error: disabled.clone().or(poll.last_error),
            next_poll: (spec.enabled && disabled.is_none()).then(|| now_wall + first.max(planned)),
            items_noted,
            failures: poll.failures,
            moved_to: poll.moved_to,
            warning: poll.warning,
            refused: false,
        };
        Ok(Worker {
            host,
            store,
            opts,
            status: Mutex::new(status),
            inner: Mutex::new(Inner {
                schedule,
                next_at,
                ttl: None,
                disabled,
            }),
            busy: tokio::sync::Mutex::new(()),
            spec,
        })
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Poisoning only means a panic elsewhere mid-update of plain values; still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn status(&self) -> FeedStatus {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn update_status(&self, f: impl FnOnce(&mut FeedStatus)) {
        f(&mut self.status.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Scheduled and not disabled.
    pub(crate) fn is_active(&self) -> bool {
        self.spec.enabled && self.inner().disabled.is_none()
    }

    /// The feed's host, lowercase (the host gate's key).
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// When a failing feed's backoff lets it be polled again, while it holds it back.
    pub(crate) fn backing_off(&self) -> Option<Instant> {
        let failures = self.status().failures;
        let at = self.next_at();
        (failures > 0 && at > Instant::now()).then_some(at)
    }

    pub(crate) fn next_at(&self) -> Instant {
        self.inner().next_at
    }

    /// One poll, recorded: status, the schedule, and `rss:poll:<feed>`. Returns when the
    /// next poll is due, `None` when the feed must not be polled again.
    pub(crate) async fn poll_recorded(&self) -> (Result<PollReport, Error>, Option<Instant>) {
        let _busy = self.busy.lock().await;
        self.update_status(|s| s.state = FeedState::Polling);
        let res = self.poll().await;
        let now_wall = OffsetDateTime::now_utc();
        let verdict = match &res {
            Ok(r) => {
                if r.ttl.is_some() || matches!(r.outcome, Outcome::Fetched { .. }) {
                    self.inner().ttl = r.ttl;
                }
                Verdict::Success {
                    ttl: self.inner().ttl,
                    fresh: r.fresh,
                }
            }
            Err(Error::Gone | Error::Disabled { .. }) => Verdict::Stop,
            Err(e) => Verdict::Failure {
                retry_after: e.retry_after(),
            },
        };
        let (delay, failures) = {
            let mut inner = self.inner();
            let d = inner.schedule.next_delay(verdict, rand::thread_rng().gen());
            if let Some(d) = d {
                inner.next_at = Instant::now() + d;
            }
            (d, inner.schedule.failures())
        };
        let next_wall = delay.map(|d| now_wall + d);
        self.update_status(|s| {
            s.failures = failures;
            s.next_poll = next_wall;
            s.refused = res.as_ref().is_err_and(Error::is_refused);
            match &res {
                Ok(r) => {
                    s.state = FeedState::Scheduled;
                    s.last_success = Some(now_wall);
                    s.last_error = None;
                    s.moved_to = r.moved_to.clone();
                    if let Outcome::Fetched { noted, warning, .. } = &r.outcome {
                        s.items_noted += u64::from(*noted);
                        s.warning = warning.clone();
                    }
                }
                Err(e @ (Error::Gone | Error::Disabled { .. })) => {
                    s.state = FeedState::Disabled {
                        reason: e.to_string(),
                    };
                    s.enabled = false;
                    s.last_error = Some(e.to_string());
                }
                Err(e) => {
                    s.state = FeedState::BackingOff;
                    s.last_error = Some(e.to_string());
                }
            }
        });
        match &res {
            Ok(r) => {
                tracing::debug!(feed = %self.spec.name, outcome = ?r.outcome, next = %in_words(delay), "feed polled")
            }
            Err(e) => {
                tracing::warn!(feed = %self.spec.name, error = %e, next = %in_words(delay), "feed poll failed")
            }
        }
        let st = self.status();
        let record = facts::Poll {
            url: self.spec.url.clone(),
            last_success: st.last_success.map(fmt_time),
            last_error: st.last_error.clone(),
            failures,
            next_poll: next_wall.map(fmt_time),
            moved_to: st.moved_to.clone(),
            warning: st.warning.clone(),
        };
        if let Err(e) = self
            .store
            .set_fact(
                &facts::key("poll", &self.spec.name),
                &facts::encode(&record),
            )
            .await
        {
            tracing::warn!(feed = %self.spec.name, error = %e, "cannot record the poll");
        }
        (res, delay.map(|_| self.next_at()))
    }

    /// One conditional GET and what follows from it.
    async fn poll(&self) -> Result<PollReport, Error> {
        if let Some(reason) = self.inner().disabled.clone() {
            return Err(Error::Disabled { reason });
        }
        let name = &self.spec.name;
        let validators =
            facts::decode::<facts::Http>(self.store.fact(&facts::key("http", name)).await?)
                .filter(|h| h.url == self.spec.url);
        let mut req = Request::get(self.spec.url.clone())
            .header(header::ACCEPT, HeaderValue::from_static(ACCEPT));
        if let Some(h) = &validators {
            if let Some(v) = h
                .etag
                .as_deref()
                .and_then(|v| HeaderValue::from_str(v).ok())
            {
                req = req.header(header::IF_NONE_MATCH, v);
            }
            if let Some(v) = h
                .last_modified
                .as_deref()
                .and_then(|v| HeaderValue::from_str(v).ok())
            {
                req = req.header(header::IF_MODIFIED_SINCE, v);
            }
        }
        let now = OffsetDateTime::now_utc();
        let resp = self.spec.fetcher.send(req).await?;
        let fresh = http::freshness(resp.headers(), now);
        let moved_to =
            (resp.redirects() > 0 && resp.url() != self.spec.url).then(|| resp.url().to_owned());
        if let Some(to) = &moved_to {
            tracing::warn!(feed = %name, to = %to, "the feed redirects; the configuration is left as it is");
        }
        let status = resp.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(PollReport {
                outcome: Outcome::NotModified,
                fresh,
                ttl: None,
                moved_to,
            });
        }
        if status == StatusCode::GONE {
            self.disable(&Error::Gone.to_string(), now).await?;
            return Err(Error::Gone);
        }
        if !status.is_success() {
            return Err(Error::Status {
                status,
                retry_after: fresh.retry_after,
            });
        }
        let final_url = resp.url().to_owned();
        let content_type = resp.header_str(header::CONTENT_TYPE).map(str::to_owned);
        let content_location = resp.header_str(header::CONTENT_LOCATION).map(str::to_owned);
        let new_validators = Validators::from_headers(resp.headers());
        let body = resp.bytes().await?;
        let parse_url = final_url.clone();
        let feed = tokio::task::spawn_blocking(move || {
            feeds::parse(
                &body,
                &feeds::Hints {
                    url: Some(&parse_url),
                    content_type: content_type.as_deref(),
                    content_location: content_location.as_deref(),
                },
            )
        })
        .await
        .map_err(|e| Error::Internal(format!("the feed parser stopped: {e}")))?
        .map_err(Error::NotAFeed)?;
        let ttl = feed
            .ttl
            .map(|m| Duration::from_secs(u64::from(m).saturating_mul(60)));
        let (noted, items, kind, warning) =
            self.commit(&feed, &final_url, new_validators, now).await?;
        Ok(PollReport {
            outcome: Outcome::Fetched {
                items,
                noted,
                kind,
                warning,
            },
            fresh,
            ttl,
            moved_to,
        })
    }

    /// Plans the fetch and writes it in one transaction; prunes old seen keys afterwards.
    async fn commit(
        &self,
        feed: &feeds::Feed,
        final_url: &str,
        validators: Validators,
        now: OffsetDateTime,
    ) -> Result<(u32, usize, Kind, Option<String>), Error> {
        let name = &self.spec.name;
        let base = Url::parse(final_url).ok();
        let item_keys = identity::item_keys(&feed.items, base.as_ref());
        let former = identity::former_keys(&feed.items, base.as_ref(), &item_keys);
        let mut renamed: Vec<(String, String)> = Vec::new();
        let entries: Vec<Entry> = item_keys
            .into_iter()
            .enumerate()
            .filter_map(|(index, key)| {
                let item = &feed.items[index];
                let key = key?;
                if let Some(Some(old)) = former.get(index) {
                    renamed.push((old.clone(), key.clone()));
                }
                Some(Entry {
                    index,
                    key,
                    date: item.published.or(item.updated),
                })
            })
            .collect();
        let keys: Vec<String> = entries.iter().map(|e| e.key.clone()).collect();
        let mut seen: HashSet<String> = if renamed.is_empty() {
            self.store.seen_keys(name, &keys).await?
        } else {
            let mut ask = keys.clone();
            ask.extend(renamed.iter().map(|(old, _)| old.clone()));
            self.store.seen_keys(name, &ask).await?
        };
        // The seen-key migration: an item an earlier release marked seen under its former key
        // is seen. Its new key is marked seen in this fetch's transaction like every key of the
        // fetch; the former key, no longer refreshed, is pruned like any key the feed stopped
        // serving.
        for (old, new) in renamed {
            if seen.contains(&old) {
                seen.insert(new);
            }
        }
        let new_feed = self.store.is_new_feed(name).await?;
        let latest =
            facts::decode::<facts::Latest>(self.store.fact(&facts::key("latest", name)).await?);
        let mut p = plan::plan(
            &entries,
            plan::Context {
                seen: &seen,
                new_feed,
                baseline: self.spec.baseline,
                latest: latest.as_ref().and_then(|l| parse_time(l.date.as_deref())),
                last_success: self.status().last_success,
                now,
            },
        );
        let source = format!("rss:{name}");
        // The daily cap: notes of the last 24 hours plus this fetch's stay within it; the
        // newest items are the ones noted, the rest are marked seen without a note.
        let cap = self.opts.max_notes_per_day;
        if !p.note.is_empty() {
            let day_ago = now - std::time::Duration::from_secs(24 * 60 * 60);
            let today = self.store.notes_since(&source, day_ago).await?;
            let room = cap.saturating_sub(usize::try_from(today).unwrap_or(usize::MAX));
            if p.note.len() > room {
                let skipped = p.note.len() - room;
                p.note.drain(..skipped);
                let w = format!(
                    "daily cap reached: at most {cap} notes a day from this feed; {skipped} new items were marked seen without a note"
                );
                p.warning = Some(match p.warning.take() {
                    Some(prev) => format!("{prev}; {w}"),
                    None => w,
                });
            }
        }
        if let Some(w) = &p.warning {
            tracing::warn!(feed = %name, "{w}");
        }
        let notes: Vec<store::NewNote> = p
            .note
            .iter()
            .map(|e| {
                let item = &feed.items[e.index];
                store::NewNote {
                    source: source.clone(),
                    key: e.key.clone(),
                    text: note_text(item),
                    link: note_link(item),
                    // The item's own date: published, else updated (Atom's one required date).
                    published: item.published.or(item.updated),
                }
            })
            .collect();
        let mut batch = store::FeedBatch {
            feed: name.clone(),
            notes,
            seen_keys: p.seen.clone(),
            facts: Vec::new(),
            remove_facts: Vec::new(),
        };
        if p.newest.is_some() || p.latest_date.is_some() {
            let l = facts::Latest {
                key: p.newest.as_ref().map(|e| e.key.clone()),
                date: p.latest_date.map(fmt_time),
                at: Some(fmt_time(now)),
            };
            batch
                .facts
                .push((facts::key("latest", name), facts::encode(&l)));
        }
        let hkey = facts::key("http", name);
        if validators.is_empty() {
            batch.remove_facts.push(hkey);
        } else {
            let h = facts::Http {
                url: self.spec.url.clone(),
                etag: validators.etag,
                last_modified: validators.last_modified,
            };
            batch.facts.push((hkey, facts::encode(&h)));
        }
        #[cfg(feature = "test-hooks")]
        self.hold_before_commit().await;
        let out = self.store.commit_feed_batch(batch).await?;
        if p.kind != Kind::Normal {
            tracing::info!(feed = %name, kind = ?p.kind, noted = out.notes_inserted, seen = p.seen.len(), "feed baselined");
        }
        if !keys.is_empty() {
            let cutoff = now - self.opts.prune_after;
            match self.store.prune_seen(name, &keys, cutoff).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(feed = %name, pruned = n, "old seen keys forgotten"),
                Err(e) => tracing::warn!(feed = %name, error = %e, "pruning seen keys failed"),
            }
            // Enough seen keys to cover what the feed serves (twice this fetch, at least
            // `seen_floor`); the least recently seen beyond are forgotten.
            let max = self
                .opts
                .seen_floor
                .max(2 * u64::try_from(keys.len()).unwrap_or(u64::MAX / 2));
            match self.store.prune_seen_beyond(name, &keys, max).await {
                Ok(0) => {}
                Ok(n) => {
                    tracing::debug!(feed = %name, pruned = n, max, "seen keys beyond the bound forgotten")
                }
                Err(e) => tracing::warn!(feed = %name, error = %e, "pruning seen keys failed"),
            }
        }
        Ok((out.notes_inserted, feed.items.len(), p.kind, p.warning))
    }

    /// Test-only hook (`test-hooks` feature; see [`crate::model::COMMIT_HOLD_ENV`]): while the named
    /// file exists, wait before committing, after announcing it in `<file>.held`.
    #[cfg(feature = "test-hooks")]
    async fn hold_before_commit(&self) {
        let Some(path) = self.opts.commit_hold.as_ref() else {
            return;
        };
        if !tokio::fs::try_exists(path).await.unwrap_or(false) {
            return;
        }
        let mut held = path.clone().into_os_string();
        held.push(".held");
        let held = PathBuf::from(held);
        if let Err(e) = tokio::fs::write(&held, self.spec.name.as_bytes()).await {
            tracing::warn!(error = %e, "test hold: cannot write {}", held.display());
        }
        while tokio::fs::try_exists(path).await.unwrap_or(false) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Marks the feed disabled (410 Gone), persistently, for its current URL.
    async fn disable(&self, reason: &str, now: OffsetDateTime) -> Result<(), Error> {
        let d = facts::Disabled {
            url: self.spec.url.clone(),
            reason: reason.to_owned(),
            at: Some(fmt_time(now)),
        };
        self.store
            .set_fact(&facts::key("disabled", &self.spec.name), &facts::encode(&d))
            .await?;
        self.inner().disabled = Some(reason.to_owned());
        tracing::warn!(feed = %self.spec.name, "410 Gone: the feed is disabled until its url changes");
        Ok(())
    }

    /// The loop of one feed: wait for its time, then for its host's slot, poll, repeat.
    pub(crate) async fn run(&self, gate: &HostGate, cancel: &CancellationToken) {
        let host_interval = self.spec.fetcher.door().host_interval;
        drive(
            self.next_at(),
            gate,
            &self.host,
            host_interval,
            cancel,
            || self.next_at(),
            || async { self.poll_recorded().await.1 },
        )
        .await;
    }
}

/// The schedule loop, generic over the poll so tests can drive it on a paused clock:
/// sleep until `first` (re-reading `due` in case a manual poll moved it), reserve the host's
/// slot, `poll`, and repeat at the instant it returns; stop on `None` or cancellation.
pub(crate) async fn drive<D, P, Fut>(
    first: Instant,
    gate: &HostGate,
    host: &str,
    host_interval: Duration,
    cancel: &CancellationToken,
    due: D,
    mut poll: P,
) where
    D: Fn() -> Instant,
    P: FnMut() -> Fut,
    Fut: Future<Output = Option<Instant>>,
{
    let mut at = first;
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep_until(at) => {}
        }
        let due_now = due();
        if due_now > at {
            at = due_now;
            continue;
        }
        let slot = gate.reserve(host, host_interval);
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep_until(slot) => {}
        }
        let next = tokio::select! {
            () = cancel.cancelled() => return,
            next = poll() => next,
        };
        match next {
            Some(n) => at = n,
            None => return,
        }
    }
}

/// When the next poll is, as the log says it to people: `none` (no next poll: the feed is
/// disabled), `in 45s`, `in 31m52s`, `in 2h05m`.
fn in_words(delay: Option<Duration>) -> String {
    let Some(d) = delay else {
        return "none".to_owned();
    };
    let s = d.as_secs() + u64::from(d.subsec_millis() >= 500);
    match s {
        0..60 => format!("in {s}s"),
        60..3600 => format!("in {}m{:02}s", s / 60, s % 60),
        _ => format!("in {}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod in_words_tests {
    use super::*;

    #[test]
    fn the_next_poll_is_said_in_words() {
        for (d, want) in [
            (None, "none"),
            (Some(Duration::from_millis(400)), "in 0s"),
            (Some(Duration::from_secs(45)), "in 45s"),
            (Some(Duration::from_secs_f64(1912.18)), "in 31m52s"),
            (Some(Duration::from_secs(7500)), "in 2h05m"),
        ] {
            assert_eq!(in_words(d), want);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Freshness;
    use std::cell::RefCell;
    use std::rc::Rc;

    fn item(title: Option<&str>, summary: Option<&str>) -> feeds::Item {
        feeds::Item {
            title: title.map(str::to_owned),
            summary_text: summary.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn note_text_is_title_and_capped_summary() {
        assert_eq!(note_text(&item(Some(" T "), Some(" S "))), "T\nS");
        assert_eq!(note_text(&item(Some("T"), None)), "T");
        assert_eq!(note_text(&item(None, Some("S"))), "S");
        assert_eq!(note_text(&item(Some("Same"), Some("Same"))), "Same");
        assert_eq!(note_text(&item(None, None)), "(untitled item)");
        let long = "ж".repeat(5000);
        let t = note_text(&item(Some(&long), Some(&long)));
        let (title, summary) = t.split_once('\n').unwrap();
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS + 1);
        assert_eq!(summary.chars().count(), MAX_SUMMARY_CHARS + 1);
        assert!(summary.ends_with('…'));
        let mut i = item(None, None);
        i.link = Some(format!("https://example.org/{}", "a".repeat(MAX_LINK)));
        assert_eq!(note_link(&i), None);
        i.link = Some("https://example.org/x".into());
        assert_eq!(note_link(&i).as_deref(), Some("https://example.org/x"));
    }

    /// Runs `drive` with a scripted sequence of verdicts and returns the (virtual) instants
    /// of the polls, relative to the start.
    async fn script(verdicts: Vec<Verdict>, interval: Duration, min: Duration) -> Vec<Duration> {
        let t0 = Instant::now();
        let polls = Rc::new(RefCell::new(Vec::new()));
        let gate = HostGate::default();
        let cancel = CancellationToken::new();
        let sched = RefCell::new(Schedule::new(interval, min, 0));
        let script = RefCell::new(verdicts.into_iter());
        drive(
            t0,
            &gate,
            "h",
            Duration::ZERO,
            &cancel,
            || t0,
            || {
                let polls = polls.clone();
                let v = script.borrow_mut().next();
                let d = v.and_then(|v| sched.borrow_mut().next_delay(v, 0.0));
                async move {
                    polls.borrow_mut().push(Instant::now() - t0);
                    d.map(|d| Instant::now() + d)
                }
            },
        )
        .await;
        let out = polls.borrow().clone();
        out
    }

    #[tokio::test(start_paused = true)]
    async fn the_loop_follows_the_schedule_on_a_paused_clock() {
        let m = |n: u64| Duration::from_secs(60 * n);
        let ok = Verdict::Success {
            ttl: None,
            fresh: Freshness::default(),
        };
        let fail = Verdict::Failure { retry_after: None };
        let retry = Verdict::Failure {
            retry_after: Some(m(90)),
        };
        let ttl = Verdict::Success {
            ttl: Some(m(60)),
            fresh: Freshness::default(),
        };
        let polls = script(
            vec![ok, fail, fail, fail, ok, retry, ttl, Verdict::Stop],
            m(10),
            m(5),
        )
        .await;
        // ok → 10; fail → 10, 20, 40; ok → 10; 429 with Retry-After 90 m → 90; ttl 60 → 60;
        // then the script's Stop ends the loop.
        let gaps: Vec<u64> = polls
            .windows(2)
            .map(|w| (w[1] - w[0]).as_secs() / 60)
            .collect();
        assert_eq!(polls[0], Duration::ZERO);
        assert_eq!(gaps, [10, 10, 20, 40, 10, 90, 60]);
    }

    #[tokio::test(start_paused = true)]
    async fn two_feeds_on_one_host_are_spaced_by_the_host_interval() {
        let t0 = Instant::now();
        let gate = HostGate::default();
        let cancel = CancellationToken::new();
        let log = Rc::new(RefCell::new(Vec::<(char, Duration)>::new()));
        let feed = |name: char, rounds: usize| {
            let log = log.clone();
            let left = RefCell::new(rounds);
            let gate = &gate;
            let cancel = &cancel;
            async move {
                drive(
                    t0,
                    gate,
                    "same.example",
                    Duration::from_secs(1),
                    cancel,
                    || t0,
                    || {
                        let log = log.clone();
                        let more = {
                            let mut l = left.borrow_mut();
                            *l -= 1;
                            *l > 0
                        };
                        async move {
                            log.borrow_mut().push((name, Instant::now() - t0));
                            more.then(Instant::now)
                        }
                    },
                )
                .await;
            }
        };
        tokio::join!(feed('a', 3), feed('b', 3));
        let times: Vec<Duration> = log.borrow().iter().map(|(_, t)| *t).collect();
        assert_eq!(times.len(), 6);
        for w in times.windows(2) {
            assert!(w[1] - w[0] >= Duration::from_secs(1), "{:?}", log.borrow());
        }
        let names: String = log.borrow().iter().map(|(n, _)| *n).collect();
        assert_eq!(names.matches('a').count(), 3);
        assert_eq!(names.matches('b').count(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_stops_the_loop_while_it_sleeps() {
        let gate = HostGate::default();
        let cancel = CancellationToken::new();
        let t0 = Instant::now();
        let polls = RefCell::new(0);
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            c2.cancel();
        });
        drive(
            t0,
            &gate,
            "h",
            Duration::ZERO,
            &cancel,
            || t0,
            || {
                *polls.borrow_mut() += 1;
                async { Some(Instant::now() + Duration::from_secs(1000)) }
            },
        )
        .await;
        // Polls at 0, 1000, 2000, 3000 s; cancelled at 3600 s while sleeping.
        assert_eq!(*polls.borrow(), 4);
    }
}
