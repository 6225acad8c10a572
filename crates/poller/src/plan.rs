//! What one fetch writes: which items become notes, which keys are marked seen, and how far
//! the feed was read. Pure: no IO, no clock.

use std::collections::HashSet;
use std::time::Duration;

use time::OffsetDateTime;

/// At most this many notes come from one fetch; the rest are marked seen (with a warning).
pub const MAX_NOTES_PER_FETCH: usize = 100;

/// A fetch needs at least this many items before "most look new but are old" is judged.
const REBASELINE_MIN_ITEMS: usize = 4;

/// A date further in the future than this counts as now when recording how far the feed was
/// read (a feed dated in 2099 must not make every later item look old).
const FUTURE_SLACK: Duration = Duration::from_secs(24 * 60 * 60);

/// One item of the fetch, by its computed key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Index into the feed's items.
    pub(crate) index: usize,
    pub(crate) key: String,
    /// Published, else updated.
    pub(crate) date: Option<OffsetDateTime>,
}

/// How the fetch was treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Every unseen item was noted.
    Normal,
    /// The first fetch of a new feed: only the newest few were noted, all marked seen.
    Baseline,
    /// Most items looked new but carried old dates (a migration, a guid scheme change): all
    /// marked seen, only items newer than what was already read were noted.
    Rebaseline,
}

/// The decision for one fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) kind: Kind,
    /// Entries to note, oldest first (so note ids grow with recency).
    pub(crate) note: Vec<Entry>,
    /// Every key of the fetch: marked seen (first time) or refreshed.
    pub(crate) seen: Vec<String>,
    /// The newest entry of the fetch, for `rss:latest:<feed>`.
    pub(crate) newest: Option<Entry>,
    /// The newest date read so far (the previous one or this fetch's, whichever is later).
    pub(crate) latest_date: Option<OffsetDateTime>,
    /// Something the owner should know (shown in status and logged).
    pub(crate) warning: Option<String>,
}

/// What the store and the feed's history say.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    /// Keys of this fetch already marked seen.
    pub(crate) seen: &'a HashSet<String>,
    /// Nothing was ever marked seen for this feed.
    pub(crate) new_feed: bool,
    /// How many items a baseline notes.
    pub(crate) baseline: usize,
    /// The newest item date read before (`rss:latest:<feed>`).
    pub(crate) latest: Option<OffsetDateTime>,
    /// The last successful fetch before this one.
    pub(crate) last_success: Option<OffsetDateTime>,
    /// Now, by the wall clock.
    pub(crate) now: OffsetDateTime,
}

/// Indices into `entries`, newest first: by date when every entry has one, else in document
/// order (feeds list newest first).
fn newest_first(entries: &[&Entry]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    if entries.iter().all(|e| e.date.is_some()) {
        // Stable: equal dates keep document order.
        order.sort_by(|&a, &b| entries[b].date.cmp(&entries[a].date));
    }
    order
}

/// The newest `n` of `entries`, returned oldest first.
fn newest(entries: &[&Entry], n: usize) -> Vec<Entry> {
    let mut chosen: Vec<Entry> = newest_first(entries)
        .into_iter()
        .take(n)
        .map(|i| entries[i].clone())
        .collect();
    chosen.reverse();
    chosen
}

pub(crate) fn plan(entries: &[Entry], cx: Context<'_>) -> Plan {
    let all: Vec<&Entry> = entries.iter().collect();
    let seen: Vec<String> = entries.iter().map(|e| e.key.clone()).collect();
    let cap = |d: OffsetDateTime| d.min(cx.now + FUTURE_SLACK);
    let newest_entry = newest_first(&all).first().map(|&i| all[i].clone());
    let fetch_latest = entries.iter().filter_map(|e| e.date).map(cap).max();
    let latest_date = match (cx.latest, fetch_latest) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let mut warning = None;
    let (kind, note) = if cx.new_feed {
        (Kind::Baseline, newest(&all, cx.baseline))
    } else {
        let fresh: Vec<&Entry> = entries
            .iter()
            .filter(|e| !cx.seen.contains(&e.key))
            .collect();
        // "Old" = dated no later than what was already read; without that, dated well before
        // the previous successful fetch (it would have been in that fetch).
        let old_before = cx
            .latest
            .or_else(|| cx.last_success.map(|t| t - FUTURE_SLACK));
        let is_old = |e: &Entry| matches!((e.date, old_before), (Some(d), Some(b)) if d <= b);
        let old = fresh.iter().filter(|e| is_old(e)).count();
        if entries.len() >= REBASELINE_MIN_ITEMS
            && fresh.len() * 2 > entries.len()
            && old * 2 > fresh.len()
        {
            let genuinely_new: Vec<&Entry> = fresh
                .iter()
                .copied()
                .filter(|e| e.date.is_some() && !is_old(e))
                .collect();
            warning = Some(format!(
                "{} of {} items looked new but {old} of them were dated before what was already read; re-baselined instead of noting them (a feed migration or an id scheme change?)",
                fresh.len(),
                entries.len()
            ));
            (Kind::Rebaseline, newest(&genuinely_new, cx.baseline))
        } else {
            if fresh.len() > MAX_NOTES_PER_FETCH {
                warning = Some(format!(
                    "{} new items in one fetch; noted the newest {MAX_NOTES_PER_FETCH}",
                    fresh.len()
                ));
            }
            (Kind::Normal, newest(&fresh, MAX_NOTES_PER_FETCH))
        }
    };
    Plan {
        kind,
        note,
        seen,
        newest: newest_entry,
        latest_date,
        warning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-30 05:00 UTC);

    fn e(index: usize, key: &str, days_ago: Option<i64>) -> Entry {
        Entry {
            index,
            key: key.to_owned(),
            date: days_ago.map(|d| NOW - time::Duration::days(d)),
        }
    }

    fn cx<'a>(
        seen: &'a HashSet<String>,
        new_feed: bool,
        latest: Option<OffsetDateTime>,
    ) -> Context<'a> {
        Context {
            seen,
            new_feed,
            baseline: 3,
            latest,
            last_success: Some(NOW - time::Duration::hours(1)),
            now: NOW,
        }
    }

    fn keys(p: &Plan) -> Vec<&str> {
        p.note.iter().map(|e| e.key.as_str()).collect()
    }

    #[test]
    fn baseline_notes_the_newest_few_oldest_first_and_marks_all_seen() {
        let entries: Vec<Entry> = (0..10)
            .map(|i| e(i, &format!("k{i}"), Some(i as i64)))
            .collect();
        let none = HashSet::new();
        let p = plan(&entries, cx(&none, true, None));
        assert_eq!(p.kind, Kind::Baseline);
        assert_eq!(keys(&p), ["k2", "k1", "k0"]);
        assert_eq!(p.seen.len(), 10);
        assert_eq!(p.newest.unwrap().key, "k0");
        assert_eq!(p.latest_date, Some(NOW));
        // Dates out of document order: by date.
        let entries = vec![
            e(0, "old", Some(9)),
            e(1, "new", Some(0)),
            e(2, "mid", Some(3)),
        ];
        assert_eq!(
            keys(&plan(&entries, cx(&none, true, None))),
            ["old", "mid", "new"]
        );
        // Undated: document order.
        let entries = vec![
            e(0, "a", None),
            e(1, "b", Some(0)),
            e(2, "c", None),
            e(3, "d", None),
        ];
        assert_eq!(
            keys(&plan(&entries, cx(&none, true, None))),
            ["c", "b", "a"]
        );
        let mut c = cx(&none, true, None);
        c.baseline = 0;
        assert!(plan(&entries, c).note.is_empty());
    }

    #[test]
    fn a_normal_fetch_notes_every_unseen_item() {
        let entries: Vec<Entry> = (0..6)
            .map(|i| e(i, &format!("k{i}"), Some(i as i64)))
            .collect();
        let seen: HashSet<String> = ["k2", "k3", "k4", "k5"].map(String::from).into();
        let p = plan(
            &entries,
            cx(&seen, false, Some(NOW - time::Duration::days(2))),
        );
        assert_eq!(p.kind, Kind::Normal);
        assert_eq!(keys(&p), ["k1", "k0"]);
        assert_eq!(p.warning, None);
        let all: HashSet<String> = entries.iter().map(|e| e.key.clone()).collect();
        assert!(plan(&entries, cx(&all, false, None)).note.is_empty());
    }

    #[test]
    fn most_new_but_old_rebaselines_instead_of_flooding() {
        // Every guid changed; dates are the same old ones, plus one genuinely new item.
        let mut entries: Vec<Entry> = (1..=10)
            .map(|i| e(i, &format!("new-scheme-{i}"), Some(i as i64)))
            .collect();
        entries.insert(0, e(0, "fresh", Some(0)));
        let seen = HashSet::new();
        let p = plan(
            &entries,
            cx(&seen, false, Some(NOW - time::Duration::days(1))),
        );
        assert_eq!(p.kind, Kind::Rebaseline);
        assert_eq!(keys(&p), ["fresh"]);
        assert_eq!(p.seen.len(), 11);
        assert!(p.warning.unwrap().contains("re-baselined"));
        // Without rss:latest, the previous success dates what is old.
        let mut c = cx(&seen, false, None);
        c.last_success = Some(NOW - time::Duration::hours(2));
        let p = plan(&entries, c);
        assert_eq!(p.kind, Kind::Rebaseline);
        // Many new items with new dates (the daemon was off for weeks) are all noted.
        let entries: Vec<Entry> = (0..10)
            .map(|i| e(i, &format!("k{i}"), Some(i as i64)))
            .collect();
        let p = plan(
            &entries,
            cx(&seen, false, Some(NOW - time::Duration::days(30))),
        );
        assert_eq!(p.kind, Kind::Normal);
        assert_eq!(p.note.len(), 10);
        // Undated items can never be judged old.
        let entries: Vec<Entry> = (0..10).map(|i| e(i, &format!("k{i}"), None)).collect();
        assert_eq!(
            plan(&entries, cx(&seen, false, Some(NOW))).kind,
            Kind::Normal
        );
    }

    #[test]
    fn notes_per_fetch_are_capped_and_future_dates_do_not_poison_latest() {
        let entries: Vec<Entry> = (0..150)
            .map(|i| e(i, &format!("k{i}"), Some(-(i as i64))))
            .collect();
        let seen = HashSet::new();
        let p = plan(&entries, cx(&seen, false, None));
        assert_eq!(p.note.len(), MAX_NOTES_PER_FETCH);
        assert_eq!(p.seen.len(), 150);
        assert!(p.warning.unwrap().contains("150 new items"));
        assert_eq!(p.latest_date, Some(NOW + FUTURE_SLACK));
    }
}
