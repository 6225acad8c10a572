//! Whose process is at the other end of a TCP connection on this machine: its uid (the gate
//! admits only the owner's, the uid the daemon runs as, where a door asks it) and its socket's
//! inode (by which [`crate::lineage`] finds the processes holding it).
//!
//! The kernel's socket diagnostics (`NETLINK_SOCK_DIAG`, the interface of `ss`) look up one
//! TCP socket by its four addresses and answer its uid and inode. The peer of an accepted
//! loopback connection is the socket whose local address is the connection's peer address and
//! whose remote address is the connection's local one; its uid is the peer's process's. The
//! lookup is exact (no listing of every socket, so its cost does not grow with a flood), made
//! before anything is read from the connection. A socket with inode 0 belongs to no process
//! any more (a time-wait entry, listed with uid 0) and answers nothing: the caller refuses
//! what it cannot tell. (`/proc/net/tcp` holds the same facts, but reading it walks the whole
//! table: milliseconds per connection.)

use std::net::{IpAddr, SocketAddr};

use rustix::net::netlink::{SocketAddrNetlink, SOCK_DIAG};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

/// The uid the daemon runs as (its effective uid): the owner.
pub fn owner_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// `SOCK_DIAG_BY_FAMILY`.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `NLM_F_REQUEST`.
const NLM_F_REQUEST: u16 = 1;
/// `NLMSG_ERROR`.
const NLMSG_ERROR: u16 = 2;
/// `AF_INET`.
const AF_INET: u8 = 2;
/// `AF_INET6`.
const AF_INET6: u8 = 10;
/// `IPPROTO_TCP`.
const IPPROTO_TCP: u8 = 6;
/// Length of `struct nlmsghdr`.
const NLMSG_HDR: usize = 16;
/// Length of `struct inet_diag_req_v2`.
const REQ_V2: usize = 56;
/// Offset of `idiag_uid` in `struct inet_diag_msg`.
const MSG_UID: usize = 64;
/// Offset of `idiag_inode` in `struct inet_diag_msg`.
const MSG_INODE: usize = 68;

/// One address of `struct inet_diag_sockid`: four 32-bit words in network order.
fn diag_addr(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => {
            let mut a = [0u8; 16];
            a[..4].copy_from_slice(&v4.octets());
            a
        }
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The `SOCK_DIAG_BY_FAMILY` request for the one TCP socket whose local address is `src`
/// and remote address `dst`.
fn request(src: SocketAddr, dst: SocketAddr) -> Vec<u8> {
    let mut m = Vec::with_capacity(NLMSG_HDR + REQ_V2);
    m.extend_from_slice(&((NLMSG_HDR + REQ_V2) as u32).to_ne_bytes());
    m.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    m.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    m.extend_from_slice(&1u32.to_ne_bytes()); // seq
    m.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel's
    m.push(if src.is_ipv4() { AF_INET } else { AF_INET6 });
    m.push(IPPROTO_TCP);
    m.push(0); // idiag_ext
    m.push(0); // pad
    m.extend_from_slice(&u32::MAX.to_ne_bytes()); // idiag_states: any
    m.extend_from_slice(&src.port().to_be_bytes());
    m.extend_from_slice(&dst.port().to_be_bytes());
    m.extend_from_slice(&diag_addr(src.ip()));
    m.extend_from_slice(&diag_addr(dst.ip()));
    m.extend_from_slice(&0u32.to_ne_bytes()); // idiag_if
    m.extend_from_slice(&[0xff; 8]); // idiag_cookie: INET_DIAG_NOCOOKIE
    m
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let w: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_ne_bytes(w))
}

/// The peer's socket as the kernel knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerSocket {
    /// The uid of the process that made it.
    pub uid: u32,
    /// Its inode: what `/proc/PID/fd` of every process holding it links to (`socket:[N]`).
    pub inode: u32,
}

/// The socket of the kernel's answer `reply`; `None` for an error (no such socket), a socket
/// of no process (inode 0), or an answer too short to hold one.
fn socket_of_reply(reply: &[u8]) -> Option<PeerSocket> {
    let kind = u16::from_ne_bytes(reply.get(4..6)?.try_into().ok()?);
    if kind == NLMSG_ERROR || kind != SOCK_DIAG_BY_FAMILY {
        return None;
    }
    let msg = reply.get(NLMSG_HDR..)?;
    let uid = u32_at(msg, MSG_UID)?;
    let inode = u32_at(msg, MSG_INODE)?;
    (inode != 0).then_some(PeerSocket { uid, inode })
}

/// The uid of the process at the other end of the loopback connection `local` ← `peer`;
/// `None` when the kernel knows no such socket (it went away) or cannot be asked.
pub fn peer_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    peer_socket(local, peer).map(|s| s.uid)
}

/// The socket at the other end of the connection `local` ← `peer` on this machine (its uid
/// and inode); `None` when the kernel knows no such socket (it went away, or the peer is on
/// another machine) or cannot be asked.
pub fn peer_socket(local: SocketAddr, peer: SocketAddr) -> Option<PeerSocket> {
    #[expect(
        clippy::disallowed_methods,
        reason = "the gate's peer check asks the kernel (sock_diag) who is at the other end: it reaches nothing"
    )]
    let fd = rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        Some(SOCK_DIAG),
    )
    .ok()?;
    let req = request(peer, local);
    rustix::net::sendto(&fd, &req, SendFlags::empty(), &SocketAddrNetlink::new(0, 0)).ok()?;
    // The kernel answers within the send: the reply is queued when it returns.
    let mut buf = [0u8; 512];
    let (got, _) = rustix::net::recv(&fd, &mut buf, RecvFlags::DONTWAIT).ok()?;
    socket_of_reply(buf.get(..got)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uid_of_reply(reply: &[u8]) -> Option<u32> {
        socket_of_reply(reply).map(|s| s.uid)
    }

    #[test]
    fn the_request_names_the_socket_and_the_reply_gives_its_uid() {
        let src: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let dst: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        let r = request(src, dst);
        assert_eq!(r.len(), 72);
        assert_eq!(&r[16..18], &[AF_INET, IPPROTO_TCP]);
        assert_eq!(&r[24..26], &40000u16.to_be_bytes());
        assert_eq!(&r[26..28], &8765u16.to_be_bytes());
        assert_eq!(&r[28..32], &[127, 0, 0, 1]);
        assert_eq!(&r[44..48], &[127, 0, 0, 1]);
        let v6 = request("[::1]:1".parse().unwrap(), "[::1]:2".parse().unwrap());
        assert_eq!(v6[16], AF_INET6);
        assert_eq!(v6[43], 1);

        let reply = |kind: u16, uid: u32, inode: u32| {
            let mut b = vec![0u8; NLMSG_HDR + 72];
            b[4..6].copy_from_slice(&kind.to_ne_bytes());
            b[NLMSG_HDR + MSG_UID..NLMSG_HDR + MSG_UID + 4].copy_from_slice(&uid.to_ne_bytes());
            b[NLMSG_HDR + MSG_INODE..NLMSG_HDR + MSG_INODE + 4]
                .copy_from_slice(&inode.to_ne_bytes());
            b
        };
        assert_eq!(
            uid_of_reply(&reply(SOCK_DIAG_BY_FAMILY, 65534, 77)),
            Some(65534)
        );
        assert_eq!(
            uid_of_reply(&reply(SOCK_DIAG_BY_FAMILY, 0, 0)),
            None,
            "a time-wait entry belongs to no process"
        );
        assert_eq!(uid_of_reply(&reply(NLMSG_ERROR, 0, 1)), None);
        assert_eq!(uid_of_reply(&reply(SOCK_DIAG_BY_FAMILY, 1, 1)[..40]), None);
        assert_eq!(uid_of_reply(&[]), None);
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
        assert_eq!(
            peer_uid(s.local_addr().unwrap(), "127.0.0.1:9".parse().unwrap()),
            None,
            "no such socket"
        );
        if let Ok(l6) = std::net::TcpListener::bind("[::1]:0") {
            let _c6 = std::net::TcpStream::connect(l6.local_addr().unwrap()).unwrap();
            let (s6, p6) = l6.accept().unwrap();
            assert_eq!(peer_uid(s6.local_addr().unwrap(), p6), Some(owner_uid()));
        }
    }
}
