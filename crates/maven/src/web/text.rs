//! Text the page shows from outside, cut to size.

/// Cuts `s` to at most `n` characters, marking the cut.
pub(crate) fn cap(s: &str, n: usize) -> String {
    shown::cut(s, n).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_characters() {
        assert_eq!(cap("абв", 2), "аб…");
        assert_eq!(cap("abc", 3), "abc");
        assert_eq!(cap("", 0), "");
    }
}
