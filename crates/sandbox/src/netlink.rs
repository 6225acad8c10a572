//! The two requests the launcher makes of the kernel's routing netlink (`NETLINK_ROUTE`) in a
//! proxied server's new network namespace, before the server runs: the loopback interface up
//! (`RTM_NEWLINK` with `IFF_UP`; there is no safe `SIOCSIFFLAGS`), and an address added to it
//! (`RTM_NEWADDR`, /32 or /128) for a `connect` endpoint outside 127.0.0.0/8 and `::1`. The
//! bytes are made here (no netlink crate for two fixed messages); each request asks for an
//! acknowledgement, which is read (within [`TIMEOUT`]) and its error code checked.

use std::net::IpAddr;
use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::io::Errno;

/// How long the kernel's acknowledgement is waited for (it is immediate; this only bounds a
/// surprise).
const TIMEOUT: Duration = Duration::from_secs(5);

const NLMSG_HDRLEN: usize = 16;
const NLMSG_ERROR: u16 = 2;
const RTM_NEWLINK: u16 = 16;
const RTM_NEWADDR: u16 = 20;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const IFF_UP: u32 = 0x1;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
/// No duplicate address detection: the address is usable at once (a loopback does none
/// anyway).
const IFA_F_NODAD: u8 = 0x02;
const RT_SCOPE_UNIVERSE: u8 = 0;

/// A `NETLINK_ROUTE` socket of the current network namespace.
pub(crate) struct Route {
    fd: OwnedFd,
    seq: u32,
}

impl Route {
    pub(crate) fn open() -> Result<Route, Errno> {
        use rustix::net::{AddressFamily, SocketFlags, SocketType};
        // Protocol 0 of AF_NETLINK: NETLINK_ROUTE.
        #[expect(
            clippy::disallowed_methods,
            reason = "a route socket inside the server's own namespace, to bring its loopback up: it reaches nothing"
        )]
        let fd = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::RAW,
            SocketFlags::CLOEXEC,
            None,
        )?;
        rustix::net::sockopt::set_socket_timeout(
            &fd,
            rustix::net::sockopt::Timeout::Recv,
            Some(TIMEOUT),
        )?;
        Ok(Route { fd, seq: 0 })
    }

    /// The index of the interface `name` (`SIOCGIFINDEX`, through this socket).
    pub(crate) fn index(&self, name: &str) -> Result<u32, Errno> {
        rustix::net::netdevice::name_to_index(&self.fd, name)
    }

    /// Interface `index` up.
    pub(crate) fn link_up(&mut self, index: u32) -> Result<(), Errno> {
        self.seq += 1;
        let msg = link_up_message(index, self.seq)?;
        self.request(&msg)
    }

    /// `ip` added to interface `index`, alone in its network (/32 or /128).
    pub(crate) fn add_address(&mut self, index: u32, ip: IpAddr) -> Result<(), Errno> {
        self.seq += 1;
        let msg = address_message(index, ip, self.seq);
        self.request(&msg)
    }

    /// Sends `msg` to the kernel and reads its acknowledgement.
    fn request(&self, msg: &[u8]) -> Result<(), Errno> {
        let sent = rustix::net::send(&self.fd, msg, rustix::net::SendFlags::empty())?;
        if sent != msg.len() {
            return Err(Errno::MSGSIZE);
        }
        let mut buf = vec![0u8; 8192];
        // At most a few answers: ours is the first unless something else was queued.
        for _ in 0..16 {
            let (_, n) =
                rustix::net::recv(&self.fd, &mut buf[..], rustix::net::RecvFlags::empty())?;
            if let Some(r) = ack(&buf[..n.min(buf.len())], self.seq) {
                return r;
            }
        }
        Err(Errno::NOMSG)
    }
}

/// The header of a request of `kind` with `flags`, for a message of `len` bytes in all.
fn header(out: &mut Vec<u8>, len: usize, kind: u16, flags: u16, seq: u32) {
    out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&(flags | NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    // The kernel's port id.
    out.extend_from_slice(&0u32.to_ne_bytes());
}

/// `RTM_NEWLINK` for interface `index`: `IFF_UP` set, no other flag changed.
fn link_up_message(index: u32, seq: u32) -> Result<Vec<u8>, Errno> {
    let index = i32::try_from(index).map_err(|_| Errno::NODEV)?;
    // struct ifinfomsg: family, pad, type, index, flags, change.
    let len = NLMSG_HDRLEN + 16;
    let mut out = Vec::with_capacity(len);
    header(&mut out, len, RTM_NEWLINK, 0, seq);
    out.push(0); // AF_UNSPEC
    out.push(0);
    out.extend_from_slice(&0u16.to_ne_bytes());
    out.extend_from_slice(&index.to_ne_bytes());
    out.extend_from_slice(&IFF_UP.to_ne_bytes());
    out.extend_from_slice(&IFF_UP.to_ne_bytes());
    Ok(out)
}

/// `RTM_NEWADDR`: `ip` on interface `index`, its prefix the whole address (permanent: no
/// lifetime is given), without duplicate address detection; refused by the kernel (`EEXIST`)
/// when it is there already.
fn address_message(index: u32, ip: IpAddr, seq: u32) -> Vec<u8> {
    let (family, bytes): (u8, Vec<u8>) = match ip {
        IpAddr::V4(a) => (libc::AF_INET as u8, a.octets().to_vec()),
        IpAddr::V6(a) => (libc::AF_INET6 as u8, a.octets().to_vec()),
    };
    let prefix = u8::try_from(bytes.len() * 8).unwrap_or(u8::MAX);
    // Each attribute: length, type, the address (4 or 16 bytes: already aligned to 4).
    let attr = 4 + bytes.len();
    let len = NLMSG_HDRLEN + 8 + 2 * attr;
    let mut out = Vec::with_capacity(len);
    header(&mut out, len, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, seq);
    // struct ifaddrmsg: family, prefix length, flags, scope, index.
    out.push(family);
    out.push(prefix);
    out.push(IFA_F_NODAD);
    out.push(RT_SCOPE_UNIVERSE);
    out.extend_from_slice(&index.to_ne_bytes());
    for kind in [IFA_LOCAL, IFA_ADDRESS] {
        out.extend_from_slice(&u16::try_from(attr).unwrap_or(u16::MAX).to_ne_bytes());
        out.extend_from_slice(&kind.to_ne_bytes());
        out.extend_from_slice(&bytes);
    }
    out
}

/// The acknowledgement of request `seq` among the messages of `buf`: `Ok` for an error code of
/// 0, the errno otherwise; `None` when `buf` holds none.
fn ack(buf: &[u8], seq: u32) -> Option<Result<(), Errno>> {
    let u32_at = |at: usize| -> Option<u32> {
        buf.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_ne_bytes)
    };
    let mut at = 0;
    while at + NLMSG_HDRLEN <= buf.len() {
        let len = u32_at(at)? as usize;
        if len < NLMSG_HDRLEN || at + len > buf.len() {
            return None;
        }
        let kind = buf
            .get(at + 4..at + 6)
            .and_then(|b| b.try_into().ok())
            .map(u16::from_ne_bytes)?;
        if kind == NLMSG_ERROR && u32_at(at + 8)? == seq {
            let code = u32_at(at + NLMSG_HDRLEN)? as i32;
            return Some(if code == 0 {
                Ok(())
            } else {
                Err(Errno::from_raw_os_error(code.saturating_neg()))
            });
        }
        // Messages are aligned to 4 bytes.
        at += (len + 3) & !3;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_are_what_the_kernel_reads() {
        let up = link_up_message(1, 7).unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(&32u32.to_ne_bytes());
        want.extend_from_slice(&16u16.to_ne_bytes());
        want.extend_from_slice(&5u16.to_ne_bytes());
        want.extend_from_slice(&7u32.to_ne_bytes());
        want.extend_from_slice(&0u32.to_ne_bytes());
        want.extend_from_slice(&[0, 0, 0, 0]);
        want.extend_from_slice(&1i32.to_ne_bytes());
        want.extend_from_slice(&1u32.to_ne_bytes());
        want.extend_from_slice(&1u32.to_ne_bytes());
        assert_eq!(up, want);

        let v4 = address_message(1, "10.1.2.3".parse().unwrap(), 8);
        assert_eq!(v4.len(), 16 + 8 + 2 * 8);
        assert_eq!(&v4[0..4], &40u32.to_ne_bytes());
        assert_eq!(&v4[4..6], &20u16.to_ne_bytes());
        assert_eq!(&v4[6..8], &(1u16 | 4 | 0x200 | 0x400).to_ne_bytes());
        assert_eq!(&v4[16..20], &[2, 32, 0x02, 0]);
        assert_eq!(&v4[20..24], &1u32.to_ne_bytes());
        assert_eq!(&v4[24..26], &8u16.to_ne_bytes());
        assert_eq!(&v4[26..28], &2u16.to_ne_bytes());
        assert_eq!(&v4[28..32], &[10, 1, 2, 3]);
        assert_eq!(&v4[34..36], &1u16.to_ne_bytes());
        assert_eq!(&v4[36..40], &[10, 1, 2, 3]);

        let v6 = address_message(1, "fd00::5".parse().unwrap(), 9);
        assert_eq!(v6.len(), 16 + 8 + 2 * 20);
        assert_eq!(&v6[16..18], &[10, 128]);
    }

    #[test]
    fn acknowledgements_are_read_and_garbage_is_not_one() {
        let msg = |kind: u16, seq: u32, code: i32| {
            let mut m = Vec::new();
            m.extend_from_slice(&36u32.to_ne_bytes());
            m.extend_from_slice(&kind.to_ne_bytes());
            m.extend_from_slice(&0u16.to_ne_bytes());
            m.extend_from_slice(&seq.to_ne_bytes());
            m.extend_from_slice(&0u32.to_ne_bytes());
            m.extend_from_slice(&code.to_ne_bytes());
            m.extend_from_slice(&[0; 16]);
            m
        };
        assert_eq!(ack(&msg(2, 3, 0), 3), Some(Ok(())));
        assert_eq!(ack(&msg(2, 3, -1), 3), Some(Err(Errno::PERM)));
        assert_eq!(ack(&msg(2, 4, 0), 3), None);
        let mut two = msg(16, 3, 0);
        two.extend(msg(2, 3, -17));
        assert_eq!(ack(&two, 3), Some(Err(Errno::EXIST)));
        assert_eq!(ack(&[], 3), None);
        assert_eq!(ack(&[1, 2, 3], 3), None);
        let mut short = msg(2, 3, 0);
        short[0..4].copy_from_slice(&4u32.to_ne_bytes());
        assert_eq!(ack(&short, 3), None);
        let mut long = msg(2, 3, 0);
        long[0..4].copy_from_slice(&1000u32.to_ne_bytes());
        assert_eq!(ack(&long, 3), None);
    }

    /// As root only: a thread of this test process in a network namespace of its own (the
    /// thread ends with the test), its loopback up, an address added, listeners bound.
    #[test]
    #[expect(clippy::disallowed_macros, reason = "a test says why it skipped")]
    fn a_new_namespace_gets_its_loopback_and_an_address() {
        let t = std::thread::spawn(|| {
            if nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).is_err() {
                eprintln!("skipped: no network namespace without privilege");
                return;
            }
            #[expect(
                clippy::disallowed_methods,
                reason = "a test reaching its own listener"
            )]
            let reach = |a: std::net::SocketAddr| std::net::TcpStream::connect(a).map(drop);
            // Down: a listener at 127.0.0.1 cannot be reached.
            let l = std::net::TcpListener::bind(crate::PROXY).unwrap();
            let e = reach(crate::PROXY).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENETUNREACH), "{e}");
            let mut route = Route::open().unwrap();
            let lo = route.index("lo").unwrap();
            route.link_up(lo).unwrap();
            reach(crate::PROXY).unwrap();
            drop(l);
            let ip: IpAddr = "10.9.8.7".parse().unwrap();
            assert!(std::net::TcpListener::bind((ip, 5432)).is_err());
            route.add_address(lo, ip).unwrap();
            let l = std::net::TcpListener::bind((ip, 5432)).unwrap();
            reach((ip, 5432).into()).unwrap();
            drop(l);
            assert_eq!(route.add_address(lo, ip), Err(Errno::EXIST));
            if std::net::TcpListener::bind("[::1]:0").is_ok() {
                let ip6: IpAddr = "fd00::7".parse().unwrap();
                route.add_address(lo, ip6).unwrap();
                // An IPv6 address may become usable a moment later (the kernel's work queue):
                // the launcher retries binding it; its route may come later still (a first
                // connection may take a SYN retry).
                let mut tries = 0;
                let _l = loop {
                    match std::net::TcpListener::bind((ip6, 5432)) {
                        Ok(l) => break l,
                        Err(e) if tries < 100 => {
                            assert_eq!(e.raw_os_error(), Some(libc::EADDRNOTAVAIL), "{e}");
                            tries += 1;
                            std::thread::sleep(std::time::Duration::from_millis(10));
                        }
                        Err(e) => panic!("{e}"),
                    }
                };
                let mut tries = 0;
                while let Err(e) = reach((ip6, 5432).into()) {
                    assert!(tries < 100, "{e}");
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        });
        t.join().unwrap();
    }
}
