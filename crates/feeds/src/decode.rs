//! Bytes to UTF-8: BOM, then the HTTP charset, then the XML declaration; valid UTF-8 wins over a
//! wrong declaration; windows-1252 as the last resort. Illegal control characters are removed.
//!
//! The HTTP charset and the XML declaration, in every combination:
//! - bytes that are valid UTF-8 are read as UTF-8 whatever either says (a warning, and `bozo`,
//!   when one names another encoding and the text is not ASCII);
//! - otherwise the HTTP charset wins over the declaration (RFC 3023), and the declaration is
//!   used when there is no HTTP charset;
//! - `text/xml` without a charset meant US-ASCII by RFC 3023, but RFC 7303, which replaced it,
//!   lets the BOM and the declaration decide, as browsers do: we read the declaration, and it is
//!   not a document read in another encoding than declared (feedparser still sets `bozo`);
//! - ISO-8859-1 and US-ASCII are read as windows-1252 (the WHATWG mapping), so "smart quotes"
//!   in the 0x80–0x9F range of a feed declared ISO-8859-1 come out as the quotes they are.
//!
//! - bytes that are not valid UTF-8 in a document that declares no encoding (so implies UTF-8)
//!   are read as windows-1252, as browsers and feed readers read them: `don’t`, not `dont`;
//! - when the HTTP charset says UTF-8 and the bytes are not, the declaration is used if it names
//!   another encoding, else windows-1252.
//!
//! The declaration is looked for after whitespace and comments, which some producers put
//! before it. Whenever the document is read in another encoding than the one declared (or, with
//! none declared, implied: UTF-8), and when an encoding name is unknown, [`Decoded::suspect`] is
//! set, which sets `bozo`. ISO-8859-1 and US-ASCII read as windows-1252 are not "another
//! encoding": that is what those labels mean on the web.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252};
use std::borrow::Cow;

/// The decoded document and what happened on the way.
pub(crate) struct Decoded<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) warnings: Vec<String>,
    /// Characters XML forbids were removed, or bytes were invalid in the chosen encoding.
    pub(crate) repaired: bool,
    /// An encoding name was not recognised, or the document was read in another encoding than
    /// the one declared or implied: it is not well-formed as declared.
    pub(crate) suspect: bool,
}

fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(|c| c == '"' || c == '\''))
    })
}

/// The `encoding="…"` of an XML declaration at the very start (after whitespace).
fn declared_encoding(bytes: &[u8]) -> Option<&str> {
    let head = bytes.get(..bytes.len().min(2048))?;
    let mut head = head;
    loop {
        let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
        head = head.get(start..)?;
        if head.starts_with(b"<!--") {
            let end = head.windows(3).position(|w| w == b"-->")?;
            head = head.get(end + 3..)?;
            continue;
        }
        break;
    }
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let end = head
        .windows(2)
        .position(|w| w == b"?>")
        .unwrap_or(head.len());
    let decl = std::str::from_utf8(head.get(..end)?).ok()?;
    let at = decl.find("encoding")?;
    let rest = decl.get(at + "encoding".len()..)?.trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let quote = rest.chars().next()?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let rest = rest.get(1..)?;
    let close = rest.find(quote)?;
    rest.get(..close)
}

/// Removes characters XML 1.0 forbids (C0 controls except TAB/LF/CR, U+FFFE/U+FFFF) and a
/// leading BOM. Returns whether anything was removed.
fn strip_illegal(text: Cow<'_, str>) -> (Cow<'_, str>, bool) {
    let bad = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}');
    let has_bom = text.starts_with('\u{feff}');
    let bytes = text.as_bytes();
    // Branch-free per chunk so it vectorises: any C0 control other than TAB/LF/CR?
    let has_control = bytes.chunks(256).any(|c| {
        c.iter().fold(0u8, |acc, &b| {
            acc | u8::from(b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r')
        }) != 0
    });
    // U+FFFE/U+FFFF are encoded as EF BF BE / EF BF BF.
    let needs = (has_control || bytes.contains(&0xef)) && text.chars().any(bad);
    if !needs && !has_bom {
        return (text, false);
    }
    let body = if has_bom {
        &text['\u{feff}'.len_utf8()..]
    } else {
        &text[..]
    };
    if !needs {
        return (Cow::Owned(body.to_owned()), false);
    }
    (
        Cow::Owned(body.chars().filter(|&c| !bad(c)).collect()),
        true,
    )
}

/// Decodes `bytes` to UTF-8 following F-2.
pub(crate) fn decode<'a>(bytes: &'a [u8], content_type: Option<&str>) -> Decoded<'a> {
    let mut warnings = Vec::new();
    let mut suspect = false;
    let http = content_type.and_then(charset_param);
    // 1. Byte order marks.
    let (enc, body): (&'static Encoding, &[u8]) = if let Some(rest) =
        bytes.strip_prefix(b"\xef\xbb\xbf")
    {
        (UTF_8, rest)
    } else if let Some(rest) = bytes.strip_prefix(b"\xff\xfe") {
        (UTF_16LE, rest)
    } else if let Some(rest) = bytes.strip_prefix(b"\xfe\xff") {
        (UTF_16BE, rest)
    } else if bytes.starts_with(b"<\0?\0")
        || bytes.starts_with(b"<\0r\0")
        || bytes.starts_with(b"<\0f\0")
    {
        (UTF_16LE, bytes)
    } else if bytes.starts_with(b"\0<\0?")
        || bytes.starts_with(b"\0<\0r")
        || bytes.starts_with(b"\0<\0f")
    {
        (UTF_16BE, bytes)
    } else {
        // 2./3. Valid UTF-8 wins; otherwise the HTTP charset, then the declaration.
        let declared = declared_encoding(bytes);
        let utf8 = std::str::from_utf8(bytes).ok();
        let pick = |name: &str| {
            Encoding::for_label_no_replacement(name.trim().as_bytes())
                .filter(|e| *e != UTF_16LE && *e != UTF_16BE)
        };
        if let Some(text) = utf8 {
            let non_ascii = !bytes.is_ascii();
            for (source, name) in [("HTTP charset", http), ("XML declaration", declared)] {
                if let Some(name) = name {
                    match pick(name) {
                        Some(e) if e != UTF_8 && non_ascii => {
                            suspect = true;
                            warnings.push(format!(
                                "{source} says {name} but the bytes are valid UTF-8; read as UTF-8"
                            ));
                        }
                        None if !is_utf16_label(name) => {
                            suspect = true;
                            warnings.push(format!("unknown encoding {name:?} in {source}"))
                        }
                        _ => {}
                    }
                }
            }
            let (text, repaired) = strip_illegal(Cow::Borrowed(text));
            return Decoded {
                text,
                warnings,
                repaired,
                suspect,
            };
        }
        let chosen = http
            .and_then(|n| {
                let e = pick(n);
                if e.is_none() && !is_utf16_label(n) {
                    suspect = true;
                    warnings.push(format!("unknown encoding {n:?} in HTTP charset"));
                }
                e
            })
            .or_else(|| {
                declared.and_then(|n| {
                    let e = pick(n);
                    if e.is_none() && !is_utf16_label(n) {
                        suspect = true;
                        warnings.push(format!("unknown encoding {n:?} in XML declaration"));
                    }
                    e
                })
            });
        match chosen {
            Some(e) if e != UTF_8 => (e, bytes),
            Some(_) => {
                // The HTTP charset said UTF-8 and is wrong: the declaration, when it names
                // another encoding, is the next best word on what the bytes are.
                suspect = true;
                let fallback = http
                    .and(declared)
                    .and_then(pick)
                    .filter(|e| *e != UTF_8)
                    .unwrap_or(WINDOWS_1252);
                warnings.push(format!(
                    "declared UTF-8 but the bytes are not valid UTF-8; read as {}",
                    fallback.name()
                ));
                (fallback, bytes)
            }
            None => {
                // Undeclared means UTF-8; bytes that are not are read the way browsers and
                // feed readers read them, as windows-1252.
                suspect = true;
                warnings
                    .push("no usable encoding declared and not UTF-8; read as windows-1252".into());
                (WINDOWS_1252, bytes)
            }
        }
    };
    let (text, had_errors) = enc.decode_without_bom_handling(body);
    if had_errors {
        warnings.push(format!("bytes invalid in {} were replaced", enc.name()));
    }
    let (text, repaired) = strip_illegal(text);
    Decoded {
        text,
        warnings,
        repaired: repaired || had_errors,
        suspect,
    }
}

fn is_utf16_label(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    n.starts_with("utf-16") || n.starts_with("utf16") || n == "ucs-2" || n == "unicode"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_encoding_table() {
        let koi = encoding_rs::KOI8_R.encode("Привет").0.into_owned();
        let mut koi_doc = b"<?xml version='1.0' encoding='koi8-r'?><rss>".to_vec();
        koi_doc.extend_from_slice(&koi);
        let cp = encoding_rs::WINDOWS_1251.encode("Привет").0.into_owned();
        let mut cp_doc = b"<rss>".to_vec();
        cp_doc.extend_from_slice(&cp);
        let cases: Vec<(Vec<u8>, Option<&str>, &str)> = vec![
            (koi_doc, None, "Привет"),
            (
                cp_doc.clone(),
                Some("text/xml; charset=windows-1251"),
                "Привет",
            ),
            (cp_doc, None, "Ïðèâåò"),
            (
                "<?xml version='1.0' encoding='iso-8859-1'?><rss>é"
                    .as_bytes()
                    .to_vec(),
                None,
                "<rss>é",
            ),
            (b"\xef\xbb\xbf<rss>\x01x".to_vec(), None, "<rss>x"),
            (b"\xff\xfe<\0r\0>\0".to_vec(), None, "<r>"),
            (b"\xfe\xff\0<\0r\0>".to_vec(), None, "<r>"),
            (b"\0<\0?\0x".to_vec(), None, "<?x"),
        ];
        for (bytes, ct, want) in cases {
            let d = decode(&bytes, ct);
            assert!(d.text.ends_with(want), "{:?} !~ {want}", d.text);
        }
    }
}
