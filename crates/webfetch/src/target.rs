//! Parsing and vetting a URL (W-1, W-3 for literal addresses, W-4 names, W-5 lists).

use std::net::IpAddr;

use url::{Host, Url};

use crate::addr::{self, Lifts, Verdict};
use crate::error::{Error, Refusal};

/// http or https.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Scheme {
    Http,
    Https,
}

/// Where a request goes, once vetted: the host is either a name (normalised) or a canonical
/// address already judged by the table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum TargetHost {
    Name(String),
    Addr(IpAddr),
}

impl TargetHost {
    /// The normalised host as text (IPv6 without brackets).
    pub(crate) fn as_key(&self) -> String {
        match self {
            TargetHost::Name(n) => n.clone(),
            TargetHost::Addr(a) => a.to_string(),
        }
    }
}

/// A parsed, vetted URL.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) url: Url,
    pub(crate) scheme: Scheme,
    pub(crate) host: TargetHost,
    pub(crate) port: u16,
}

/// The origin of a target: scheme, normalised host, port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Origin {
    pub(crate) scheme: Scheme,
    pub(crate) host: TargetHost,
    pub(crate) port: u16,
}

impl Target {
    pub(crate) fn origin(&self) -> Origin {
        Origin {
            scheme: self.scheme,
            host: self.host.clone(),
            port: self.port,
        }
    }

    /// The request target in origin form: path and query, never the fragment.
    pub(crate) fn path_and_query(&self) -> String {
        match self.url.query() {
            Some(q) => format!("{}?{q}", self.url.path()),
            None => self.url.path().to_string(),
        }
    }

    /// The `Host` header value: as written in the URL, with the port when not the default.
    pub(crate) fn host_header(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        }
    }
}

/// Normalise a host name: lowercase, one trailing dot stripped, IDNA to ASCII. IP literals
/// (bracketed or not) become their canonical text.
pub(crate) fn normalise_host(host: &str) -> Option<String> {
    let trimmed = host.trim();
    let unbracketed = trimmed
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(trimmed);
    if let Ok(ip) = unbracketed.parse::<IpAddr>() {
        return Some(addr::canonical(ip).to_string());
    }
    let one_dot = unbracketed.strip_suffix('.').unwrap_or(unbracketed);
    let ascii = idna::domain_to_ascii(one_dot).ok()?;
    let well_formed = !ascii.is_empty()
        && ascii
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b));
    well_formed.then_some(ascii)
}

/// A host list entry: an exact host, or `*.example.com` for every name under example.com.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostPattern {
    Exact(String),
    Under(String),
}

impl HostPattern {
    /// Parse one config entry; `None` for an entry that normalises to nothing.
    pub(crate) fn parse(entry: &str) -> Option<Self> {
        match entry.trim().strip_prefix("*.") {
            Some(rest) => normalise_host(rest).map(HostPattern::Under),
            None => normalise_host(entry).map(HostPattern::Exact),
        }
    }

    pub(crate) fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(h) => h == host,
            HostPattern::Under(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// The door's policy, as far as a URL alone can be judged.
#[derive(Debug, Clone, Default)]
pub(crate) struct UrlPolicy {
    pub(crate) lifts: Lifts,
    /// `Some` as soon as the door lists any allowed host (even one that does not parse, so
    /// a typo never widens the door to every host).
    pub(crate) allow: Option<Vec<HostPattern>>,
    pub(crate) deny: Vec<HostPattern>,
    /// Test-only (`test-hooks` feature): loopback addresses judged as public (see
    /// `testing::PretendPublic`).
    #[cfg(feature = "test-hooks")]
    pub(crate) pretend_public: Vec<IpAddr>,
}

impl UrlPolicy {
    /// Whether an address may be dialled on this door.
    pub(crate) fn permits(&self, verdict: &Verdict) -> bool {
        #[cfg(feature = "test-hooks")]
        if self.pretend_public.contains(&verdict.addr) {
            return true;
        }
        self.lifts.permits(verdict)
    }

    fn denied(&self, host: &str) -> bool {
        self.deny.iter().any(|p| p.matches(host))
    }

    /// Judge one resolved (or connected) address for `host`.
    pub(crate) fn vet_addr(&self, host: &TargetHost, ip: IpAddr) -> Result<IpAddr, Refusal> {
        let verdict = addr::classify(ip);
        if !self.permits(&verdict) {
            return Err(match host {
                TargetHost::Name(n) => Refusal::Resolved {
                    host: n.clone(),
                    verdict,
                },
                TargetHost::Addr(_) => Refusal::Address { verdict },
            });
        }
        let text = verdict.addr.to_string();
        if self.denied(&text) {
            return Err(Refusal::Denied { host: text });
        }
        Ok(verdict.addr)
    }

    /// Vet a host alone, as parsed by WHATWG rules: a literal address by the table, local
    /// names, then the deny and allow lists. Nothing is resolved here.
    pub(crate) fn vet_host(&self, host: Option<Host<&str>>) -> Result<TargetHost, Error> {
        let host = match host {
            Some(Host::Ipv4(v4)) => {
                let verdict = addr::classify(IpAddr::V4(v4));
                if !self.permits(&verdict) {
                    return Err(Error::Refused(Refusal::Address { verdict }));
                }
                TargetHost::Addr(verdict.addr)
            }
            Some(Host::Ipv6(v6)) => {
                let verdict = addr::classify(IpAddr::V6(v6));
                if !self.permits(&verdict) {
                    return Err(Error::Refused(Refusal::Address { verdict }));
                }
                TargetHost::Addr(verdict.addr)
            }
            Some(Host::Domain(d)) => {
                let name = normalise_host(d).ok_or_else(|| Error::InvalidUrl {
                    reason: format!("host {d:?} is not a valid name"),
                })?;
                if name == "localhost" || name.ends_with(".localhost") {
                    return Err(Error::Refused(Refusal::LocalName { host: name }));
                }
                TargetHost::Name(name)
            }
            None => {
                return Err(Error::InvalidUrl {
                    reason: "the URL has no host".to_string(),
                })
            }
        };
        let key = host.as_key();
        if self.denied(&key) {
            return Err(Error::Refused(Refusal::Denied { host: key }));
        }
        if let Some(allow) = &self.allow {
            if !allow.iter().any(|p| p.matches(&key)) {
                return Err(Error::Refused(Refusal::NotAllowed { host: key }));
            }
        }
        Ok(host)
    }

    /// Parse and vet a bare host (`example.com`, `192.0.2.1`, `[2001:db8::1]` or
    /// `2001:db8::1`) by the same rules as the host of an http URL, then [`Self::vet_host`].
    pub(crate) fn vet_bare_host(&self, text: &str) -> Result<TargetHost, Error> {
        let bracketed;
        let text = if text.contains(':') && !text.starts_with('[') {
            bracketed = format!("[{text}]");
            bracketed.as_str()
        } else {
            text
        };
        let host = Host::parse(text).map_err(|e| Error::InvalidUrl {
            reason: format!("host {text:?}: {e}"),
        })?;
        let borrowed = match &host {
            Host::Domain(d) => Host::Domain(d.as_str()),
            Host::Ipv4(v4) => Host::Ipv4(*v4),
            Host::Ipv6(v6) => Host::Ipv6(*v6),
        };
        self.vet_host(Some(borrowed))
    }

    /// Parse and vet a URL: W-1 (scheme), literal addresses by the table, local names, the
    /// allow and deny lists, credentials. Nothing is resolved here.
    pub(crate) fn vet_url(&self, url: Url) -> Result<Target, Error> {
        let scheme = match url.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => {
                return Err(Error::Refused(Refusal::Scheme {
                    scheme: other.to_string(),
                }))
            }
        };
        let host = self.vet_host(url.host())?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Error::Refused(Refusal::Credentials));
        }
        let port = url.port_or_known_default().unwrap_or(match scheme {
            Scheme::Http => 80,
            Scheme::Https => 443,
        });
        Ok(Target {
            url,
            scheme,
            host,
            port,
        })
    }
}

/// Parse a URL by WHATWG rules.
pub(crate) fn parse_url(text: &str) -> Result<Url, Error> {
    Url::parse(text).map_err(|e| Error::InvalidUrl {
        reason: format!("{e}: {text:?}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let table = [
            ("example.com", "example.com", true),
            ("example.com", "www.example.com", false),
            ("*.example.com", "www.example.com", true),
            ("*.example.com", "example.com", false),
            ("*.example.com", "badexample.com", false),
            ("EXAMPLE.com.", "example.com", true),
            ("bücher.example", "xn--bcher-kva.example", true),
            ("[::1]", "::1", true),
            ("::ffff:10.0.0.1", "10.0.0.1", true),
        ];
        for (entry, host, want) in table {
            let p = HostPattern::parse(entry).unwrap();
            assert_eq!(p.matches(host), want, "{entry} vs {host}");
        }
    }
}
