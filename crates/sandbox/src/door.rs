//! The door: how a proxied server's launcher hands the listeners of its network namespace to
//! the daemon, over the daemon's Unix stream socket (`Plan::door`).
//!
//! The launcher (in the server's new network namespace, before the server runs) binds a
//! listener at [`crate::PROXY`] and one at each `connect` endpoint, connects to the door, and
//! sends **one message**: a JSON line
//!
//! ```text
//! {"token": "…", "listeners": ["proxy", "127.0.0.1:5432", "[::1]:6379"]}\n
//! ```
//!
//! with the listeners' descriptors in one `SCM_RIGHTS` control message, in the same order as
//! the words. `token` is the secret the daemon gave the launcher in [`crate::DOOR_TOKEN_ENV`]:
//! it tells the daemon which server's start this is. The daemon checks everything
//! ([`receive`]), accepts on the listeners from then on (a connection to one of them is the
//! server reaching the proxy, or a `connect` endpoint to relay), and answers one line
//! ([`answer`]): `ok\n` or `refused: WHY\n`. The launcher keeps its end of the socket open for
//! its whole life and sends nothing more: the daemon reads the end of the stream as the server
//! being gone.
//!
//! Everything the daemon reads is bounded: one message of at most [`MAX_MESSAGE`] bytes, at
//! most [`MAX_LISTENERS`] descriptors, within [`TIMEOUT`]; every descriptor must be a TCP socket
//! in the listening state, bound where its word says, or the whole message is refused, and
//! every descriptor received is closed on any refusal.

use std::io::{IoSlice, IoSliceMut, Read as _, Write as _};
use std::mem::MaybeUninit;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use rustix::io::Errno;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use serde::{Deserialize, Serialize};

/// The longest message the daemon reads: the JSON line, its newline included.
pub const MAX_MESSAGE: usize = 8 * 1024;
/// The most descriptors one message may carry: the proxy's listener and 64 `connect`
/// endpoints.
pub const MAX_LISTENERS: usize = 65;
/// How long each side waits for the other: the daemon for the launcher's message, the
/// launcher for the daemon's answer.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// The longest answer the launcher reads, its newline included.
const MAX_ANSWER: usize = 1024;
/// The longest reason a refusal carries (longer is cut, on a character boundary).
const MAX_WHY: usize = 512;

/// What a handed-over listener is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// The listener at [`crate::PROXY`]: the server's HTTP proxy.
    Proxy,
    /// The listener of a `connect` endpoint, at the endpoint's own address and port: what it
    /// accepts is relayed raw to that address and port outside.
    Connect(SocketAddr),
}

impl Purpose {
    /// Its word in the message: `proxy`, or the address and port (`127.0.0.1:5432`,
    /// `[::1]:6379`).
    fn word(&self) -> String {
        match self {
            Purpose::Proxy => "proxy".to_owned(),
            Purpose::Connect(addr) => addr.to_string(),
        }
    }

    fn read(word: &str) -> Option<Purpose> {
        if word == "proxy" {
            return Some(Purpose::Proxy);
        }
        word.parse().ok().map(Purpose::Connect)
    }

    /// Where its listener must be bound.
    fn addr(&self) -> SocketAddr {
        match self {
            Purpose::Proxy => crate::PROXY,
            Purpose::Connect(addr) => *addr,
        }
    }
}

impl std::fmt::Display for Purpose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.word())
    }
}

/// What a launcher handed over, checked: its token (to be compared by the daemon) and its
/// listening sockets, each with what it is for, in the order sent. Exactly one is the proxy's;
/// no address comes twice.
pub struct Handed {
    /// The secret the launcher was given in [`crate::DOOR_TOKEN_ENV`].
    pub token: String,
    /// The listeners (blocking, close-on-exec), each bound at its purpose's address.
    pub listeners: Vec<(Purpose, TcpListener)>,
}

impl std::fmt::Debug for Handed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a secret: never in a log.
        f.debug_struct("Handed")
            .field("token", &"…")
            .field("listeners", &self.listeners)
            .finish()
    }
}

/// The message's JSON line.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    token: String,
    listeners: Vec<String>,
}

/// The launcher's side: sends `token` and `listeners` (their descriptors in `SCM_RIGHTS`) as
/// one message, then waits up to [`TIMEOUT`] for the daemon's one-line answer. `Ok` only for
/// `ok`; a refusal is an error carrying the daemon's words; any other failure (sending, no
/// answer, an unreadable answer) an error naming it.
pub(crate) fn hand_over(
    stream: &UnixStream,
    token: &str,
    listeners: &[(Purpose, &TcpListener)],
) -> Result<(), String> {
    if listeners.is_empty() || listeners.len() > MAX_LISTENERS {
        return Err(format!(
            "{} listeners to hand over (1 to {MAX_LISTENERS})",
            listeners.len()
        ));
    }
    let wire = Wire {
        token: token.to_owned(),
        listeners: listeners.iter().map(|(p, _)| p.word()).collect(),
    };
    let mut line = serde_json::to_string(&wire).map_err(|e| format!("the message: {e}"))?;
    line.push('\n');
    if line.len() > MAX_MESSAGE {
        return Err(format!(
            "the message is {} bytes, more than the {MAX_MESSAGE} the daemon reads",
            line.len()
        ));
    }
    let fds: Vec<BorrowedFd<'_>> = listeners.iter().map(|(_, l)| l.as_fd()).collect();
    let rights = SendAncillaryMessage::ScmRights(&fds);
    let mut space = vec![MaybeUninit::<u8>::uninit(); rights.size()];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(rights) {
        return Err("the descriptors do not fit their control message".to_owned());
    }
    let io = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    stream
        .set_write_timeout(Some(TIMEOUT))
        .map_err(|e| io("sending its listeners", &e))?;
    let bytes = line.as_bytes();
    let sent = loop {
        match rustix::net::sendmsg(
            stream,
            &[IoSlice::new(bytes)],
            &mut control,
            SendFlags::NOSIGNAL,
        ) {
            Ok(n) => break n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(io("sending its listeners", &e)),
        }
    };
    // The descriptors went with the first bytes; the rest of a line cut short follows.
    if sent < bytes.len() {
        let mut s = stream;
        s.write_all(&bytes[sent..])
            .map_err(|e| io("sending its listeners", &e))?;
    }
    let answer = read_answer(stream)?;
    if answer == "ok" {
        return Ok(());
    }
    match answer.strip_prefix("refused: ") {
        Some(why) => Err(format!("the daemon refused: {}", one_line(why))),
        None => Err(format!(
            "the daemon's answer is neither ok nor a refusal: {:?}",
            one_line(&answer)
        )),
    }
}

/// The daemon's one line, without its newline, read within [`TIMEOUT`].
#[expect(
    clippy::disallowed_methods,
    reason = "the launcher is a blocking process of its own, with no async runtime"
)]
fn read_answer(stream: &UnixStream) -> Result<String, String> {
    let deadline = std::time::Instant::now() + TIMEOUT;
    let mut got = Vec::new();
    let mut buf = [0u8; MAX_ANSWER];
    let mut s = stream;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(format!(
                "no answer from the daemon within {} s",
                TIMEOUT.as_secs()
            ));
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(|e| format!("waiting for the daemon's answer: {e}"))?;
        let n = match s.read(&mut buf[..MAX_ANSWER - got.len()]) {
            Ok(0) => return Err("the daemon hung up without an answer".to_owned()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!(
                    "no answer from the daemon within {} s",
                    TIMEOUT.as_secs()
                ))
            }
            Err(e) => return Err(format!("waiting for the daemon's answer: {e}")),
        };
        got.extend_from_slice(&buf[..n]);
        if let Some(end) = got.iter().position(|b| *b == b'\n') {
            got.truncate(end);
            return Ok(String::from_utf8_lossy(&got).into_owned());
        }
        if got.len() >= MAX_ANSWER {
            return Err(format!(
                "the daemon's answer is longer than {MAX_ANSWER} bytes"
            ));
        }
    }
}

/// The daemon's side: reads one launcher's message from `stream` (blocking, even if `stream`
/// was not: made blocking here, with its own read timeout) within [`TIMEOUT`], and checks it.
/// Every failure is an error naming it, and every descriptor received is closed then:
///
/// - more than [`MAX_MESSAGE`] bytes without the line's end, bytes after it, the end of the
///   stream before it, nothing within [`TIMEOUT`];
/// - more than [`MAX_LISTENERS`] descriptors (the kernel cut them: `MSG_CTRUNC`);
/// - a line that is not `{"token": STRING, "listeners": [WORD…]}` (nothing else), an empty
///   token, a word that is neither `proxy` nor an address and port, not exactly one `proxy`,
///   an address twice;
/// - a number of descriptors other than the number of words;
/// - a descriptor that is not a TCP socket (`SO_DOMAIN` IPv4 or IPv6, `SO_TYPE` stream,
///   `SO_PROTOCOL` TCP) in the listening state (`SO_ACCEPTCONN`), or not bound at its word's
///   address and port.
///
/// Never panics on what it reads. Comparing the token is the caller's; so is the answer
/// ([`answer`]).
#[expect(
    clippy::disallowed_methods,
    reason = "blocking code the daemon runs on a blocking thread: its deadline is the wall clock's"
)]
pub fn receive(stream: &UnixStream) -> Result<Handed, String> {
    let io = |e: &dyn std::fmt::Display| format!("reading the launcher's message: {e}");
    stream.set_nonblocking(false).map_err(|e| io(&e))?;
    let deadline = std::time::Instant::now() + TIMEOUT;
    let mut data: Vec<u8> = Vec::with_capacity(1024);
    let mut fds: Vec<OwnedFd> = Vec::new();
    let mut buf = vec![0u8; MAX_MESSAGE + 1];
    let mut space =
        vec![MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_LISTENERS))];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(format!(
                "no whole message from the launcher within {} s",
                TIMEOUT.as_secs()
            ));
        }
        stream.set_read_timeout(Some(left)).map_err(|e| io(&e))?;
        let room = MAX_MESSAGE + 1 - data.len();
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let got = rustix::net::recvmsg(
            stream,
            &mut [IoSliceMut::new(&mut buf[..room])],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        );
        // Whatever came with it is taken (and closed with `fds` on any error below).
        for msg in control.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = msg {
                fds.extend(received);
            }
        }
        let got = match got {
            Ok(g) => g,
            Err(Errno::INTR) => continue,
            Err(Errno::AGAIN) => {
                return Err(format!(
                    "no whole message from the launcher within {} s",
                    TIMEOUT.as_secs()
                ))
            }
            Err(e) => return Err(io(&e)),
        };
        if got.flags.contains(ReturnFlags::CTRUNC) || fds.len() > MAX_LISTENERS {
            return Err(format!(
                "more than {MAX_LISTENERS} descriptors (or a control message cut short)"
            ));
        }
        if got.bytes == 0 {
            return Err(if data.is_empty() {
                "the launcher hung up without a message".to_owned()
            } else {
                "the launcher hung up in the middle of its message".to_owned()
            });
        }
        data.extend_from_slice(&buf[..got.bytes]);
        if let Some(end) = data.iter().position(|b| *b == b'\n') {
            if end + 1 != data.len() {
                return Err("bytes after the message's line".to_owned());
            }
            data.truncate(end);
            break;
        }
        if data.len() > MAX_MESSAGE {
            return Err(format!("a message longer than {MAX_MESSAGE} bytes"));
        }
    }
    check(&data, fds)
}

/// The message read (its line without the newline, and the descriptors that came with it),
/// checked.
fn check(line: &[u8], fds: Vec<OwnedFd>) -> Result<Handed, String> {
    let wire: Wire = serde_json::from_slice(line).map_err(|e| {
        format!("not a message of the door ({{\"token\": …, \"listeners\": […]}}): {e}")
    })?;
    if wire.token.is_empty() {
        return Err("an empty token".to_owned());
    }
    let mut purposes: Vec<Purpose> = Vec::with_capacity(wire.listeners.len());
    for word in &wire.listeners {
        let Some(p) = Purpose::read(word) else {
            return Err(format!(
                "{:?} is neither proxy nor an address and port",
                one_line(word)
            ));
        };
        if purposes.iter().any(|q| q.addr() == p.addr()) {
            return Err(format!("{p} comes twice"));
        }
        purposes.push(p);
    }
    let proxies = purposes.iter().filter(|p| **p == Purpose::Proxy).count();
    if proxies != 1 {
        return Err(format!("{proxies} proxy listeners (one expected)"));
    }
    if fds.len() != purposes.len() {
        return Err(format!(
            "{} descriptors for {} listeners",
            fds.len(),
            purposes.len()
        ));
    }
    for (i, (fd, p)) in fds.iter().zip(&purposes).enumerate() {
        listening_tcp(fd).map_err(|why| format!("descriptor {} ({p}): {why}", i + 1))?;
    }
    let mut listeners = Vec::with_capacity(fds.len());
    for (fd, p) in fds.into_iter().zip(purposes) {
        let l = TcpListener::from(fd);
        match l.local_addr() {
            Ok(a) if a == p.addr() => listeners.push((p, l)),
            Ok(a) => return Err(format!("the listener for {p} is bound at {a}")),
            Err(e) => return Err(format!("the listener for {p}: {e}")),
        }
    }
    Ok(Handed {
        token: wire.token,
        listeners,
    })
}

/// Whether `fd` is a listening TCP socket; what it is not, otherwise.
fn listening_tcp(fd: &OwnedFd) -> Result<(), String> {
    use rustix::net::{sockopt, AddressFamily, SocketType};
    let e = |what: &str, e: Errno| match e {
        Errno::NOTSOCK => "not a socket".to_owned(),
        e => format!("{what}: {e}"),
    };
    let domain = sockopt::socket_domain(fd).map_err(|x| e("SO_DOMAIN", x))?;
    if domain != AddressFamily::INET && domain != AddressFamily::INET6 {
        return Err("not an IPv4 or IPv6 socket".to_owned());
    }
    if sockopt::socket_type(fd).map_err(|x| e("SO_TYPE", x))? != SocketType::STREAM {
        return Err("not a stream socket".to_owned());
    }
    if sockopt::socket_protocol(fd).map_err(|x| e("SO_PROTOCOL", x))?
        != Some(rustix::net::ipproto::TCP)
    {
        return Err("not a TCP socket".to_owned());
    }
    if !sockopt::socket_acceptconn(fd).map_err(|x| e("SO_ACCEPTCONN", x))? {
        return Err("a TCP socket that is not listening".to_owned());
    }
    Ok(())
}

/// The daemon's answer to a launcher: `ok`, or `refused: WHY` (`why` on one line, at most 512
/// bytes), within [`TIMEOUT`].
pub fn answer(stream: &UnixStream, result: Result<(), &str>) -> std::io::Result<()> {
    let line = match result {
        Ok(()) => "ok\n".to_owned(),
        Err(why) => format!("refused: {}\n", one_line(why)),
    };
    stream.set_write_timeout(Some(TIMEOUT))?;
    let mut s = stream;
    s.write_all(line.as_bytes())
}

/// `text` on one line (control characters as spaces), at most [`MAX_WHY`] bytes.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_WHY));
    for c in text.chars() {
        if out.len() + c.len_utf8() > MAX_WHY {
            out.push('…');
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(addr: &str) -> TcpListener {
        TcpListener::bind(addr).unwrap()
    }

    /// Sends `line` with `fds` the way a launcher (or an attacker) would.
    fn send_raw(s: &UnixStream, line: &[u8], fds: &[BorrowedFd<'_>]) {
        let rights = SendAncillaryMessage::ScmRights(fds);
        let mut space = vec![MaybeUninit::<u8>::uninit(); rights.size()];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if !fds.is_empty() {
            assert!(control.push(rights));
        }
        let n = rustix::net::sendmsg(s, &[IoSlice::new(line)], &mut control, SendFlags::NOSIGNAL)
            .unwrap();
        assert_eq!(n, line.len());
    }

    #[test]
    #[expect(clippy::disallowed_macros, reason = "a test says why it skipped")]
    #[expect(
        clippy::disallowed_methods,
        reason = "a test peer, not a door of Maven's"
    )]
    fn listeners_go_over_and_the_answer_comes_back() {
        let (launcher, daemon) = UnixStream::pair().unwrap();
        // Not at the proxy's real address (another test may hold it): the check of the
        // address is for the daemon's side; here a Connect at the listener's own address.
        let a = listener("127.0.0.1:0");
        let b = listener("127.0.0.1:0");
        let (aa, ba) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let line = format!("{{\"token\":\"s3cret\",\"listeners\":[\"{aa}\",\"{ba}\"]}}\n");
        // Without a proxy listener the daemon refuses...
        send_raw(&launcher, line.as_bytes(), &[a.as_fd(), b.as_fd()]);
        assert_eq!(
            receive(&daemon).unwrap_err(),
            "0 proxy listeners (one expected)"
        );
        // ...and the whole round trip, through hand_over, with the proxy's listener where it
        // belongs when that address is free here.
        let Ok(proxy) = TcpListener::bind(crate::PROXY) else {
            eprintln!(
                "skipped the full round trip: {} is taken here",
                crate::PROXY
            );
            return;
        };
        let (launcher, daemon) = UnixStream::pair().unwrap();
        let d = std::thread::spawn(move || {
            let handed = receive(&daemon).unwrap();
            answer(&daemon, Ok(())).unwrap();
            handed
        });
        let sent = [
            (Purpose::Proxy, &proxy),
            (Purpose::Connect(aa), &a),
            (Purpose::Connect(ba), &b),
        ];
        hand_over(&launcher, "s3cret", &sent).unwrap();
        let handed = d.join().unwrap();
        assert_eq!(handed.token, "s3cret");
        let got: Vec<(Purpose, SocketAddr)> = handed
            .listeners
            .iter()
            .map(|(p, l)| (*p, l.local_addr().unwrap()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Purpose::Proxy, crate::PROXY),
                (Purpose::Connect(aa), aa),
                (Purpose::Connect(ba), ba)
            ]
        );
        assert!(!format!("{handed:?}").contains("s3cret"));
        // The daemon's copy accepts what reaches the address.
        drop((proxy, a, b));
        #[expect(
            clippy::disallowed_methods,
            reason = "a test reaching its own listener"
        )]
        let _c = std::net::TcpStream::connect(aa).unwrap();
        let (_, from) = handed.listeners[1].1.accept().unwrap();
        assert!(from.ip().is_loopback());

        // A refusal comes back with the daemon's words, on one line.
        let (launcher, daemon) = UnixStream::pair().unwrap();
        let d = std::thread::spawn(move || {
            let _ = receive(&daemon).unwrap();
            answer(&daemon, Err("unknown token\nsecond line")).unwrap();
        });
        let (_, proxy) = &handed.listeners[0];
        let e = hand_over(&launcher, "wrong", &[(Purpose::Proxy, proxy)]).unwrap_err();
        d.join().unwrap();
        assert_eq!(e, "the daemon refused: unknown token second line");
    }

    #[test]
    fn garbage_is_refused_with_what_is_wrong() {
        let l = listener("127.0.0.1:0");
        let addr = l.local_addr().unwrap();
        #[expect(
            clippy::disallowed_methods,
            reason = "a test: a socket that is not TCP"
        )]
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let (r, w) = std::io::pipe().unwrap();
        let good = |token: &str| format!("{{\"token\":\"{token}\",\"listeners\":[\"proxy\"]}}\n");
        let cases: Vec<(Vec<u8>, Vec<BorrowedFd<'_>>, &str)> = vec![
            (
                b"not json\n".to_vec(),
                vec![l.as_fd()],
                "not a message of the door",
            ),
            (
                b"{\"token\":\"t\",\"listeners\":[\"proxy\"],\"more\":1}\n".to_vec(),
                vec![l.as_fd()],
                "not a message of the door",
            ),
            (good("").into_bytes(), vec![l.as_fd()], "an empty token"),
            (
                b"{\"token\":\"t\",\"listeners\":[\"proxy\",\"db.lan:5432\"]}\n".to_vec(),
                vec![l.as_fd(), l.as_fd()],
                "\"db.lan:5432\" is neither proxy nor an address and port",
            ),
            (
                b"{\"token\":\"t\",\"listeners\":[\"proxy\",\"proxy\"]}\n".to_vec(),
                vec![l.as_fd(), l.as_fd()],
                "proxy comes twice",
            ),
            (
                format!("{{\"token\":\"t\",\"listeners\":[\"proxy\",\"{addr}\",\"{addr}\"]}}\n")
                    .into_bytes(),
                vec![l.as_fd(), l.as_fd(), l.as_fd()],
                "comes twice",
            ),
            (
                good("t").into_bytes(),
                vec![],
                "0 descriptors for 1 listeners",
            ),
            (
                good("t").into_bytes(),
                vec![l.as_fd(), l.as_fd()],
                "2 descriptors for 1 listeners",
            ),
            (
                good("t").into_bytes(),
                vec![r.as_fd()],
                "descriptor 1 (proxy): not a socket",
            ),
            (
                good("t").into_bytes(),
                vec![udp.as_fd()],
                "descriptor 1 (proxy): not a stream socket",
            ),
            (
                good("t").into_bytes(),
                vec![l.as_fd()],
                "the listener for proxy is bound at 127.0.0.1:",
            ),
            (
                b"{\"token\":\"t\",\"listeners\":[\"proxy\"]}\nmore".to_vec(),
                vec![l.as_fd()],
                "bytes after the message's line",
            ),
            (
                vec![b'x'; MAX_MESSAGE + 10],
                vec![l.as_fd()],
                "a message longer than 8192 bytes",
            ),
        ];
        for (line, fds, want) in cases {
            let (launcher, daemon) = UnixStream::pair().unwrap();
            let writer = std::thread::scope(|s| {
                s.spawn(|| send_raw(&launcher, &line, &fds));
                receive(&daemon)
            });
            let e = writer.unwrap_err();
            assert!(e.contains(want), "{want:?} in {e:?}");
        }
        // A stream socket that is not listening, and a listener elsewhere than its word.
        let (a, _b) = UnixStream::pair().unwrap();
        let (launcher, daemon) = UnixStream::pair().unwrap();
        send_raw(&launcher, good("t").as_bytes(), &[a.as_fd()]);
        assert_eq!(
            receive(&daemon).unwrap_err(),
            "descriptor 1 (proxy): not an IPv4 or IPv6 socket"
        );
        #[expect(
            clippy::disallowed_methods,
            reason = "a socket that never listens nor connects, handed over to be refused"
        )]
        let s = rustix::net::socket(
            rustix::net::AddressFamily::INET,
            rustix::net::SocketType::STREAM,
            None,
        )
        .unwrap();
        let (launcher, daemon) = UnixStream::pair().unwrap();
        send_raw(&launcher, good("t").as_bytes(), &[s.as_fd()]);
        assert_eq!(
            receive(&daemon).unwrap_err(),
            "descriptor 1 (proxy): a TCP socket that is not listening"
        );
        // The end of the stream, before and in the middle of a message.
        let (launcher, daemon) = UnixStream::pair().unwrap();
        drop(launcher);
        assert_eq!(
            receive(&daemon).unwrap_err(),
            "the launcher hung up without a message"
        );
        let (launcher, daemon) = UnixStream::pair().unwrap();
        send_raw(&launcher, b"{\"token\"", &[]);
        drop(launcher);
        assert_eq!(
            receive(&daemon).unwrap_err(),
            "the launcher hung up in the middle of its message"
        );
        // Too many descriptors: the kernel cuts them, the daemon refuses.
        let many: Vec<BorrowedFd<'_>> = (0..MAX_LISTENERS + 1).map(|_| l.as_fd()).collect();
        let (launcher, daemon) = UnixStream::pair().unwrap();
        send_raw(&launcher, good("t").as_bytes(), &many);
        assert!(receive(&daemon)
            .unwrap_err()
            .starts_with("more than 65 descriptors"));
        // Nothing at all: refused after the timeout.
        let (_launcher, daemon) = UnixStream::pair().unwrap();
        assert_eq!(
            receive(&daemon).unwrap_err(),
            "no whole message from the launcher within 5 s"
        );
        drop((w, r));
    }

    #[test]
    fn descriptors_of_a_refused_message_are_closed() {
        // The write end of a pipe goes over with each refused message; once the daemon's side
        // closed what it received and this test its own, the read end sees the end.
        let l = listener("127.0.0.1:0");
        let line = b"{\"token\":\"t\",\"listeners\":[\"proxy\"]}\n";
        for refused in [vec![true, false, false], vec![false], vec![true]] {
            let (r, w) = std::io::pipe().unwrap();
            let fds: Vec<BorrowedFd<'_>> = refused
                .iter()
                .map(|pipe| if *pipe { w.as_fd() } else { l.as_fd() })
                .collect();
            let (launcher, daemon) = UnixStream::pair().unwrap();
            send_raw(&launcher, line, &fds);
            assert!(receive(&daemon).is_err());
            drop(fds);
            drop(w);
            rustix::io::ioctl_fionbio(&r, true).unwrap();
            let mut buf = [0u8; 1];
            assert_eq!(
                (&r).read(&mut buf).unwrap(),
                0,
                "{refused:?}: a copy is still open"
            );
        }
    }

    #[test]
    fn the_launcher_says_what_the_daemon_answered() {
        let l = listener("127.0.0.1:0");
        for (reply, want) in [
            (
                &b"maybe\n"[..],
                "the daemon's answer is neither ok nor a refusal: \"maybe\"",
            ),
            (b"", "the daemon hung up without an answer"),
            (
                &[b'x'; 2000][..],
                "the daemon's answer is longer than 1024 bytes",
            ),
        ] {
            let (launcher, daemon) = UnixStream::pair().unwrap();
            let d = std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                let _ = (&daemon).read(&mut buf);
                let _ = (&daemon).write_all(reply);
            });
            let e = hand_over(&launcher, "t", &[(Purpose::Proxy, &l)]).unwrap_err();
            d.join().unwrap();
            assert_eq!(e, want);
        }
    }

    #[test]
    fn a_refusal_is_one_bounded_line() {
        assert_eq!(one_line("a\nb\rc\u{7}"), "a b c ");
        let long = "é".repeat(400);
        let cut = one_line(&long);
        assert!(cut.len() <= MAX_WHY + '…'.len_utf8() && cut.ends_with('…'));
    }
}
