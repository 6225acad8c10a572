//! Test-only policy. Not part of the stable API; compiled only with the `test-hooks` feature,
//! which only dev-dependencies enable.

use std::net::{IpAddr, Ipv4Addr};

/// A loopback address (in 127.0.0.0/8, not 127.0.0.1) that a fetcher built with
/// [`crate::FetcherBuilder::pretend_public`] judges as public.
///
/// Tests may only use loopback, yet a redirect test needs a "public" first hop whose
/// redirect to a forbidden address is then refused. Nothing in Maven's configuration
/// builds this type, and it cannot name an address outside loopback.
#[derive(Debug, Clone, Copy)]
pub struct PretendPublic(Ipv4Addr);

impl PretendPublic {
    /// `None` unless `addr` is in 127.0.0.0/8 and not 127.0.0.1.
    pub fn loopback(addr: Ipv4Addr) -> Option<Self> {
        (addr.octets()[0] == 127 && addr != Ipv4Addr::LOCALHOST).then_some(PretendPublic(addr))
    }

    pub(crate) fn addr(self) -> IpAddr {
        IpAddr::V4(self.0)
    }
}

/// The environment variable [`crate::FetcherBuilder::test_hooks_from_env`] reads:
/// comma-separated loopback IPv4 addresses other than 127.0.0.1 (`127.0.0.2,127.0.0.3`).
pub const PRETEND_PUBLIC_ENV: &str = "MAVEN_TEST_PRETEND_PUBLIC";

/// The valid entries of a comma-separated list of [`PretendPublic`] addresses.
pub fn pretend_public_list(list: &str) -> Vec<PretendPublic> {
    list.split(',')
        .filter_map(|entry| entry.trim().parse::<Ipv4Addr>().ok())
        .filter_map(PretendPublic::loopback)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_but_127_0_0_1_are_taken() {
        let got: Vec<IpAddr> =
            pretend_public_list(" 127.0.0.2,127.0.0.1,10.0.0.1,x,,::1,127.9.9.9 ")
                .into_iter()
                .map(PretendPublic::addr)
                .collect();
        let want: Vec<IpAddr> = vec![
            Ipv4Addr::new(127, 0, 0, 2).into(),
            Ipv4Addr::new(127, 9, 9, 9).into(),
        ];
        assert_eq!(got, want);
    }
}
