//! General entities declared in the document's internal DTD subset
//! (`<!DOCTYPE rss [ <!ENTITY name "value"> ]>`), expanded where they are referenced.
//!
//! Expansion is bounded: replacement text nests at most [`MAX_DEPTH`] deep and all expansions
//! of one document together insert at most [`MAX_EXPANSION`] bytes, so a "billion laughs"
//! document costs a megabyte, not gigabytes. External entities (`SYSTEM`, `PUBLIC`) are never
//! loaded, and parameter entities (`%name;`) are not read. A reference that cannot be expanded
//! is left as written. Documents without an internal subset are not copied.

use std::borrow::Cow;

/// How deep replacement text may reference other entities.
pub(crate) const MAX_DEPTH: usize = 16;
/// Bytes all expansions of one document may insert together.
pub(crate) const MAX_EXPANSION: usize = 1 << 20;
/// Entity declarations read from one subset.
const MAX_DECLS: usize = 1024;

/// What expansion did.
pub(crate) struct Expanded<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) warnings: Vec<String>,
    /// A limit was hit or an entity could not be expanded.
    pub(crate) bozo: bool,
}

struct Decl<'a> {
    name: &'a str,
    /// `None` for an external entity.
    value: Option<&'a str>,
}

/// Skips the prolog (whitespace, the XML declaration, processing instructions, comments) and
/// returns the offset of `<!DOCTYPE`, if that comes next.
fn doctype_at(src: &str) -> Option<usize> {
    let mut i = 0;
    loop {
        let rest = src.get(i..)?;
        let trimmed = rest.trim_start();
        i += rest.len() - trimmed.len();
        if let Some(r) = trimmed.strip_prefix("<?") {
            i += 2 + r.find("?>")? + 2;
        } else if let Some(r) = trimmed.strip_prefix("<!--") {
            i += 4 + r.find("-->")? + 3;
        } else {
            let head = trimmed.get(..9)?;
            return head.eq_ignore_ascii_case("<!DOCTYPE").then_some(i);
        }
    }
}

/// The end of a quoted string starting at `s[0]`, or of a run up to `>`.
fn skip_quoted(s: &str) -> usize {
    match s.chars().next() {
        Some(q @ ('"' | '\'')) => s[1..].find(q).map_or(s.len(), |e| e + 2),
        _ => 0,
    }
}

/// Reads the declarations of the internal subset starting at `subset` (just after `[`).
fn read_decls(subset: &str) -> Vec<Decl<'_>> {
    let mut decls = Vec::new();
    let mut rest = subset;
    while decls.len() < MAX_DECLS {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with(']') {
            break;
        }
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = r.find("-->").map_or("", |e| &r[e + 3..]);
            continue;
        }
        if let Some(r) = rest.strip_prefix("<!ENTITY") {
            let r = r.trim_start();
            let parameter = r.starts_with('%');
            let r = r.trim_start_matches('%').trim_start();
            let name_len = r
                .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '>')
                .unwrap_or(r.len());
            let name = &r[..name_len];
            let after = r[name_len..].trim_start();
            let value = match after.chars().next() {
                Some(q @ ('"' | '\'')) => after[1..].find(q).map(|e| &after[1..=e]),
                _ => None,
            };
            if !parameter && !name.is_empty() {
                decls.push(Decl { name, value });
            }
            let skip = skip_quoted(after);
            let tail = after.get(skip..).unwrap_or("");
            rest = tail.find('>').map_or("", |e| &tail[e + 1..]);
            continue;
        }
        if rest.starts_with('<') {
            // Another declaration (ELEMENT, ATTLIST, NOTATION) or a processing instruction.
            let mut j = 1;
            while let Some(c) = rest[j..].chars().next() {
                if c == '>' {
                    break;
                }
                j += skip_quoted(&rest[j..]).max(c.len_utf8());
            }
            rest = rest.get(j + 1..).unwrap_or("");
            continue;
        }
        // A parameter entity reference or stray text: skip one token.
        let n = rest
            .find(|c: char| c.is_whitespace() || c == '<' || c == ']')
            .unwrap_or(rest.len())
            .max(1);
        rest = rest.get(n..).unwrap_or("");
    }
    decls
}

fn is_predefined(name: &str) -> bool {
    matches!(name, "amp" | "lt" | "gt" | "quot" | "apos")
}

/// Why an expansion stopped.
enum Stop {
    Depth,
    Budget,
}

struct Expander<'a> {
    decls: Vec<Decl<'a>>,
    /// Fully expanded values, filled on first use.
    cache: Vec<Option<String>>,
    budget: usize,
}

impl Expander<'_> {
    fn find(&self, name: &str) -> Option<usize> {
        // The first declaration of a name is binding (XML 1.0, 4.2).
        self.decls.iter().position(|d| d.name == name)
    }

    /// Appends the replacement text of entity `k` to `out`.
    fn expand(&mut self, k: usize, depth: usize, out: &mut String) -> Result<(), Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop::Depth);
        }
        if let Some(Some(v)) = self.cache.get(k) {
            if v.len() > self.budget {
                return Err(Stop::Budget);
            }
            self.budget -= v.len();
            out.push_str(v);
            return Ok(());
        }
        let value = self.decls.get(k).and_then(|d| d.value).unwrap_or("");
        let mut own = String::new();
        let mut rest = value;
        while let Some(amp) = memchr::memchr(b'&', rest.as_bytes()) {
            let piece = &rest[..amp];
            if piece.len() > self.budget {
                return Err(Stop::Budget);
            }
            self.budget -= piece.len();
            own.push_str(piece);
            let after = &rest[amp + 1..];
            let name = after.find(';').map(|e| &after[..e]);
            match name.filter(|n| !n.starts_with('#') && !is_predefined(n)) {
                Some(n) => match self.find(n).filter(|&j| self.decls[j].value.is_some()) {
                    Some(j) => {
                        self.expand(j, depth + 1, &mut own)?;
                        rest = &after[n.len() + 1..];
                    }
                    None => {
                        own.push('&');
                        rest = after;
                    }
                },
                None => {
                    own.push('&');
                    rest = after;
                }
            }
        }
        if rest.len() > self.budget {
            return Err(Stop::Budget);
        }
        self.budget -= rest.len();
        own.push_str(rest);
        out.push_str(&own);
        if let Some(slot) = self.cache.get_mut(k) {
            *slot = Some(own);
        }
        Ok(())
    }
}

/// Expands the entities the internal subset of `src` declares, outside comments and CDATA.
pub(crate) fn expand(src: &str) -> Expanded<'_> {
    let unchanged = |src| Expanded {
        text: Cow::Borrowed(src),
        warnings: Vec::new(),
        bozo: false,
    };
    let Some(at) = doctype_at(src) else {
        return unchanged(src);
    };
    // The internal subset: a '[' before the doctype's closing '>' (outside quoted ids).
    let body = &src[at + 9..];
    let mut j = 0;
    let mut open = None;
    while let Some(c) = body[j..].chars().next() {
        match c {
            '>' => break,
            '[' => {
                open = Some(j + 1);
                break;
            }
            '"' | '\'' => j += skip_quoted(&body[j..]),
            _ => j += c.len_utf8(),
        }
    }
    let Some(open) = open else {
        return unchanged(src);
    };
    let decls = read_decls(&body[open..]);
    if decls.is_empty() {
        return unchanged(src);
    }
    // Expansion starts after the doctype: find its end (`]` then `>`).
    let subset_end = {
        let mut rest = &body[open..];
        let mut consumed = open;
        loop {
            let Some(k) = rest.find([']', '"', '\'', '<']) else {
                break src.len();
            };
            let c = rest.as_bytes()[k];
            if c == b']' {
                let tail = &rest[k + 1..];
                let gt = tail.find('>').map_or(tail.len(), |g| g + 1);
                break at + 9 + consumed + k + 1 + gt;
            }
            let skip = if c == b'<' && rest[k..].starts_with("<!--") {
                rest[k..].find("-->").map_or(rest.len() - k, |e| e + 3)
            } else if c == b'<' {
                1
            } else {
                skip_quoted(&rest[k..]).max(1)
            };
            consumed += k + skip;
            rest = rest.get(k + skip..).unwrap_or("");
        }
    };
    let mut warnings = Vec::new();
    let mut bozo = false;
    let externals: Vec<&str> = decls
        .iter()
        .filter(|d| d.value.is_none())
        .map(|d| d.name)
        .collect();
    if !externals.is_empty() {
        warnings.push(format!(
            "external entities are never loaded: {}",
            externals.join(", ")
        ));
    }
    let n = decls.len();
    let mut ex = Expander {
        decls,
        cache: vec![None; n],
        budget: MAX_EXPANSION,
    };
    // Copy-on-write: a document that declares entities but never uses one is not copied.
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut stopped = false;
    let bytes = src.as_bytes();
    let bang = memchr::memmem::Finder::new("<!");
    // The first bytes of the declared names: most references (`&amp;`, `&lt;`) fail here.
    let mut first = [false; 256];
    for d in &ex.decls {
        if let Some(&b) = d.name.as_bytes().first() {
            first[usize::from(b)] = true;
        }
    }
    let mut pos = subset_end.min(src.len());
    while pos < src.len() && !stopped {
        // References are looked for up to the next comment or CDATA section, which is skipped.
        let seg_end = bang
            .find(bytes.get(pos..).unwrap_or(&[]))
            .map_or(src.len(), |i| pos + i);
        while let Some(k) = memchr::memchr(b'&', bytes.get(pos..seg_end).unwrap_or(&[])) {
            let at = pos + k;
            pos = at + 1;
            if !bytes.get(at + 1).is_some_and(|&b| first[usize::from(b)]) {
                continue;
            }
            let after = src.get(at + 1..seg_end).unwrap_or("");
            let name = after
                .bytes()
                .take(64)
                .position(|b| b == b';')
                .map(|e| &after[..e]);
            let target = name
                .filter(|n| !n.starts_with('#') && !is_predefined(n))
                .and_then(|n| ex.find(n).map(|j| (n, j)))
                .filter(|&(_, j)| ex.decls[j].value.is_some());
            let Some((n, j)) = target else { continue };
            let o = out.get_or_insert_with(|| String::with_capacity(src.len() + 256));
            o.push_str(src.get(copied..at).unwrap_or(""));
            let mark = o.len();
            match ex.expand(j, 0, o) {
                Ok(()) => {
                    pos = at + 1 + n.len() + 1;
                    copied = pos;
                }
                Err(stop) => {
                    o.truncate(mark);
                    copied = at;
                    bozo = true;
                    match stop {
                        Stop::Budget => {
                            stopped = true;
                            warnings.push(format!(
                                "entity expansion stopped after {MAX_EXPANSION} bytes; the rest is left as written"
                            ));
                            break;
                        }
                        Stop::Depth => warnings.push(format!(
                            "entity &{n}; nests deeper than {MAX_DEPTH} (or refers to itself); left as written"
                        )),
                    }
                }
            }
        }
        if stopped || seg_end >= src.len() {
            break;
        }
        let from = src.get(seg_end..).unwrap_or("");
        let skip = if from.starts_with("<![CDATA[") {
            from.find("]]>").map_or(from.len(), |e| e + 3)
        } else if from.starts_with("<!--") {
            from.find("-->").map_or(from.len(), |e| e + 3)
        } else {
            2
        };
        pos = seg_end + skip;
    }
    let text = match out {
        Some(mut o) => {
            o.push_str(src.get(copied..).unwrap_or(""));
            Cow::Owned(o)
        }
        None => Cow::Borrowed(src),
    };
    Expanded {
        text,
        warnings,
        bozo,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_and_bounds() {
        let doc = r#"<?xml version="1.0"?>
<!DOCTYPE rss [
  <!-- a comment ] with a bracket -->
  <!ENTITY who "World">
  <!ENTITY greet "Hello, &who;!">
  <!ENTITY ext SYSTEM "http://example.org/secret">
  <!ENTITY % param "x">
]>
<rss>&greet; &ext; &amp; <![CDATA[&who;]]></rss>"#;
        let e = expand(doc);
        assert!(e
            .text
            .ends_with("<rss>Hello, World! &ext; &amp; <![CDATA[&who;]]></rss>"));
        assert!(!e.bozo);
        assert_eq!(e.warnings.len(), 1);

        let mut lol = String::from("<!DOCTYPE lolz [<!ENTITY lol0 \"lol\">");
        for i in 1..10 {
            let prev = format!("&lol{};", i - 1).repeat(10);
            lol.push_str(&format!("<!ENTITY lol{i} \"{prev}\">"));
        }
        lol.push_str("]><rss>&lol9;&lol9;</rss>");
        let e = expand(&lol);
        assert!(e.bozo);
        assert!(e.text.len() < lol.len() + MAX_EXPANSION);

        let e = expand("<!DOCTYPE r [<!ENTITY a \"&b;\"><!ENTITY b \"&a;\">]><r>&a;</r>");
        assert!(e.bozo && e.text.ends_with("<r>&a;</r>"));

        assert!(matches!(expand("<rss>&x;</rss>").text, Cow::Borrowed(_)));
        // Declared but never used: not copied.
        let unused = "<!DOCTYPE r [<!ENTITY a \"x\">]><r>&amp; <![CDATA[&a;]]></r>";
        assert!(matches!(expand(unused).text, Cow::Borrowed(_)));
    }
}
