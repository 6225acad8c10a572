//! Whose process is at the other end of a loopback connection: the page serves only the
//! owner's own (the uid the daemon runs as).
//!
//! The kernel lists every TCP socket of this network namespace in `/proc/net/tcp` (IPv4) and
//! `/proc/net/tcp6` (IPv6), each with the uid that made it and its inode. The peer of an
//! accepted loopback connection is the socket whose local address is the connection's peer
//! address and whose remote address is the connection's local one; its uid is the peer's. A
//! socket with inode 0 has no owner any more (a time-wait entry, listed with uid 0), so it
//! answers nothing: the caller refuses what it cannot tell.

use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The uid the daemon runs as (its effective uid): the owner.
pub(crate) fn owner_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// An address as `/proc/net/tcp{,6}` prints it: the address's 32-bit words in host order,
/// `%08X` each, then `:` and the port as `%04X`.
fn proc_form(a: SocketAddr) -> String {
    let words: Vec<[u8; 4]> = match a.ip() {
        IpAddr::V4(v4) => vec![v4.octets()],
        IpAddr::V6(v6) => v6
            .octets()
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect(),
    };
    let mut s: String = words
        .iter()
        .map(|w| format!("{:08X}", u32::from_ne_bytes(*w)))
        .collect();
    s.push_str(&format!(":{:04X}", a.port()));
    s
}

/// The uid of the socket in `table` (the text of `/proc/net/tcp{,6}`) whose local address is
/// `peer` and remote address `local`; `None` when there is none, or it has no owner (inode 0).
pub(super) fn uid_in(table: &str, local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (me, them) = (proc_form(local), proc_form(peer));
    table.lines().skip(1).find_map(|line| {
        let mut f = line.split_ascii_whitespace();
        let (_sl, l, r) = (f.next()?, f.next()?, f.next()?);
        if l != them || r != me {
            return None;
        }
        // st tx:rx tr:when retrnsmt uid timeout inode
        let mut rest = f.skip(4);
        let uid = rest.next()?.parse::<u32>().ok()?;
        let inode = rest.nth(1)?.parse::<u64>().ok()?;
        (inode != 0).then_some(uid)
    })
}

/// The uid of the process at the other end of the loopback connection `local` ← `peer`;
/// `None` when the kernel no longer lists its socket (it went away) or it cannot be read.
pub(super) fn peer_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let table = match peer.ip() {
        IpAddr::V4(_) => "/proc/net/tcp",
        IpAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(table).ok()?;
    uid_in(&text, local, peer)
}

/// How often at most the log says that connections of other users were refused.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The refusals of other users' connections, logged once a minute at most.
#[derive(Default)]
pub(super) struct Refusals {
    /// When the last line was logged, and how many were refused since.
    last: Mutex<(Option<Instant>, u64)>,
}

impl Refusals {
    /// Counts a refusal of `uid` (`None`: it could not be told) and logs it when the last
    /// line is a minute old.
    pub(super) fn refused(&self, uid: Option<u32>, owner: u32, now: Instant) {
        let mut g = self.last.lock().unwrap_or_else(|p| p.into_inner());
        g.1 += 1;
        if g.0
            .is_some_and(|t| now.saturating_duration_since(t) < LOG_EVERY)
        {
            return;
        }
        let n = std::mem::take(&mut g.1);
        g.0 = Some(now);
        drop(g);
        match uid {
            Some(uid) => tracing::warn!(
                uid,
                owner,
                refused = n,
                "the page closed a connection from another user's process: it serves only its owner's (logged once a minute at most)"
            ),
            None => tracing::warn!(
                owner,
                refused = n,
                "the page closed a connection whose process it could not tell: it serves only its owner's (logged once a minute at most)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_is_found_by_its_addresses_and_a_socket_without_inode_answers_nothing() {
        // Two ends of 127.0.0.1:8765 ← 127.0.0.1:40000 as the kernel lists them on a
        // little-endian machine, a third socket of another connection, a time-wait entry.
        let local: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        let peer: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        assert_eq!(proc_form(local).len(), 13);
        let (l, p) = (proc_form(local), proc_form(peer));
        let other = proc_form("127.0.0.1:40001".parse().unwrap());
        let table = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             \x20  0: {l} {p} 01 00000000:00000000 00:00000000 00000000     0        0 111 1 0 20 4 30 10 -1\n\
             \x20  1: {other} {l} 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0 20 4 30 10 -1\n\
             \x20  2: {p} {l} 01 00000000:00000000 00:00000000 00000000 65534        0 333 1 0 20 4 30 10 -1\n"
        );
        assert_eq!(uid_in(&table, local, peer), Some(65534));
        assert_eq!(
            uid_in(&table, local, "127.0.0.1:40002".parse().unwrap()),
            None
        );
        let gone = format!(
            "header\n   0: {p} {l} 06 00000000:00000000 03:00000123 00000000     0        0 0 3 0\n"
        );
        assert_eq!(
            uid_in(&gone, local, peer),
            None,
            "a time-wait entry has no owner"
        );
        if cfg!(target_endian = "little") {
            assert_eq!(l, "0100007F:223D");
            assert_eq!(
                proc_form("[::1]:80".parse().unwrap()),
                "00000000000000000000000001000000:0050"
            );
        }
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "a loopback peer of this test's own"
    )]
    fn a_real_loopback_peer_is_this_process() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, peer) = l.accept().unwrap();
        assert_eq!(peer, c.local_addr().unwrap());
        assert_eq!(
            peer_uid(s.local_addr().unwrap(), peer),
            Some(owner_uid()),
            "the peer is this process"
        );
    }
}
