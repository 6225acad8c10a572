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
