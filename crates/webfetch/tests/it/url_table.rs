//! How URLs are judged (W-1, W-3 literal forms, W-4 names): every refusal below made zero
//! connection attempts and zero lookups.

use webfetch::Kind;

use crate::support::*;

/// URL, expected error text on a default door.
const REFUSED: &[(&str, &str)] = &[
    ("http://2130706433/", "refused: 127.0.0.1 is loopback"),
    ("http://0x7f.1/", "refused: 127.0.0.1 is loopback"),
    ("http://0177.0.0.1/", "refused: 127.0.0.1 is loopback"),
    ("http://127.1/", "refused: 127.0.0.1 is loopback"),
    ("http://0x7F000001/", "refused: 127.0.0.1 is loopback"),
    ("http://127.0.0.1./", "refused: 127.0.0.1 is loopback"),
    ("http://%31%32%37.0.0.1/", "refused: 127.0.0.1 is loopback"),
    (
        "http://\u{ff11}\u{ff12}\u{ff17}.0.0.1/",
        "refused: 127.0.0.1 is loopback",
    ),
    (
        "http://[0:0:0:0:0:ffff:127.0.0.1]/",
        "refused: 127.0.0.1 is loopback",
    ),
    ("http://017700000001/", "refused: 127.0.0.1 is loopback"),
    (
        "http://[::ffff:127.0.0.1]/",
        "refused: 127.0.0.1 is loopback",
    ),
    ("http://[::ffff:7f00:1]/", "refused: 127.0.0.1 is loopback"),
    (
        "http://[::127.0.0.1]/",
        "refused: ::7f00:1 is IPv4-compatible carrying 127.0.0.1 (loopback)",
    ),
    (
        "http://[64:ff9b::127.0.0.1]/",
        "refused: 64:ff9b::7f00:1 is NAT64 carrying 127.0.0.1 (loopback)",
    ),
    ("http://[::1]:8080/", "refused: ::1 is loopback"),
    ("http://localhost./", "refused: localhost is a local name"),
    ("http://LOCALHOST/", "refused: localhost is a local name"),
    (
        "http://a.localhost/",
        "refused: a.localhost is a local name",
    ),
    (
        "https://x.y.localhost:8443/",
        "refused: x.y.localhost is a local name",
    ),
    ("http://public@127.0.0.1/", "refused: 127.0.0.1 is loopback"),
    (
        "http://169.254.169.254/latest/meta-data/",
        "refused: 169.254.169.254 is link-local (cloud metadata)",
    ),
    (
        "http://[::ffff:a9fe:a9fe]/",
        "refused: 169.254.169.254 is link-local (cloud metadata)",
    ),
    (
        "http://[fd00:ec2::254]/",
        "refused: fd00:ec2::254 is unique local (private) (cloud metadata)",
    ),
    (
        "http://0/",
        "refused: 0.0.0.0 is unspecified (this network)",
    ),
    ("http://10.0.0.7/", "refused: 10.0.0.7 is private"),
    ("http://[fe80::1]/", "refused: fe80::1 is link-local"),
    (
        "http://255.255.255.255/",
        "refused: 255.255.255.255 is broadcast",
    ),
    ("http://224.0.0.1/", "refused: 224.0.0.1 is multicast"),
    (
        "ftp://example.test/",
        "refused: scheme \"ftp\" is not http or https",
    ),
    (
        "file:///etc/passwd",
        "refused: scheme \"file\" is not http or https",
    ),
    (
        "gopher://example.test/",
        "refused: scheme \"gopher\" is not http or https",
    ),
    (
        "http://user:pw@example.test/",
        "refused: the URL carries credentials",
    ),
];

#[tokio::test]
async fn refused_urls_make_no_attempt() {
    let resolver = Scripted::new(&[("example.test", &[&["127.0.0.2"]])]);
    let dials = Dials::default();
    let f = fetcher(door("fetch"), resolver.clone(), &dials);
    for &(url, want) in REFUSED {
        let err = f.get(url).await.expect_err(url);
        assert_eq!(err.to_string(), want, "{url}");
        assert_eq!(err.kind(), Kind::Refused, "{url}");
        assert!(err.is_refused());
    }
    assert_eq!(dials.count(), 0, "no connection attempt");
    assert_eq!(resolver.calls(), 0, "no lookup");
}

/// `vet` judges a URL as `send` does before dialling, and never resolves a name.
#[tokio::test]
async fn vet_refuses_what_send_refuses_without_a_lookup() {
    let resolver = Scripted::new(&[("example.test", &[&["127.0.0.2"]])]);
    let dials = Dials::default();
    let f = fetcher(door("fetch"), resolver.clone(), &dials);
    for &(url, want) in REFUSED {
        let err = f.vet(url).expect_err(url);
        assert_eq!(err.to_string(), want, "{url}");
    }
    f.vet("https://example.test/mcp")
        .expect("a name is judged at connect time");
    f.vet("http://93.184.215.14/").expect("a public literal");
    assert!(f.vet("ftp://example.test/").is_err());
    assert_eq!(dials.count(), 0, "no connection attempt");
    assert_eq!(resolver.calls(), 0, "no lookup");
}

/// On a door that allows private addresses, loopback forms are lifted (and dialled), but
/// metadata, link-local, unspecified and the IPv4-carrying IPv6 forms stay refused.
#[tokio::test]
async fn private_door_lifts_only_private() {
    let dials = Dials::default();
    let f = fetcher(private_door(), Scripted::default(), &dials);
    let still_refused = [
        "http://169.254.169.254/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://169.254.1.1/",
        "http://[::127.0.0.1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[2002:7f00:1::1]/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://localhost/",
    ];
    for url in still_refused {
        let err = f.get(url).await.expect_err(url);
        assert!(err.is_refused(), "{url}: {err}");
    }
    assert_eq!(dials.count(), 0);

    let server = serve(LOOPBACK, ok_path).await;
    let port = server.port();
    for url in [
        format!("http://127.0.0.1:{port}/a"),
        format!("http://2130706433:{port}/b"),
        format!("http://0x7f.1:{port}/c"),
        format!("http://[::ffff:127.0.0.1]:{port}/d"),
    ] {
        let resp = f.get(&url).await.expect(&url);
        assert_eq!(resp.status(), 200, "{url}");
        assert_eq!(resp.remote_addr().to_string(), format!("127.0.0.1:{port}"));
        resp.bytes().await.unwrap();
    }
}

#[tokio::test]
async fn unparsable_urls_are_invalid_not_refused() {
    let dials = Dials::default();
    let f = fetcher(door("fetch"), Scripted::default(), &dials);
    for url in [
        "not a url",
        "http://",
        "http://example.test:99999/",
        "http://[::1/",
        "//x/y",
    ] {
        let err = f.get(url).await.expect_err(url);
        assert_eq!(err.kind(), Kind::InvalidUrl, "{url}: {err}");
    }
    assert_eq!(dials.count(), 0);
}

#[tokio::test]
async fn host_lists_match_normalised_hosts() {
    let resolver = Scripted::new(&[
        ("a.example.test", &[&["127.0.0.2"]]),
        ("xn--bcher-kva.example", &[&["127.0.0.2"]]),
        ("other.test", &[&["127.0.0.2"]]),
        ("rebound.test", &[&["127.0.0.3"]]),
    ]);
    let server = serve(PUBLIC_A, ok_path).await;
    let port = server.port();
    let dials = Dials::default();
    let mut d = door("feed:x");
    d.allow_hosts = vec![
        "*.example.test".into(),
        "bücher.example".into(),
        "rebound.test".into(),
    ];
    d.deny_hosts = vec!["BAD.example.test.".into(), "127.0.0.3".into()];
    let f = fetcher(d, resolver.clone(), &dials);

    let cases: &[(&str, Option<&str>)] = &[
        ("http://a.example.test:{p}/", None),
        ("http://A.Example.Test.:{p}/", None),
        ("http://BÜCHER.example:{p}/", None),
        (
            "http://bad.example.test:{p}/",
            Some("refused: bad.example.test is on the denylist"),
        ),
        (
            "http://example.test:{p}/",
            Some("refused: example.test is not on the allowlist"),
        ),
        (
            "http://other.test:{p}/",
            Some("refused: other.test is not on the allowlist"),
        ),
        (
            "http://127.0.0.2:{p}/",
            Some("refused: 127.0.0.2 is not on the allowlist"),
        ),
        // The denylist also applies to what a name resolves to.
        (
            "http://rebound.test:{p}/",
            Some("refused: 127.0.0.3 is on the denylist"),
        ),
    ];
    for &(url, want) in cases {
        let url = url.replace("{p}", &port.to_string());
        match (f.get(&url).await, want) {
            (Ok(r), None) => assert_eq!(r.status(), 200, "{url}"),
            (Err(e), Some(w)) => assert_eq!(e.to_string(), w, "{url}"),
            (got, want) => panic!("{url}: got {got:?}, want {want:?}"),
        }
    }
    assert!(dials
        .all()
        .iter()
        .all(|a| a.ip() == std::net::IpAddr::V4(PUBLIC_A)));
    assert!(webfetch::host_pattern_is_valid("*.example.com"));
    assert!(!webfetch::host_pattern_is_valid("exa mple.com"));
}
