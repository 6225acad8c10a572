//! The address table of W-3/W-4, row by row with the edges of every block.

use std::net::{IpAddr, Ipv4Addr};

use webfetch::addr::{classify, permitted};
use webfetch::Class::{self, *};

/// Door columns: D = default door, P = allow_private, C = allow_private + allow_cgnat.
/// Each row: address, class, metadata, allowed on D, P, C.
const V4: &[(&str, Class, bool, [bool; 3])] = &[
    ("0.0.0.0", Unspecified, false, [false, false, false]),
    ("0.255.255.255", Unspecified, false, [false, false, false]),
    ("1.0.0.0", Public, false, [true, true, true]),
    ("9.255.255.255", Public, false, [true, true, true]),
    ("10.0.0.0", Private, false, [false, true, true]),
    ("10.255.255.255", Private, false, [false, true, true]),
    ("11.0.0.0", Public, false, [true, true, true]),
    ("100.63.255.255", Public, false, [true, true, true]),
    (
        "100.64.0.0",
        SharedAddressSpace,
        false,
        [false, false, true],
    ),
    (
        "100.127.255.255",
        SharedAddressSpace,
        false,
        [false, false, true],
    ),
    ("100.128.0.0", Public, false, [true, true, true]),
    (
        "100.100.100.200",
        SharedAddressSpace,
        true,
        [false, false, false],
    ),
    ("126.255.255.255", Public, false, [true, true, true]),
    ("127.0.0.0", Loopback, false, [false, true, true]),
    ("127.0.0.1", Loopback, false, [false, true, true]),
    ("127.255.255.255", Loopback, false, [false, true, true]),
    ("128.0.0.0", Public, false, [true, true, true]),
    ("169.253.255.255", Public, false, [true, true, true]),
    ("169.254.0.0", LinkLocal, false, [false, false, false]),
    ("169.254.169.254", LinkLocal, true, [false, false, false]),
    ("169.254.255.255", LinkLocal, false, [false, false, false]),
    ("169.255.0.0", Public, false, [true, true, true]),
    ("172.15.255.255", Public, false, [true, true, true]),
    ("172.16.0.0", Private, false, [false, true, true]),
    ("172.31.255.255", Private, false, [false, true, true]),
    ("172.32.0.0", Public, false, [true, true, true]),
    ("191.255.255.255", Public, false, [true, true, true]),
    (
        "192.0.0.0",
        ProtocolAssignments,
        false,
        [false, false, false],
    ),
    (
        "192.0.0.255",
        ProtocolAssignments,
        false,
        [false, false, false],
    ),
    ("192.0.1.0", Public, false, [true, true, true]),
    ("192.0.2.0", Documentation, false, [false, false, false]),
    ("192.0.2.255", Documentation, false, [false, false, false]),
    ("192.0.3.0", Public, false, [true, true, true]),
    ("192.88.98.255", Public, false, [true, true, true]),
    ("192.88.99.0", RelayAnycast, false, [false, false, false]),
    ("192.88.99.255", RelayAnycast, false, [false, false, false]),
    ("192.88.100.0", Public, false, [true, true, true]),
    ("192.167.255.255", Public, false, [true, true, true]),
    ("192.168.0.0", Private, false, [false, true, true]),
    ("192.168.255.255", Private, false, [false, true, true]),
    ("192.169.0.0", Public, false, [true, true, true]),
    ("198.17.255.255", Public, false, [true, true, true]),
    ("198.18.0.0", Benchmarking, false, [false, false, false]),
    ("198.19.255.255", Benchmarking, false, [false, false, false]),
    ("198.20.0.0", Public, false, [true, true, true]),
    ("198.51.99.255", Public, false, [true, true, true]),
    ("198.51.100.0", Documentation, false, [false, false, false]),
    (
        "198.51.100.255",
        Documentation,
        false,
        [false, false, false],
    ),
    ("198.51.101.0", Public, false, [true, true, true]),
    ("203.0.112.255", Public, false, [true, true, true]),
    ("203.0.113.0", Documentation, false, [false, false, false]),
    ("203.0.113.255", Documentation, false, [false, false, false]),
    ("203.0.114.0", Public, false, [true, true, true]),
    ("223.255.255.255", Public, false, [true, true, true]),
    ("224.0.0.0", Multicast, false, [false, false, false]),
    ("239.255.255.255", Multicast, false, [false, false, false]),
    ("240.0.0.0", Reserved, false, [false, false, false]),
    ("255.255.255.254", Reserved, false, [false, false, false]),
    ("255.255.255.255", Broadcast, false, [false, false, false]),
];

const MAX: &str = "ffff:ffff:ffff:ffff:ffff";

/// IPv6 rows; `{M}` stands for the trailing five all-ones groups.
const V6: &[(&str, Class, bool, [bool; 3])] = &[
    ("::", Unspecified, false, [false, false, false]),
    ("::1", Loopback, false, [false, true, true]),
    ("::2", Ipv4Compatible, false, [false, false, false]),
    ("::7f00:1", Ipv4Compatible, false, [false, false, false]),
    ("::808:808", Ipv4Compatible, false, [false, false, false]),
    ("::ffff:ffff", Ipv4Compatible, false, [false, false, false]),
    ("::1:0:0", Reserved, false, [false, false, false]),
    ("::fffe:ffff:ffff", Reserved, false, [false, false, false]),
    ("::ffff:0:0:0", Ipv4Translated, false, [false, false, false]),
    (
        "::ffff:0:7f00:1",
        Ipv4Translated,
        false,
        [false, false, false],
    ),
    (
        "::ffff:0:ffff:ffff",
        Ipv4Translated,
        false,
        [false, false, false],
    ),
    ("::1:0:0:0", Reserved, false, [false, false, false]),
    ("64:ff9a:ffff:{M}", Reserved, false, [false, false, false]),
    ("64:ff9b::", Nat64, false, [false, false, false]),
    ("64:ff9b::7f00:1", Nat64, false, [false, false, false]),
    ("64:ff9b::808:808", Nat64, false, [false, false, false]),
    ("64:ff9b::ffff:ffff", Nat64, false, [false, false, false]),
    ("64:ff9b::1:0:0", Reserved, false, [false, false, false]),
    ("64:ff9b:1::", Nat64, false, [false, false, false]),
    ("64:ff9b:1:{M}", Nat64, false, [false, false, false]),
    ("64:ff9b:2::", Reserved, false, [false, false, false]),
    ("100::", Discard, false, [false, false, false]),
    (
        "100::ffff:ffff:ffff:ffff",
        Discard,
        false,
        [false, false, false],
    ),
    ("100:0:0:1::", Reserved, false, [false, false, false]),
    ("1fff:ffff:ffff:{M}", Reserved, false, [false, false, false]),
    ("2000::", Public, false, [true, true, true]),
    ("2001::", Teredo, false, [false, false, false]),
    (
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        Teredo,
        false,
        [false, false, false],
    ),
    ("2001:0:ffff:{M}", Teredo, false, [false, false, false]),
    (
        "2001:1::",
        IetfProtocolAssignments,
        false,
        [false, false, false],
    ),
    (
        "2001:1ff:ffff:{M}",
        IetfProtocolAssignments,
        false,
        [false, false, false],
    ),
    ("2001:200::", Public, false, [true, true, true]),
    ("2001:db7:ffff:{M}", Public, false, [true, true, true]),
    ("2001:db8::", Documentation, false, [false, false, false]),
    (
        "2001:db8:ffff:{M}",
        Documentation,
        false,
        [false, false, false],
    ),
    ("2001:db9::", Public, false, [true, true, true]),
    ("2001:ffff:ffff:{M}", Public, false, [true, true, true]),
    ("2002::", SixToFour, false, [false, false, false]),
    ("2002:7f00:1::1", SixToFour, false, [false, false, false]),
    (
        "2002:ffff:ffff:{M}",
        SixToFour,
        false,
        [false, false, false],
    ),
    ("2003::", Public, false, [true, true, true]),
    ("2606:4700::1111", Public, false, [true, true, true]),
    ("3ffe:ffff:ffff:{M}", Public, false, [true, true, true]),
    ("3fff::", Documentation, false, [false, false, false]),
    (
        "3fff:fff:ffff:{M}",
        Documentation,
        false,
        [false, false, false],
    ),
    ("3fff:1000::", Public, false, [true, true, true]),
    ("3fff:ffff:ffff:{M}", Public, false, [true, true, true]),
    ("4000::", Reserved, false, [false, false, false]),
    ("5eff:ffff:ffff:{M}", Reserved, false, [false, false, false]),
    ("5f00::", Srv6, false, [false, false, false]),
    ("5f00:ffff:ffff:{M}", Srv6, false, [false, false, false]),
    ("5f01::", Reserved, false, [false, false, false]),
    ("fbff:ffff:ffff:{M}", Reserved, false, [false, false, false]),
    ("fc00::", UniqueLocal, false, [false, true, true]),
    ("fd00:ec2::253", UniqueLocal, false, [false, true, true]),
    ("fd00:ec2::254", UniqueLocal, true, [false, false, false]),
    (
        "fdff:ffff:ffff:{M}",
        UniqueLocal,
        false,
        [false, true, true],
    ),
    ("fe00::", Reserved, false, [false, false, false]),
    ("fe7f:ffff:ffff:{M}", Reserved, false, [false, false, false]),
    ("fe80::", LinkLocal, false, [false, false, false]),
    (
        "febf:ffff:ffff:{M}",
        LinkLocal,
        false,
        [false, false, false],
    ),
    ("fec0::", SiteLocal, false, [false, false, false]),
    (
        "feff:ffff:ffff:{M}",
        SiteLocal,
        false,
        [false, false, false],
    ),
    ("ff00::", Multicast, false, [false, false, false]),
    ("ff02::1", Multicast, false, [false, false, false]),
    (
        "ffff:ffff:ffff:{M}",
        Multicast,
        false,
        [false, false, false],
    ),
];

fn check(text: &str, class: Class, metadata: bool, allowed: [bool; 3]) {
    let addr: IpAddr = text
        .replace("{M}", MAX)
        .parse()
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let v = classify(addr);
    assert_eq!(v.class, class, "{text}");
    assert_eq!(v.metadata, metadata, "{text} metadata");
    let got = [
        permitted(addr, false, false),
        permitted(addr, true, false),
        permitted(addr, true, true),
    ];
    assert_eq!(got, allowed, "{text}: default/private/private+cgnat");
    // allow_cgnat without allow_private lifts nothing.
    assert_eq!(
        permitted(addr, false, true),
        allowed[0],
        "{text}: cgnat alone"
    );
}

#[test]
fn ipv4_rows_and_edges() {
    for &(text, class, metadata, allowed) in V4 {
        check(text, class, metadata, allowed);
    }
}

#[test]
fn ipv6_rows_and_edges() {
    for &(text, class, metadata, allowed) in V6 {
        check(text, class, metadata, allowed);
    }
}

#[test]
fn ipv4_mapped_is_judged_as_its_ipv4_address() {
    for &(text, class, metadata, allowed) in V4 {
        let v4: Ipv4Addr = text.parse().unwrap();
        let mapped = IpAddr::V6(v4.to_ipv6_mapped());
        let v = classify(mapped);
        assert_eq!(v.addr, IpAddr::V4(v4), "{mapped} canonicalises");
        assert_eq!((v.class, v.metadata), (class, metadata), "{mapped}");
        let got = [
            permitted(mapped, false, false),
            permitted(mapped, true, false),
            permitted(mapped, true, true),
        ];
        assert_eq!(got, allowed, "{mapped}");
    }
}

/// The IPv6 forms that carry an IPv4 address name it, and its class, in the verdict.
#[test]
fn embedded_addresses_are_extracted() {
    let table: &[(&str, &str, Class)] = &[
        ("::7f00:1", "127.0.0.1", Loopback),
        ("::a9fe:a9fe", "169.254.169.254", LinkLocal),
        ("::ffff:0:a00:7", "10.0.0.7", Private),
        ("64:ff9b::7f00:1", "127.0.0.1", Loopback),
        ("64:ff9b::808:808", "8.8.8.8", Public),
        ("2002:a9fe:a9fe::1", "169.254.169.254", LinkLocal),
        ("2002:c0a8:101::", "192.168.1.1", Private),
        // Teredo stores the client address inverted: !7f000001 = 80fffffe.
        (
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            "127.0.0.1",
            Loopback,
        ),
        (
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "192.0.2.45",
            Documentation,
        ),
    ];
    for &(v6, v4, class) in table {
        let v = classify(v6.parse().unwrap());
        assert_eq!(v.embedded, Some((v4.parse().unwrap(), class)), "{v6}");
    }
    assert_eq!(
        classify("64:ff9b:1::7f00:1".parse().unwrap()).embedded,
        None
    );
}

#[test]
fn verdicts_read_as_reasons() {
    let table = [
        ("169.254.169.254", "link-local (cloud metadata)"),
        ("10.0.0.7", "private"),
        ("127.0.0.1", "loopback"),
        ("::7f00:1", "IPv4-compatible carrying 127.0.0.1 (loopback)"),
        ("64:ff9b::a00:7", "NAT64 carrying 10.0.0.7 (private)"),
        ("fd00:ec2::254", "unique local (private) (cloud metadata)"),
    ];
    for (addr, want) in table {
        assert_eq!(classify(addr.parse().unwrap()).to_string(), want, "{addr}");
    }
}
