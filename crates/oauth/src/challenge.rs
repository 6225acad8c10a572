//! `WWW-Authenticate` (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1): the
//! schemes and the parameters Maven reads from a 401 or 403.

/// Longest header value read; the rest is ignored.
const MAX_HEADER: usize = 8 * 1024;

/// What a challenge says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The schemes offered, lower-cased (`bearer`, `dpop`).
    pub schemes: Vec<String>,
    /// `resource_metadata`: where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes needed.
    pub scope: Option<String>,
    /// `error` (`invalid_token`, `insufficient_scope`, `use_dpop_nonce`).
    pub error: Option<String>,
    /// `error_description`, as the server wrote it (for the log and the owner).
    pub error_description: Option<String>,
}

impl Challenge {
    /// Parse every `WWW-Authenticate` value of a response; the first value of a parameter
    /// wins.
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Challenge {
        let mut c = Challenge::default();
        let mut budget = MAX_HEADER;
        for v in values {
            if budget == 0 {
                break;
            }
            let v = match v.char_indices().nth(budget) {
                Some((i, _)) => &v[..i],
                None => v,
            };
            budget = budget.saturating_sub(v.len());
            parse_one(v, &mut c);
        }
        c
    }

    /// Whether the challenge offers the `DPoP` scheme (RFC 9449 §7.1).
    pub fn offers_dpop(&self) -> bool {
        self.schemes.iter().any(|s| s == "dpop")
    }

    /// `error` and `error_description` as one short text, for a log line or an error (capped;
    /// never a token: a challenge carries none).
    pub fn reason(&self) -> String {
        let cut = |s: &str| super::error::cut(s);
        match (&self.error, &self.error_description) {
            (Some(e), Some(d)) => format!("{} ({})", cut(e), cut(d)),
            (Some(e), None) => cut(e),
            (None, Some(d)) => cut(d),
            (None, None) => "no error given".to_owned(),
        }
    }

    /// The scopes of `scope`, split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        self.scope
            .as_deref()
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

fn parse_one(s: &str, c: &mut Challenge) {
    let b = s.as_bytes();
    let mut i = 0;
    let tchar = |x: u8| x.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&x);
    while i < b.len() {
        while i < b.len() && (b[i] == b' ' || b[i] == b',' || b[i] == b'\t') {
            i += 1;
        }
        let start = i;
        while i < b.len() && tchar(b[i]) {
            i += 1;
        }
        if start == i {
            // Not a token: skip one byte so the loop always advances.
            i += 1;
            continue;
        }
        let name = &s[start..i];
        let mut j = i;
        while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
            j += 1;
        }
        if j < b.len() && b[j] == b'=' {
            // A parameter.
            j += 1;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            let mut value = String::new();
            if j < b.len() && b[j] == b'"' {
                j += 1;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' && j + 1 < b.len() {
                        j += 1;
                    }
                    // Push whole characters (the value may hold UTF-8).
                    let ch_len = s[j..].chars().next().map_or(1, char::len_utf8);
                    value.push_str(&s[j..j + ch_len]);
                    j += ch_len;
                }
                j += 1;
            } else {
                let vs = j;
                while j < b.len() && b[j] != b',' && b[j] != b' ' {
                    j += 1;
                }
                value.push_str(&s[vs..j]);
            }
            let slot = match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => Some(&mut c.resource_metadata),
                "scope" => Some(&mut c.scope),
                "error" => Some(&mut c.error),
                "error_description" => Some(&mut c.error_description),
                _ => None,
            };
            if let Some(slot) = slot {
                if slot.is_none() {
                    *slot = Some(value);
                }
            }
            i = j;
        } else {
            c.schemes.push(name.to_ascii_lowercase());
            i = j;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_with_everything() {
        let c = Challenge::parse([
            r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp""#,
        ]);
        assert_eq!(c.schemes, ["bearer"]);
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scopes(), ["mcp:read", "mcp:write"]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://a.example/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn two_schemes_and_tokens() {
        let c = Challenge::parse([r#"DPoP algs="ES256", error=use_dpop_nonce"#, "Bearer"]);
        assert_eq!(c.schemes, ["dpop", "bearer"]);
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
    }

    #[test]
    fn garbage_never_panics() {
        for s in [
            "",
            "\"",
            "=",
            "Bearer scope=\"",
            "Bearer ,,, =\"\\",
            "é=\"é",
            "a b=c\\",
        ] {
            let _ = Challenge::parse([s]);
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_header_never_panics(s in "\\PC{0,200}") {
            let _ = Challenge::parse([s.as_str()]);
        }
    }
}
