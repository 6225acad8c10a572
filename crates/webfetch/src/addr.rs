//! The address table (W-3, W-4): which IP addresses a door may connect to.
//!
//! Written as explicit tables rather than with std's `is_global` & co., which are unstable or
//! judge IPv4-embedding IPv6 forms wrongly. Rules:
//!
//! * IPv4 is judged by [`V4_TABLE`]; anything not listed is public.
//! * IPv4-mapped IPv6 (`::ffff:a.b.c.d`) *is* the IPv4 address `a.b.c.d` on the wire: it is
//!   canonicalised to that address and judged (and dialled) as IPv4.
//! * Every other IPv6 address is public only inside `2000::/3` and outside the blocks of
//!   [`V6_TABLE`] (fail closed). Forms that embed an IPv4 address (IPv4-compatible, SIIT,
//!   NAT64, 6to4, Teredo) are always refused; the embedded address is extracted so the reason
//!   names it.
//! * Three cloud metadata addresses stay refused on every door.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What an IP address is, by the table of W-3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Class {
    /// Globally routable unicast: allowed on every door.
    Public,
    /// `0.0.0.0/8` or `::/128`.
    Unspecified,
    /// `127.0.0.0/8` or `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// `100.64.0.0/10`, carrier-grade NAT.
    SharedAddressSpace,
    /// `169.254.0.0/16` or `fe80::/10`.
    LinkLocal,
    /// `192.0.0.0/24`.
    ProtocolAssignments,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `192.88.99.0/24`, the 6to4 relay anycast block.
    RelayAnycast,
    /// `198.18.0.0/15`.
    Benchmarking,
    /// `224.0.0.0/4` or `ff00::/8`.
    Multicast,
    /// `240.0.0.0/4`, or IPv6 outside `2000::/3` and every other row.
    Reserved,
    /// `255.255.255.255`.
    Broadcast,
    /// `fc00::/7`, unique local addresses.
    UniqueLocal,
    /// `fec0::/10`, deprecated site-local addresses.
    SiteLocal,
    /// `::/96`, deprecated IPv4-compatible addresses.
    Ipv4Compatible,
    /// `::ffff:0:0:0/96`, IPv4-translated (SIIT) addresses.
    Ipv4Translated,
    /// `64:ff9b::/96` and `64:ff9b:1::/48`, NAT64.
    Nat64,
    /// `100::/64`, the discard-only block.
    Discard,
    /// `2001::/23` outside Teredo: IETF protocol assignments.
    IetfProtocolAssignments,
    /// `2001::/32`, Teredo tunnelling.
    Teredo,
    /// `2002::/16`, 6to4 tunnelling.
    SixToFour,
    /// `5f00::/16`, SRv6 segment identifiers.
    Srv6,
}

impl Class {
    /// A short human label, as used in refusal messages ("private", "link-local", …).
    pub fn label(self) -> &'static str {
        match self {
            Class::Public => "public",
            Class::Unspecified => "unspecified (this network)",
            Class::Loopback => "loopback",
            Class::Private => "private",
            Class::SharedAddressSpace => "shared address space (carrier-grade NAT)",
            Class::LinkLocal => "link-local",
            Class::ProtocolAssignments => "reserved for IETF protocol assignments",
            Class::Documentation => "reserved for documentation",
            Class::RelayAnycast => "6to4 relay anycast",
            Class::Benchmarking => "reserved for benchmarking",
            Class::Multicast => "multicast",
            Class::Reserved => "reserved",
            Class::Broadcast => "broadcast",
            Class::UniqueLocal => "unique local (private)",
            Class::SiteLocal => "site-local",
            Class::Ipv4Compatible => "IPv4-compatible",
            Class::Ipv4Translated => "IPv4-translated",
            Class::Nat64 => "NAT64",
            Class::Discard => "discard-only",
            Class::IetfProtocolAssignments => "reserved for IETF protocol assignments",
            Class::Teredo => "Teredo",
            Class::SixToFour => "6to4",
            Class::Srv6 => "SRv6 segment identifier",
        }
    }
}

/// The judgement of one address: its class, whether it is a cloud metadata endpoint, and for
/// the IPv6 forms that carry an IPv4 address, that address and its own class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Verdict {
    /// The address judged, canonicalised (IPv4-mapped IPv6 becomes IPv4).
    pub addr: IpAddr,
    /// The row of the table the address falls in.
    pub class: Class,
    /// A cloud metadata endpoint (`169.254.169.254`, `fd00:ec2::254`, `100.100.100.200`):
    /// refused on every door.
    pub metadata: bool,
    /// For IPv4-compatible, IPv4-translated, NAT64, 6to4 and Teredo addresses: the IPv4
    /// address they carry and its class.
    pub embedded: Option<(Ipv4Addr, Class)>,
}

impl Verdict {
    /// Whether the table alone (no door lifting anything) allows this address.
    pub fn is_public(&self) -> bool {
        self.class == Class::Public && !self.metadata
    }

    /// The reason text after the address: `link-local (cloud metadata)`, `private`,
    /// `NAT64 carrying 127.0.0.1 (loopback)`.
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class.label())?;
        if let Some((v4, class)) = self.embedded {
            write!(f, " carrying {v4} ({})", class.label())?;
        }
        if self.metadata {
            f.write_str(" (cloud metadata)")?;
        }
        Ok(())
    }
}

impl fmt::Display for Verdict {
    /// Only the reason, e.g. `link-local (cloud metadata)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe(f)
    }
}

/// The IPv4 table: (network, prefix length, class); the first matching row wins.
pub const V4_TABLE: &[(Ipv4Addr, u8, Class)] = &[
    (Ipv4Addr::new(255, 255, 255, 255), 32, Class::Broadcast),
    (Ipv4Addr::new(0, 0, 0, 0), 8, Class::Unspecified),
    (Ipv4Addr::new(10, 0, 0, 0), 8, Class::Private),
    (Ipv4Addr::new(100, 64, 0, 0), 10, Class::SharedAddressSpace),
    (Ipv4Addr::new(127, 0, 0, 0), 8, Class::Loopback),
    (Ipv4Addr::new(169, 254, 0, 0), 16, Class::LinkLocal),
    (Ipv4Addr::new(172, 16, 0, 0), 12, Class::Private),
    (Ipv4Addr::new(192, 0, 0, 0), 24, Class::ProtocolAssignments),
    (Ipv4Addr::new(192, 0, 2, 0), 24, Class::Documentation),
    (Ipv4Addr::new(192, 88, 99, 0), 24, Class::RelayAnycast),
    (Ipv4Addr::new(192, 168, 0, 0), 16, Class::Private),
    (Ipv4Addr::new(198, 18, 0, 0), 15, Class::Benchmarking),
    (Ipv4Addr::new(198, 51, 100, 0), 24, Class::Documentation),
    (Ipv4Addr::new(203, 0, 113, 0), 24, Class::Documentation),
    (Ipv4Addr::new(224, 0, 0, 0), 4, Class::Multicast),
    (Ipv4Addr::new(240, 0, 0, 0), 4, Class::Reserved),
];

/// The IPv6 table (after IPv4-mapped addresses were canonicalised to IPv4): (network, prefix
/// length, class); the first matching row wins. An address matching no row is public inside
/// `2000::/3` and [`Class::Reserved`] outside it.
pub const V6_TABLE: &[(Ipv6Addr, u8, Class)] = &[
    (
        Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0),
        128,
        Class::Unspecified,
    ),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 1), 128, Class::Loopback),
    (
        Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0),
        96,
        Class::Ipv4Compatible,
    ),
    (
        Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0),
        96,
        Class::Ipv4Translated,
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0),
        96,
        Class::Nat64,
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        Class::Nat64,
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        Class::Discard,
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        32,
        Class::Teredo,
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        Class::IetfProtocolAssignments,
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        Class::Documentation,
    ),
    (
        Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0),
        16,
        Class::SixToFour,
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        Class::Documentation,
    ),
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16, Class::Srv6),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        Class::UniqueLocal,
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        Class::LinkLocal,
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        Class::SiteLocal,
    ),
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        Class::Multicast,
    ),
];

/// Cloud metadata endpoints: refused on every door, `allow_private` or not.
pub const METADATA: &[IpAddr] = &[
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
];

/// `2000::/3`, the global unicast space.
const GLOBAL_UNICAST: (Ipv6Addr, u8) = (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);

fn in_v4(addr: Ipv4Addr, net: Ipv4Addr, len: u8) -> bool {
    let mask = if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    };
    u32::from(addr) & mask == u32::from(net) & mask
}

fn in_v6(addr: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len))
    };
    u128::from(addr) & mask == u128::from(net) & mask
}

/// The canonical form of an address: an IPv4-mapped IPv6 address becomes its IPv4 address.
pub fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 @ IpAddr::V4(_) => v4,
    }
}

fn classify_v4(addr: Ipv4Addr) -> Class {
    V4_TABLE
        .iter()
        .find(|(net, len, _)| in_v4(addr, *net, *len))
        .map_or(Class::Public, |row| row.2)
}

fn classify_v6(addr: Ipv6Addr) -> Class {
    if let Some(row) = V6_TABLE
        .iter()
        .find(|(net, len, _)| in_v6(addr, *net, *len))
    {
        return row.2;
    }
    if in_v6(addr, GLOBAL_UNICAST.0, GLOBAL_UNICAST.1) {
        Class::Public
    } else {
        Class::Reserved
    }
}

/// The IPv4 address carried by an IPv6 address of an embedding class.
fn embedded_v4(addr: Ipv6Addr, class: Class) -> Option<Ipv4Addr> {
    let bits = u128::from(addr);
    // Each cast keeps exactly 32 bits, by construction of the shift.
    let low32 = (bits & 0xffff_ffff) as u32;
    match class {
        Class::Ipv4Compatible | Class::Ipv4Translated => Some(Ipv4Addr::from(low32)),
        Class::Nat64 if in_v6(addr, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) => {
            Some(Ipv4Addr::from(low32))
        }
        Class::SixToFour => Some(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32)),
        // The Teredo client address is stored inverted in the last 32 bits.
        Class::Teredo => Some(Ipv4Addr::from(!low32)),
        _ => None,
    }
}

/// Judge one address by the table (no door policy applied).
pub fn classify(addr: IpAddr) -> Verdict {
    let addr = canonical(addr);
    let metadata = METADATA.contains(&addr);
    let (class, embedded) = match addr {
        IpAddr::V4(v4) => (classify_v4(v4), None),
        IpAddr::V6(v6) => {
            let class = classify_v6(v6);
            let embedded = embedded_v4(v6, class).map(|v4| (v4, classify_v4(v4)));
            (class, embedded)
        }
    };
    Verdict {
        addr,
        class,
        metadata,
        embedded,
    }
}

/// Whether a door with these settings may connect to `addr` (the table plus what
/// `allow_private` and `allow_cgnat` lift; metadata endpoints are never permitted).
pub fn permitted(addr: IpAddr, allow_private: bool, allow_cgnat: bool) -> bool {
    Lifts {
        private: allow_private,
        cgnat: allow_cgnat,
    }
    .permits(&classify(addr))
}

/// What a door lifts from the table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lifts {
    /// Loopback, RFC 1918 and ULA.
    pub(crate) private: bool,
    /// 100.64.0.0/10 (only together with `private`).
    pub(crate) cgnat: bool,
}

impl Lifts {
    /// Whether a door with these lifts may connect to an address with this verdict.
    pub(crate) fn permits(self, v: &Verdict) -> bool {
        if v.metadata {
            return false;
        }
        match v.class {
            Class::Public => true,
            Class::Loopback | Class::Private | Class::UniqueLocal => self.private,
            Class::SharedAddressSpace => self.private && self.cgnat,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teredo_client_is_unobfuscated() {
        // 2001:0:4136:e378:8000:63bf:3fff:fdd2 carries client 192.0.2.45.
        let a: IpAddr = "2001:0:4136:e378:8000:63bf:3fff:fdd2".parse().unwrap();
        let v = classify(a);
        assert_eq!(v.class, Class::Teredo);
        assert_eq!(
            v.embedded,
            Some((Ipv4Addr::new(192, 0, 2, 45), Class::Documentation))
        );
    }

    #[test]
    fn six_to_four_embedded() {
        let a: IpAddr = "2002:c000:0204::1".parse().unwrap();
        assert_eq!(
            classify(a).embedded,
            Some((Ipv4Addr::new(192, 0, 2, 4), Class::Documentation))
        );
    }
}
