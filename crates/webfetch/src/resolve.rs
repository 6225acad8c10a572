//! Name resolution, injectable.

use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;

/// The future a [`Resolve`] implementation returns.
pub type Resolving<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// Turns a host name into addresses. webfetch calls it for every name it dials (never for a
/// literal address) and vets **every** answer before connecting to any of them.
///
/// Implementations need not filter anything: refusing forbidden answers is webfetch's job.
pub trait Resolve: Send + Sync + 'static {
    /// All addresses of `host` (an ASCII, lowercase name without trailing dot).
    fn resolve<'a>(&'a self, host: &'a str) -> Resolving<'a>;
}

/// The system resolver: getaddrinfo through [`tokio::net::lookup_host`], so `/etc/hosts` is
/// honoured.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> Resolving<'a> {
        Box::pin(async move {
            #[expect(
                clippy::disallowed_methods,
                reason = "webfetch is the one place that resolves names; every answer is vetted before any is dialled"
            )]
            let addrs = tokio::net::lookup_host((host, 0u16)).await?;
            Ok(addrs.map(|sa| sa.ip()).collect())
        })
    }
}
