//! Properties of the address table.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use webfetch::addr::{classify, permitted, V6_TABLE};
use webfetch::Class;

fn in_v6(addr: Ipv6Addr, net: Ipv6Addr, len: u8) -> bool {
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len))
    };
    u128::from(addr) & mask == u128::from(net) & mask
}

proptest! {
    /// An IPv4-mapped address is judged exactly as its IPv4 address.
    #[test]
    fn mapped_equals_v4(bits: u32) {
        let v4 = Ipv4Addr::from(bits);
        let mapped = IpAddr::V6(v4.to_ipv6_mapped());
        let (a, b) = (classify(IpAddr::V4(v4)), classify(mapped));
        prop_assert_eq!(a, b);
        for (p, c) in [(false, false), (true, false), (true, true)] {
            prop_assert_eq!(permitted(IpAddr::V4(v4), p, c), permitted(mapped, p, c));
        }
    }

    /// IPv6 is public only inside 2000::/3 and outside every listed block (fail closed), and
    /// a default door permits exactly the public addresses.
    #[test]
    fn v6_public_only_in_global_unicast(bits: u128) {
        let v6 = Ipv6Addr::from(bits);
        let ip = IpAddr::V6(v6);
        let v = classify(ip);
        if v6.to_ipv4_mapped().is_none() {
            let listed = V6_TABLE.iter().any(|(n, l, _)| in_v6(v6, *n, *l));
            let global = in_v6(v6, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);
            prop_assert_eq!(v.class == Class::Public, global && !listed);
        }
        prop_assert_eq!(permitted(ip, false, false), v.is_public());
    }

    /// IPv4-carrying forms name the carried address and are never permitted, whatever it is.
    #[test]
    fn carriers_are_never_permitted(bits: u32) {
        let v4 = Ipv4Addr::from(bits);
        let b = u128::from(bits);
        let forms = [
            (Ipv6Addr::from(b), Class::Ipv4Compatible),
            (Ipv6Addr::from((0xffffu128 << 48) | b), Class::Ipv4Translated),
            (Ipv6Addr::from((0x64_ff9bu128 << 96) | b), Class::Nat64),
            (Ipv6Addr::from((0x2002u128 << 112) | (b << 80) | 1), Class::SixToFour),
            (Ipv6Addr::from((0x2001_0000u128 << 96) | u128::from(!bits)), Class::Teredo),
        ];
        for (v6, class) in forms {
            let v = classify(IpAddr::V6(v6));
            if bits > 1 || class != Class::Ipv4Compatible {
                prop_assert_eq!(v.class, class, "{}", v6);
                prop_assert_eq!(v.embedded.map(|e| e.0), Some(v4), "{}", v6);
            }
            for (p, c) in [(false, false), (true, false), (true, true)] {
                prop_assert!(!permitted(IpAddr::V6(v6), p, c), "{}", v6);
            }
        }
    }

    /// allow_private never lifts metadata, link-local, multicast, broadcast or unspecified.
    #[test]
    fn private_lifts_only_private(bits: u32, bits6: u128) {
        for ip in [IpAddr::V4(Ipv4Addr::from(bits)), IpAddr::V6(Ipv6Addr::from(bits6))] {
            let v = classify(ip);
            let lifted = permitted(ip, true, true) && !permitted(ip, false, false);
            if lifted {
                prop_assert!(
                    matches!(v.class, Class::Loopback | Class::Private | Class::UniqueLocal | Class::SharedAddressSpace)
                        && !v.metadata,
                    "{} {:?}", ip, v
                );
            }
        }
    }
}
