//! webfetch: the only code in Maven that opens an outbound socket.
//!
//! Every configured use of the network is a *door* ([`DoorConfig`]) with its own limits and
//! its own [`Fetcher`]. A fetcher resolves names itself (through an injectable [`Resolve`]),
//! refuses a request if **any** answer is forbidden by the address table ([`addr`]), connects
//! only to an address it just vetted, re-checks the connected peer, and speaks TLS (rustls,
//! webpki roots) and HTTP/1.1 (hyper) on that one socket. Literal addresses take the same path;
//! proxy settings in the environment are never read.
//!
//! What a [`Fetcher::send`] does, in order, for the request and again for every redirect hop:
//!
//! 1. parse the URL once (WHATWG rules: `http://0x7f.1/` *is* 127.0.0.1) and vet it: http or
//!    https only, no credentials, no `localhost`/`*.localhost`, a literal address judged by the
//!    table, then the door's deny and allow lists on the normalised host;
//! 2. wait for the host's rate-limit slot (`host_interval`, tokio time);
//! 3. reuse an idle keep-alive connection of this door to this origin, or: resolve the name,
//!    refuse if **any** answer is forbidden, connect only to vetted addresses, re-check the
//!    connected peer, TLS, HTTP/1.1 handshake;
//! 4. on a redirect: refuse on a door that allows private addresses, refuse a fourth hop, else
//!    apply the method rules, drop all but harmless headers across origins, and go to 1.
//!
//! The table is `webfetch::addr` (`V4_TABLE`, `V6_TABLE`, `METADATA`): IPv4-mapped addresses are
//! canonicalised to IPv4; other IPv6 is public only inside 2000::/3 outside the listed blocks;
//! IPv4-carrying forms (compatible, SIIT, NAT64, 6to4, Teredo) are refused, naming the carried
//! address. `allow_private` lifts loopback, RFC 1918 and ULA (and 100.64/10 with `allow_cgnat`),
//! never metadata, link-local, multicast or broadcast. Bodies are capped while streaming and after
//! gzip decoding; every phase has a deadline and the total covers the body.
//!
//! [`Fetcher::connect_tcp`] is the same guard for a raw TCP connection (no TLS, no HTTP): what
//! [`relay::serve_proxy`], Maven's outbound proxy for sandboxed servers, dials with. Its
//! [`relay::serve_granted`] relays to an endpoint the owner granted by address.
//!
//! [`relay`] is the one way out of a sandboxed server's network namespace: Maven's proxy
//! (`CONNECT` and absolute-URI plain HTTP), whose every connection is [`Fetcher::connect_tcp`]
//! — the same vetting, resolution and peer check as a request's — and the raw relay of an
//! endpoint the owner granted.
//!
//! Errors are one enum, [`Error`], whose [`Error::kind`] is what `maven fetch --json` prints.
//! Bodies are capped after decompression ([`Body`]); every phase has a deadline.
//!
//! ```no_run
//! # async fn demo() -> Result<(), webfetch::Error> {
//! let door = webfetch::DoorConfig::new("fetch");
//! let fetcher = webfetch::Fetcher::new(door);
//! let resp = fetcher.get("https://example.org/feed.xml").await?;
//! let etag = resp.header_str("etag").map(str::to_owned);
//! let body = resp.error_for_status()?.bytes().await?;
//! # let _ = (etag, body);
//! # Ok(())
//! # }
//! ```

// This crate reads untrusted bytes: a failure is an error value, never a panic. Tests may
// use `expect` (clippy.toml allows it in tests); a test module that needs `panic!` allows
// `clippy::panic` itself.
#![warn(clippy::expect_used, clippy::panic)]

pub mod addr;
mod door;
mod error;
mod fetcher;
mod pool;
mod rate;
pub mod relay;
mod resolve;
mod response;
mod target;

pub use addr::{Class, Verdict};
pub use door::{DoorConfig, Timeouts, DEFAULT_MAX_BODY};
pub use error::{Error, Kind, Phase, Refusal};
pub use fetcher::{Fetcher, FetcherBuilder, MAX_REDIRECTS};
pub use resolve::{Resolve, Resolving, SystemResolver};
pub use response::{Body, Request, Response};

/// Re-exported so callers name headers, methods and statuses with the same types.
pub use http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

/// Whether a host list entry (`example.com`, `*.example.com`, an IP address) is well formed,
/// for config validation.
pub fn host_pattern_is_valid(entry: &str) -> bool {
    target::HostPattern::parse(entry).is_some()
}

/// Test-only policy. Not part of the stable API; compiled only with the `test-hooks`
/// feature, which only dev-dependencies enable.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod testing;

/// Entry points for the fuzz targets. Not part of the stable API.
#[doc(hidden)]
pub mod fuzzing {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    use crate::addr::{self, Lifts};
    use crate::target::{normalise_host, parse_url, HostPattern, UrlPolicy};

    /// Parse arbitrary bytes as a request to Maven's proxy ([`crate::relay`]), route it and
    /// build what would be sent on. Must not panic.
    pub fn proxy_head(data: &[u8]) {
        crate::relay::fuzz_head(data);
    }

    /// Parse and vet arbitrary bytes as a URL under every door policy, as a redirect
    /// Location against a base, as a host list entry, and as raw addresses. Must not panic.
    pub fn url_vet(data: &[u8]) {
        if data.len() >= 16 {
            let mut b = [0u8; 16];
            b.copy_from_slice(&data[..16]);
            let v = addr::classify(IpAddr::V6(Ipv6Addr::from(b)));
            let _ = v.to_string();
        }
        if data.len() >= 4 {
            let v = addr::classify(IpAddr::V4(Ipv4Addr::new(
                data[0], data[1], data[2], data[3],
            )));
            let _ = v.to_string();
        }
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let _ = normalise_host(text);
        if let Some(p) = HostPattern::parse(text) {
            let _ = p.matches("example.com");
        }
        let policies = [
            UrlPolicy::default(),
            UrlPolicy {
                lifts: Lifts {
                    private: true,
                    cgnat: true,
                },
                allow: Some(vec![HostPattern::Under("example.com".into())]),
                deny: vec![HostPattern::Exact("10.0.0.1".into())],
                #[cfg(feature = "test-hooks")]
                pretend_public: Vec::new(),
            },
        ];
        let mut urls = Vec::new();
        if let Ok(u) = parse_url(text) {
            urls.push(u);
        }
        if let Ok(base) = url::Url::parse("https://example.com/a/b?c") {
            if let Ok(u) = base.join(text) {
                urls.push(u);
            }
        }
        for url in urls {
            for policy in &policies {
                match policy.vet_url(url.clone()) {
                    Ok(t) => {
                        let _ = (t.path_and_query(), t.host_header(), t.origin());
                    }
                    Err(e) => {
                        let _ = (e.to_string(), e.kind());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    fn send_sync<T: Send + Sync + 'static>() {}
    fn send<T: Send + 'static>() {}

    /// What callers rely on: a fetcher shared across tasks, responses and bodies moved into
    /// tasks, errors into `anyhow`.
    #[test]
    fn auto_traits() {
        send_sync::<crate::Fetcher>();
        send_sync::<crate::Error>();
        send_sync::<crate::Request>();
        send::<crate::Response>();
        send::<crate::Body>();
    }
}
