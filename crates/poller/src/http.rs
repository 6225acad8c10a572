//! What the response headers say about the schedule: `Cache-Control: max-age`, `Expires`,
//! `Retry-After`, and the validators to send back.

use std::time::Duration;

use time::{
    format_description::FormatItem, macros::format_description, OffsetDateTime, PrimitiveDateTime,
};
use webfetch::{header, HeaderMap};

/// The longest validator kept (an `ETag` or `Last-Modified` longer than this is not stored).
pub(crate) const MAX_VALIDATOR: usize = 1024;

/// The freshness hints of one response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Freshness {
    /// `Cache-Control: max-age` (or `s-maxage`), or `Expires` minus `Date`/now.
    pub(crate) max_age: Option<Duration>,
    /// `Retry-After`, as seconds or an HTTP date.
    pub(crate) retry_after: Option<Duration>,
}

/// The validators of a response, exactly as received (visible ASCII only, bounded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Validators {
    pub(crate) etag: Option<String>,
    pub(crate) last_modified: Option<String>,
}

impl Validators {
    pub(crate) fn from_headers(h: &HeaderMap) -> Validators {
        let get = |name: header::HeaderName| {
            h.get(name)
                .and_then(|v| v.to_str().ok())
                .filter(|s| !s.trim().is_empty() && s.len() <= MAX_VALIDATOR)
                .map(str::to_owned)
        };
        Validators {
            etag: get(header::ETAG),
            last_modified: get(header::LAST_MODIFIED),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// Reads the freshness hints; `now` is the local clock in UTC (used when the server sends no
/// `Date`).
pub(crate) fn freshness(h: &HeaderMap, now: OffsetDateTime) -> Freshness {
    let text = |name: header::HeaderName| h.get(name).and_then(|v| v.to_str().ok());
    let date = text(header::DATE).and_then(http_date).unwrap_or(now);
    let max_age = text(header::CACHE_CONTROL).and_then(max_age).or_else(|| {
        let expires = http_date(text(header::EXPIRES)?)?;
        Some(positive(expires - date))
    });
    let retry_after = text(header::RETRY_AFTER).and_then(|v| retry_after(v, date));
    Freshness {
        max_age,
        retry_after,
    }
}

fn positive(d: time::Duration) -> Duration {
    Duration::try_from(d).unwrap_or(Duration::ZERO)
}

/// `max-age=N` (or `s-maxage=N`) of a Cache-Control value; `no-cache`/`no-store` say nothing
/// about how often to poll, so they give `None`.
pub(crate) fn max_age(v: &str) -> Option<Duration> {
    let mut best: Option<u64> = None;
    for part in v.split(',') {
        let (name, val) = match part.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim().trim_matches('"')),
            None => continue,
        };
        if name.eq_ignore_ascii_case("max-age") || name.eq_ignore_ascii_case("s-maxage") {
            if let Some(n) = seconds(val) {
                best = Some(best.map_or(n, |b| b.max(n)));
            }
        }
    }
    best.map(Duration::from_secs)
}

/// `Retry-After`: delay-seconds, or an HTTP date relative to `date`.
pub(crate) fn retry_after(v: &str, date: OffsetDateTime) -> Option<Duration> {
    let v = v.trim();
    if let Some(n) = seconds(v) {
        return Some(Duration::from_secs(n));
    }
    http_date(v).map(|t| positive(t - date))
}

/// A non-negative decimal number of seconds (an absurd length saturates).
fn seconds(v: &str) -> Option<u64> {
    if v.is_empty() || v.len() > 20 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(v.parse::<u64>().unwrap_or(u64::MAX))
}

const IMF_FIXDATE: &[FormatItem<'static>] = format_description!(
    "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
);
const ASCTIME: &[FormatItem<'static>] = format_description!(
    "[weekday repr:short] [month repr:short] [day padding:space] [hour]:[minute]:[second] [year]"
);

/// `Sunday, 06-Nov-94 08:49:37 GMT`: rewritten as IMF-fixdate with a four-digit year (a
/// two-digit year below 70 is 20xx, else 19xx).
fn rfc850(v: &str) -> Option<OffsetDateTime> {
    let (weekday, rest) = v.split_once(", ")?;
    let (date, time) = rest.split_once(' ')?;
    let mut parts = date.splitn(3, '-');
    let (day, month, year) = (parts.next()?, parts.next()?, parts.next()?);
    if weekday.len() < 3 || !weekday.is_char_boundary(3) || year.len() != 2 {
        return None;
    }
    let yy: i32 = year.parse().ok()?;
    let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
    let fixed = format!("{}, {day} {month} {year} {time}", &weekday[..3]);
    PrimitiveDateTime::parse(&fixed, IMF_FIXDATE)
        .ok()
        .map(PrimitiveDateTime::assume_utc)
}

/// An HTTP date (IMF-fixdate; the obsolete RFC 850 and asctime forms too).
pub(crate) fn http_date(v: &str) -> Option<OffsetDateTime> {
    let v = v.trim();
    if v.len() > 64 {
        return None;
    }
    if let Ok(t) = PrimitiveDateTime::parse(v, IMF_FIXDATE) {
        return Some(t.assume_utc());
    }
    if let Some(t) = rfc850(v) {
        return Some(t);
    }
    PrimitiveDateTime::parse(v, ASCTIME)
        .ok()
        .map(PrimitiveDateTime::assume_utc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn cache_control_max_age() {
        let table: &[(&str, Option<u64>)] = &[
            ("max-age=600", Some(600)),
            ("public, max-age=60, s-maxage=3600", Some(3600)),
            ("MAX-AGE=\"120\"", Some(120)),
            ("no-cache", None),
            ("max-age=-5", None),
            ("max-age=abc", None),
            ("max-age=99999999999999999999", Some(u64::MAX)),
            ("max-age=999999999999999999999", None),
            ("", None),
        ];
        for (v, want) in table {
            assert_eq!(max_age(v), want.map(Duration::from_secs), "{v:?}");
        }
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = datetime!(2026-11-30 05:00:00 UTC);
        let table: &[(&str, Option<u64>)] = &[
            ("120", Some(120)),
            (" 0 ", Some(0)),
            ("Mon, 30 Nov 2026 05:10:00 GMT", Some(600)),
            ("Monday, 30-Nov-26 05:01:00 GMT", Some(60)),
            ("Mon Nov 30 05:00:30 2026", Some(30)),
            ("Sun, 29 Nov 2026 05:00:00 GMT", Some(0)),
            ("soon", None),
            ("-1", None),
        ];
        for (v, want) in table {
            assert_eq!(retry_after(v, now), want.map(Duration::from_secs), "{v:?}");
        }
    }

    #[test]
    fn expires_relative_to_date() {
        let mut h = HeaderMap::new();
        h.insert(
            header::DATE,
            "Mon, 30 Nov 2026 05:00:00 GMT".parse().unwrap(),
        );
        h.insert(
            header::EXPIRES,
            "Mon, 30 Nov 2026 06:00:00 GMT".parse().unwrap(),
        );
        let f = freshness(&h, datetime!(2000-01-01 00:00:00 UTC));
        assert_eq!(f.max_age, Some(Duration::from_secs(3600)));
        h.insert(header::CACHE_CONTROL, "max-age=60".parse().unwrap());
        assert_eq!(
            freshness(&h, OffsetDateTime::UNIX_EPOCH).max_age,
            Some(Duration::from_secs(60))
        );
        let mut h = HeaderMap::new();
        h.insert(header::EXPIRES, "0".parse().unwrap());
        assert_eq!(freshness(&h, OffsetDateTime::UNIX_EPOCH).max_age, None);
    }

    #[test]
    fn validators_exactly_as_received() {
        let mut h = HeaderMap::new();
        h.insert(header::ETAG, "W/\"abc  def\"".parse().unwrap());
        h.insert(
            header::LAST_MODIFIED,
            "Mon, 30 Nov 2026 05:00:00 GMT".parse().unwrap(),
        );
        let v = Validators::from_headers(&h);
        assert_eq!(v.etag.as_deref(), Some("W/\"abc  def\""));
        assert_eq!(
            v.last_modified.as_deref(),
            Some("Mon, 30 Nov 2026 05:00:00 GMT")
        );
        let mut h = HeaderMap::new();
        h.insert(header::ETAG, "x".repeat(MAX_VALIDATOR + 1).parse().unwrap());
        assert!(Validators::from_headers(&h).is_empty());
    }
}
