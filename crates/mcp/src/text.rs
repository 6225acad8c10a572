//! Cutting server-written text to a size: every cap of the crate goes through these.

/// The first `cap` characters of `s` (a prefix, never splitting a character).
pub fn cap_chars(s: &str, cap: usize) -> &str {
    match s.char_indices().nth(cap) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The longest prefix of `s` of at most `cap` bytes that ends on a character boundary.
pub(crate) fn cap_bytes(s: &str, cap: usize) -> &str {
    if s.len() <= cap {
        return s;
    }
    let mut end = cap;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `s` cut to [`cap_bytes`] in place.
pub(crate) fn cap_string(mut s: String, cap: usize) -> String {
    let end = cap_bytes(&s, cap).len();
    s.truncate(end);
    s
}
