//! Date parsing: RFC 822/1123/850 with any zone name or numeric offset, RFC 3339 / ISO 8601
//! variants, date-only forms, asctime, and common broken spellings. Everything ends up in UTC.

use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// Offset in minutes east of UTC for a zone abbreviation.
fn zone_minutes(name: &str) -> Option<i32> {
    let mut buf = [0u8; 5];
    let dst = buf.get_mut(..name.len())?;
    dst.copy_from_slice(name.as_bytes());
    dst.make_ascii_uppercase();
    let up = std::str::from_utf8(dst).ok()?;
    Some(match up {
        "Z" | "UT" | "UTC" | "GMT" | "WET" | "Z00" | "GMT0" => 0,
        "EST" => -5 * 60,
        "EDT" => -4 * 60,
        "CST" => -6 * 60,
        "CDT" => -5 * 60,
        "MST" => -7 * 60,
        "MDT" => -6 * 60,
        "PST" => -8 * 60,
        "PDT" => -7 * 60,
        "AKST" => -9 * 60,
        "AKDT" => -8 * 60,
        "HST" => -10 * 60,
        "AST" => -4 * 60,
        "ADT" => -3 * 60,
        "NST" => -(3 * 60 + 30),
        "NDT" => -(2 * 60 + 30),
        "BRT" => -3 * 60,
        "ART" => -3 * 60,
        "WEST" | "BST" | "CET" | "MET" | "WAT" | "IST" => {
            if up == "IST" {
                5 * 60 + 30
            } else {
                60
            }
        }
        "CEST" | "MEST" | "EET" | "CAT" | "SAST" => 2 * 60,
        "EEST" | "MSK" | "EAT" | "TRT" | "AST3" => 3 * 60,
        "MSD" | "GST" | "SAMT" => 4 * 60,
        "PKT" | "YEKT" => 5 * 60,
        "NPT" => 5 * 60 + 45,
        "OMST" | "BDT" => 6 * 60,
        "ICT" | "WIB" | "KRAT" | "NOVT" => 7 * 60,
        "HKT" | "SGT" | "AWST" | "PHT" | "IRKT" | "MYT" | "WITA" | "CCT" => 8 * 60,
        "JST" | "KST" | "YAKT" | "WIT" => 9 * 60,
        "ACST" => 9 * 60 + 30,
        "ACDT" => 10 * 60 + 30,
        "AEST" | "VLAT" | "CHST" => 10 * 60,
        "AEDT" | "MAGT" => 11 * 60,
        "NZST" | "PETT" | "FJT" => 12 * 60,
        "NZDT" => 13 * 60,
        "IRST" => 3 * 60 + 30,
        "IDT" => 3 * 60,
        _ => return None,
    })
}

fn month_from(word: &str) -> Option<Month> {
    let w = word.trim_end_matches('.');
    let mut buf = [0u8; 3];
    buf.copy_from_slice(w.as_bytes().get(..3)?);
    buf.make_ascii_lowercase();
    let m = match &buf {
        b"jan" => Month::January,
        b"feb" => Month::February,
        b"mar" => Month::March,
        b"apr" => Month::April,
        b"may" => Month::May,
        b"jun" => Month::June,
        b"jul" => Month::July,
        b"aug" => Month::August,
        b"sep" => Month::September,
        b"oct" => Month::October,
        b"nov" => Month::November,
        b"dec" => Month::December,
        _ => return None,
    };
    Some(m)
}

fn is_weekday(word: &str) -> bool {
    let Some(head) = word.get(..3) else {
        return false;
    };
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        .iter()
        .any(|d| head.eq_ignore_ascii_case(d))
}

/// Parses a numeric offset such as `+0300`, `-05:00`, `+3`, `+03`.
fn numeric_offset(s: &str) -> Option<i32> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m) = match digits.len() {
        1 | 2 => (digits.parse::<i32>().ok()?, 0),
        3 => (
            digits[..1].parse::<i32>().ok()?,
            digits[1..].parse::<i32>().ok()?,
        ),
        _ => (
            digits[..2].parse::<i32>().ok()?,
            digits[2..].parse::<i32>().ok()?,
        ),
    };
    (h <= 18 && m < 60).then_some(sign * (h * 60 + m))
}

fn build(
    year: i32,
    month: Month,
    day: u8,
    time: (u8, u8, u8, u32),
    offset_min: i32,
) -> Option<OffsetDateTime> {
    let date = Date::from_calendar_date(year, month, day).ok()?;
    let (h, mi, s, ns) = time;
    // A leap second (":60") is clamped.
    let t = Time::from_hms_nano(h, mi, s.min(59), ns).ok()?;
    let off = UtcOffset::from_whole_seconds(offset_min.checked_mul(60)?).ok()?;
    Some(
        PrimitiveDateTime::new(date, t)
            .assume_offset(off)
            .to_offset(UtcOffset::UTC),
    )
}

fn parse_time(s: &str) -> Option<(u8, u8, u8, u32)> {
    let mut parts = s.split(':');
    let h: u8 = parts.next()?.trim().parse().ok()?;
    let m: u8 = parts.next().map_or(Some(0), |p| p.trim().parse().ok())?;
    let (sec, nanos) = match parts.next() {
        None => (0, 0),
        Some(p) => {
            let (whole, frac) = p.split_once(['.', ',']).unwrap_or((p, ""));
            let sec: u8 = whole.trim().parse().ok()?;
            let mut nanos = 0u32;
            let mut scale = 100_000_000u32;
            for c in frac.chars().take(9) {
                let d = c.to_digit(10)?;
                nanos += d * scale;
                scale /= 10;
            }
            (sec, nanos)
        }
    };
    if parts.next().is_some() {
        return None;
    }
    Some((h, m, sec, nanos))
}

/// ISO 8601 / RFC 3339: `2004-01-01T19:48:21Z`, `2004-01-01 19:48:21+03:00`,
/// `2004-01-01T19:48`, `2004-01-01`, `2004-01`, `20040101T194821Z`.
fn parse_iso(s: &str) -> Option<(OffsetDateTime, bool)> {
    let b = s.as_bytes();
    let (year, month, day, rest) = if b.len() >= 8 && b[..8].iter().all(u8::is_ascii_digit) {
        (
            s[..4].parse().ok()?,
            s[4..6].parse::<u8>().ok()?,
            s[6..8].parse::<u8>().ok()?,
            &s[8..],
        )
    } else {
        if b.len() < 7 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
            return None;
        }
        let year: i32 = s[..4].parse().ok()?;
        let rest = &s[5..];
        let mlen = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let month: u8 = rest.get(..mlen)?.parse().ok()?;
        let rest = &rest[mlen..];
        if let Some(r) = rest.strip_prefix('-') {
            let dlen = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            let day: u8 = r.get(..dlen)?.parse().ok()?;
            (year, month, day, &r[dlen..])
        } else {
            (year, month, 1, rest)
        }
    };
    let month = Month::try_from(month).ok()?;
    let rest = rest.trim_start();
    let rest = rest.strip_prefix(['T', 't']).unwrap_or(rest).trim_start();
    if rest.is_empty() {
        return Some((build(year, month, day, (0, 0, 0, 0), 0)?, true));
    }
    // Split the time from the zone.
    let tend = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.' || c == ','))
        .unwrap_or(rest.len());
    let time_str = &rest[..tend];
    let time = if time_str.len() == 6 && !time_str.contains(':') {
        (
            time_str[..2].parse().ok()?,
            time_str[2..4].parse().ok()?,
            time_str[4..].parse().ok()?,
            0,
        )
    } else {
        parse_time(time_str)?
    };
    let zone = rest[tend..].trim();
    let (offset, known) = if zone.is_empty() {
        (0, true)
    } else if let Some(o) = numeric_offset(zone) {
        (o, true)
    } else if let Some(o) = zone_minutes(zone) {
        (o, true)
    } else {
        (0, false)
    };
    Some((build(year, month, day, time, offset)?, known))
}

/// RFC 822 and relatives, by tokens: weekday, day, month name, year, time, zone in any order
/// that real feeds use.
fn parse_words(s: &str) -> Option<(OffsetDateTime, bool)> {
    let mut day: Option<u8> = None;
    let mut month: Option<Month> = None;
    let mut year: Option<i32> = None;
    let mut time: Option<(u8, u8, u8, u32)> = None;
    let mut offset: Option<i32> = None;
    let mut known_zone = true;
    let mut numbers: Vec<u32> = Vec::new();
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c == ',' || c == '(' || c == ')' {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut tokens: Vec<&str> = Vec::new();
    for t in cleaned.split_whitespace() {
        // `01-Jan-2004` (RFC 850) and `1/2/2004`.
        if !t.starts_with(['+', '-']) && t.contains('-') && !t.contains(':') {
            tokens.extend(t.split('-').filter(|p| !p.is_empty()));
        } else {
            tokens.push(t);
        }
    }
    for tok in tokens {
        if tok.contains(':') && tok.starts_with(|c: char| c.is_ascii_digit()) {
            // `19:48:21` or `19:48:21+0300` / `19:48:21Z`.
            let end = tok
                .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
                .unwrap_or(tok.len());
            time = Some(parse_time(&tok[..end])?);
            let z = &tok[end..];
            if !z.is_empty() {
                offset = numeric_offset(z).or_else(|| zone_minutes(z));
            }
        } else if let Some(o) = numeric_offset(tok) {
            if offset.is_none() && time.is_some() {
                offset = Some(o);
            }
        } else if let Some(m) = month_from(tok) {
            if month.is_none() && tok.chars().all(|c| c.is_ascii_alphabetic() || c == '.') {
                month = Some(m);
            }
        } else if tok.bytes().all(|b| b.is_ascii_digit()) {
            numbers.push(tok.parse().ok()?);
        } else if tok.chars().all(|c| c.is_ascii_alphabetic()) {
            if is_weekday(tok) {
                continue;
            }
            let (am, pm) = (
                tok.eq_ignore_ascii_case("am"),
                tok.eq_ignore_ascii_case("pm"),
            );
            if am || pm {
                if let Some(t) = time.as_mut() {
                    if pm && t.0 < 12 {
                        t.0 += 12;
                    } else if am && t.0 == 12 {
                        t.0 = 0;
                    }
                }
                continue;
            }
            if offset.is_none() {
                if let Some(z) = zone_minutes(tok) {
                    offset = Some(z);
                    continue;
                }
                // `GMT+3` and other zone-ish words are handled below; any other word is a zone
                // name we do not know (if it comes after the time).
                if time.is_some() {
                    known_zone = false;
                    offset = Some(0);
                }
            }
        } else if let Some(rest) = tok.strip_prefix("GMT").or_else(|| tok.strip_prefix("UTC")) {
            offset = numeric_offset(rest);
        } else if tok.contains('/') {
            let parts: Vec<&str> = tok.split('/').collect();
            if parts.len() == 3 {
                // Year first (2004/01/02) or month first (01/02/2004, as US feeds write it).
                let nums: Vec<u32> = parts
                    .iter()
                    .map(|p| p.parse().ok())
                    .collect::<Option<_>>()?;
                if nums[0] > 31 {
                    year = Some(i32::try_from(nums[0]).ok()?);
                    month = Some(Month::try_from(u8::try_from(nums[1]).ok()?).ok()?);
                    day = Some(u8::try_from(nums[2]).ok()?);
                } else {
                    month = Some(Month::try_from(u8::try_from(nums[0]).ok()?).ok()?);
                    day = Some(u8::try_from(nums[1]).ok()?);
                    numbers.push(nums[2]);
                }
            }
        } else {
            // Ordinal days (`1st`, `22nd`).
            let digits: String = tok.chars().take_while(char::is_ascii_digit).collect();
            let suffix = &tok[digits.len()..];
            if !digits.is_empty()
                && ["st", "nd", "rd", "th"].contains(&suffix.to_ascii_lowercase().as_str())
            {
                numbers.push(digits.parse().ok()?);
            }
        }
    }
    for n in numbers {
        if n > 31 || (day.is_some() && year.is_none()) {
            if year.is_none() {
                year = Some(match n {
                    0..=49 => 2000 + i32::try_from(n).ok()?,
                    50..=99 => 1900 + i32::try_from(n).ok()?,
                    _ => i32::try_from(n).ok()?,
                });
            }
        } else if day.is_none() {
            day = Some(u8::try_from(n).ok()?);
        }
    }
    let (day, month, year) = (day?, month?, year?);
    if !(1000..=9999).contains(&year) {
        return None;
    }
    let dt = build(
        year,
        month,
        day,
        time.unwrap_or((0, 0, 0, 0)),
        offset.unwrap_or(0),
    )?;
    Some((dt, known_zone))
}

/// Outcome of [`parse`].
pub(crate) enum Parsed {
    /// Parsed exactly.
    Ok(OffsetDateTime),
    /// Parsed, but with an unknown zone name taken as UTC.
    UnknownZone(OffsetDateTime),
    /// Not a date.
    Invalid,
}

/// Parses a date as feeds write them.
pub(crate) fn parse(s: &str) -> Parsed {
    let s = s.trim();
    if s.is_empty() || s.len() > 128 {
        return Parsed::Invalid;
    }
    let r = if s.starts_with(|c: char| c.is_ascii_digit()) {
        parse_iso(s).or_else(|| parse_words(s))
    } else {
        parse_words(s)
    };
    match r {
        Some((dt, true)) => Parsed::Ok(dt),
        Some((dt, false)) => Parsed::UnknownZone(dt),
        None => Parsed::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::format_description::well_known::Rfc3339;

    fn p(s: &str) -> String {
        match parse(s) {
            Parsed::Ok(d) => d.format(&Rfc3339).unwrap(),
            Parsed::UnknownZone(d) => format!("?{}", d.format(&Rfc3339).unwrap()),
            Parsed::Invalid => "invalid".into(),
        }
    }

    #[test]
    fn dates_table() {
        let cases = [
            ("Thu, 01 Jan 2004 19:48:21 GMT", "2004-01-01T19:48:21Z"),
            ("Thu, 01 Jan 2004 19:48:21 EST", "2004-01-02T00:48:21Z"),
            ("Mon, 12 May 2025 10:00:00 MSK", "2025-05-12T07:00:00Z"),
            ("Mon, 12 May 2025 10:00:00 CEST", "2025-05-12T08:00:00Z"),
            ("Mon, 12 May 2025 10:00:00 +0300", "2025-05-12T07:00:00Z"),
            ("12 May 2025 10:00 +03:00", "2025-05-12T07:00:00Z"),
            ("Mon, 2 Jun 25 10:00:00 PDT", "2025-06-02T17:00:00Z"),
            ("Monday, 02-Jun-25 10:00:00 GMT", "2025-06-02T10:00:00Z"),
            ("Mon Jun  2 10:00:00 2025", "2025-06-02T10:00:00Z"),
            ("2004-01-01T19:48:21Z", "2004-01-01T19:48:21Z"),
            ("2004-01-01T19:48:21.123+01:00", "2004-01-01T18:48:21.123Z"),
            ("2004-01-01 19:48:21", "2004-01-01T19:48:21Z"),
            ("2004-01-01", "2004-01-01T00:00:00Z"),
            ("2004-01", "2004-01-01T00:00:00Z"),
            ("20040101T194821Z", "2004-01-01T19:48:21Z"),
            (
                "Thu, 01 January 2004 19:48:21 +0000 (UTC)",
                "2004-01-01T19:48:21Z",
            ),
            ("Thu, 01 Jan 2004 19:48:21 XYZT", "?2004-01-01T19:48:21Z"),
            ("Sept 3, 2024", "2024-09-03T00:00:00Z"),
            ("2024/09/03 10:00", "2024-09-03T10:00:00Z"),
            ("09/03/2024 10:00 PM EST", "2024-09-04T03:00:00Z"),
            ("Thu, 31 Feb 2004 19:48:21 GMT", "invalid"),
            ("yesterday", "invalid"),
            ("", "invalid"),
            ("99999-99-99", "invalid"),
        ];
        for (input, want) in cases {
            assert_eq!(p(input), want, "{input}");
        }
    }
}
