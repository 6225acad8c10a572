//! A tolerant element tree over the decoded document, built from quick-xml's tokens.
//!
//! Nodes refer to the source by offsets, so the tree costs a fixed few dozen bytes per element
//! and no copies of text. Mismatched end tags close the nearest open element of that name (HTML
//! style), stray end tags are ignored, elements left open at the end are closed there, and the
//! depth and the number of nodes are bounded.

use crate::entities::{self, DecodeFlags};
use quick_xml::errors::{Error as XmlError, SyntaxError};
use quick_xml::events::Event;
use std::borrow::Cow;
use url::Url;

/// "No node" / "no base" marker.
pub(crate) const NONE: u32 = u32::MAX;
/// Elements nested deeper than this are tokenised but not kept.
pub(crate) const MAX_DEPTH: usize = 96;
/// Upper bound on the number of elements kept.
pub(crate) const MAX_NODES: usize = 1 << 20;
/// Upper bound on recovery restarts of the tokenizer.
const MAX_RESTARTS: usize = 10_000;

/// Namespaces the parser understands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Ns {
    None,
    Atom10,
    Atom03,
    Rss10,
    Rss090,
    Rdf,
    Content,
    Dc,
    Xhtml,
    Itunes,
    Media,
    Other,
}

impl Ns {
    fn from_uri(uri: &str) -> Ns {
        let u = uri.trim();
        let u = u.strip_suffix('/').unwrap_or(u);
        match u.to_ascii_lowercase().as_str() {
            "http://www.w3.org/2005/atom" | "https://www.w3.org/2005/atom" => Ns::Atom10,
            "http://purl.org/atom/ns#" | "http://purl.org/atom/ns" => Ns::Atom03,
            "http://purl.org/rss/1.0" => Ns::Rss10,
            "http://my.netscape.com/rdf/simple/0.9" => Ns::Rss090,
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#" => Ns::Rdf,
            "http://purl.org/rss/1.0/modules/content" => Ns::Content,
            "http://purl.org/dc/elements/1.1" | "http://purl.org/dc/terms" => Ns::Dc,
            "http://www.w3.org/1999/xhtml" => Ns::Xhtml,
            "http://www.itunes.com/dtds/podcast-1.0.dtd" => Ns::Itunes,
            "http://search.yahoo.com/mrss" => Ns::Media,
            // Userland's and Harvard's names for RSS 2.0 itself: read as no namespace.
            ""
            | "http://backend.userland.com/rss2"
            | "http://backend.userland.com/rss2.1"
            | "http://blogs.law.harvard.edu/tech/rss"
            | "http://backend.userland.com/rss" => Ns::None,
            _ => Ns::Other,
        }
    }

    fn from_prefix(prefix: &str) -> Ns {
        if prefix.is_empty() {
            return Ns::None;
        }
        let mut buf = [0u8; 8];
        let Some(dst) = buf.get_mut(..prefix.len()) else {
            return Ns::Other;
        };
        dst.copy_from_slice(prefix.as_bytes());
        dst.make_ascii_lowercase();
        match std::str::from_utf8(dst).unwrap_or("") {
            "" => Ns::None,
            "atom" | "atom10" => Ns::Atom10,
            "atom03" => Ns::Atom03,
            "content" => Ns::Content,
            "dc" | "dcterms" => Ns::Dc,
            "rdf" => Ns::Rdf,
            "xhtml" => Ns::Xhtml,
            "itunes" => Ns::Itunes,
            "media" => Ns::Media,
            _ => Ns::Other,
        }
    }

    /// Core feed vocabulary (RSS of any version, Atom, or no namespace at all).
    pub(crate) fn is_core(self) -> bool {
        matches!(
            self,
            Ns::None | Ns::Atom10 | Ns::Atom03 | Ns::Rss10 | Ns::Rss090
        )
    }
}

/// One element.
#[derive(Debug)]
pub(crate) struct Node {
    name_start: u32,
    name_len: u32,
    attrs_end: u32,
    pub(crate) first_child: u32,
    last_child: u32,
    pub(crate) next_sibling: u32,
    inner_start: u32,
    inner_end: u32,
    pub(crate) base: u32,
    pub(crate) ns: Ns,
    /// Had its own end tag (or was an empty-element tag).
    pub(crate) closed: bool,
    parent: u32,
}

/// The element tree of one document.
pub(crate) struct Doc<'a> {
    pub(crate) src: &'a str,
    pub(crate) nodes: Vec<Node>,
    pub(crate) bases: Vec<Url>,
    /// Per entry of `bases`: it came from an `xml:base` that is an IRI (non-ASCII), itself or
    /// through the base it was resolved against; URIs resolved against it are kept as IRIs.
    iri_bases: Vec<bool>,
    /// The first top-level element.
    pub(crate) root: u32,
    /// The document was not well-formed.
    pub(crate) bozo: bool,
    pub(crate) warnings: Vec<String>,
    /// The document ended with elements still open.
    pub(crate) truncated: bool,
    /// The root is a `feed` in a namespace that is not Atom's; its namespace is read as Atom.
    pub(crate) atom_alias: Option<String>,
}

fn new_reader(src: &str) -> quick_xml::Reader<&[u8]> {
    let mut r = quick_xml::Reader::from_str(src);
    let c = r.config_mut();
    c.check_end_names = false;
    c.allow_unmatched_ends = true;
    c.check_comments = false;
    c.expand_empty_elements = false;
    c.trim_text(false);
    r
}

/// Rewrites a `<` that cannot start markup (`a < b` in text) as `&lt;`, leaving CDATA sections
/// and comments alone, so the tokenizer never has to back up over it.
pub(crate) fn escape_stray_lt(src: &str) -> Cow<'_, str> {
    let b = src.as_bytes();
    let starts_markup = |i: usize| {
        b.get(i + 1).is_some_and(|&c| {
            c == b'/'
                || c == b'!'
                || c == b'?'
                || c == b'_'
                || c == b':'
                || c.is_ascii_alphabetic()
                || c >= 0x80
        })
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = src
        .get(i..)
        .and_then(|r| memchr::memchr(b'<', r.as_bytes()))
    {
        let at = i + off;
        let rest = &src[at..];
        if rest.starts_with("<![CDATA[") {
            i = rest.find("]]>").map_or(src.len(), |e| at + e + 3);
        } else if rest.starts_with("<!--") {
            i = rest.find("-->").map_or(src.len(), |e| at + e + 3);
        } else if starts_markup(at) {
            i = at + 1;
        } else {
            let o = out.get_or_insert_with(|| String::with_capacity(src.len() + 16));
            o.push_str(src.get(copied..at).unwrap_or(""));
            o.push_str("&lt;");
            copied = at + 1;
            i = at + 1;
        }
    }
    match out {
        None => Cow::Borrowed(src),
        Some(mut o) => {
            o.push_str(src.get(copied..).unwrap_or(""));
            Cow::Owned(o)
        }
    }
}

/// The first char boundary at or after `i` (or the end).
fn next_boundary(src: &str, mut i: usize) -> usize {
    while i < src.len() && !src.is_char_boundary(i) {
        i += 1;
    }
    i.min(src.len())
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == ':'
}

/// Iterates over `name=value` pairs of a raw attribute string, tolerating unquoted values and
/// attributes without values. Values are still escaped.
pub(crate) struct Attrs<'a> {
    rest: &'a str,
}

impl<'a> Attrs<'a> {
    pub(crate) fn new(raw: &'a str) -> Self {
        Attrs { rest: raw }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = (&'a str, &'a str);
    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        loop {
            let s = self
                .rest
                .trim_start_matches(|c: char| c.is_whitespace() || c == '/');
            if s.is_empty() {
                self.rest = s;
                return None;
            }
            let name_end = s
                .find(|c: char| c.is_whitespace() || c == '=' || c == '/' || c == '>')
                .unwrap_or(s.len());
            if name_end == 0 {
                // A stray '=' or '>': skip one character.
                let skip = s.chars().next().map_or(1, char::len_utf8);
                self.rest = s.get(skip..).unwrap_or("");
                continue;
            }
            let name = &s[..name_end];
            let after = s[name_end..].trim_start();
            let Some(v) = after.strip_prefix('=') else {
                self.rest = after;
                return Some((name, ""));
            };
            let v = v.trim_start();
            let (value, rest) = match v.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let body = &v[1..];
                    match body.find(q) {
                        Some(end) => (&body[..end], &body[end + 1..]),
                        None => (body, ""),
                    }
                }
                _ => {
                    let end = v
                        .find(|c: char| c.is_whitespace() || c == '>')
                        .unwrap_or(v.len());
                    (&v[..end], &v[end..])
                }
            };
            self.rest = rest;
            return Some((name, value));
        }
    }
}

/// Whether the local name of `qname` is `item` or `entry` (any case), without searching it
/// for a prefix: this runs for every start tag.
fn is_block_name(qname: &str) -> bool {
    let b = qname.as_bytes();
    let ends_with = |t: &[u8]| {
        b.len() >= t.len()
            && b[b.len() - t.len()..].eq_ignore_ascii_case(t)
            && (b.len() == t.len() || b[b.len() - t.len() - 1] == b':')
    };
    ends_with(b"item") || ends_with(b"entry")
}

fn local_of(qname: &str) -> &str {
    qname.rsplit_once(':').map_or(qname, |(_, l)| l)
}

fn prefix_of(qname: &str) -> &str {
    qname.split_once(':').map_or("", |(p, _)| p)
}

impl<'a> Doc<'a> {
    /// Builds the tree. `base` is the feed URL used where no `xml:base` applies.
    pub(crate) fn build(src: &'a str, base: Option<Url>) -> Doc<'a> {
        let mut doc = Doc {
            src,
            nodes: Vec::new(),
            bases: Vec::new(),
            iri_bases: Vec::new(),
            root: NONE,
            bozo: false,
            warnings: Vec::new(),
            truncated: false,
            atom_alias: None,
        };
        let root_base = match base {
            Some(u) => {
                doc.bases.push(u);
                doc.iri_bases.push(false);
                0
            }
            None => NONE,
        };
        let mut stack: Vec<u32> = Vec::new();
        let mut ns_decls: Vec<(&'a str, Ns)> = Vec::new();
        let mut ns_marks: Vec<usize> = Vec::new();
        let mut skipped_depth = 0usize;
        let mut offset = 0usize;
        let mut restarts = 0usize;
        let mut reader = new_reader(src);
        let mut stray_end_warned = false;
        let mut unclosed_warned = false;
        let mut undeclared_warned = false;
        // A namespace URI read as Atom (see `atom_alias`) and the Atom version it stands for.
        let mut alias: Option<(&'a str, Ns)> = None;
        let mut bang_warned = false;
        loop {
            let p0 = offset + usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
            let ev = reader.read_event();
            let p1 = offset + usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
            let tag = src.get(p0..p1).unwrap_or("");
            match ev {
                Ok(Event::Start(_)) | Ok(Event::Empty(_)) => {
                    let empty = matches!(ev, Ok(Event::Empty(_)));
                    let body = tag.get(1..).unwrap_or("");
                    if !body.chars().next().is_some_and(is_name_start) {
                        // `a < b` in text: not a tag. Re-read from just after the '<'.
                        doc.bozo = true;
                        restarts += 1;
                        if restarts > MAX_RESTARTS || p0 + 1 > src.len() {
                            break;
                        }
                        offset = next_boundary(src, p0 + 1);
                        reader = new_reader(src.get(offset..).unwrap_or(""));
                        continue;
                    }
                    if skipped_depth > 0 || stack.len() >= MAX_DEPTH || doc.nodes.len() >= MAX_NODES
                    {
                        if !empty {
                            skipped_depth += 1;
                        }
                        if doc.nodes.len() >= MAX_NODES && !doc.truncated {
                            doc.truncated = true;
                            doc.warnings.push(format!(
                                "more than {MAX_NODES} elements; the rest is ignored"
                            ));
                        }
                        continue;
                    }
                    let name_len = body
                        .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
                        .unwrap_or(body.len());
                    let name = &body[..name_len];
                    let attrs_end = if empty {
                        p1.saturating_sub(2)
                    } else {
                        p1.saturating_sub(1)
                    };
                    let attrs = src.get(p0 + 1 + name_len..attrs_end).unwrap_or("");
                    if is_block_name(name) && stack.len() > 1 && {
                        // Only the feed vocabulary's own items, not `foo:item` of an extension.
                        let p = prefix_of(name);
                        ns_decls
                            .iter()
                            .rev()
                            .find(|(q, _)| *q == p)
                            .map_or_else(|| Ns::from_prefix(p), |(_, n)| *n)
                            .is_core()
                    } {
                        doc.close_for_block(&mut stack, p0, &mut unclosed_warned);
                        let keep = stack.len();
                        if ns_marks.len() > keep {
                            ns_decls.truncate(ns_marks.get(keep).copied().unwrap_or(0));
                            ns_marks.truncate(keep);
                        }
                    }
                    let parent = stack.last().copied().unwrap_or(NONE);
                    let parent_base = if parent == NONE {
                        root_base
                    } else {
                        doc.nodes.get(parent as usize).map_or(NONE, |n| n.base)
                    };
                    ns_marks.push(ns_decls.len());
                    let mut node_base = parent_base;
                    if attrs.contains("xml") {
                        for (k, v) in Attrs::new(attrs) {
                            let ns_of = |v: &str| match alias {
                                Some((uri, ns)) if uri == v.trim() => ns,
                                _ => Ns::from_uri(v),
                            };
                            if k == "xmlns" {
                                ns_decls.push(("", ns_of(v)));
                            } else if let Some(p) = k.strip_prefix("xmlns:") {
                                ns_decls.push((p, ns_of(v)));
                            } else if k == "xml:base" {
                                let mut f = DecodeFlags::default();
                                let v = entities::decode(v.trim(), &mut f);
                                let resolved = match doc.bases.get(parent_base as usize) {
                                    Some(b) => b.join(&v).ok(),
                                    None => Url::parse(&v).ok(),
                                };
                                if let Some(u) = resolved {
                                    if doc.bases.len() < MAX_NODES {
                                        let iri = !v.is_ascii()
                                            || doc
                                                .iri_bases
                                                .get(parent_base as usize)
                                                .copied()
                                                .unwrap_or(false);
                                        node_base = u32::try_from(doc.bases.len()).unwrap_or(NONE);
                                        doc.bases.push(u);
                                        doc.iri_bases.push(iri);
                                    }
                                }
                            }
                        }
                    }
                    let prefix = prefix_of(name);
                    let mut ns = ns_decls
                        .iter()
                        .rev()
                        .find(|(p, _)| *p == prefix)
                        .map_or_else(
                            || {
                                if !prefix.is_empty() && prefix != "xml" {
                                    // Not well-formed in the namespaces sense; read the usual
                                    // meaning of the prefix.
                                    doc.bozo = true;
                                    if !undeclared_warned {
                                        undeclared_warned = true;
                                        doc.warnings.push(format!(
                                            "namespace prefix {prefix:?} is not declared"
                                        ));
                                    }
                                }
                                Ns::from_prefix(prefix)
                            },
                            |(_, n)| *n,
                        );
                    if ns == Ns::Other
                        && parent == NONE
                        && doc.root == NONE
                        && local_of(name).eq_ignore_ascii_case("feed")
                    {
                        // An Atom-shaped root in an old or made-up namespace: read that
                        // namespace as Atom (0.3 when the root says so).
                        let decl = if prefix.is_empty() {
                            "xmlns".to_owned()
                        } else {
                            format!("xmlns:{prefix}")
                        };
                        let mut uri = None;
                        let mut as_ns = Ns::Atom10;
                        for (k, v) in Attrs::new(attrs) {
                            if k == decl {
                                uri = Some(v.trim());
                            } else if k == "version" && v.trim() == "0.3" {
                                as_ns = Ns::Atom03;
                            }
                        }
                        if let Some(uri) = uri {
                            alias = Some((uri, as_ns));
                            let mark = ns_marks.last().copied().unwrap_or(0);
                            for d in ns_decls.iter_mut().skip(mark) {
                                if d.0 == prefix {
                                    d.1 = as_ns;
                                }
                            }
                            ns = as_ns;
                            doc.atom_alias = Some(uri.chars().take(200).collect());
                        }
                    }
                    if empty {
                        ns_decls.truncate(ns_marks.pop().unwrap_or(0));
                    }
                    let id = u32::try_from(doc.nodes.len()).unwrap_or(NONE);
                    let p1u = u32::try_from(p1).unwrap_or(u32::MAX);
                    doc.nodes.push(Node {
                        name_start: u32::try_from(p0 + 1).unwrap_or(u32::MAX),
                        name_len: u32::try_from(name_len).unwrap_or(0),
                        attrs_end: u32::try_from(attrs_end).unwrap_or(0),
                        first_child: NONE,
                        last_child: NONE,
                        next_sibling: NONE,
                        inner_start: p1u,
                        inner_end: p1u,
                        base: node_base,
                        ns,
                        closed: empty,
                        parent,
                    });
                    if parent == NONE {
                        if doc.root == NONE {
                            doc.root = id;
                        }
                    } else if let Some(prev) = doc.nodes.get(parent as usize).map(|n| n.last_child)
                    {
                        if prev == NONE {
                            if let Some(p) = doc.nodes.get_mut(parent as usize) {
                                p.first_child = id;
                            }
                        } else if let Some(p) = doc.nodes.get_mut(prev as usize) {
                            p.next_sibling = id;
                        }
                        if let Some(p) = doc.nodes.get_mut(parent as usize) {
                            p.last_child = id;
                        }
                    }
                    if !empty {
                        stack.push(id);
                    }
                }
                Ok(Event::End(_)) => {
                    let name = tag.get(2..).unwrap_or("").trim_end_matches('>').trim();
                    if skipped_depth > 0 {
                        // Inside elements too deep to keep: an end tag closes one of them,
                        // unless it names an element we kept (then the deep part was unclosed).
                        if !stack.iter().any(|&id| doc.name(id) == name) {
                            skipped_depth -= 1;
                            continue;
                        }
                        skipped_depth = 0;
                    }
                    let p0u = u32::try_from(p0).unwrap_or(u32::MAX);
                    let found = stack
                        .iter()
                        .rposition(|&id| doc.name(id) == name)
                        .or_else(|| {
                            stack
                                .iter()
                                .rposition(|&id| doc.name(id).eq_ignore_ascii_case(name))
                        });
                    match found {
                        Some(i) => {
                            if i + 1 < stack.len() {
                                doc.bozo = true;
                            }
                            for (k, &id) in stack.iter().enumerate().skip(i) {
                                if let Some(n) = doc.nodes.get_mut(id as usize) {
                                    n.inner_end = p0u;
                                    n.closed = k == i;
                                }
                            }
                            stack.truncate(i);
                            ns_decls.truncate(ns_marks.get(i).copied().unwrap_or(0));
                            ns_marks.truncate(i);
                        }
                        None => {
                            doc.bozo = true;
                            if !stray_end_warned {
                                stray_end_warned = true;
                                doc.warnings.push(format!(
                                    "end tag </{name}> matches no open element; ignored"
                                ));
                            }
                        }
                    }
                }
                Ok(Event::Eof) => break,
                Ok(_) => {}
                Err(e) => {
                    doc.bozo = true;
                    let recoverable = matches!(e, XmlError::Syntax(SyntaxError::InvalidBangMarkup));
                    let next = src
                        .get(p0 + 1..)
                        .and_then(|s| s.find('>'))
                        .map(|i| p0 + 1 + i + 1);
                    match next {
                        Some(n) if recoverable && restarts < MAX_RESTARTS => {
                            if !bang_warned {
                                bang_warned = true;
                                doc.warnings
                                    .push(format!("invalid markup at byte {p0} skipped"));
                            }
                            restarts += 1;
                            offset = next_boundary(src, n);
                            reader = new_reader(src.get(n..).unwrap_or(""));
                        }
                        _ => {
                            doc.warnings
                                .push(format!("not well-formed at byte {p0}: {e}"));
                            break;
                        }
                    }
                }
            }
        }
        if !stack.is_empty() {
            doc.truncated = true;
            doc.bozo = true;
            let end = u32::try_from(src.len()).unwrap_or(u32::MAX);
            for &id in &stack {
                if let Some(n) = doc.nodes.get_mut(id as usize) {
                    n.inner_end = end;
                    n.closed = false;
                }
            }
        }
        doc
    }

    /// An `item` or `entry` starts at byte `at`: elements left open inside the channel or feed
    /// (an `itunes:category` never closed) are closed here, the way an HTML parser closes an
    /// open `<p>` when a block starts, so they cannot swallow the items that follow. An item or
    /// entry left open is closed the same way (the next one starts) and counts as complete.
    fn close_for_block(&mut self, stack: &mut Vec<u32>, at: usize, warned: &mut bool) {
        let is_container = |d: &Doc<'_>, id: u32| {
            let l = d.local(id);
            ["channel", "feed", "rss", "rdf"]
                .iter()
                .any(|c| l.eq_ignore_ascii_case(c))
        };
        let Some(&top) = stack.last() else { return };
        if is_container(self, top) {
            return;
        }
        let Some(keep) = stack.iter().rposition(|&id| is_container(self, id)) else {
            return;
        };
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        for &id in stack.get(keep + 1..).unwrap_or(&[]) {
            let l = self.local(id);
            let block = l.eq_ignore_ascii_case("item") || l.eq_ignore_ascii_case("entry");
            if !block && !*warned {
                *warned = true;
                let name = self.name(id);
                self.warnings.push(format!(
                    "<{name}> was never closed; closed where the next item starts"
                ));
            }
            if let Some(n) = self.nodes.get_mut(id as usize) {
                n.inner_end = at;
                n.closed = block;
            }
        }
        self.bozo = true;
        stack.truncate(keep + 1);
    }

    fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// The qualified name of an element.
    pub(crate) fn name(&self, id: u32) -> &'a str {
        self.node(id)
            .and_then(|n| {
                self.src
                    .get(n.name_start as usize..(n.name_start + n.name_len) as usize)
            })
            .unwrap_or("")
    }

    /// The local name (after any prefix).
    pub(crate) fn local(&self, id: u32) -> &'a str {
        local_of(self.name(id))
    }

    pub(crate) fn ns(&self, id: u32) -> Ns {
        self.node(id).map_or(Ns::Other, |n| n.ns)
    }

    pub(crate) fn closed(&self, id: u32) -> bool {
        self.node(id).is_some_and(|n| n.closed)
    }

    /// The raw attribute text of the start tag.
    pub(crate) fn raw_attrs(&self, id: u32) -> &'a str {
        self.node(id)
            .and_then(|n| {
                self.src
                    .get((n.name_start + n.name_len) as usize..n.attrs_end as usize)
            })
            .unwrap_or("")
    }

    /// The decoded value of attribute `name` (an exact qualified name, or a local name).
    pub(crate) fn attr(&self, id: u32, name: &str) -> Option<Cow<'a, str>> {
        let raw = self.raw_attrs(id);
        let qualified = name.contains(':');
        Attrs::new(raw)
            .find(|(k, _)| {
                if qualified {
                    k.eq_ignore_ascii_case(name)
                } else {
                    !k.starts_with("xmlns") && local_of(k).eq_ignore_ascii_case(name)
                }
            })
            .map(|(_, v)| {
                let mut f = DecodeFlags::default();
                entities::decode(v, &mut f)
            })
    }

    /// Child elements in document order.
    pub(crate) fn children(&self, id: u32) -> Children<'_, 'a> {
        Children {
            doc: self,
            next: self.node(id).map_or(NONE, |n| n.first_child),
        }
    }

    pub(crate) fn has_children(&self, id: u32) -> bool {
        self.node(id).is_some_and(|n| n.first_child != NONE)
    }

    /// The raw source between the start tag and the end tag.
    pub(crate) fn inner(&self, id: u32) -> &'a str {
        self.node(id)
            .and_then(|n| {
                self.src
                    .get(n.inner_start as usize..n.inner_end.max(n.inner_start) as usize)
            })
            .unwrap_or("")
    }

    /// The URI bound to `prefix` where element `id` is (its own and its ancestors'
    /// declarations), as written.
    fn ns_uri(&self, mut id: u32, prefix: &str) -> Option<&'a str> {
        while let Some(n) = self.node(id) {
            let raw = self.raw_attrs(id);
            if raw.contains("xmlns") {
                let found = Attrs::new(raw).find(|(k, _)| {
                    k.strip_prefix("xmlns:").is_some_and(|p| p == prefix)
                        || (prefix.is_empty() && *k == "xmlns")
                });
                if let Some((_, v)) = found {
                    return Some(v);
                }
            }
            id = n.parent;
        }
        None
    }

    /// The markup inside `container` as written, with the namespace declarations its child
    /// elements rely on but inherit from outside (an `xmlns:xlink` on the feed root used by
    /// inline SVG) copied onto each of them, so the fragment stands on its own.
    pub(crate) fn xml_fragment(&self, container: u32) -> Cow<'a, str> {
        let inner = self.inner(container);
        if !inner.contains(':') {
            return Cow::Borrowed(inner);
        }
        let Some(start) = self.node(container).map(|n| n.inner_start as usize) else {
            return Cow::Borrowed(inner);
        };
        let mut out = String::new();
        let mut copied = start;
        for child in self.children(container) {
            let Some(n) = self.node(child) else { continue };
            let extent = self
                .src
                .get(n.name_start as usize..n.inner_end.max(n.inner_start) as usize)
                .unwrap_or("");
            let (used, declared) = prefixes_in(extent);
            let mut decls = String::new();
            for p in used.iter().filter(|p| !declared.contains(p)) {
                if let Some(uri) = self.ns_uri(container, p) {
                    let uri = uri.replace('"', "&quot;");
                    decls.push_str(&format!(r#" xmlns:{p}="{uri}""#));
                }
            }
            if decls.is_empty() {
                continue;
            }
            let at = (n.name_start + n.name_len) as usize;
            out.push_str(self.src.get(copied..at).unwrap_or(""));
            out.push_str(&decls);
            copied = at;
        }
        if out.is_empty() {
            return Cow::Borrowed(inner);
        }
        let end = self
            .node(container)
            .map_or(copied, |n| n.inner_end as usize);
        out.push_str(self.src.get(copied..end).unwrap_or(""));
        Cow::Owned(out)
    }

    /// Whether the base in force for an element is an IRI (see `iri_bases`).
    pub(crate) fn base_is_iri(&self, id: u32) -> bool {
        self.node(id)
            .and_then(|n| self.iri_bases.get(n.base as usize))
            .copied()
            .unwrap_or(false)
    }

    /// The base URL in force for an element.
    pub(crate) fn base(&self, id: u32) -> Option<&Url> {
        self.node(id).and_then(|n| self.bases.get(n.base as usize))
    }

    /// Text content: character data with references resolved and CDATA kept verbatim; comments
    /// and processing instructions dropped. Markup of child elements is kept as written.
    pub(crate) fn text(&self, id: u32, flags: &mut DecodeFlags) -> Cow<'a, str> {
        inner_text(self.inner(id), flags)
    }
}

/// See [`Doc::text`].
pub(crate) fn inner_text<'a>(inner: &'a str, flags: &mut DecodeFlags) -> Cow<'a, str> {
    if !inner.contains('<') {
        return entities::decode(inner, flags);
    }
    let mut out = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(lt) = memchr::memchr(b'<', rest.as_bytes()) {
        out.push_str(&entities::decode(&rest[..lt], flags));
        let tail = &rest[lt..];
        if let Some(body) = tail.strip_prefix("<![CDATA[") {
            let end = body.find("]]>").unwrap_or(body.len());
            out.push_str(&body[..end]);
            rest = body.get(end + 3..).unwrap_or("");
        } else if let Some(body) = tail.strip_prefix("<!--") {
            rest = body.find("-->").map_or("", |e| &body[e + 3..]);
        } else if let Some(body) = tail.strip_prefix("<?") {
            rest = body.find("?>").map_or("", |e| &body[e + 2..]);
        } else if !tail[1..].starts_with(|c: char| is_name_start(c) || c == '/') {
            out.push('<');
            rest = &tail[1..];
        } else {
            // Markup of a child element: keep it as written up to the next construct.
            let next = memchr::memchr(b'<', &tail.as_bytes()[1..]).map_or(tail.len(), |i| i + 1);
            let chunk = &tail[..next];
            // Inside markup only character data needs resolving; keep tags raw.
            match chunk.find('>') {
                Some(gt) => {
                    out.push_str(&chunk[..=gt]);
                    out.push_str(&entities::decode(&chunk[gt + 1..], flags));
                }
                None => out.push_str(chunk),
            }
            rest = &tail[next..];
        }
    }
    out.push_str(&entities::decode(rest, flags));
    Cow::Owned(out)
}

/// The namespace prefixes element and attribute names use in `markup` (from the name of its
/// first start tag on), and those its start tags declare; `xml` and `xmlns` are not counted.
fn prefixes_in<'m>(markup: &'m str) -> (Vec<&'m str>, Vec<&'m str>) {
    let mut used: Vec<&'m str> = Vec::new();
    let mut declared: Vec<&'m str> = Vec::new();
    let mut rest = markup;
    let mut first = true;
    loop {
        let tag_body = if first {
            first = false;
            rest
        } else {
            let Some(lt) = memchr::memchr(b'<', rest.as_bytes()) else {
                break;
            };
            let t = &rest[lt + 1..];
            if let Some(c) = t.strip_prefix("!--") {
                rest = c.find("-->").map_or("", |e| &c[e + 3..]);
                continue;
            }
            if let Some(c) = t.strip_prefix("![CDATA[") {
                rest = c.find("]]>").map_or("", |e| &c[e + 3..]);
                continue;
            }
            if !t.starts_with(is_name_start) {
                rest = t;
                continue;
            }
            t
        };
        let end = tag_body.find('>').unwrap_or(tag_body.len());
        let tag = &tag_body[..end];
        rest = tag_body.get(end..).unwrap_or("");
        let name_len = tag
            .find(|c: char| c.is_whitespace() || c == '/')
            .unwrap_or(tag.len());
        let mut add = |q: &'m str| {
            if let Some((p, _)) = q.split_once(':') {
                if !p.is_empty() && p != "xml" && p != "xmlns" && !used.contains(&p) {
                    used.push(p);
                }
            }
        };
        add(&tag[..name_len]);
        for (k, _) in Attrs::new(&tag[name_len..]) {
            if let Some(p) = k.strip_prefix("xmlns:") {
                if !declared.contains(&p) {
                    declared.push(p);
                }
            } else {
                add(k);
            }
        }
    }
    (used, declared)
}

/// Iterator over child elements.
pub(crate) struct Children<'d, 'a> {
    doc: &'d Doc<'a>,
    next: u32,
}

impl Iterator for Children<'_, '_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        let cur = self.next;
        let n = self.doc.node(cur)?;
        self.next = n.next_sibling;
        Some(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_tree() {
        let src = "<rss><channel><title>a < b &amp; c</title><item><description>x <br> y</description></item><item><title>t</tit";
        let doc = Doc::build(src, None);
        assert!(doc.bozo && doc.truncated);
        let channel = doc.children(doc.root).next().unwrap();
        let kids: Vec<_> = doc.children(channel).map(|c| doc.local(c)).collect();
        assert_eq!(kids, ["title", "item", "item"]);
        let title = doc.children(channel).next().unwrap();
        let mut f = DecodeFlags::default();
        assert_eq!(doc.text(title, &mut f), "a < b & c");
        let items: Vec<_> = doc.children(channel).skip(1).collect();
        assert!(doc.closed(items[0]) && !doc.closed(items[1]));
        let desc = doc.children(items[0]).next().unwrap();
        assert_eq!(doc.inner(desc), "x <br> y");
    }

    #[test]
    fn stray_lt_escaped_outside_cdata_and_comments() {
        let cases = [
            ("a < b", "a &lt; b"),
            (
                "<![CDATA[ x < y ]]> <!-- < --> <p>",
                "<![CDATA[ x < y ]]> <!-- < --> <p>",
            ),
            (
                "1 <2 </a> <?pi?> <!DOCTYPE x> <_x> <é>",
                "1 &lt;2 </a> <?pi?> <!DOCTYPE x> <_x> <é>",
            ),
            ("<", "&lt;"),
            ("<![CDATA[ unterminated < ", "<![CDATA[ unterminated < "),
        ];
        for (input, want) in cases {
            assert_eq!(escape_stray_lt(input), want, "{input}");
        }
    }

    #[test]
    fn attrs_tolerant() {
        let got: Vec<_> = Attrs::new(r#" a="1" b='2' c=3 d e = "5" /"#).collect();
        assert_eq!(
            got,
            [("a", "1"), ("b", "2"), ("c", "3"), ("d", ""), ("e", "5")]
        );
    }
}
